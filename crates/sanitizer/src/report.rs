//! Findings: one line each on stderr, JSON lines to `ACLMEM_SANITIZER_LOG`,
//! a summary at exit, and `ACLMEM_SANITIZER_HALT_ON_ERROR`.

use aclmem_fork::{ForkMutex, KeptMutex};
pub use aclmem_formats::finding::{self, Class};
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
///
/// Two words, no padding: a site is copied at every call, and a value of
/// two words travels in registers (a third word, or padding, made every
/// copy a trip through memory that stalled on the partial stores before it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Site {
    ra: usize,
    python: u32,
    /// The stack kept (0: none): for a Python site (`python` not 0) the
    /// number of the Python stack's text, one frame per line; else index + 1
    /// into [`STACKS`].
    stack: u32,
}

/// The most frames kept per stack.
pub const MAX_STACK: usize = 32;

/// What a checked entry point knows of its caller, as its trampoline hands
/// it over: on x86_64 the stack pointer at entry, which is the address of
/// the slot holding the return address (the call site is read from it);
/// elsewhere the return address itself. Only entry points receive one, and
/// only for the duration of their call.
#[repr(transparent)]
#[derive(Debug, Clone, Copy)]
pub struct Caller(*const c_void);

impl Caller {
    /// No call site (an entry point without a trampoline).
    pub const UNKNOWN: Caller = Caller(std::ptr::null());

    /// The return address into the program (0: unknown).
    pub fn ra(self) -> usize {
        if self.0.is_null() {
            return 0;
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: the trampoline passed its stack pointer at entry: the
            // slot the `call` wrote the return address to, live until the
            // entry point returns (a `Caller` is used only during it).
            unsafe { self.0.cast::<usize>().read() }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.0 as usize
        }
    }

    /// The address of the slot holding the return address (0 where the
    /// trampoline does not hand it over).
    fn slot(self) -> usize {
        if cfg!(target_arch = "x86_64") {
            self.0 as usize
        } else {
            0
        }
    }
}

/// Every distinct stack seen, by index (a stack is kept once however many
/// calls share it).
struct Stacks {
    all: Vec<Box<[usize]>>,
    index: rustc_hash::FxHashMap<Box<[usize]>, u32>,
    /// Stacks by where their call was made (x86_64): (return address,
    /// address of its slot, depth) -> the stack and, for each of its
    /// frames but the last, the stack slot that held the next frame's
    /// return address and that value. A call from the same place at the
    /// same stack depth whose slots still hold those values has that same
    /// stack: reading a few words replaces unwinding (microseconds per
    /// capture with libgcc's unwinder).
    by_call: rustc_hash::FxHashMap<CallPlace, (u32, Box<[StackSlot]>)>,
}

/// Where a call was made: its return address, the address of the slot
/// holding it, and the stack depth asked for.
type CallPlace = (usize, usize, usize);

/// A stack slot and the return address it held.
type StackSlot = (usize, usize);

/// Call places remembered for the stack cache (beyond it, it starts over).
const CALL_PLACES: usize = 4096;

static STACKS: ForkMutex<Option<Stacks>> = ForkMutex::new(|| None);

/// The return addresses of the caller's frame (the one `ra` returns into)
/// and the `depth - 1` frames below it. `slot`: where the return address
/// is on the stack (0: unknown), which lets a call from the same place at
/// the same depth reuse the stack it had, after checking it.
fn capture(ra: usize, depth: usize, slot: usize) -> u32 {
    if slot != 0
        && let Some(s) = STACKS.lock().as_ref()
        && let Some((stack, slots)) = s.by_call.get(&(ra, slot, depth))
        && slots
            .iter()
            .all(|&(at, value)| crate::cmem::stack_word(at) == Some(value))
    {
        return *stack;
    }
    let mut frames = [0usize; MAX_STACK];
    // Each frame's stack pointer as the unwinder gives it (libgcc's
    // `_Unwind_GetCFA`: the stack pointer the frame had when the frame
    // above returned into it); on x86_64 the word below it is the frame's
    // own return address, pushed by the call that left it.
    let mut sps = [0usize; MAX_STACK];
    let mut n = 0;
    let mut found = false;
    crate::unwind::trace(|frame| {
        let ip = frame.ip() as usize;
        if ip == 0 {
            return false;
        }
        if !found {
            found = ip == ra;
        }
        if found {
            frames[n] = ip;
            sps[n] = frame.sp() as usize;
            n += 1;
        }
        n < depth
    });
    if n < 2 {
        return 0;
    }
    let key: Box<[usize]> = frames[..n].into();
    // The slots that hold the frames' return addresses (the first one's is
    // `slot`, part of the key), kept only if they hold what the unwinder
    // found now: where that is not how the platform lays frames out,
    // nothing is cached.
    let slots: Option<Box<[StackSlot]>> = (slot != 0 && sps[0].wrapping_sub(8) == slot)
        .then(|| {
            (1..n)
                .map(|i| (sps[i].wrapping_sub(8), frames[i]))
                .collect::<Box<[_]>>()
        })
        .filter(|slots| {
            slots
                .iter()
                .all(|&(at, value)| crate::cmem::stack_word(at) == Some(value))
        });
    let mut stacks = STACKS.lock();
    let s = stacks.get_or_insert_with(|| Stacks {
        all: Vec::new(),
        index: rustc_hash::FxHashMap::default(),
        by_call: rustc_hash::FxHashMap::default(),
    });
    let i = match s.index.get(&key) {
        Some(&i) => i,
        None => {
            s.all.push(key.clone());
            let i = u32::try_from(s.all.len()).unwrap_or(0);
            s.index.insert(key, i);
            i
        }
    };
    if let Some(slots) = slots {
        if s.by_call.len() >= CALL_PLACES {
            s.by_call.clear();
        }
        s.by_call.insert((ra, slot, depth), (i, slots));
    }
    i
}

impl Site {
    /// The site a C entry point handed over (`__builtin_return_address`),
    /// with the Python line making the call, if any. Its native stack is
    /// taken only if a finding is reported during the call
    /// ([`Site::with_stack`]): unwinding costs microseconds.
    #[inline]
    pub fn at(ra: *const c_void) -> Site {
        // A call through `ctypes` (no GIL held): its Python site and stack
        // are taken now, while the sanitizer holds no lock.
        let depth = crate::config::config()
            .stack_depth
            .load(std::sync::atomic::Ordering::Relaxed);
        let (python, pystack) = crate::python::site_of_call(ra as usize, depth);
        Site {
            ra: ra as usize,
            python,
            stack: if python != 0 { pystack } else { 0 },
        }
    }

    /// The native call whose return address is `ra`, described as
    /// [`Site::describe`] describes one (nothing of Python is asked).
    pub fn native(ra: usize) -> String {
        Site {
            ra,
            ..Site::default()
        }
        .describe_native()
    }

    /// The site of a call that makes something a later finding may name
    /// (a handle, a reservation, a mapping, an export or import, device or
    /// host memory): with its native stack at once, when
    /// `ACLMEM_SANITIZER_STACKS` asks for one.
    #[inline]
    pub fn made_at(caller: Caller) -> Site {
        Site::called(caller).with_stack_from(caller.slot())
    }

    /// The site of an entry point's call ([`Site::at`] its return address).
    #[inline]
    pub fn called(caller: Caller) -> Site {
        Site::at(caller.ra() as *const c_void)
    }

    /// The site with the stack below it taken now, if stacks are asked for
    /// and the call is still under way: for Python code the script's frames
    /// (the interpreter's native frames say nothing about the program), else
    /// the native frames below the return address.
    pub fn with_stack(self) -> Site {
        self.with_stack_from(0)
    }

    /// [`Site::with_stack`], knowing where on the stack the call's return
    /// address is (0: not known). Asked at every call that makes something:
    /// whether a stack is wanted is decided here, inline; taking it is not.
    #[inline]
    fn with_stack_from(self, slot: usize) -> Site {
        let depth = crate::config::config()
            .stack_depth
            .load(std::sync::atomic::Ordering::Relaxed);
        if self.stack != 0 || depth < 2 || self.ra == 0 {
            return self;
        }
        self.stack_taken(depth, slot)
    }

    /// The site with `depth` frames of stack taken now.
    #[inline(never)]
    fn stack_taken(self, depth: usize, slot: usize) -> Site {
        if self.python != 0 {
            return Site {
                stack: crate::python::call_stack(depth),
                ..self
            };
        }
        Site {
            stack: capture(self.ra, depth, slot),
            ..self
        }
    }

    /// The first frame outside this library, for an entry point that has no
    /// call site of its own (only when a finding needs it: it unwinds).
    pub fn outside() -> Site {
        let own = module_of(Site::outside as *const () as usize);
        let mut ra = 0;
        crate::unwind::trace(|frame| {
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

    /// The first frame of the program itself: outside this library and
    /// outside the C library (where `exit` runs the exit handlers from),
    /// for the end of a process (the line that called `exit` or `_exit`,
    /// or where `main` returned).
    pub fn program() -> Site {
        let own = module_of(Site::program as *const () as usize);
        let libc = module_of(libc::exit as *const () as usize);
        let mut ra = 0;
        crate::unwind::trace(|frame| {
            let ip = frame.ip() as usize;
            if ip == 0 {
                return false;
            }
            let module = module_of(ip);
            if module != own && module != libc {
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
        }
    }

    /// The return address of the call (0: not known).
    pub fn ra(&self) -> usize {
        self.ra
    }

    /// The number of the Python site's text (0: not Python's).
    pub fn python(&self) -> u32 {
        self.python
    }

    /// A key that is the same for the same call site.
    pub fn key(&self) -> usize {
        self.ra ^ ((self.python as usize) << 48)
    }

    /// The frames of the native stack kept with the site, described
    /// (`function (file:line)`), the call site first; empty when none was
    /// kept.
    pub fn frames(&self) -> Vec<String> {
        if self.stack == 0 {
            return Vec::new();
        }
        if self.python != 0 {
            return crate::python::describe(self.stack)
                .map(|t| t.lines().map(str::to_owned).collect())
                .unwrap_or_default();
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
        crate::unwind::resolve((self.ra - 1) as *mut c_void, |sym| {
            if out.is_some() {
                return;
            }
            let name = sym
                .name()
                .map(|n| aclmem_formats::site::function_name(n.as_bytes(), || n.to_string()));
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

/// The libraries that hold a framework's caching allocator: memory their
/// calls made and still hold when the runtime finalizes is the framework's
/// cache (freed blocks it keeps for reuse), which the runtime releases with
/// the device. torch_npu's `NPUCachingAllocator` (and its expandable
/// segments) is in `libtorch_npu.so` (docs/torch-npu.md).
pub const FRAMEWORK_ALLOCATORS: &[&str] = &["libtorch_npu.so"];

impl Site {
    /// The framework library whose caching allocator made the call, if
    /// one did (resolved with `dladdr`: only at the end, never per call).
    pub fn framework_allocator(&self) -> Option<&'static str> {
        if self.ra == 0 {
            return None;
        }
        let module = module_of(self.ra)?;
        let file = module.rsplit('/').next()?;
        FRAMEWORK_ALLOCATORS.iter().copied().find(|f| *f == file)
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
    /// What it is about.
    pub class: Class,
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
    counts: BTreeMap<Class, u64>,
}

static SINK: KeptMutex<Option<Sink>> = KeptMutex::new(None);

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
pub fn report(f: Finding) {
    report_with(f, Vec::new(), serde_json::Map::new());
}

/// Reports the finding `f` makes, from a check on the hot path of a call
/// (the model's): a finding is rare there, and building one (its texts)
/// is kept out of line, so that the check's own code stays small and the
/// common case runs through fewer instructions and cache lines.
#[cold]
#[inline(never)]
pub fn report_cold(f: impl FnOnce() -> Finding) {
    report(f());
}

/// Reports a finding with `lines` more on stderr (after its stack) and
/// `fields` more in its log record.
pub fn report_with(
    mut f: Finding,
    lines: Vec<String>,
    fields: serde_json::Map<String, serde_json::Value>,
) {
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
    for more in &lines {
        let _ = write!(line, "\n  {more}");
    }
    let json = finding::Record {
        class: f.class,
        call: f.call.to_owned(),
        args: f.args.clone(),
        message: f.message.clone(),
        code: f.code,
        site,
        stack,
        pid: std::process::id(),
        more: fields,
    };
    // One write per record, to the log (opened to append) and to stderr:
    // the records of several processes sharing them never interleave.
    let mut record = serde_json::to_string(&json).unwrap_or_default();
    record.push('\n');
    line.push('\n');
    with_sink(|s| {
        *s.counts.entry(f.class).or_default() += 1;
        if let Some(log) = &mut s.log {
            let _ = log.write_all(record.as_bytes());
        }
    });
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    if crate::config::config().halt_on_error {
        summary();
        eprintln!(
            "aclmem-sanitizer: halting on the first finding (ACLMEM_SANITIZER_HALT_ON_ERROR)"
        );
        // Ends the process at once, as the other sanitizers do (without
        // the checks of its end).
        crate::checks::end_now(1);
    }
}

/// Before `fork`: the findings are locked (let go by
/// `aclmem_fork::release_held` in both processes) so that the child copies
/// them whole.
pub fn hold_for_fork() {
    aclmem_fork::hold(SINK.lock());
}

/// After `fork`, in the child (the lock [`hold_for_fork`] took let go): the
/// counts start again (its summary counts its own findings; the log stays
/// shared, one record per write).
pub fn after_fork_in_child() {
    if let Some(s) = SINK.lock().as_mut() {
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
