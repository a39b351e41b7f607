//! The library's process-wide state: the emulated process, after `aclInit`
//! (the calling thread's device and context are the emulator's).
//!
//! Every call reads the state through a per-thread cache validated by one
//! atomic load, so calls from many threads share no written cache line.
//! `aclFinalize` leaves the machine at once, whatever threads still cache.
//! A forked child starts uninitialised (see `aclmem_emu`'s fork notes): its
//! first call answers `ACL_ERROR_UNINITIALIZE`, and it may `aclInit` to join
//! the machine as a process of its own.

use std::cell::RefCell;
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use aclmem_fork::ForkMutex;

use aclmem_core::AclError;
use aclmem_emu::Emulator;

/// An initialised library.
pub(crate) struct Global {
    pub(crate) emu: Emulator,
    generation: u64,
}

static STATE: RwLock<Option<Arc<Global>>> = RwLock::new(None);
/// The generation of the live `Global` (0: not initialised).
static LIVE: AtomicU64 = AtomicU64::new(0);
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);
/// SoC names handed out by `aclrtGetSocName`; kept for the life of the
/// process so the returned pointer never dangles (a few bytes per name).
static SOC_NAMES: ForkMutex<Vec<&'static CStr>> = ForkMutex::new(Vec::new);

thread_local! {
    static CACHE: RefCell<Option<Arc<Global>>> = const { RefCell::new(None) };
    /// The state lock, held from fork's prepare to its parent/child step.
    static FORK_GUARD: RefCell<Option<RwLockWriteGuard<'static, Option<Arc<Global>>>>> =
        const { RefCell::new(None) };
}

fn lock_state() -> RwLockReadGuard<'static, Option<Arc<Global>>> {
    STATE.read().unwrap_or_else(PoisonError::into_inner)
}

/// The state, written (a panic while it was held leaves it as it was).
fn write_state() -> RwLockWriteGuard<'static, Option<Arc<Global>>> {
    STATE.write().unwrap_or_else(PoisonError::into_inner)
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

/// Runs `f` with the machine configuration: the joined machine's after
/// `aclInit`, before it the one the environment asks for (what `aclInit`
/// would join). The runtime answers the device count, the SoC name and the
/// CANN version before `aclInit` (it reads them from the driver and the
/// installation, not from a context); so does the emulator. A bad
/// environment is 100000 with the variable named, as at `aclInit`.
pub(crate) fn with_config<R>(f: impl FnOnce(&aclmem_emu::EmuConfig) -> R) -> Result<R, AclError> {
    // `f` runs once, on the joined machine's configuration (borrowed: these
    // queries are frequent) or, before `aclInit`, on the environment's.
    let mut f = Some(f);
    match with_global(|g| Ok(f.take().map(|f| f(g.emu.config())))) {
        Ok(Some(answer)) => Ok(answer),
        Ok(None) => Err(AclError::INTERNAL_ERROR),
        Err(AclError::UNINITIALIZE) if f.is_some() => {
            let f = f.take().ok_or(AclError::INTERNAL_ERROR)?;
            let config = aclmem_emu::EmuConfig::from_env().map_err(|e| {
                if !aclmem_emu::env::quiet() {
                    eprintln!("aclmem-emu: {e}");
                }
                AclError::INVALID_PARAM
            })?;
            Ok(f(&config))
        }
        Err(e) => Err(e),
    }
}

/// The SoC name as a C string that lives as long as the process.
pub(crate) fn intern(name: &str) -> &'static CStr {
    let mut names = SOC_NAMES.lock();
    if let Some(n) = names.iter().find(|n| n.to_bytes() == name.as_bytes()) {
        return n;
    }
    // SoC names never contain NUL; fall back to an empty name if one does.
    let leaked: &'static CStr =
        Box::leak(CString::new(name).unwrap_or_default().into_boxed_c_str());
    names.push(leaked);
    leaked
}

fn leak_report_wanted() -> bool {
    std::env::var_os("ACLMEM_EMU_LEAK_REPORT").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The default device named in `aclInit`'s JSON configuration at `path`
/// (`defaultDevice.default_device`, a string of decimal digits without a
/// leading zero). A file that cannot be read or is not JSON names none
/// (the emulator reads nothing else of it); a value of another form is
/// 100000, as the runtime's parser answers.
pub(crate) fn default_device(path: &str) -> Result<Option<u32>, AclError> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(None);
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(None);
    };
    let Some(value) = json
        .get("defaultDevice")
        .and_then(|d| d.get("default_device"))
    else {
        return Ok(None);
    };
    let text = value.as_str().ok_or(AclError::INVALID_PARAM)?;
    let decimal = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if !decimal {
        return Err(AclError::INVALID_PARAM);
    }
    // Too large for a device id: no device has it.
    Ok(Some(text.parse().unwrap_or(u32::MAX)))
}

/// `aclInit`: joins the machine the environment names. `check` is the
/// caller's own check of the environment (the fault spec), made after the
/// repeat check and with the state's; its message names the variable.
pub(crate) fn init(check: impl FnOnce() -> Result<(), String>) -> Result<(), AclError> {
    let mut state = write_state();
    if state.is_some() {
        return Err(AclError::REPEAT_INITIALIZE);
    }
    if let Err(message) = aclmem_emu::env::unsupported()
        .and(aclmem_emu::env::driver())
        .map(drop)
        .and_then(|()| check())
    {
        if !aclmem_emu::env::quiet() {
            eprintln!("aclmem-emu: aclInit failed: {message}");
        }
        return Err(AclError::INVALID_PARAM);
    }
    let emu = Emulator::join_from_env().map_err(|e| {
        if !aclmem_emu::env::quiet() {
            eprintln!("aclmem-emu: aclInit failed: {e}");
        }
        e.code()
    })?;
    // The C runtime's rule: memory calls need a device set on the thread.
    emu.use_thread_devices();
    crate::record::joined(emu.ops());
    let generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
    *state = Some(Arc::new(Global { emu, generation }));
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
    let mut state = write_state();
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

/// Before fork: hold the state lock, so the child's copy of it is not held
/// by a thread that does not exist there (`crate::fork`).
pub(crate) fn before_fork() {
    let guard = write_state();
    FORK_GUARD.with(|g| *g.borrow_mut() = Some(guard));
}

/// After fork, in the parent: the lock taken before it is let go.
pub(crate) fn after_fork_parent() {
    FORK_GUARD.with(|g| drop(g.borrow_mut().take()));
}

/// In the child: the parent's process is not the child's. Forget it (its
/// teardown belongs to the parent) and start uninitialised.
pub(crate) fn after_fork_child() {
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
