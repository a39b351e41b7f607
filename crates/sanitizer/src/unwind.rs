//! Unwinding and symbol lookup (the backtrace crate) behind this library's
//! own lock, which the forking thread holds across `fork`: the crate's own
//! lock is a plain static a child would copy held by a thread of its
//! parent (a child that captured a stack then hung), and no handler of
//! ours can take it. Every use of the crate here goes through this module.

use std::ffi::c_void;

use aclmem_fork::KeptMutex;

/// Serialises this library's unwinding and symbol lookups (the crate's
/// unsynchronised functions need it).
static LOCK: KeptMutex<()> = KeptMutex::new(());

/// `backtrace::trace`, under [`LOCK`].
pub(crate) fn trace(f: impl FnMut(&backtrace::Frame) -> bool) {
    let _held = LOCK.lock();
    // SAFETY: every unwinding and lookup of this library holds `LOCK`, so
    // none runs at the same time as another.
    unsafe { backtrace::trace_unsynchronized(f) }
}

/// `backtrace::resolve`, under [`LOCK`].
pub(crate) fn resolve(addr: *mut c_void, f: impl FnMut(&backtrace::Symbol)) {
    let _held = LOCK.lock();
    // SAFETY: as in `trace`.
    unsafe { backtrace::resolve_unsynchronized(addr, f) }
}

/// Before `fork`: the forking thread holds the lock (let go by
/// `aclmem_fork::release_held` in both processes).
pub(crate) fn hold_for_fork() {
    aclmem_fork::hold(LOCK.lock());
}
