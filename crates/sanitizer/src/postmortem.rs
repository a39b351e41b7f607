//! Where the program was when it crashed, or where it waits when `aclmem
//! explore` finds it hung (`ACLMEM_SANITIZER_WHERE`; the record and the
//! protocol are `aclmem_formats::postmortem`'s).
//!
//! The handlers are installed at `aclInit` and only when the variable names
//! a file, so nothing changes for a program under `aclmem sanitize` alone;
//! only for signals the program neither handles nor ignores then, and a
//! handler the program installs later replaces them (its own handling
//! wins, and nothing is recorded). A crash handler records, then the
//! signal ends the process as it would have (its disposition was reset on
//! entry, and the signal is raised again), with an alarm so that a crash
//! inside the allocator, whose lock the recording might wait for, still
//! ends. The probe's handler records and returns: the program goes on
//! waiting where it was (`SA_RESTART`).

use std::ffi::{CString, c_int};
use std::sync::OnceLock;

use aclmem_formats::postmortem::{ENV, PROBE_SIGNAL, Where};

/// The signals that end a program that crashed.
const CRASHES: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
];

/// Frames kept in a record.
const FRAMES: usize = 8;

fn path() -> Option<&'static CString> {
    static PATH: OnceLock<Option<CString>> = OnceLock::new();
    PATH.get_or_init(|| {
        let p = std::env::var_os(ENV).filter(|p| !p.is_empty())?;
        CString::new(std::os::unix::ffi::OsStringExt::into_vec(p)).ok()
    })
    .as_ref()
}

/// Installs the handlers, once, when [`ENV`] names a file.
pub(crate) fn install() {
    if path().is_none() {
        return;
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in CRASHES {
            handle(sig, libc::SA_RESETHAND);
        }
        handle(PROBE_SIGNAL, libc::SA_RESTART);
    });
}

/// Installs the handler for `sig` unless the program already handles or
/// ignores it (a runtime's crash reporter, pytest's `faulthandler`): the
/// program's own handling is never replaced.
fn handle(sig: c_int, flags: c_int) {
    // SAFETY: a zeroed `sigaction` is a valid one with an empty mask; the
    // handler is an `extern "C" fn(c_int)` of this library, which stays
    // loaded, as `sa_sigaction` takes it without `SA_SIGINFO`; the current
    // action is read into a local first.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut current) != 0
            || current.sa_sigaction != libc::SIG_DFL
        {
            return;
        }
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_signal as extern "C" fn(c_int) as usize;
        act.sa_flags = flags;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(sig, &act, std::ptr::null_mut());
    }
}

extern "C" fn on_signal(sig: c_int) {
    let crash = sig != PROBE_SIGNAL;
    // SAFETY: async-signal-safe calls; errno is this thread's, restored
    // below for the code the probe interrupted.
    let errno = unsafe { *libc::__errno_location() };
    if crash {
        // SAFETY: as above.
        unsafe { libc::alarm(2) };
    }
    let _ = std::panic::catch_unwind(|| record(sig));
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
    if crash {
        // The disposition is the default again (`SA_RESETHAND`) and the
        // signal is blocked until this handler returns: it is delivered
        // then, and ends the process by it.
        // SAFETY: as above.
        unsafe { libc::raise(sig) };
    }
}

/// Whether `ip` is in code that is not the program's own: the C library,
/// the loader, the signal trampoline, or aclmem's libraries.
fn not_the_programs(ip: usize) -> bool {
    let Some(module) = crate::report::module_of(ip) else {
        return true;
    };
    let file = module.rsplit('/').next().unwrap_or(&module);
    [
        "libc.so",
        "libc-",
        "ld-linux",
        "linux-vdso",
        "libpthread",
        "libgcc_s",
    ]
    .iter()
    .any(|p| file.starts_with(p))
        || file == "libaclmem_sanitizer.so"
        || file == "libascendcl.so"
}

fn record(sig: c_int) {
    let Some(path) = path() else { return };
    let mut ips = [0usize; 64];
    let mut n = 0;
    // SAFETY: this thread is in a signal handler: the unsynchronised
    // unwinder takes no lock that the interrupted code may hold.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            ips[n] = frame.ip() as usize;
            n += 1;
            n < ips.len()
        });
    }
    let stack: Vec<String> = ips[..n]
        .iter()
        .copied()
        .filter(|&ip| ip != 0 && !not_the_programs(ip))
        .take(FRAMES)
        .map(crate::report::Site::native)
        .collect();
    let record = Where {
        pid: std::process::id(),
        signal: sig,
        site: stack.first().cloned().unwrap_or_else(|| "unknown".into()),
        stack,
    };
    let Ok(mut line) = serde_json::to_string(&record) else {
        return;
    };
    line.push('\n');
    // SAFETY: a path we own, NUL-terminated; the descriptor is ours, and
    // closed once; one write, so the records of several processes do not
    // interleave.
    unsafe {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC,
            0o600,
        );
        if fd >= 0 {
            libc::write(fd, line.as_ptr().cast(), line.len());
            libc::close(fd);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_probe_is_sigurg_here() {
        assert_eq!(aclmem_formats::postmortem::PROBE_SIGNAL, libc::SIGURG);
    }
}
