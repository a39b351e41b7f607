//! `libaclmem_sanitizer.so`: checks a program's ACL memory calls, on a real
//! NPU or on the emulator, without changing what the program sees.
//!
//! Preload it (`LD_PRELOAD`, or `aclmem sanitize -- program`): it defines
//! every ACL function of the project's list (`aclmem_sys::FUNCTIONS`; the
//! checked ones through naked entry points that hand over their call
//! site),
//! forwards each call unchanged to the next definition (`dlsym(RTLD_NEXT)`;
//! when the program loads the library itself, `dlopen` of
//! `$ACLMEM_ASCENDCL` or `libascendcl.so`), and checks it against the model
//! of the documented semantics and the rules table:
//!
//! * `rule`: the product and CANN release it runs on refuse the
//!   attribute or location (the rule in words, the code the runtime gives);
//! * `portability`: a product or release of `ACLMEM_SANITIZER_TARGETS`
//!   (`a2,a3@8.3,Ascend910B3@8.0`) would refuse it;
//! * lifetimes: `double-free`, `free-while-mapped`, `use-after-free`,
//!   `unmap-unmapped`, `release-while-mapped`, `release-unreserved`, `overlapping-map`,
//!   `copy-unmapped`, `import-own-export`;
//! * `cycle-growth`: memory held at the end of each sleep of a sleep/wake
//!   loop grows, with the growth per cycle and the place that makes it;
//! * `leak`: what is still held at `aclFinalize` or exit, with the call site
//!   that made it;
//! * sharing: `ipc-key-on-vmm` (a legacy IPC key asked for VMM memory),
//!   `handle-type-as-device` (an import's device id that is a handle type's
//!   value), and, from the events of every process of a run
//!   (`ACLMEM_SANITIZER_SHARING`, joined by `aclmem sanitize`), the
//!   findings that name two processes.
//!
//! Findings go to stderr (one line each), as JSON lines to
//! `ACLMEM_SANITIZER_LOG`, and into a summary at exit;
//! `ACLMEM_SANITIZER_HALT_ON_ERROR=1` stops at the first.
//! `ACLMEM_SANITIZER_TRACE=file` writes the memory timeline.

#![allow(non_snake_case)]

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::sync::OnceLock;

use parking_lot::{Mutex, MutexGuard};

use aclmem_core::{
    AclError, CannVersion, Location, MemAttr, Product, RawPhysicalMemProp, RunMode, Target,
};
use aclmem_sys::{self as sys, AclFunctions};

pub mod audit;
mod cmem;
mod model;
pub mod mstx;
mod python;
pub mod report;
mod sharing;
mod trace;

use aclmem_formats::sharing::Kind;
use model::Model;
use report::{Caller, Class, Finding, Site, report};

/// The settings, read once from the environment.
pub struct Config {
    halt_on_error: bool,
    /// Frames of native stack kept per call site (`ACLMEM_SANITIZER_STACKS`,
    /// 0 to 32; 0, the default of the bare library: the call site only);
    /// [`aclmem_sanitizer_stacks`] changes it while the program runs.
    pub stack_depth: std::sync::atomic::AtomicUsize,
    /// Report every call the library refused (`ACLMEM_SANITIZER_REPORT_API_ERRORS`).
    report_api_errors: bool,
    /// Platforms and releases of the fleet (what a target leaves out is the
    /// running machine's).
    targets: Vec<Target>,
    /// What is reported as leaked (`ACLMEM_SANITIZER_LEAK_CHECK`).
    pub leak_check: LeakCheck,
}

pub use aclmem_formats::LeakCheck;

/// What the sanitizer reports as leaked at `aclFinalize` and at exit:
/// `ACLMEM_SANITIZER_LEAK_CHECK` (anything else than a setting's name:
/// the default, named on stderr). Memory a framework's caching allocator
/// still caches ([`report::FRAMEWORK_ALLOCATORS`]) is what `program`
/// leaves out.
fn leak_check_from_env() -> LeakCheck {
    match std::env::var("ACLMEM_SANITIZER_LEAK_CHECK").as_deref() {
        Ok("") | Err(_) => LeakCheck::default(),
        Ok(name) => LeakCheck::from_name(name).unwrap_or_else(|| {
            eprintln!(
                "aclmem-sanitizer: ACLMEM_SANITIZER_LEAK_CHECK={name}: not full, program or none; using program"
            );
            LeakCheck::default()
        }),
    }
}

/// `a2,a3@8.3,Ascend910B3@9.0,200i-a2:rc`: each entry parsed by the core's
/// [`Target`] parser (the CLI checks them with the same parser and refuses
/// a bad one before the program starts; here one that slips through is
/// named on stderr and left out).
fn parse_targets(text: &str) -> Vec<Target> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.parse::<Target>() {
            Ok(t) => out.push(t),
            Err(e) => eprintln!("aclmem-sanitizer: ACLMEM_SANITIZER_TARGETS: `{item}`: {e}"),
        }
    }
    out
}

/// The settings.
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let flag = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0");
        Config {
            halt_on_error: flag("ACLMEM_SANITIZER_HALT_ON_ERROR"),
            report_api_errors: flag("ACLMEM_SANITIZER_REPORT_API_ERRORS"),
            stack_depth: std::sync::atomic::AtomicUsize::new(
                std::env::var("ACLMEM_SANITIZER_STACKS")
                    .ok()
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0)
                    .min(report::MAX_STACK),
            ),
            targets: parse_targets(&std::env::var("ACLMEM_SANITIZER_TARGETS").unwrap_or_default()),
            leak_check: leak_check_from_env(),
        }
    })
}

// ----- the library underneath -----------------------------------------------

/// Whether `p` is one of this library's own definitions (never "the next
/// one": that would call itself).
fn own(p: *mut c_void) -> bool {
    !p.is_null() && report::module_of(p as usize) == report::module_of(own as *const () as usize)
}

/// The next definition of every function.
fn next() -> &'static AclFunctions {
    static NEXT: OnceLock<AclFunctions> = OnceLock::new();
    NEXT.get_or_init(|| {
        let mut fallback: *mut c_void = std::ptr::null_mut();
        let lookup = |name: &'static str| -> *mut c_void {
            let Ok(c) = std::ffi::CString::new(name) else {
                return std::ptr::null_mut();
            };
            // SAFETY: dlsym with a NUL-terminated name.
            let p = unsafe { libc::dlsym(libc::RTLD_NEXT, c.as_ptr()) };
            if !p.is_null() && !own(p) {
                return p;
            }
            if fallback.is_null() {
                let lib = std::env::var("ACLMEM_ASCENDCL")
                    .ok()
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| "libascendcl.so".into());
                if let Ok(path) = std::ffi::CString::new(lib) {
                    // SAFETY: dlopen of a path; the handle is kept for the
                    // life of the process.
                    fallback =
                        unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
                }
            }
            if fallback.is_null() {
                return std::ptr::null_mut();
            }
            // SAFETY: dlsym on a live handle.
            let p = unsafe { libc::dlsym(fallback, c.as_ptr()) };
            if own(p) { std::ptr::null_mut() } else { p }
        };
        // SAFETY: every symbol found has the documented prototype of its
        // name (the library underneath implements the ACL API); handles
        // are never closed.
        unsafe { AclFunctions::from_lookup(lookup) }
    })
}

/// Calls the next definition of `$name` with the arguments, or answers
/// 207000 (once named on stderr) when the library underneath lacks it.
macro_rules! forward {
    ($name:ident($($arg:expr),* $(,)?)) => {
        match next().$name {
            Some(f) => {
                // SAFETY: `f` is the library's own definition of this
                // function (same prototype), given the caller's arguments
                // unchanged: the caller's contract is passed on.
                #[allow(unused_unsafe)]
                let r = unsafe { f($($arg),*) };
                r
            }
            None => missing(stringify!($name)),
        }
    };
}

/// With `ACLMEM_SANITIZER_REPORT_API_ERRORS`, a call the library refused
/// is a finding (`api-error`) with its code and where it was made.
fn api_error(call: &'static str, r: sys::aclError, site: Site) {
    if r == 0 || !config().report_api_errors {
        return;
    }
    report::report(report::Finding {
        class: Class::ApiError,
        call,
        args: String::new(),
        message: "the library refused the call".into(),
        code: Some(r),
        site,
    });
}

/// An allocation refused for lack of device memory (207001, what
/// torch_npu takes for an OOM): an `out-of-memory` finding at the call,
/// with what held the device in this process then, grouped by the call site
/// that made it, largest first, and the process's reserved address space.
fn out_of_memory(
    call: &'static str,
    r: sys::aclError,
    size: usize,
    device: Option<u32>,
    site: Site,
) {
    if r != AclError::RT_MEMORY_ALLOCATION.code() {
        return;
    }
    let Some(device) = device else {
        return;
    };
    let (holders, (reserved, mapped, gap)) = {
        let m = model();
        (m.holders(device), m.address_space())
    };
    let mib = |b: usize| b as f64 / f64::from(1u32 << 20);
    let held: usize = holders.iter().map(|h| h.1).sum();
    let mut lines: Vec<String> = holders
        .iter()
        .take(OOM_HOLDERS)
        .map(|(s, bytes, count)| {
            format!(
                "{:.1} MiB in {count} object(s) made at {}",
                mib(*bytes),
                s.describe()
            )
        })
        .collect();
    if holders.len() > OOM_HOLDERS {
        lines.push(format!(
            "... and {} more place(s)",
            holders.len() - OOM_HOLDERS
        ));
    }
    lines.push(format!(
        "address space: {:.1} MiB reserved, {:.1} MiB of it mapped, the largest unmapped run {:.1} MiB",
        mib(reserved),
        mib(mapped),
        mib(gap)
    ));
    let mut fields = serde_json::Map::new();
    fields.insert("device".into(), device.into());
    fields.insert("requested".into(), size.into());
    fields.insert("held".into(), held.into());
    fields.insert(
        "holders".into(),
        holders
            .iter()
            .map(|(s, bytes, count)| {
                serde_json::json!({
                    "site": s.describe(),
                    "bytes": bytes,
                    "count": count,
                    "stack": s.frames(),
                })
            })
            .collect(),
    );
    fields.insert(
        "address_space".into(),
        serde_json::json!({ "reserved": reserved, "mapped": mapped, "largest_unmapped": gap }),
    );
    report::report_with(
        report::Finding {
            class: Class::OutOfMemory,
            call,
            args: format!("{size} bytes on device {device}"),
            message: format!(
                "device {device} is out of memory; this process held {:.1} MiB of it, made at {} place(s), largest first:",
                mib(held),
                holders.len()
            ),
            code: Some(r),
            site,
        },
        lines,
        fields,
    );
}

/// Places listed on stderr in an out-of-memory report (the log has all).
const OOM_HOLDERS: usize = 16;

fn missing(name: &str) -> i32 {
    static WARNED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut w = WARNED.lock();
    if !w.iter().any(|n| n == name) {
        eprintln!("aclmem-sanitizer: the library underneath has no {name}; answering 207000");
        w.push(name.to_owned());
    }
    AclError::RT_FEATURE_NOT_SUPPORT.code()
}

// ----- the model and the platform --------------------------------------------

fn model_lock() -> &'static Mutex<Model> {
    static MODEL: OnceLock<Mutex<Model>> = OnceLock::new();
    MODEL.get_or_init(|| Mutex::new(Model::default()))
}

fn model() -> MutexGuard<'static, Model> {
    model_lock().lock()
}

// ----- fork ---------------------------------------------------------------------

/// A child forked after `aclInit` is a new process of the machine (its
/// calls answer 100001 until it initialises): none of its parent's
/// handles, mappings or exports are its own. Its model starts empty, and
/// its findings are its own (the summary at its exit counts only those).
/// The model and the findings are locked across `fork` so that the child
/// never inherits them half-changed or locked by a thread it lacks.
fn fork_handlers_registered() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers functions of this library, which stays loaded.
        unsafe {
            libc::pthread_atfork(
                Some(before_fork),
                Some(parent_after_fork),
                Some(child_after_fork),
            )
        };
    });
}

extern "C" fn before_fork() {
    std::mem::forget(model());
    report::hold_for_fork();
    trace::hold_for_fork();
}

extern "C" fn parent_after_fork() {
    trace::release_after_fork();
    report::release_after_fork(false);
    // SAFETY: `before_fork` left the model locked by this thread, the one
    // that forked; nothing else unlocks it.
    unsafe { model_lock().force_unlock() };
}

extern "C" fn child_after_fork() {
    trace::release_after_fork();
    report::release_after_fork(true);
    // SAFETY: as in the parent: the lock `before_fork` took, in the copy of
    // it this child has (the only thread of the child is the forking one).
    unsafe { model_lock().force_unlock() };
    *model() = Model::default();
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    sharing::started(u32::try_from(parent).ok());
}

/// What the program runs on, asked of the library underneath once.
#[derive(Clone, Copy)]
struct Platform {
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
}

thread_local! {
    /// Whether this thread is making the sanitizer's own calls of the
    /// library (not the program's).
    static INTERNAL: Cell<bool> = const { Cell::new(false) };
}

/// `int aclmem_sanitizer_internal(void)`: 1 while the calling thread makes
/// the sanitizer's own calls of the library (finding the platform), which
/// are not the program's: the emulated library neither counts them for
/// its faults nor fails them. 0 otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_sanitizer_internal() -> std::ffi::c_int {
    std::ffi::c_int::from(INTERNAL.with(Cell::get))
}

fn platform() -> Option<Platform> {
    static PLATFORM: OnceLock<Option<Platform>> = OnceLock::new();
    *PLATFORM.get_or_init(|| {
        INTERNAL.with(|i| i.set(true));
        let found = find_platform();
        INTERNAL.with(|i| i.set(false));
        found
    })
}

fn find_platform() -> Option<Platform> {
    {
        let n = next();
        // SAFETY: documented prototypes; live locals.
        unsafe {
            let soc = n.aclrtGetSocName.map(|f| f()).filter(|p| !p.is_null())?;
            let product = Product::from_soc_name(&CStr::from_ptr(soc).to_string_lossy()).ok()?;
            let mut mode = 1u32;
            if let Some(f) = n.aclrtGetRunMode {
                f(&mut mode);
            }
            let run_mode = RunMode::from_acl_run_mode(mode).unwrap_or(RunMode::Ep);
            let cann = std::env::var("ACLMEM_CANN")
                .ok()
                .and_then(|v| CannVersion::for_installed(&v))
                .or_else(|| {
                    let f = n.aclsysGetCANNVersion?;
                    let mut v = sys::aclCANNPackageVersion::default();
                    (f(sys::ACL_PKG_NAME_CANN, &mut v) == 0).then_some(())?;
                    let text = CStr::from_ptr(v.version.as_ptr())
                        .to_string_lossy()
                        .into_owned();
                    CannVersion::for_installed(&text)
                })
                .unwrap_or(CannVersion::DEFAULT);
            Some(Platform {
                product,
                run_mode,
                cann,
            })
        }
    }
}

thread_local! {
    /// The device set on this thread (for the timeline's attribution).
    static DEVICE: Cell<Option<u32>> = const { Cell::new(None) };
}

fn contexts() -> MutexGuard<'static, HashMap<usize, u32>> {
    static CONTEXTS: OnceLock<Mutex<HashMap<usize, u32>>> = OnceLock::new();
    CONTEXTS.get_or_init(|| Mutex::new(HashMap::new())).lock()
}

// ----- checks shared by the calls ----------------------------------------------

fn prop_text(p: &RawPhysicalMemProp) -> String {
    let attr = MemAttr::from_raw(p.mem_attr)
        .map_or_else(|| p.mem_attr.to_string(), |a| a.c_name().to_owned());
    let loc = Location::from_raw(p.location.type_)
        .map_or_else(|| p.location.type_.to_string(), |l| l.c_name().to_owned());
    format!("{{memAttr {attr}, location {loc} {}}}", p.location.id)
}

/// A denial in words, without the code (the report adds it).
fn plain(d: &aclmem_core::Denial) -> String {
    d.reason().to_string()
}

fn check_rules(p: &RawPhysicalMemProp, size: usize, site: Site) {
    let Some(pl) = platform() else { return };
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
}

/// The calls the emulated library did not carry out because it does not
/// support them (operators, graphs, ...), from its record: one
/// `unsupported-call` finding per function, with the count and the first
/// call site. (A real library has no such record: nothing is reported.)
fn unsupported_calls() {
    let lib = std::env::var("ACLMEM_ASCENDCL")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "libascendcl.so".into());
    let Ok(lib) = std::ffi::CString::new(lib) else {
        return;
    };
    // SAFETY: a handle of a library already loaded (RTLD_NOLOAD), or NULL;
    // never closed (the library stays loaded).
    let handle = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return;
    }
    // SAFETY: dlsym on a live handle, with a NUL-terminated name.
    let f = unsafe { libc::dlsym(handle, c"aclmem_emu_calls_json".as_ptr()) };
    if f.is_null() || own(f) {
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

fn at_exit_registered() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a function of this library, which stays loaded.
        unsafe { libc::atexit(at_exit) };
    });
}

extern "C" fn at_exit() {
    unsupported_calls();
    model().report_leaks("exit", None);
    trace::write_sites();
    trace::flush();
    sharing::event(Kind::Exit, "", None, |_| {});
    report::summary();
}

// ----- the checked calls ----------------------------------------------------------

/// # Safety
/// The C prototype's contract: `handle` and `prop` as `aclrtMallocPhysical`
/// takes them (the library underneath checks them).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(config_path: *const c_char) -> sys::aclError {
    at_exit_registered();
    fork_handlers_registered();
    let r = forward!(aclInit(config_path));
    trace::call("aclInit", None, 0, r);
    if r == 0 {
        sharing::started(None);
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalize() -> sys::aclError {
    // A framework that finalizes the runtime itself (torch_npu, at the
    // interpreter's exit) does so while the program's objects still hold
    // their memory.
    let by = Site::outside().framework_allocator();
    model().report_leaks("aclFinalize", by);
    let r = forward!(aclFinalize());
    trace::call("aclFinalize", None, 0, r);
    trace::flush();
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetDevice(device_id: i32) -> sys::aclError {
    let r = forward!(aclrtSetDevice(device_id));
    if r == 0 {
        DEVICE.with(|d| d.set(u32::try_from(device_id).ok()));
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateContext(
    context: *mut sys::aclrtContext,
    device_id: i32,
) -> sys::aclError {
    let r = forward!(aclrtCreateContext(context, device_id));
    if r == 0 {
        let dev = u32::try_from(device_id).ok();
        DEVICE.with(|d| d.set(dev));
        // SAFETY: a pointer is plain data; the kernel checks the address.
        if let (Some(dev), Some(ctx)) = (dev, unsafe { cmem::read(context) }) {
            contexts().insert(ctx as usize, dev);
        }
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetCurrentContext(context: sys::aclrtContext) -> sys::aclError {
    let r = forward!(aclrtSetCurrentContext(context));
    if r == 0
        && let Some(&dev) = contexts().get(&(context as usize))
    {
        DEVICE.with(|d| d.set(Some(dev)));
    }
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMallocPhysical(
    caller: Caller,
    handle: *mut sys::aclrtDrvMemHandle,
    size: usize,
    prop: *const sys::aclrtPhysicalMemProp,
    flags: u64,
) -> sys::aclError {
    let site = Site::made_at(caller);
    // SAFETY: the prop is plain C data, read through the kernel: an
    // address the process may not read is left to the library to refuse.
    let copy = unsafe { cmem::read(prop) };
    if let Some(p) = &copy {
        check_rules(p, size, site);
    }
    let r = forward!(aclrtMallocPhysical(handle, size, prop, flags));
    api_error("aclrtMallocPhysical", r, site);
    if let Some(p) = &copy
        && p.location.type_ == Location::Device.raw()
    {
        out_of_memory("aclrtMallocPhysical", r, size, Some(p.location.id), site);
    }
    let mut totals = None;
    let mut made = None;
    if r == 0
        && let Some(p) = copy
        // SAFETY: a handle is plain data; the kernel checks the address.
        && let Some(h) = unsafe { cmem::read(handle) }
    {
        let device = (p.location.type_ == Location::Device.raw()).then_some(p.location.id);
        let mut m = model();
        m.handle_made(h as usize, size, device, site, true);
        totals = Some(m.totals(device));
        made = Some(h as usize);
    }
    trace::call_with("aclrtMallocPhysical", totals, size, r, |t| {
        t.h = made.map(|h| h as u64);
        t.attr = copy.map(|p| p.mem_attr);
        t.loc = copy.map(|p| p.location.type_);
        t.id = copy.map(|p| p.location.id);
        t.site = Some(trace::site_id(site));
    });
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtFreePhysical(
    caller: Caller,
    handle: sys::aclrtDrvMemHandle,
) -> sys::aclError {
    let site = Site::called(caller);
    let shared = {
        let m = model();
        m.check_free(handle as usize, site);
        m.shared(handle as usize).cloned()
    };
    let r = forward!(aclrtFreePhysical(handle));
    api_error("aclrtFreePhysical", r, site);
    let mut totals = None;
    if r == 0
        && let Some((id, imported)) = shared
    {
        sharing::event(Kind::Free, "aclrtFreePhysical", Some(site), |e| {
            e.id = Some(id);
            e.h = Some(handle as u64);
            e.imported = Some(imported);
        });
    }
    if r == 0 {
        let mut m = model();
        let device = m.device_of(handle as usize);
        m.handle_freed(handle as usize);
        totals = Some(m.totals(device));
    }
    trace::call_with("aclrtFreePhysical", totals, 0, r, |t| {
        t.h = Some(handle as u64)
    });
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtReserveMemAddress(
    caller: Caller,
    vir_ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expect_ptr: *mut c_void,
    flags: u64,
) -> sys::aclError {
    let site = Site::made_at(caller);
    let r = forward!(aclrtReserveMemAddress(
        vir_ptr, size, alignment, expect_ptr, flags
    ));
    api_error("aclrtReserveMemAddress", r, site);
    let mut made = None;
    if r == 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(va) = unsafe { cmem::read(vir_ptr) }
    {
        model().resv_made(va as usize, size, site);
        made = Some(va as usize);
    }
    trace::call_with("aclrtReserveMemAddress", None, size, r, |t| {
        t.va = made.map(|va| va as u64);
        t.align = Some(alignment as u64);
        t.flags = Some(flags);
        t.site = Some(trace::site_id(site));
    });
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtReleaseMemAddress(
    caller: Caller,
    vir_ptr: *mut c_void,
) -> sys::aclError {
    let site = Site::called(caller);
    model().check_release(vir_ptr as usize, site);
    let r = forward!(aclrtReleaseMemAddress(vir_ptr));
    api_error("aclrtReleaseMemAddress", r, site);
    if r == 0 {
        model().resv_released(vir_ptr as usize);
    }
    trace::call_with("aclrtReleaseMemAddress", None, 0, r, |t| {
        t.va = Some(vir_ptr as u64)
    });
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMapMem(
    caller: Caller,
    vir_ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: sys::aclrtDrvMemHandle,
    flags: u64,
) -> sys::aclError {
    let site = Site::made_at(caller);
    model().check_map(vir_ptr as usize, size, handle as usize, site);
    let r = forward!(aclrtMapMem(vir_ptr, size, offset, handle, flags));
    api_error("aclrtMapMem", r, site);
    // One lock: the mapping, and whether it maps an import (a sharing
    // event).
    let (totals, shared) = if r == 0 {
        let mut m = model();
        let totals = m.mapped(vir_ptr as usize, size, handle as usize, site);
        let shared = m
            .imported_mapping(vir_ptr as usize)
            .map(|(_, id)| id.to_owned());
        (Some(totals), shared)
    } else {
        (None, None)
    };
    if let Some(id) = shared {
        sharing::event(Kind::Map, "aclrtMapMem", Some(site), |e| {
            e.id = Some(id);
            e.h = Some(handle as u64);
            e.va = Some(vir_ptr as u64);
            e.size = Some(size as u64);
        });
    }
    trace::call_with("aclrtMapMem", totals, size, r, |t| {
        t.va = Some(vir_ptr as u64);
        t.h = Some(handle as u64);
        t.site = Some(trace::site_id(site));
    });
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtUnmapMem(
    caller: Caller,
    vir_ptr: *mut c_void,
) -> sys::aclError {
    let site = Site::called(caller);
    let shared = {
        let m = model();
        m.check_unmap(vir_ptr as usize, site);
        m.imported_mapping(vir_ptr as usize)
            .map(|(_, id)| id.to_owned())
    };
    let r = forward!(aclrtUnmapMem(vir_ptr));
    api_error("aclrtUnmapMem", r, site);
    if r == 0
        && let Some(id) = shared
    {
        sharing::event(Kind::Unmap, "aclrtUnmapMem", Some(site), |e| {
            e.id = Some(id);
            e.va = Some(vir_ptr as u64);
        });
    }
    let totals = if r == 0 {
        model().unmapped(vir_ptr as usize)
    } else {
        None
    };
    trace::call_with("aclrtUnmapMem", totals, 0, r, |t| {
        t.va = Some(vir_ptr as u64)
    });
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMemExportToShareableHandle(
    caller: Caller,
    handle: sys::aclrtDrvMemHandle,
    handle_type: sys::aclrtMemHandleType,
    flags: u64,
    shareable_handle: *mut u64,
) -> sys::aclError {
    let site = Site::made_at(caller);
    model().check_live("aclrtMemExportToShareableHandle", handle as usize, site);
    let r = forward!(aclrtMemExportToShareableHandle(
        handle,
        handle_type,
        flags,
        shareable_handle
    ));
    api_error("aclrtMemExportToShareableHandle", r, site);
    if r == 0
        // SAFETY: a `uint64_t`; the kernel checks the address.
        && let Some(id) = unsafe { cmem::read(shareable_handle) }
    {
        exported("aclrtMemExportToShareableHandle", handle as usize, id, site);
    }
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMemExportToShareableHandleV2(
    caller: Caller,
    handle: sys::aclrtDrvMemHandle,
    flags: u64,
    share_type: sys::aclrtMemSharedHandleType,
    shareable_handle: *mut c_void,
) -> sys::aclError {
    let site = Site::made_at(caller);
    model().check_live("aclrtMemExportToShareableHandleV2", handle as usize, site);
    let r = forward!(aclrtMemExportToShareableHandleV2(
        handle,
        flags,
        share_type,
        shareable_handle
    ));
    api_error("aclrtMemExportToShareableHandleV2", r, site);
    if r == 0
        && share_type == sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT
        // SAFETY: a DEFAULT handle is a `uint64_t`; the kernel checks the
        // address.
        && let Some(id) = unsafe { cmem::read(shareable_handle.cast::<u64>().cast_const()) }
    {
        exported(
            "aclrtMemExportToShareableHandleV2",
            handle as usize,
            id,
            site,
        );
    }
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMemImportFromShareableHandle(
    caller: Caller,
    shareable_handle: u64,
    device_id: i32,
    handle: *mut sys::aclrtDrvMemHandle,
) -> sys::aclError {
    let site = Site::made_at(caller);
    model().check_import("aclrtMemImportFromShareableHandle", shareable_handle, site);
    check_import_device(shareable_handle, device_id, site);
    let r = forward!(aclrtMemImportFromShareableHandle(
        shareable_handle,
        device_id,
        handle
    ));
    api_error("aclrtMemImportFromShareableHandle", r, site);
    let made = if r == 0 {
        // SAFETY: a handle is plain data; the kernel checks the address.
        unsafe { cmem::read(handle) }
    } else {
        None
    };
    imported(
        "aclrtMemImportFromShareableHandle",
        shareable_handle,
        r,
        made,
        u32::try_from(device_id).ok(),
        site,
    );
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMemImportFromShareableHandleV2(
    caller: Caller,
    shareable_handle: *mut c_void,
    share_type: sys::aclrtMemSharedHandleType,
    flags: u64,
    handle: *mut sys::aclrtDrvMemHandle,
) -> sys::aclError {
    let site = Site::made_at(caller);
    let id = if share_type == sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT {
        // SAFETY: a DEFAULT shareable handle is a `uint64_t` the caller
        // passes, read through the kernel: an address the process may not
        // read is left to the library to refuse.
        unsafe { cmem::read(shareable_handle.cast::<u64>().cast_const()) }
    } else {
        None
    };
    if let Some(id) = id {
        model().check_import("aclrtMemImportFromShareableHandleV2", id, site);
    }
    let r = forward!(aclrtMemImportFromShareableHandleV2(
        shareable_handle,
        share_type,
        flags,
        handle
    ));
    api_error("aclrtMemImportFromShareableHandleV2", r, site);
    let made = if r == 0 {
        // SAFETY: a handle is plain data; the kernel checks the address.
        unsafe { cmem::read(handle) }
    } else {
        None
    };
    match id {
        Some(id) => imported(
            "aclrtMemImportFromShareableHandleV2",
            id,
            r,
            made,
            DEVICE.with(Cell::get),
            site,
        ),
        // A FABRIC handle: no shareable id to join processes by.
        None => {
            if let Some(h) = made {
                model().handle_made(h as usize, 0, DEVICE.with(Cell::get), site, false);
            }
        }
    }
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMemRetainAllocationHandle(
    caller: Caller,
    vir_ptr: *mut c_void,
    handle: *mut sys::aclrtDrvMemHandle,
) -> sys::aclError {
    let site = Site::made_at(caller);
    let r = forward!(aclrtMemRetainAllocationHandle(vir_ptr, handle));
    api_error("aclrtMemRetainAllocationHandle", r, site);
    if r == 0
        // SAFETY: a handle is plain data; the kernel checks the address.
        && let Some(h) = unsafe { cmem::read(handle) }
    {
        model().handle_made(h as usize, 0, DEVICE.with(Cell::get), site, false);
    }
    r
}

/// After a successful export of `h` as `id`: the model and the sharing
/// event.
fn exported(call: &'static str, h: usize, id: u64, site: Site) {
    // Whether a framework's caching allocator made the handle (its exporter
    // keeping it to the end is that cache, not a leak).
    let cache = {
        let mut m = model();
        m.exported(h, id);
        m.handle_site(h)
    }
    .and_then(|s| s.framework_allocator())
    .is_some();
    // In the timeline: the start of an arrow to each import.
    trace::call_with(call, None, 0, 0, |t| {
        t.h = Some(h as u64);
        t.share = Some(sharing::shareable(id).into());
        t.site = Some(trace::site_id(site));
    });
    sharing::event(Kind::Export, call, Some(site), |e| {
        e.id = Some(sharing::shareable(id));
        e.h = Some(h as u64);
        e.cache = cache;
    });
}

/// After an import of `id` answered `r` (`made`: the handle it made): the
/// model, and the sharing event whatever the answer (an import refused
/// because the exporter freed is a finding of the run).
fn imported(
    call: &'static str,
    id: u64,
    r: sys::aclError,
    made: Option<sys::aclrtDrvMemHandle>,
    device: Option<u32>,
    site: Site,
) {
    if let Some(h) = made {
        // The size is the exporter's; imports do not count as this
        // process's physical memory in the timeline.
        let mut m = model();
        m.handle_made(h as usize, 0, device, site, false);
        m.imported(h as usize, id);
    }
    trace::call_with(call, None, 0, r, |t| {
        t.h = made.map(|h| h as u64);
        t.share = Some(sharing::shareable(id).into());
        t.site = Some(trace::site_id(site));
    });
    sharing::event(Kind::Import, call, Some(site), |e| {
        e.id = Some(sharing::shareable(id));
        e.ret = Some(i64::from(r));
        e.h = made.map(|h| h as u64);
    });
}

/// The constants a program might pass where `aclrtMemImportFromShareableHandle`
/// takes its device id: the handle types and shared-handle types, by value.
const HANDLE_TYPE_VALUES: &[(i32, &str)] = &[
    (
        sys::ACL_MEM_HANDLE_TYPE_NONE as i32,
        "ACL_MEM_HANDLE_TYPE_NONE",
    ),
    (
        sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT as i32,
        "ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT",
    ),
    (
        sys::ACL_MEM_HANDLE_TYPE_POSIX as i32,
        "ACL_MEM_HANDLE_TYPE_POSIX",
    ),
    (
        sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC as i32,
        "ACL_MEM_SHARE_HANDLE_TYPE_FABRIC",
    ),
];

/// `handle-type-as-device`: the device id of a V1 import is not the
/// calling thread's device but is a handle type's value. The runtime takes
/// any device of the machine (the import lands on it, and mapping it where
/// the thread's memory is fails or crosses devices), so nothing refuses it.
fn check_import_device(id: u64, device_id: i32, site: Site) {
    let Some(current) = DEVICE.with(Cell::get) else {
        return;
    };
    if u32::try_from(device_id).ok() == Some(current) {
        return;
    }
    let names: Vec<&str> = HANDLE_TYPE_VALUES
        .iter()
        .filter(|(v, _)| *v == device_id)
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        return;
    }
    report(Finding {
        class: Class::HandleTypeAsDevice,
        call: "aclrtMemImportFromShareableHandle",
        args: format!("{id:#x}, {device_id}"),
        message: format!(
            "the device id {device_id} is not this thread's device ({current}) but the value of {}: \
             a handle type passed where the device id belongs imports onto device {device_id}",
            names.join(" and ")
        ),
        code: None,
        site,
    });
}

unsafe fn device_malloc(
    site: Site,
    name: &'static str,
    f: Option<sys::aclrtMalloc_t>,
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
) -> sys::aclError {
    let r = match f {
        // SAFETY: the library's own definition, given the caller's
        // arguments unchanged.
        Some(f) => unsafe { f(dev_ptr, size, policy) },
        None => missing(name),
    };
    out_of_memory(name, r, size, DEVICE.with(Cell::get), site);
    let mut totals = None;
    let mut made = None;
    if r == 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(p) = unsafe { cmem::read(dev_ptr) }
    {
        totals = Some(model().device_alloc(p as usize, size, DEVICE.with(Cell::get), site));
        made = Some(p as usize);
    }
    trace::call_with(name, totals, size, r, |t| {
        t.va = made.map(|va| va as u64);
        t.site = Some(trace::site_id(site));
    });
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMalloc(
    caller: Caller,
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
) -> sys::aclError {
    // SAFETY: the caller's contract, passed on.
    unsafe {
        device_malloc(
            Site::made_at(caller),
            "aclrtMalloc",
            next().aclrtMalloc,
            dev_ptr,
            size,
            policy,
        )
    }
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMallocAlign32(
    caller: Caller,
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
) -> sys::aclError {
    // SAFETY: the caller's contract, passed on.
    unsafe {
        device_malloc(
            Site::made_at(caller),
            "aclrtMallocAlign32",
            next().aclrtMallocAlign32,
            dev_ptr,
            size,
            policy,
        )
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFree(dev_ptr: *mut c_void) -> sys::aclError {
    let r = forward!(aclrtFree(dev_ptr));
    let totals = if r == 0 {
        model().device_freed(dev_ptr as usize)
    } else {
        None
    };
    trace::call_with("aclrtFree", totals, 0, r, |t| t.va = Some(dev_ptr as u64));
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMallocHost(
    caller: Caller,
    host_ptr: *mut *mut c_void,
    size: usize,
) -> sys::aclError {
    let site = Site::made_at(caller);
    let r = forward!(aclrtMallocHost(host_ptr, size));
    api_error("aclrtMallocHost", r, site);
    if r == 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(p) = unsafe { cmem::read(host_ptr) }
    {
        model().host_alloc(p as usize, size, site);
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreeHost(host_ptr: *mut c_void) -> sys::aclError {
    let r = forward!(aclrtFreeHost(host_ptr));
    if r == 0 {
        model().host_freed(host_ptr as usize);
    }
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMemcpy(
    caller: Caller,
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: sys::aclrtMemcpyKind,
) -> sys::aclError {
    let site = Site::called(caller);
    model().check_copy(
        "aclrtMemcpy",
        dst as usize,
        src as usize,
        count,
        Some(kind),
        site,
    );
    let r = forward!(aclrtMemcpy(dst, dest_max, src, count, kind));
    api_error("aclrtMemcpy", r, site);
    trace::call("aclrtMemcpy", None, count, r);
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMemcpyAsync(
    caller: Caller,
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: sys::aclrtMemcpyKind,
    stream: sys::aclrtStream,
) -> sys::aclError {
    let site = Site::called(caller);
    model().check_copy(
        "aclrtMemcpyAsync",
        dst as usize,
        src as usize,
        count,
        Some(kind),
        site,
    );
    let r = forward!(aclrtMemcpyAsync(dst, dest_max, src, count, kind, stream));
    api_error("aclrtMemcpyAsync", r, site);
    trace::call("aclrtMemcpyAsync", None, count, r);
    r
}

/// # Safety
/// The C prototype's contract.
unsafe extern "C" fn aclmem_san_aclrtMemset(
    caller: Caller,
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
) -> sys::aclError {
    let site = Site::called(caller);
    model().check_copy(
        "aclrtMemset",
        dev_ptr as usize,
        0,
        count.min(max_count),
        None,
        site,
    );
    forward!(aclrtMemset(dev_ptr, max_count, value, count))
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemImportByKey(
    dev_ptr: *mut *mut c_void,
    key: *const c_char,
    flags: u64,
) -> sys::aclError {
    let r = forward!(aclrtIpcMemImportByKey(dev_ptr, key, flags));
    let site = Site::outside();
    api_error("aclrtIpcMemImportByKey", r, site);
    if let Some(id) = key_text(key) {
        trace::call_with("aclrtIpcMemImportByKey", None, 0, r, |t| {
            t.share = Some(id.as_str().into())
        });
        sharing::event(Kind::Import, "aclrtIpcMemImportByKey", Some(site), |e| {
            e.id = Some(id.clone());
            e.ret = Some(i64::from(r));
        });
    }
    if r == 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(p) = unsafe { cmem::read(dev_ptr) }
        && let Some(range) = next().aclrtMemGetAddressRange
    {
        let (mut base, mut size) = (std::ptr::null_mut(), 0usize);
        // SAFETY: the library's documented prototype; live locals.
        if unsafe { range(p, &mut base, &mut size) } == 0 {
            model().foreign_range(base as usize, size);
        }
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetSocName() -> *const c_char {
    match next().aclrtGetSocName {
        // SAFETY: forwarded unchanged.
        Some(f) => unsafe { f() },
        None => std::ptr::null(),
    }
}

/// Forwarded unchanged, not checked.
macro_rules! passthrough {
    ($( $name:ident ( $($arg:ident : $t:ty),* ); )*) => {
        $(
            /// Forwarded unchanged.
            ///
            /// # Safety
            /// The C prototype's contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $t),*) -> sys::aclError {
                let r = forward!($name($($arg),*));
                if r != 0 && config().report_api_errors {
                    api_error(stringify!($name), r, Site::outside());
                }
                r
            }
        )*
    };
}

passthrough! {
    aclrtResetDevice(device_id: i32);
    aclrtResetDeviceForce(device_id: i32);
    aclrtGetDevice(device_id: *mut i32);
    aclrtGetDeviceCount(count: *mut u32);
    aclrtGetRunMode(run_mode: *mut sys::aclrtRunMode);
    aclrtGetVersion(major: *mut i32, minor: *mut i32, patch: *mut i32);
    aclsysGetCANNVersion(name: sys::aclCANNPackageName, version: *mut sys::aclCANNPackageVersion);
    aclrtSynchronizeDevice();
    aclrtSynchronizeDeviceWithTimeout(timeout: i32);
    aclrtDestroyContext(context: sys::aclrtContext);
    aclrtGetCurrentContext(context: *mut sys::aclrtContext);
    aclrtCreateStream(stream: *mut sys::aclrtStream);
    aclrtDestroyStream(stream: sys::aclrtStream);
    aclrtDestroyStreamForce(stream: sys::aclrtStream);
    aclrtSynchronizeStream(stream: sys::aclrtStream);
    aclrtSynchronizeStreamWithTimeout(stream: sys::aclrtStream, timeout: i32);
    aclrtDeviceCanAccessPeer(can: *mut i32, device_id: i32, peer: i32);
    aclrtDeviceEnablePeerAccess(peer: i32, flags: u32);
    aclrtDeviceDisablePeerAccess(peer: i32);
    aclrtGetMemInfo(attr: sys::aclrtMemAttr, free: *mut usize, total: *mut usize);
    aclrtMemGetAllocationGranularity(prop: *mut sys::aclrtPhysicalMemProp, option: sys::aclrtMemGranularityOptions, granularity: *mut usize);
    aclrtMemSetAccess(vir_ptr: *mut c_void, size: usize, desc: *mut sys::aclrtMemAccessDesc, count: usize);
    aclrtMemGetAccess(vir_ptr: *mut c_void, location: *mut sys::aclrtMemLocation, flag: *mut u64);
    aclrtMemGetAddressRange(ptr: *mut c_void, pbase: *mut *mut c_void, psize: *mut usize);
    aclrtMemGetAllocationPropertiesFromHandle(handle: sys::aclrtDrvMemHandle, prop: *mut sys::aclrtPhysicalMemProp);
    aclrtPointerGetAttributes(ptr: *const c_void, attributes: *mut sys::aclrtPtrAttributes);
    aclrtDeviceGetBareTgid(pid: *mut i32);
}

// ----- sharing: whitelists and legacy IPC keys ------------------------------------

/// A pid whitelist set on `id` (answered `r`): a sharing event.
fn whitelisted(call: &'static str, id: String, pid: *const i32, num: usize, r: sys::aclError) {
    let site = Site::outside();
    api_error(call, r, site);
    sharing::event(Kind::SetPid, call, Some(site), |e| {
        e.id = Some(id);
        e.pids = sharing::pids(pid, num).into_iter().map(i64::from).collect();
        e.ret = Some(i64::from(r));
    });
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandle(
    shareable: u64,
    pid: *mut i32,
    num: usize,
) -> sys::aclError {
    let r = forward!(aclrtMemSetPidToShareableHandle(shareable, pid, num));
    whitelisted(
        "aclrtMemSetPidToShareableHandle",
        sharing::shareable(shareable),
        pid,
        num,
        r,
    );
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandleV2(
    shareable: *mut c_void,
    share_type: sys::aclrtMemSharedHandleType,
    pid: *mut i32,
    num: usize,
) -> sys::aclError {
    let r = forward!(aclrtMemSetPidToShareableHandleV2(
        shareable, share_type, pid, num
    ));
    if share_type == sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT
        // SAFETY: a DEFAULT shareable handle is a `uint64_t`, read through
        // the kernel.
        && let Some(id) = unsafe { cmem::read(shareable.cast::<u64>().cast_const()) }
    {
        whitelisted(
            "aclrtMemSetPidToShareableHandleV2",
            sharing::shareable(id),
            pid,
            num,
            r,
        );
    } else {
        api_error("aclrtMemSetPidToShareableHandleV2", r, Site::outside());
    }
    r
}

/// The text of a legacy IPC key a program passed (at most the 65 bytes the
/// runtime fixes, up to its NUL), read through the kernel.
fn key_text(key: *const c_char) -> Option<String> {
    if key.is_null() {
        return None;
    }
    let mut buf = [0u8; 65];
    // Read what is readable of the 65 bytes: a short key may end near the
    // end of a page.
    let mut n = buf.len();
    while n > 0 && !cmem::read_bytes(key as usize, &mut buf[..n]) {
        n /= 2;
    }
    let end = buf[..n].iter().position(|&b| b == 0)?;
    Some(format!("key:{}", String::from_utf8_lossy(&buf[..end])))
}

/// `ipc-key-on-vmm`, then the call; a key made is a sharing event.
///
/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemGetExportKey(
    dev_ptr: *mut c_void,
    size: usize,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> sys::aclError {
    let vmm = model().mapping_containing(dev_ptr as usize);
    let site = Site::outside();
    if let Some((start, h, made)) = vmm {
        report(Finding {
            class: Class::IpcKeyOnVmm,
            call: "aclrtIpcMemGetExportKey",
            args: format!("{:#x}, {size:#x}", dev_ptr as usize),
            message: format!(
                "legacy IPC keys share aclrtMalloc memory; this address is in the mapping of \
                 physical handle {h:#x} at {start:#x} (made at {}): share the handle with \
                 aclrtMemExportToShareableHandle",
                made.describe()
            ),
            code: Some(AclError::RT_PARAM_INVALID.code()),
            site,
        });
    }
    let r = forward!(aclrtIpcMemGetExportKey(dev_ptr, size, key, len, flags));
    api_error("aclrtIpcMemGetExportKey", r, site);
    if r == 0
        && let Some(id) = key_text(key)
    {
        trace::call_with("aclrtIpcMemGetExportKey", None, size, r, |t| {
            t.va = Some(dev_ptr as u64);
            t.share = Some(id.as_str().into());
        });
        sharing::event(Kind::Export, "aclrtIpcMemGetExportKey", Some(site), |e| {
            e.id = Some(id.clone());
            e.va = Some(dev_ptr as u64);
        });
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemSetImportPid(
    key: *const c_char,
    pid: *mut i32,
    num: usize,
) -> sys::aclError {
    let r = forward!(aclrtIpcMemSetImportPid(key, pid, num));
    match key_text(key) {
        Some(id) => whitelisted("aclrtIpcMemSetImportPid", id, pid, num, r),
        None => api_error("aclrtIpcMemSetImportPid", r, Site::outside()),
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemClose(key: *const c_char) -> sys::aclError {
    forward!(aclrtIpcMemClose(key))
}

// ----- entry points that hand over their call site ------------------------------

/// Defines the exported `$name` as a naked trampoline that inserts its
/// return address (the program's call site) before the `$n` arguments and
/// jumps to `$imp`, which returns straight to the caller. Without frame
/// pointers or unwinding, this is the one exact way to know the call site.
/// On other architectures the call site is unknown (reports say so).
macro_rules! trampoline {
    ($name:ident => $imp:ident, $n:tt, ($($arg:ident: $t:ty),*)) => {
        /// Checked, then forwarded unchanged.
        ///
        /// # Safety
        /// The C prototype's contract.
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        #[unsafe(naked)]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $t),*) -> sys::aclError {
            shift!($n, $imp)
        }

        /// Checked, then forwarded unchanged.
        ///
        /// # Safety
        /// The C prototype's contract.
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $t),*) -> sys::aclError {
            // SAFETY: the caller's contract, passed on.
            unsafe { $imp(Caller::UNKNOWN, $($arg),*) }
        }
    };
}

/// The argument shift and jump of a trampoline with `n` arguments (all in
/// integer registers: pointers, sizes, 32- and 64-bit integers). On x86_64
/// the inserted argument is the stack pointer at entry, the address of the
/// slot that holds the return address ([`Caller`]: the slot also keys the
/// stack cache); on aarch64 the return address itself (`x30`).
#[cfg(target_arch = "x86_64")]
macro_rules! shift {
    (1, $f:ident) => { core::arch::naked_asm!("mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
    (2, $f:ident) => { core::arch::naked_asm!("mov rdx, rsi", "mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
    (3, $f:ident) => { core::arch::naked_asm!("mov rcx, rdx", "mov rdx, rsi", "mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
    (4, $f:ident) => { core::arch::naked_asm!("mov r8, rcx", "mov rcx, rdx", "mov rdx, rsi", "mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
    (5, $f:ident) => { core::arch::naked_asm!("mov r9, r8", "mov r8, rcx", "mov rcx, rdx", "mov rdx, rsi", "mov rsi, rdi", "mov rdi, rsp", "jmp {f}", f = sym $f) };
}

#[cfg(target_arch = "aarch64")]
macro_rules! shift {
    (1, $f:ident) => { core::arch::naked_asm!("mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
    (2, $f:ident) => { core::arch::naked_asm!("mov x2, x1", "mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
    (3, $f:ident) => { core::arch::naked_asm!("mov x3, x2", "mov x2, x1", "mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
    (4, $f:ident) => { core::arch::naked_asm!("mov x4, x3", "mov x3, x2", "mov x2, x1", "mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
    (5, $f:ident) => { core::arch::naked_asm!("mov x5, x4", "mov x4, x3", "mov x3, x2", "mov x2, x1", "mov x1, x0", "mov x0, x30", "b {f}", f = sym $f) };
}

trampoline!(aclrtMallocPhysical => aclmem_san_aclrtMallocPhysical, 4,
    (handle: *mut sys::aclrtDrvMemHandle, size: usize, prop: *const sys::aclrtPhysicalMemProp, flags: u64));
trampoline!(aclrtFreePhysical => aclmem_san_aclrtFreePhysical, 1, (handle: sys::aclrtDrvMemHandle));
trampoline!(aclrtReserveMemAddress => aclmem_san_aclrtReserveMemAddress, 5,
    (vir_ptr: *mut *mut c_void, size: usize, alignment: usize, expect_ptr: *mut c_void, flags: u64));
trampoline!(aclrtReleaseMemAddress => aclmem_san_aclrtReleaseMemAddress, 1, (vir_ptr: *mut c_void));
trampoline!(aclrtMapMem => aclmem_san_aclrtMapMem, 5,
    (vir_ptr: *mut c_void, size: usize, offset: usize, handle: sys::aclrtDrvMemHandle, flags: u64));
trampoline!(aclrtUnmapMem => aclmem_san_aclrtUnmapMem, 1, (vir_ptr: *mut c_void));
trampoline!(aclrtMemExportToShareableHandle => aclmem_san_aclrtMemExportToShareableHandle, 4,
    (handle: sys::aclrtDrvMemHandle, handle_type: sys::aclrtMemHandleType, flags: u64, shareable: *mut u64));
trampoline!(aclrtMemExportToShareableHandleV2 => aclmem_san_aclrtMemExportToShareableHandleV2, 4,
    (handle: sys::aclrtDrvMemHandle, flags: u64, share_type: sys::aclrtMemSharedHandleType, shareable: *mut c_void));
trampoline!(aclrtMemImportFromShareableHandle => aclmem_san_aclrtMemImportFromShareableHandle, 3,
    (shareable: u64, device_id: i32, handle: *mut sys::aclrtDrvMemHandle));
trampoline!(aclrtMemImportFromShareableHandleV2 => aclmem_san_aclrtMemImportFromShareableHandleV2, 4,
    (shareable: *mut c_void, share_type: sys::aclrtMemSharedHandleType, flags: u64, handle: *mut sys::aclrtDrvMemHandle));
trampoline!(aclrtMemRetainAllocationHandle => aclmem_san_aclrtMemRetainAllocationHandle, 2,
    (vir_ptr: *mut c_void, handle: *mut sys::aclrtDrvMemHandle));
trampoline!(aclrtMalloc => aclmem_san_aclrtMalloc, 3, (dev_ptr: *mut *mut c_void, size: usize, policy: u32));
trampoline!(aclrtMallocAlign32 => aclmem_san_aclrtMallocAlign32, 3, (dev_ptr: *mut *mut c_void, size: usize, policy: u32));
trampoline!(aclrtMallocHost => aclmem_san_aclrtMallocHost, 2, (host_ptr: *mut *mut c_void, size: usize));
trampoline!(aclrtMemcpy => aclmem_san_aclrtMemcpy, 5,
    (dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: sys::aclrtMemcpyKind));
trampoline!(aclrtMemset => aclmem_san_aclrtMemset, 4, (dev_ptr: *mut c_void, max_count: usize, value: i32, count: usize));

/// `aclrtMemcpyAsync` has six arguments: with the call site there would be
/// seven, one on the stack; its reports name no call site.
///
/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: sys::aclrtMemcpyKind,
    stream: sys::aclrtStream,
) -> sys::aclError {
    // SAFETY: the caller's contract, passed on.
    unsafe { aclmem_san_aclrtMemcpyAsync(Caller::UNKNOWN, dst, dest_max, src, count, kind, stream) }
}

/// Every function of the list is defined here with its prototype.
macro_rules! prototypes {
    ($($name:ident: $ty:ident = $policy:ident;)*) => {
        $( const _: aclmem_sys::$ty = $name; )*
    };
}
aclmem_sys::with_acl_functions!(prototypes);

/// Present in a process the sanitizer is loaded into (for tools that ask).
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_sanitizer_findings() -> u64 {
    report::total()
}

/// `void aclmem_sanitizer_phase(const char *name)`: marks a phase of the
/// program. `sleep` (memory is being given back) and `wake` (it is being
/// taken again) bound the sleep/wake cycles whose growth `cycle-growth`
/// reports, in place of the heuristic (an unmap, then a map at the same
/// address); any name is a marker in the timeline. NULL is ignored.
///
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_sanitizer_phase(name: *const c_char) {
    if name.is_null() {
        return;
    }
    // Read through the kernel (a bad pointer is ignored, never a crash),
    // up to 255 bytes.
    let mut buf = [0u8; 256];
    let mut len = 0;
    while len < buf.len() - 1 && cmem::read_bytes(name as usize + len, &mut buf[len..=len]) {
        if buf[len] == 0 {
            break;
        }
        len += 1;
    }
    if len == 0 {
        return;
    }
    let name = String::from_utf8_lossy(&buf[..len]).into_owned();
    phase(Some(&name), &name);
}

/// A phase of the program: `which` (`sleep`, `wake`) bounds the sleep/wake
/// cycles; `label` is its marker in the timeline.
fn phase(which: Option<&str>, label: &str) {
    if let Some(which) = which {
        model().phase(which);
    }
    trace::call_with("phase", None, 0, 0, |t| t.name = Some(label.into()));
}

/// `unsigned aclmem_sanitizer_stacks(unsigned depth)`: from now on, keep
/// `depth` frames of native stack per call site (0 or 1: the call site
/// only; at most 32); answers the depth in effect before. For a program
/// that wants stacks only around the part it is debugging.
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_sanitizer_stacks(depth: u32) -> u32 {
    let depth = (depth as usize).min(report::MAX_STACK);
    let old = config()
        .stack_depth
        .swap(depth, std::sync::atomic::Ordering::Relaxed);
    u32::try_from(old).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod target_tests {
    use super::*;

    #[test]
    fn targets_use_the_core_parsers() {
        // `A2` was refused here while `aclmem matrix --product A2` took it.
        let t = |product, run_mode, cann| Target {
            product,
            run_mode,
            cann,
        };
        assert_eq!(
            parse_targets("A2, atlas-a3@8.3.RC1,Ascend910B3@9.0, AtlasTraining,200i-a2:rc@8.3"),
            vec![
                t(Product::AtlasA2, None, None),
                t(Product::AtlasA3, None, Some(CannVersion::V8_3)),
                t(Product::AtlasA2, None, Some(CannVersion::V9_0)),
                t(Product::AtlasTraining, None, None),
                t(
                    Product::Atlas200IA2,
                    Some(RunMode::Rc),
                    Some(CannVersion::V8_3)
                ),
            ]
        );
        assert!(parse_targets("a2@8.3.garbage,a9,a2:xp").is_empty());
    }
}
