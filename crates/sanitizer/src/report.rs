//! Findings: one line each on stderr, JSON lines to `ACLMEM_SANITIZER_LOG`,
//! a summary at exit, and `ACLMEM_SANITIZER_HALT_ON_ERROR`.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::ffi::{CStr, c_void};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;

/// Where a call was made: the return address of the ACL call in the
/// program, resolved only when a finding needs it, the Python line that
/// made it, if Python code did, and, when `ACLMEM_SANITIZER_STACKS` asks
/// for them, the native frames below it (kept as addresses, interned,
/// symbolised only when reported).
#[derive(Debug, Clone, Copy, Default)]
pub struct Site {
    ra: usize,
    python: u32,
    /// Index + 1 into [`STACKS`] (0: no stack kept).
    stack: u32,
    /// The Python stack's text, one frame per line (0: none kept).
    pystack: u32,
}

/// The most frames kept per stack.
pub const MAX_STACK: usize = 32;

/// Every distinct stack seen, by index (a stack is kept once however many
/// calls share it).
struct Stacks {
    all: Vec<Box<[usize]>>,
    index: rustc_hash::FxHashMap<Box<[usize]>, u32>,
}

static STACKS: Mutex<Option<Stacks>> = Mutex::new(None);

/// The return addresses of the caller's frame (the one `ra` returns into)
/// and the `depth - 1` frames below it.
fn capture(ra: usize, depth: usize) -> u32 {
    let mut frames = [0usize; MAX_STACK];
    let mut n = 0;
    let mut found = false;
    backtrace::trace(|frame| {
        let ip = frame.ip() as usize;
        if ip == 0 {
            return false;
        }
        if !found {
            found = ip == ra;
        }
        if found {
            frames[n] = ip;
            n += 1;
        }
        n < depth
    });
    if n < 2 {
        return 0;
    }
    let key: Box<[usize]> = frames[..n].into();
    let mut stacks = STACKS.lock();
    let s = stacks.get_or_insert_with(|| Stacks {
        all: Vec::new(),
        index: rustc_hash::FxHashMap::default(),
    });
    if let Some(&i) = s.index.get(&key) {
        return i;
    }
    s.all.push(key.clone());
    let i = u32::try_from(s.all.len()).unwrap_or(0);
    s.index.insert(key, i);
    i
}

impl Site {
    /// The site a C entry point handed over (`__builtin_return_address`),
    /// with the Python line making the call, if any. Its native stack is
    /// taken only if a finding is reported during the call
    /// ([`Site::with_stack`]): unwinding costs microseconds.
    pub fn at(ra: *const c_void) -> Site {
        Site {
            ra: ra as usize,
            python: crate::python::call_site(),
            stack: 0,
            pystack: 0,
        }
    }

    /// The site of a call that makes something a later finding may name
    /// (a handle, a reservation, a mapping, an export or import, device or
    /// host memory): with its native stack at once, when
    /// `ACLMEM_SANITIZER_STACKS` asks for one.
    pub fn made_at(ra: *const c_void) -> Site {
        Site::at(ra).with_stack()
    }

    /// The site with the stack below it taken now, if stacks are asked for
    /// and the call is still under way: for Python code the script's frames
    /// (the interpreter's native frames say nothing about the program), else
    /// the native frames below the return address.
    pub fn with_stack(self) -> Site {
        let depth = crate::config()
            .stack_depth
            .load(std::sync::atomic::Ordering::Relaxed);
        if self.stack != 0 || self.pystack != 0 || depth < 2 || self.ra == 0 {
            return self;
        }
        if self.python != 0 {
            return Site {
                pystack: crate::python::call_stack(depth),
                ..self
            };
        }
        Site {
            stack: capture(self.ra, depth),
            ..self
        }
    }

    /// The first frame outside this library, for an entry point that has no
    /// call site of its own (only when a finding needs it: it unwinds).
    pub fn outside() -> Site {
        let own = module_of(Site::outside as *const () as usize);
        let mut ra = 0;
        backtrace::trace(|frame| {
            let ip = frame.ip() as usize;
            if ip == 0 {
                return false;
            }
            if module_of(ip) != own {
                ra = ip;
                return false;
            }
            true
        });
        Site::at(ra as *const c_void)
    }

    /// A site known only by its description (another library's report).
    pub fn described(text: String) -> Site {
        Site {
            ra: 0,
            python: crate::python::intern_text(text),
            stack: 0,
            pystack: 0,
        }
    }

    /// A key that is the same for the same call site.
    pub fn key(&self) -> usize {
        self.ra ^ ((self.python as usize) << 48)
    }

    /// The frames of the native stack kept with the site, described
    /// (`function (file:line)`), the call site first; empty when none was
    /// kept.
    pub fn frames(&self) -> Vec<String> {
        if self.pystack != 0 {
            return crate::python::describe(self.pystack)
                .map(|t| t.lines().map(str::to_owned).collect())
                .unwrap_or_default();
        }
        if self.stack == 0 {
            return Vec::new();
        }
        let frames: Vec<usize> = STACKS
            .lock()
            .as_ref()
            .and_then(|s| s.all.get(self.stack as usize - 1))
            .map(|f| f.to_vec())
            .unwrap_or_default();
        frames
            .into_iter()
            .map(|ra| {
                Site {
                    ra,
                    ..Site::default()
                }
                .describe_native()
            })
            .collect()
    }

    /// The call, as `function (file:line)` of the Python code that made it,
    /// else of the native code when the program has debug information,
    /// else `address in module`.
    pub fn describe(&self) -> String {
        if let Some(p) = crate::python::describe(self.python) {
            return p;
        }
        self.describe_native()
    }

    /// The native call, as `function (file:line)` or `address in module`.
    fn describe_native(&self) -> String {
        if self.ra == 0 {
            return "unknown call site".into();
        }
        let mut out = None;
        // The return address is one past the call: resolve the call.
        backtrace::resolve((self.ra - 1) as *mut c_void, |sym| {
            if out.is_some() {
                return;
            }
            let name = sym.name().map(|n| n.to_string());
            let place = match (sym.filename(), sym.lineno()) {
                (Some(f), Some(l)) => Some(format!(
                    "{}:{l}",
                    f.file_name().map_or_else(
                        || f.display().to_string(),
                        |n| n.to_string_lossy().into_owned()
                    )
                )),
                _ => None,
            };
            out = match (name, place) {
                (Some(n), Some(p)) => Some(format!("{n} ({p})")),
                (Some(n), None) => Some(n),
                (None, Some(p)) => Some(p),
                (None, None) => None,
            };
        });
        out.unwrap_or_else(|| {
            format!(
                "{:#x} in {}",
                self.ra,
                module_of(self.ra).as_deref().unwrap_or("?")
            )
        })
    }
}

/// The file of the loaded object that holds `addr`.
pub fn module_of(addr: usize) -> Option<String> {
    // SAFETY: dladdr only reads the loader's tables; `info` is a live
    // local it fills in.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr as *const c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        Some(
            CStr::from_ptr(info.dli_fname)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The class: `rule`, `portability`, `double-free`, `leak`, ...
    pub class: &'static str,
    /// The ACL function.
    pub call: &'static str,
    /// Its arguments, as written in the report.
    pub args: String,
    /// What is wrong, in words (for rules: the rule).
    pub message: String,
    /// The code the runtime answers (or will answer), if it refuses.
    pub code: Option<i32>,
    /// Where the call was made.
    pub site: Site,
}

struct Sink {
    log: Option<File>,
    counts: BTreeMap<&'static str, u64>,
}

static SINK: Mutex<Option<Sink>> = Mutex::new(None);

fn with_sink<R>(f: impl FnOnce(&mut Sink) -> R) -> R {
    let mut guard = SINK.lock();
    let sink = guard.get_or_insert_with(|| Sink {
        log: std::env::var_os("ACLMEM_SANITIZER_LOG")
            .filter(|v| !v.is_empty())
            .and_then(|p| File::options().create(true).append(true).open(p).ok()),
        counts: BTreeMap::new(),
    });
    f(sink)
}

fn code_name(code: i32) -> String {
    match aclmem_core::AclError::from_code(code).and_then(|e| e.name()) {
        Some(n) => format!("{code} {n}"),
        None => code.to_string(),
    }
}

/// Reports a finding (and halts, if asked to).
pub fn report(mut f: Finding) {
    // A finding made during the call: its stack is still there to take.
    f.site = f.site.with_stack();
    let site = f.site.describe();
    let mut line = format!(
        "aclmem-sanitizer: {}: {}({}): {}",
        f.class, f.call, f.args, f.message
    );
    if let Some(c) = f.code {
        let _ = write!(line, " [the runtime answers {}]", code_name(c));
    }
    let _ = write!(line, " at {site}");
    let stack = f.site.frames();
    for (i, frame) in stack.iter().enumerate().skip(1) {
        let _ = write!(line, "\n    #{i} {frame}");
    }
    let json = serde_json::json!({
        "class": f.class,
        "call": f.call,
        "args": f.args,
        "message": f.message,
        "code": f.code,
        "site": site,
        "stack": stack,
        "pid": std::process::id(),
    });
    // One write per record, to the log (opened to append) and to stderr:
    // the records of several processes sharing them never interleave.
    let mut record = json.to_string();
    record.push('\n');
    line.push('\n');
    with_sink(|s| {
        *s.counts.entry(f.class).or_default() += 1;
        if let Some(log) = &mut s.log {
            let _ = log.write_all(record.as_bytes());
        }
    });
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    if crate::config().halt_on_error {
        summary();
        eprintln!(
            "aclmem-sanitizer: halting on the first finding (ACLMEM_SANITIZER_HALT_ON_ERROR)"
        );
        // SAFETY: ends the process at once, as the other sanitizers do.
        unsafe { libc::_exit(1) };
    }
}

/// Before `fork`: the findings are locked (released by
/// [`release_after_fork`]) so that the child copies them whole.
pub fn hold_for_fork() {
    std::mem::forget(SINK.lock());
}

/// After `fork`: unlocks what [`hold_for_fork`] locked; in the child the
/// counts start again (its summary counts its own findings; the log stays
/// shared, one record per write).
pub fn release_after_fork(child: bool) {
    // SAFETY: `hold_for_fork` left the lock held by this thread, the one
    // that forked (in the child, its only thread).
    unsafe { SINK.force_unlock() };
    if child && let Some(s) = SINK.lock().as_mut() {
        s.counts.clear();
    }
}

/// Number of findings so far.
pub fn total() -> u64 {
    with_sink(|s| s.counts.values().sum())
}

/// The summary line (at exit).
pub fn summary() {
    let (total, parts) = with_sink(|s| {
        let parts: Vec<String> = s.counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
        (s.counts.values().sum::<u64>(), parts)
    });
    if total == 0 {
        eprintln!("aclmem-sanitizer: summary: no findings");
    } else {
        eprintln!(
            "aclmem-sanitizer: summary: {total} finding(s): {}",
            parts.join(", ")
        );
    }
}
