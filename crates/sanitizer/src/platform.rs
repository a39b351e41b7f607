//! The model of the process's memory, fork, and what the program runs on (product, release, run mode), asked of the library underneath once.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::OnceLock;

use aclmem_core::{CannVersion, Product, RunMode};
use aclmem_sys as sys;
use std::sync::MutexGuard;

use aclmem_fork::{ForkMutex, ForkMutexGuard, KeptMutex};

use crate::model::Model;
use crate::underneath::next;
use crate::{report, sharing, trace};

/// The part of the model that only the cold calls touch (exports, host
/// blocks, IPC imports, the record of sleeps), behind its lock: the last
/// of the model's locks in the lock order (`model::shards`).
pub(crate) fn model_lock() -> &'static KeptMutex<Model> {
    static MODEL: OnceLock<KeptMutex<Model>> = OnceLock::new();
    MODEL.get_or_init(|| KeptMutex::new(Model::default()))
}

pub(crate) fn model() -> MutexGuard<'static, Model> {
    model_lock().lock()
}

// ----- fork ---------------------------------------------------------------------

/// A child forked after `aclInit` is a new process of the machine (its
/// calls answer 100001 until it initialises): none of its parent's
/// handles, mappings or exports are its own. Its model starts empty, and
/// its findings are its own (the summary at its exit counts only those).
/// The model and the findings are locked across `fork` so that the child
/// never inherits them half-changed or locked by a thread it lacks.
pub(crate) fn fork_handlers_registered() {
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
    // The settings every hook reads are made before the fork, by this
    // thread or (waiting for it) by the one making them now: a child never
    // inherits one half made, whose maker it lacks.
    settled();
    // The model's shards, then the rest of it: the lock order.
    crate::model::whole().hold_for_fork();
    aclmem_fork::hold(model());
    crate::mstx::hold_for_fork();
    report::hold_for_fork();
    trace::hold_for_fork();
    // A leaf: taken under the model, never the other way round.
    crate::unwind::hold_for_fork();
}

extern "C" fn parent_after_fork() {
    // Unwinding, the trace, the report, the pools and the model (its rest,
    // then its shards), the last taken first.
    aclmem_fork::release_held();
}

extern "C" fn child_after_fork() {
    crate::checks::forked();
    // The copies the forking thread, the child's only thread, holds: std's
    // locks, so letting them go hands nothing to a thread of the parent.
    aclmem_fork::release_held();
    report::after_fork_in_child();
    crate::mstx::after_fork_in_child();
    crate::model::reset();
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    sharing::started(u32::try_from(parent).ok());
}

/// Makes the lazily made settings the hooks read (each from the
/// environment): at `aclInit`, before the program's threads call, and
/// before every fork.
pub(crate) fn settled() {
    // The handler that gives a child its own fork-aware locks: installed
    // by their first use otherwise, which a fork of another thread could
    // precede (the child would then share its parent's locks, held by
    // threads it lacks).
    aclmem_fork::install();
    let _ = crate::config::config();
    let _ = trace::enabled();
}

/// What the program runs on, asked of the library underneath once.
#[derive(Clone, Copy)]
pub(crate) struct Platform {
    pub(crate) product: Product,
    pub(crate) run_mode: RunMode,
    pub(crate) cann: CannVersion,
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

pub(crate) fn platform() -> Option<Platform> {
    static PLATFORM: OnceLock<Option<Platform>> = OnceLock::new();
    *PLATFORM.get_or_init(|| {
        INTERNAL.with(|i| i.set(true));
        let found = find_platform();
        INTERNAL.with(|i| i.set(false));
        found
    })
}

pub(crate) fn find_platform() -> Option<Platform> {
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
    pub(crate) static DEVICE: Cell<Option<u32>> = const { Cell::new(None) };
}

pub(crate) fn contexts() -> ForkMutexGuard<'static, HashMap<usize, u32>> {
    static CONTEXTS: ForkMutex<HashMap<usize, u32>> = ForkMutex::new(HashMap::new);
    CONTEXTS.lock()
}
