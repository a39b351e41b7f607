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
//!
//! In a Python process the record names the script's frames as well: the
//! handler asks CPython for the interrupted thread's Python stack the way
//! the interpreter's own `faulthandler` does in its signal handler
//! (`_Py_DumpTraceback`, which writes the frames to a descriptor without
//! the GIL or an allocation), into a memory file made at installation. The
//! interpreter's native frames (the executable, `libpython`, its extension
//! modules, `ctypes`' libffi, aclmem's binding) say nothing of the program
//! then and are left out; an extension of the program's own keeps its
//! native frames, innermost first, before the script's.

use std::ffi::{CString, c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
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
        PYTHON.get_or_init(PythonStack::find);
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
/// the loader, the signal trampoline, or aclmem's libraries; in a process
/// whose Python frames were read (`in_python`), the interpreter's code too.
fn not_the_programs(ip: usize, in_python: bool) -> bool {
    let Some(module) = crate::report::module_of(ip) else {
        return true;
    };
    if in_python && interpreters(&module) {
        return true;
    }
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

/// CPython's writer of a thread's Python stack, when the process runs an
/// interpreter that exports it, and the memory file it writes to.
struct PythonStack {
    /// `_Py_DumpTraceback(fd, thread_state)`: the function `faulthandler`
    /// calls in its signal handler (exported by CPython 3.6 and later,
    /// though not in its stable ABI: without it the record is native only).
    dump: unsafe extern "C" fn(c_int, *mut c_void),
    /// `PyGILState_GetThisThreadState()`: this thread's state, or NULL
    /// for a thread that never ran Python.
    this_thread: unsafe extern "C" fn() -> *mut c_void,
    file: OwnedFd,
}

static PYTHON: OnceLock<Option<PythonStack>> = OnceLock::new();

impl PythonStack {
    fn find() -> Option<PythonStack> {
        let dump = crate::python::symbol(c"_Py_DumpTraceback")?;
        let this_thread = crate::python::symbol(c"PyGILState_GetThisThreadState")?;
        // SAFETY: a NUL-terminated name; the descriptor returned is new and
        // owned by the `OwnedFd` alone.
        let file = unsafe {
            let fd = libc::memfd_create(c"aclmem-python-stack".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return None;
            }
            OwnedFd::from_raw_fd(fd)
        };
        // SAFETY: the symbols are CPython's functions of those names, with
        // the prototypes given (`void (int, PyThreadState *)` and
        // `PyThreadState *(void)`).
        unsafe {
            Some(PythonStack {
                dump: std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int, *mut c_void)>(
                    dump,
                ),
                this_thread: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn() -> *mut c_void,
                >(this_thread),
                file,
            })
        }
    }

    /// The interrupted thread's Python frames, innermost first, aclmem's
    /// own left out, as `function (script.py:LINE)`; none for a thread that
    /// runs no Python.
    fn frames(&self) -> Vec<String> {
        let fd = self.file.as_raw_fd();
        let mut text = [0u8; 4096];
        // SAFETY: async-signal-safe calls on a descriptor this value owns,
        // and CPython's stack writer, which `faulthandler` calls from its
        // signal handler: it reads the thread's frames without the GIL and
        // writes them with `write(2)`. `text` is a live local of the length
        // given.
        let n = unsafe {
            let thread = (self.this_thread)();
            if thread.is_null()
                || libc::ftruncate(fd, 0) != 0
                || libc::lseek(fd, 0, libc::SEEK_SET) != 0
            {
                return Vec::new();
            }
            (self.dump)(fd, thread);
            libc::pread(fd, text.as_mut_ptr().cast(), text.len(), 0)
        };
        let Ok(n) = usize::try_from(n) else {
            return Vec::new();
        };
        python_frames(&String::from_utf8_lossy(&text[..n]))
    }
}

/// The frames of a Python stack as CPython writes it (`  File "PATH", line
/// N in FUNCTION`, innermost first), aclmem's own left out, as
/// `FUNCTION (BASE:N)`, the form of a Python call site.
fn python_frames(dump: &str) -> Vec<String> {
    dump.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("File \"")?;
            let (file, rest) = rest.split_once("\", line ")?;
            let (line, function) = rest.split_once(" in ")?;
            let line: u32 = line.parse().ok()?;
            (!crate::python::is_internal(file)).then(|| {
                let base = file.rsplit('/').next().unwrap_or(file);
                format!("{function} ({base}:{line})")
            })
        })
        .take(FRAMES)
        .collect()
}

/// Whether `module` is the Python interpreter's own code, or aclmem's
/// binding: the executable and `libpython`, the standard library's
/// extension modules, `ctypes` and its libffi.
fn interpreters(module: &str) -> bool {
    let file = module.rsplit('/').next().unwrap_or(module);
    ["python", "libpython", "_ctypes", "libffi"]
        .iter()
        .any(|p| file.starts_with(p))
        || module.contains("/lib-dynload/")
        || crate::python::is_internal(module)
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
    let python = PYTHON
        .get()
        .and_then(Option::as_ref)
        .map(PythonStack::frames)
        .unwrap_or_default();
    let in_python = !python.is_empty();
    let stack: Vec<String> = ips[..n]
        .iter()
        .copied()
        .filter(|&ip| ip != 0 && !not_the_programs(ip, in_python))
        .map(crate::report::Site::native)
        .chain(python)
        .take(FRAMES)
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
    use super::*;

    #[test]
    fn a_python_stack_is_read_as_call_sites() {
        let dump = "Stack (most recent call first):\n  \
                    File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n  \
                    File \"/tmp/x/hangs.py\", line 12 in load\n  \
                    File \"/tmp/x/hangs.py\", line 20 in <module>\n";
        assert_eq!(
            python_frames(dump),
            [
                "wait (threading.py:320)",
                "load (hangs.py:12)",
                "<module> (hangs.py:20)"
            ]
        );
        assert!(python_frames("<no Python frame>\n").is_empty());
        assert!(python_frames("  File \"x.py\", line ??? in f\n").is_empty());
    }

    #[test]
    fn the_interpreters_modules_are_not_the_programs() {
        for m in [
            "/usr/bin/python3.11",
            "/opt/venv/bin/python",
            "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
            "/usr/lib/python3.11/lib-dynload/select.cpython-311-x86_64-linux-gnu.so",
            "/usr/lib/x86_64-linux-gnu/libffi.so.8",
        ] {
            assert!(interpreters(m), "{m}");
        }
        assert!(!interpreters(
            "/tmp/kit/camem.cpython-311-x86_64-linux-gnu.so"
        ));
        assert!(!interpreters("/opt/venv/lib/torch_npu/lib/libtorch_npu.so"));
    }

    #[test]
    fn the_probe_is_sigurg_here() {
        assert_eq!(aclmem_formats::postmortem::PROBE_SIGNAL, libc::SIGURG);
    }
}
