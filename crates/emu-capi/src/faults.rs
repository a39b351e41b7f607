//! Faults injected at the entry points: `ACLMEM_EMU_FAULTS` (and `aclmem
//! run --fault`), in the grammar of [`aclmem_emu::faults`].
//!
//! Every entry point that answers a status asks [`check`] first, with its
//! catalogue name: a fault that takes the call answers its code before the
//! call reads or writes anything (so nothing is made and no output is
//! written), and becomes the thread's last error as any failure does.
//! Counts are per process and start again in a forked child; `@machine`
//! items count with every process of the joined machine (before `aclInit`
//! joins one, per process). The spec is read once, at the first call; a
//! spec that does not parse injects nothing and makes `aclInit` fail
//! ([`spec_error`]).
//!
//! `ACLMEM_EMU_CALL_LOG=FILE` makes the library learn the program's calls
//! instead: every call of a status-returning entry point is counted by
//! function and call site, and at exit each process appends one JSON line
//! per (function, site) to FILE: `{"pid", "function", "object", "offset",
//! "file", "line", "python", "count"}`, where `object` and `offset` are
//! what a `LIBRARY+0xOFFSET` site filter takes. `aclmem explore` learns a
//! program's failure points this way.
//!
//! A Python program's call whose native frame names nothing of the program
//! (aclmem's own binding, or a framework without debug information) is
//! placed at the script's line instead (`"python": true`, and a
//! `FUNCTION@N:script.py:LINE` filter takes it), when aclmem's sanitizer is
//! loaded to read the interpreter's frames.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use aclmem_emu::faults::{self, Action, Fault, Target};
use aclmem_fork::ForkMutex;

use crate::site::{Site, caller};
use crate::state::with_global;

/// One item of the spec, armed.
struct Armed {
    fault: Fault,
    /// Calls counted in this process.
    count: AtomicU64,
    /// Its place among the `@machine` items.
    machine_index: usize,
    /// Whether it has fired (the first firing is reported).
    fired: AtomicBool,
}

type Plan = Result<Vec<Armed>, String>;

static PLAN: OnceLock<Plan> = OnceLock::new();

fn plan() -> &'static Plan {
    PLAN.get_or_init(|| {
        let faults = faults::from_env().map_err(|e| format!("ACLMEM_EMU_FAULTS: {e}"))?;
        let mut machine = 0;
        Ok(faults
            .into_iter()
            .map(|fault| {
                let machine_index = machine;
                machine += usize::from(fault.machine);
                Armed {
                    fault,
                    count: AtomicU64::new(0),
                    machine_index,
                    fired: AtomicBool::new(false),
                }
            })
            .collect())
    })
}

/// Why `ACLMEM_EMU_FAULTS` does not parse, if it does not.
pub(crate) fn spec_error() -> Option<&'static str> {
    plan().as_ref().err().map(String::as_str)
}

/// The fault spec's defect, for `aclInit` to refuse (its message names
/// `ACLMEM_EMU_FAULTS`).
pub(crate) fn config_error() -> Result<(), String> {
    spec_error().map_or(Ok(()), |e| Err(e.to_owned()))
}

/// A forked child counts its own calls from 0 (the learned calls are
/// `ForkMutex`es: the child's start empty).
pub(crate) fn after_fork() {
    if let Some(Ok(armed)) = PLAN.get() {
        for a in armed {
            a.count.store(0, Ordering::Relaxed);
            a.fired.store(false, Ordering::Relaxed);
        }
    }
}

/// A script's file name and line.
type Line = (String, u32);

/// Calls by (function, return address, script line when the site is
/// Python's): their site and count.
type Calls = std::collections::HashMap<(&'static str, usize, Option<Line>), (Site, u64)>;

/// Calls counted for `ACLMEM_EMU_CALL_LOG`.
struct Learned {
    path: std::path::PathBuf,
    calls: ForkMutex<Calls>,
    /// The native sites, resolved once per return address.
    native: ForkMutex<std::collections::HashMap<usize, Site>>,
}

/// The line of the Python script making this call (whose return address is
/// `ip`), from aclmem's sanitizer when it is loaded
/// (`aclmem_sanitizer_python_site`); `None` for a call that is not
/// Python's, or without the sanitizer (which knows the interpreter's
/// frames; `aclmem explore` always runs under it).
fn python_line(ip: *mut std::ffi::c_void) -> Option<Line> {
    type Ask = unsafe extern "C" fn(*const std::ffi::c_void, *mut std::ffi::c_char, usize) -> u32;
    static FOUND: OnceLock<Option<Ask>> = OnceLock::new();
    let ask = FOUND.get_or_init(|| {
        // SAFETY: a lookup by name in the loaded objects.
        let p =
            unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"aclmem_sanitizer_python_site".as_ptr()) };
        // SAFETY: when present, the symbol is the sanitizer's function of
        // exactly this prototype.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut std::ffi::c_void, Ask>(p) })
    });
    let ask = (*ask)?;
    let mut file = [0u8; 256];
    // SAFETY: `file` is our own buffer of that many bytes; the sanitizer
    // writes a NUL-terminated name into it.
    let line = unsafe { ask(ip, file.as_mut_ptr().cast(), file.len()) };
    let name = std::ffi::CStr::from_bytes_until_nul(&file).ok()?;
    (line != 0).then(|| (name.to_string_lossy().into_owned(), line))
}

/// The program's site for the call whose return address is `ip` and whose
/// native site is `native`: the script's line instead when the native frame
/// names nothing of the program (no line: a framework built without debug
/// information; or aclmem's own Python binding) and the call is Python's.
/// The interpreter is asked only then.
fn program_site(mut native: Site, ip: *mut std::ffi::c_void) -> Site {
    let says_nothing = native.line.is_none()
        || native.object.as_deref().is_some_and(|o| {
            let file = o.rsplit('/').next().unwrap_or(o);
            file.starts_with("_native") && o.contains("/aclmem/")
        });
    if says_nothing && let Some(line) = python_line(ip) {
        native.line = Some(line);
        native.python = true;
    }
    native
}

static LEARN: OnceLock<Option<Learned>> = OnceLock::new();

fn learning() -> Option<&'static Learned> {
    LEARN
        .get_or_init(|| {
            let path = std::env::var_os("ACLMEM_EMU_CALL_LOG").filter(|p| !p.is_empty())?;
            // SAFETY: `write_call_log` is an `extern "C"` function of this
            // library, which stays loaded until the process exits.
            unsafe { libc::atexit(write_call_log) };
            Some(Learned {
                path: path.into(),
                calls: ForkMutex::new(std::collections::HashMap::new),
                native: ForkMutex::new(std::collections::HashMap::new),
            })
        })
        .as_ref()
}

fn learn(name: &'static str, l: &Learned) {
    let Some(ip) = caller(None) else {
        return;
    };
    let native = l
        .native
        .lock()
        .entry(ip as usize)
        .or_insert_with(|| Site::of(ip))
        .clone();
    let site = program_site(native, ip);
    let key = (
        name,
        ip as usize,
        site.python.then(|| site.line.clone()).flatten(),
    );
    l.calls.lock().entry(key).or_insert_with(|| (site, 0)).1 += 1;
}

/// `void aclmem_emu_exiting(void)`: the process ends without its exit
/// handlers (`_exit`); aclmem's sanitizer calls it from its `_exit`, so
/// that the calls of a process that ends so are learned too.
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_emu_exiting() {
    write_call_log();
}

extern "C" fn write_call_log() {
    let _ = std::panic::catch_unwind(|| {
        let Some(l) = LEARN.get().and_then(Option::as_ref) else {
            return;
        };
        let calls = std::mem::take(&mut *l.calls.lock());
        let mut out = String::new();
        for ((function, _, _), (site, count)) in calls {
            let (file, line) = site.line.clone().unzip();
            let record = serde_json::json!({
                "pid": std::process::id(),
                "function": function,
                "object": site.object.as_deref().map(|o| o.rsplit('/').next().unwrap_or(o)),
                "offset": format!("{:#x}", site.offset),
                "file": file,
                "line": line,
                "python": site.python,
                "count": count,
            });
            out.push_str(&record.to_string());
            out.push('\n');
        }
        // One append: the lines of several processes never interleave.
        if let Ok(mut f) = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&l.path)
        {
            let _ = std::io::Write::write_all(&mut f, out.as_bytes());
        }
    });
}

/// Whether aclmem's sanitizer, preloaded, is making its own calls of the
/// library on this thread (`aclmem_sanitizer_internal`): those are not the
/// program's, and are neither counted nor failed.
fn sanitizer_internal() -> bool {
    type Internal = extern "C" fn() -> std::ffi::c_int;
    static FOUND: OnceLock<Option<Internal>> = OnceLock::new();
    let f = FOUND.get_or_init(|| {
        // SAFETY: a lookup by name in the loaded objects.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"aclmem_sanitizer_internal".as_ptr()) };
        // SAFETY: when present, the symbol is the sanitizer's
        // `int aclmem_sanitizer_internal(void)`, of exactly this type.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut std::ffi::c_void, Internal>(p) })
    });
    f.is_some_and(|f| f() != 0)
}

thread_local! {
    /// Whether this thread's last call checked against armed faults was
    /// answered by one ([`aclmem_emu_fault_injected`]).
    static INJECTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `int aclmem_emu_fault_injected(void)`: 1 when the calling thread's last
/// call was answered by an injected fault (`ACLMEM_EMU_FAULTS`), else 0.
/// aclmem's sanitizer asks it of a refusal for lack of memory: an injected
/// one is the test's, not the program's, and gets no out-of-memory report.
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_emu_fault_injected() -> std::ffi::c_int {
    INJECTED.with(std::cell::Cell::get).into()
}

/// The code a fault answers for this call of `name`, if one takes it
/// (after any delay the spec asks for).
pub(crate) fn check(name: &'static str) -> Option<i32> {
    let learned = learning();
    let armed = match plan() {
        Ok(armed) if !armed.is_empty() => Some(armed),
        _ => None,
    };
    if (learned.is_none() && armed.is_none()) || sanitizer_internal() {
        return None;
    }
    if let Some(l) = learned {
        learn(name, l);
    }
    let armed = armed?;
    let mut site: Option<Site> = None;
    let mut answer = None;
    for a in armed {
        let f = &a.fault;
        match f.target {
            Target::Function(n) if n != name => continue,
            _ => {}
        }
        if let Some(want) = &f.site {
            let here = site.get_or_insert_with(|| {
                caller(None)
                    .map(|ip| program_site(Site::of(ip), ip))
                    .unwrap_or_default()
            });
            let line = here
                .line
                .as_ref()
                .map(|(file, line)| (file.as_str(), *line));
            let object = here.object.as_deref().unwrap_or_default();
            if !want.matches(object, here.offset, line) {
                continue;
            }
        }
        let count = if f.machine {
            with_global(|g| Ok(g.emu.count_machine_fault(a.machine_index)))
                .unwrap_or_else(|_| a.count.fetch_add(1, Ordering::Relaxed) + 1)
        } else {
            a.count.fetch_add(1, Ordering::Relaxed) + 1
        };
        if !f.takes(count) {
            continue;
        }
        match f.action {
            Action::Delay(d) => std::thread::sleep(d),
            Action::Fail(code) => {
                if !a.fired.swap(true, Ordering::Relaxed) && !aclmem_emu::env::quiet() {
                    eprintln!(
                        "aclmem-emu: fault: {name} (call {count} {}) answers {code} ({})",
                        match f.target {
                            Target::DeviceLost => "of any function, device-lost",
                            Target::Function(_) => "counted",
                        },
                        aclmem_core::AclError::from_code(code)
                            .and_then(|e| e.name())
                            .unwrap_or("ACLMEM_EMU_FAULTS"),
                    );
                }
                answer.get_or_insert(code);
            }
        }
    }
    // The program's calls checked against armed faults only (the
    // sanitizer's own calls, returned above, leave it as it was).
    INJECTED.with(|i| i.set(answer.is_some()));
    answer
}
