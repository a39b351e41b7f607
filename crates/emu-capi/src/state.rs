//! The library's process-wide state (the emulated process, after `aclInit`)
//! and the calling thread's device and context.
//!
//! Every call reads the state through a per-thread cache validated by one
//! atomic load, so calls from many threads share no written cache line.
//! `aclFinalize` leaves the machine at once, whatever threads still cache.
//! A forked child starts uninitialised (see `aclmem_emu`'s fork notes): its
//! first call answers `ACL_ERROR_UNINITIALIZE`, and it may `aclInit` to join
//! the machine as a process of its own.

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, RwLock, RwLockWriteGuard};

use aclmem_core::AclError;
use aclmem_emu::Emulator;

/// An initialised library.
pub(crate) struct Global {
    pub(crate) emu: Emulator,
    pub(crate) soc: &'static CStr,
    generation: u64,
    /// `aclrtSetDevice` minus `aclrtResetDevice` per device.
    pub(crate) device_refs: Mutex<Vec<u32>>,
}

static STATE: RwLock<Option<Arc<Global>>> = RwLock::new(None);
/// The generation of the live `Global` (0: not initialised).
static LIVE: AtomicU64 = AtomicU64::new(0);
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);
/// SoC names handed out by `aclrtGetSocName`; kept for the life of the
/// process so the returned pointer never dangles (a few bytes per name).
static SOC_NAMES: Mutex<Vec<&'static CStr>> = Mutex::new(Vec::new());

thread_local! {
    static CACHE: RefCell<Option<Arc<Global>>> = const { RefCell::new(None) };
    /// (library generation, device, context) current on this thread.
    static CURRENT: Cell<(u64, i32, u64)> = const { Cell::new((0, -1, 0)) };
    /// The state lock, held from fork's prepare to its parent/child step.
    static FORK_GUARD: RefCell<Option<RwLockWriteGuard<'static, Option<Arc<Global>>>>> =
        const { RefCell::new(None) };
}

/// The base of default-context handles: `aclrtSetDevice(d)`'s context is
/// `DEFAULT_CONTEXT + d` (an opaque value, never dereferenced).
pub(crate) const DEFAULT_CONTEXT: u64 = 0x7dc0_0000_0000;

fn lock_state() -> std::sync::RwLockReadGuard<'static, Option<Arc<Global>>> {
    STATE.read().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` with the initialised library (100001 before `aclInit`).
pub(crate) fn with_global<R>(
    f: impl FnOnce(&Global) -> Result<R, AclError>,
) -> Result<R, AclError> {
    let live = LIVE.load(Ordering::Acquire);
    if live == 0 {
        return Err(AclError::UNINITIALIZE);
    }
    CACHE.with(|cache| match cache.try_borrow_mut() {
        Ok(mut cached) => {
            if cached.as_ref().is_none_or(|g| g.generation != live) {
                *cached = lock_state().clone();
            }
            match cached.as_deref() {
                Some(g) if g.generation == live => f(g),
                _ => Err(AclError::UNINITIALIZE),
            }
        }
        // A call made from inside a call (never by this library itself).
        Err(_) => match lock_state().clone() {
            Some(g) => f(&g),
            None => Err(AclError::UNINITIALIZE),
        },
    })
}

/// The device set on this thread (107002 when none since `aclInit`).
pub(crate) fn current_device(g: &Global) -> Result<u32, AclError> {
    let (generation, device, _) = CURRENT.with(Cell::get);
    if generation != g.generation || device < 0 {
        return Err(AclError::RT_CONTEXT_NULL);
    }
    Ok(device as u32)
}

/// The context current on this thread: the one set, or the default
/// context of the device set.
pub(crate) fn current_context(g: &Global) -> Result<u64, AclError> {
    let (generation, device, context) = CURRENT.with(Cell::get);
    if generation != g.generation || device < 0 {
        return Err(AclError::RT_CONTEXT_NULL);
    }
    Ok(if context != 0 {
        context
    } else {
        DEFAULT_CONTEXT + device as u64
    })
}

/// Makes `device` (and `context`, 0 for its default one) current on this
/// thread.
pub(crate) fn set_current(g: &Global, device: u32, context: u64) {
    CURRENT.with(|c| c.set((g.generation, device as i32, context)));
}

/// Clears this thread's device if it is `device` (or any, for `None`).
pub(crate) fn clear_current(g: &Global, device: Option<u32>) {
    CURRENT.with(|c| {
        let (generation, d, _) = c.get();
        if generation == g.generation && device.is_none_or(|want| d == want as i32) {
            c.set((0, -1, 0));
        }
    });
}

/// The context current on this thread, if it is `context`: clears it.
pub(crate) fn forget_context(g: &Global, context: u64) {
    CURRENT.with(|c| {
        let (generation, device, current) = c.get();
        if generation == g.generation && current == context {
            c.set((generation, device, 0));
        }
    });
}

fn intern(name: &str) -> &'static CStr {
    let mut names = SOC_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(n) = names.iter().find(|n| n.to_bytes() == name.as_bytes()) {
        return n;
    }
    // SoC names never contain NUL; fall back to an empty name if one does.
    let leaked: &'static CStr =
        Box::leak(CString::new(name).unwrap_or_default().into_boxed_c_str());
    names.push(leaked);
    leaked
}

fn quiet() -> bool {
    std::env::var_os("ACLMEM_EMU_QUIET").is_some_and(|v| !v.is_empty() && v != "0")
}

fn leak_report_wanted() -> bool {
    std::env::var_os("ACLMEM_EMU_LEAK_REPORT").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `aclInit`: joins the machine the environment names.
pub(crate) fn init() -> Result<(), AclError> {
    install_fork_handlers();
    let mut state = STATE.write().unwrap_or_else(|p| p.into_inner());
    if state.is_some() {
        return Err(AclError::REPEAT_INITIALIZE);
    }
    let emu = Emulator::join_from_env().map_err(|e| {
        if !quiet() {
            eprintln!("aclmem-emu: aclInit failed: {e}");
        }
        e.code()
    })?;
    let devices = emu.config().devices as usize;
    let generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
    *state = Some(Arc::new(Global {
        soc: intern(&emu.config().soc_name),
        emu,
        generation,
        device_refs: Mutex::new(vec![0; devices]),
    }));
    LIVE.store(generation, Ordering::Release);
    if leak_report_wanted() {
        static AT_EXIT: Once = Once::new();
        // SAFETY: `report_at_exit` is an `extern "C"` function of this
        // library, valid for the life of the process.
        AT_EXIT.call_once(|| unsafe {
            libc::atexit(report_at_exit);
        });
    }
    Ok(())
}

/// `aclFinalize`: leaves the machine (everything this process holds goes,
/// as at exit).
pub(crate) fn finalize() -> Result<(), AclError> {
    let mut state = STATE.write().unwrap_or_else(|p| p.into_inner());
    let g = state.take().ok_or(AclError::REPEAT_FINALIZE)?;
    LIVE.store(0, Ordering::Release);
    report(&g, "aclFinalize");
    g.emu.leave();
    Ok(())
}

fn report(g: &Global, when: &str) {
    if !leak_report_wanted() {
        return;
    }
    let leaks = g.emu.leak_report();
    eprintln!(
        "aclmem-emu: leak report at {when} (pid {}): {leaks}",
        g.emu.pid()
    );
}

extern "C" fn report_at_exit() {
    if LIVE.load(Ordering::Acquire) == 0 {
        return;
    }
    if let Ok(state) = STATE.try_read()
        && let Some(g) = state.as_ref()
    {
        report(g, "exit");
    }
}

fn install_fork_handlers() {
    static ONCE: Once = Once::new();
    // SAFETY: the three handlers are `extern "C"` functions of this library,
    // valid for the life of the process.
    ONCE.call_once(|| unsafe {
        libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
    });
}

/// Before fork: hold the state lock, so the child's copy of it is not held
/// by a thread that does not exist there.
extern "C" fn prepare() {
    let guard = STATE.write().unwrap_or_else(|p| p.into_inner());
    FORK_GUARD.with(|g| *g.borrow_mut() = Some(guard));
}

extern "C" fn parent() {
    FORK_GUARD.with(|g| drop(g.borrow_mut().take()));
}

/// In the child: the parent's process is not the child's. Forget it (its
/// teardown belongs to the parent) and start uninitialised.
extern "C" fn child() {
    LIVE.store(0, Ordering::Release);
    FORK_GUARD.with(|g| {
        if let Some(mut guard) = g.borrow_mut().take() {
            std::mem::forget(guard.take());
        }
    });
    CACHE.with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            std::mem::forget(c.take());
        }
    });
}
