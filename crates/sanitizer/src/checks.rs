//! Checks shared by the hooks: the rules of a prop, unsupported calls at exit, the exit handler.

use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use aclmem_core::{Location, MemAttr, RawPhysicalMemProp};
use aclmem_formats::sharing::Kind;

use crate::config::config;
use crate::platform::{model_lock, platform};
use crate::report::{self, Class, Finding, Site, report};
use crate::underneath::{next_in, own};
use crate::{sharing, trace};

pub(crate) fn prop_text(p: &RawPhysicalMemProp) -> String {
    let attr = MemAttr::from_raw(p.mem_attr)
        .map_or_else(|| p.mem_attr.to_string(), |a| a.c_name().to_owned());
    let loc = Location::from_raw(p.location.type_)
        .map_or_else(|| p.location.type_.to_string(), |l| l.c_name().to_owned());
    format!("{{memAttr {attr}, location {loc} {}}}", p.location.id)
}

/// A denial in words, without the code (the report adds it).
pub(crate) fn plain(d: &aclmem_core::Denial) -> String {
    d.reason().to_string()
}

/// The last (location type, attribute) pair that the platform and every
/// target accepted, packed as `1 << 63 | type << 32 | attr` (0: none). The
/// platform and the targets are fixed once found, so a pair that passed
/// passes again: a program that allocates with one prop (the usual case)
/// is checked once, not on every call.
static ACCEPTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub(crate) fn check_rules(p: &RawPhysicalMemProp, size: usize, site: Site) {
    use std::sync::atomic::Ordering;
    let Some(pl) = platform() else { return };
    let pair = 1 << 63 | u64::from(p.location.type_) << 32 | u64::from(p.mem_attr);
    if ACCEPTED.load(Ordering::Relaxed) == pair {
        return;
    }
    let mut refused = false;
    // Formatted only when there is something to report.
    let args = || format!("{size:#x}, {}", prop_text(p));
    if let Err(d) = aclmem_core::check_raw(
        pl.product,
        pl.run_mode,
        pl.cann,
        p.location.type_,
        p.mem_attr,
    ) {
        report(Finding {
            class: Class::Rule,
            call: "aclrtMallocPhysical",
            args: args(),
            // The rule once; the code follows in the report's brackets.
            message: format!(
                "{} ({} form, CANN {}): {}",
                pl.product,
                pl.run_mode,
                pl.cann.release(),
                plain(&d)
            ),
            code: Some(d.code().code()),
            site,
        });
        return;
    }
    for t in &config().targets {
        let cann = t.cann.unwrap_or(pl.cann);
        let run_mode = t.run_mode.unwrap_or(pl.run_mode);
        if let Err(d) =
            aclmem_core::check_raw(t.product, run_mode, cann, p.location.type_, p.mem_attr)
        {
            refused = true;
            report(Finding {
                class: Class::Portability,
                call: "aclrtMallocPhysical",
                args: args(),
                message: format!(
                    "{} ({} form, CANN {}) would refuse it: {}",
                    t.product,
                    run_mode,
                    cann.release(),
                    plain(&d)
                ),
                code: Some(d.code().code()),
                site,
            });
        }
    }
    if !refused {
        ACCEPTED.store(pair, Ordering::Relaxed);
    }
}

/// A function of the emulated library underneath (`$ACLMEM_ASCENDCL`, or
/// `libascendcl.so` as loaded): NULL when the library is not loaded, or is
/// a real one (which has no such function).
fn emulated(name: &std::ffi::CStr) -> *mut c_void {
    let lib = std::env::var("ACLMEM_ASCENDCL")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "libascendcl.so".into());
    let Ok(lib) = std::ffi::CString::new(lib) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a handle of a library already loaded (RTLD_NOLOAD), or NULL;
    // never closed (the library stays loaded).
    let handle = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: dlsym on a live handle, with a NUL-terminated name.
    let f = unsafe { libc::dlsym(handle, name.as_ptr()) };
    if own(f) { std::ptr::null_mut() } else { f }
}

/// What the sanitizer says of a run on the emulated library in plan mode.
const PLAN_MODE: &str = "the emulated library runs in plan mode (ACLMEM_EMU_OPS=plan): operators are checked, not computed, and copies move no data; memory is the real step's, values are not results";

/// Whether the emulated library underneath said it runs in plan mode.
static PLAN: AtomicBool = AtomicBool::new(false);

/// After a successful `aclInit`: when the emulated library underneath runs
/// in plan mode (`aclmem_emu_ops_mode`), said on stderr now and before the
/// summary, and as a `phase` record at the head of this process's trace
/// (the timeline shows it as a marker).
pub(crate) fn note_ops_mode() {
    let f = emulated(c"aclmem_emu_ops_mode");
    if f.is_null() {
        return;
    }
    // SAFETY: the emulated library's `const char *aclmem_emu_ops_mode(void)`,
    // a static string.
    let plan = unsafe {
        let f: unsafe extern "C" fn() -> *const c_char = std::mem::transmute(f);
        let p = f();
        !p.is_null() && std::ffi::CStr::from_ptr(p).to_bytes() == b"plan"
    };
    if plan && !PLAN.swap(true, Ordering::Relaxed) {
        eprintln!("aclmem-sanitizer: {PLAN_MODE}");
        trace::call_with("phase", None, 0, 0, |t| t.name = Some(PLAN_MODE.into()));
    }
}

/// The calls the emulated library did not carry out because it does not
/// support them (operators, graphs, ...), from its record: one
/// `unsupported-call` finding per function, with the count and the first
/// call site. (A real library has no such record: nothing is reported.)
pub(crate) fn unsupported_calls() {
    let f = emulated(c"aclmem_emu_calls_json");
    if f.is_null() {
        return;
    }
    // SAFETY: the emulated library's `const char *aclmem_emu_calls_json(void)`.
    let text = unsafe {
        let f: unsafe extern "C" fn() -> *const c_char = std::mem::transmute(f);
        let p = f();
        if p.is_null() {
            return;
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    };
    let Ok(serde_json::Value::Array(rows)) = serde_json::from_str(&text) else {
        return;
    };
    for r in rows.iter().filter(|r| r["answer"] == "not supported") {
        let call = r["name"]
            .as_str()
            .and_then(aclmem_sys::catalogue::find)
            .map_or("?", |e| e.name);
        report::report(report::Finding {
            class: Class::UnsupportedCall,
            call,
            args: String::new(),
            message: format!(
                "the emulator does not carry it out ({}): answered {}, {} call(s); first",
                r["library"].as_str().unwrap_or("?"),
                r["answered"].as_str().unwrap_or("?"),
                r["count"]
            ),
            code: r["code"].as_i64().and_then(|c| i32::try_from(c).ok()),
            site: Site::described(r["first_site"].as_str().unwrap_or("?").to_owned()),
        });
    }
}

/// Whether the exit handler is registered (by `aclInit`; a forked child
/// inherits it), and whether it has run.
static REGISTERED: AtomicBool = AtomicBool::new(false);
static ENDED: AtomicBool = AtomicBool::new(false);

/// The process that called `aclInit` last (a forked child is not it until
/// it calls `aclInit` itself, [`forked`]). Its `_exit` is checked; any
/// other process's is let go: a child of `vfork` shares its parent's
/// memory and runs no fork handler (it must leave the parent's state
/// alone), and a forked worker that never used ACL (Python's
/// `multiprocessing`, a data loader's) ends as it would without the
/// sanitizer.
static OWNER: AtomicI32 = AtomicI32::new(0);

fn this_process() -> i32 {
    // SAFETY: getpid has no preconditions (and asks the kernel: right in a
    // child of vfork too).
    unsafe { libc::getpid() }
}

/// `aclInit` in this process.
pub(crate) fn initialised() {
    OWNER.store(this_process(), Ordering::Relaxed);
}

/// In a child of `fork`: not initialised until it calls `aclInit`.
pub(crate) fn forked() {
    OWNER.store(0, Ordering::Relaxed);
}

pub(crate) fn at_exit_registered() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Found now, not as the process ends.
        next_exit();
        REGISTERED.store(true, Ordering::Relaxed);
        // SAFETY: registers a function of this library, which stays loaded.
        unsafe { libc::atexit(at_exit) };
    });
}

/// The end of a process that called `aclInit`: its leaks, the calls the
/// library did not carry out, its trace and sharing events, the summary.
/// Once, however the process ends.
extern "C" fn at_exit() {
    end_checks("exit");
}

/// [`at_exit`]'s work, for an end by `call` (`exit`, `_exit`): the exit's
/// sharing event names the program's line that ended the process.
fn end_checks(call: &str) {
    if ENDED.swap(true, Ordering::Relaxed) {
        return;
    }
    unsupported_calls();
    crate::model::report_leaks("exit", None);
    crate::hccl::report_leaks();
    crate::graphs::report_leaks();
    crate::pools::report_leaks();
    trace::write_sites();
    trace::flush();
    let site = sharing::exported().then(Site::program);
    sharing::event(Kind::Exit, call, site, |_| {});
    if PLAN.load(Ordering::Relaxed) {
        eprintln!("aclmem-sanitizer: {PLAN_MODE}");
    }
    report::summary();
}

/// `_exit(2)`, which skips the exit handlers: a forked child's usual end,
/// and many programs' error paths. In a process that called `aclInit`
/// ([`OWNER`]), the end is checked as at `exit` (its leaks, imports it
/// still holds), and the library underneath is told (the emulated
/// library's record of calls for `aclmem explore`), before the process
/// ends.
///
/// # Safety
/// None beyond `_exit`'s own: the process ends.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _exit(status: c_int) -> ! {
    ending(status)
}

/// `_Exit(3)`: as [`_exit`].
///
/// # Safety
/// As for [`_exit`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _Exit(status: c_int) -> ! {
    ending(status)
}

fn ending(status: c_int) -> ! {
    // Only the process that initialised ACL ([`OWNER`]); any other ends as
    // it would without the sanitizer.
    if !REGISTERED.load(Ordering::Relaxed) || OWNER.load(Ordering::Relaxed) != this_process() {
        end_now(status);
    }
    // `_exit` is async-signal-safe, and programs call it from signal
    // handlers (a server ending on SIGTERM). The checks are not: they lock
    // the model and allocate, and the handler may have interrupted this
    // thread inside a hook (holding the model) or inside `malloc`. From a
    // handler, or while the model is held, the process ends unchecked, as
    // LeakSanitizer leaves `_exit` unchecked.
    if in_signal_handler() || crate::model::busy() || model_lock().try_lock().is_none() {
        end_now(status);
    }
    end_checks("_exit");
    // The emulated library's own end (`void aclmem_emu_exiting(void)`); a
    // real library has none.
    let exiting = next_in(c"libascendcl.so", c"aclmem_emu_exiting");
    if exiting != 0 {
        // SAFETY: the emulated library's `void aclmem_emu_exiting(void)`,
        // found by that name.
        let f = unsafe { std::mem::transmute::<usize, extern "C" fn()>(exiting) };
        f();
    }
    end_now(status)
}

/// Whether the calling thread may be running a signal handler: a handler
/// runs with its signal blocked (unless installed with `SA_NODEFER`), so
/// any blocked signal is taken as one (a thread that blocks signals of its
/// own accord then goes unchecked at `_exit`: a finding missed, never a
/// hang).
fn in_signal_handler() -> bool {
    let mut mask = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: asks the calling thread's mask (no set given to change it)
    // into a set of our own, read only when the call succeeded.
    unsafe {
        if libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), mask.as_mut_ptr()) != 0 {
            return true;
        }
        let mask = mask.assume_init();
        (1..libc::SIGRTMAX()).any(|s| libc::sigismember(&mask, s) == 1)
    }
}

type Exit = unsafe extern "C" fn(c_int) -> !;

/// The next definition of `_exit` (the C library's, or another tool's),
/// found by `aclInit` ([`at_exit_registered`]).
static NEXT_EXIT: OnceLock<Option<Exit>> = OnceLock::new();

/// Finds [`NEXT_EXIT`].
fn next_exit() -> Option<Exit> {
    *NEXT_EXIT.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name.
        let p = unsafe { libc::dlsym(libc::RTLD_NEXT, c"_exit".as_ptr()) };
        // SAFETY: a definition of `_exit` other than this library's, of
        // that prototype.
        (!p.is_null() && !own(p)).then(|| unsafe { std::mem::transmute::<*mut c_void, Exit>(p) })
    })
}

/// Ends the process now with `status`, running nothing more of it: the
/// next `_exit` found at `aclInit`, or (in a process that never called it,
/// such as a child of `vfork`, which must not look symbols up in its
/// parent's memory) the system call `_exit` makes.
pub(crate) fn end_now(status: c_int) -> ! {
    if let Some(&Some(f)) = NEXT_EXIT.get() {
        // SAFETY: `_exit` ends the process; it has no precondition.
        unsafe { f(status) }
    }
    loop {
        // SAFETY: ends every thread of the process; it does not return.
        unsafe { libc::syscall(libc::SYS_exit_group, status) };
    }
}
