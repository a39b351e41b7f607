//! A process forked after it joined a machine is a new process to that
//! machine: it inherits none of its parent's handles, reservations or
//! mappings, and must not act for its parent.
//!
//! A `pthread_atfork` child handler (installed when the first machine is
//! joined) therefore, in the child only and before `fork()` returns there:
//!
//! * unmaps the arenas that hold device memory and the machine's shared
//!   state, so the child cannot read or write its parent's memory through
//!   inherited pointers (as CUDA, a forked child has no device memory);
//! * closes its copies of the pool files and of the machine file, so the
//!   parent's liveness lock does not outlive the parent in the child;
//! * leaves the fork generation (`aclmem_fork::generation`, bumped by that
//!   crate's own child handler, installed first) to make every object of
//!   the parent that the child still has in memory inert: its calls answer
//!   `ACL_ERROR_UNINITIALIZE` and dropping it releases nothing.
//!
//! The process-wide tables (machines joined, arenas, windows, the
//! process's files) are `aclmem_fork::ForkMutex`es: a child gets them anew,
//! never held by a thread of its parent.
//!
//! The child may call `aclInit` (or join a machine from Rust) and is then a
//! process of the machine like any other, with its own pid. Only
//! async-signal-safe work happens in the handler: atomics, `close`,
//! `munmap`.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Once;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

static INSTALL: Once = Once::new();

const FDS: usize = 1024;
const MAPS: usize = 512;
static FD_TABLE: [AtomicI32; FDS] = [const { AtomicI32::new(-1) }; FDS];
static MAP_TABLE: [(AtomicUsize, AtomicUsize); MAPS] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; MAPS];

/// The current fork generation of this process (0 in the original process,
/// one more in each forked child).
pub fn generation() -> u64 {
    aclmem_fork::generation()
}

/// Whether this process is a fork child of the one that was at `generation`.
pub fn forked_since(generation: u64) -> bool {
    self::generation() != generation
}

/// Installs the child handler (once per process).
pub fn install() {
    // The generation's handler first: the objects' checks need it counted.
    aclmem_fork::install();
    INSTALL.call_once(|| {
        // SAFETY: `child` is an `extern "C"` function that stays valid for
        // the life of the process (it is in this binary's code).
        unsafe {
            libc::pthread_atfork(None, None, Some(child));
        }
    });
}

/// Remembers a descriptor the child must close.
pub fn register_fd(fd: &OwnedFd) {
    let raw = fd.as_raw_fd();
    for slot in &FD_TABLE {
        if slot
            .compare_exchange(-1, raw, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return;
        }
    }
    // A full table leaves this descriptor open in a forked child: harmless
    // except that the memory it holds lives until that child exits.
}

/// Forgets a descriptor before it is closed.
pub fn unregister_fd(fd: &OwnedFd) {
    let raw = fd.as_raw_fd();
    for slot in &FD_TABLE {
        if slot
            .compare_exchange(raw, -1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return;
        }
    }
}

/// Remembers a mapping the child must unmap.
pub fn register_mapping(addr: usize, len: usize) {
    for (a, l) in &MAP_TABLE {
        if a.compare_exchange(0, addr, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            l.store(len, Ordering::Release);
            return;
        }
    }
}

/// Forgets a mapping before it is unmapped.
pub fn unregister_mapping(addr: usize) {
    for (a, l) in &MAP_TABLE {
        if a.load(Ordering::Acquire) == addr {
            l.store(0, Ordering::Release);
            a.store(0, Ordering::Release);
            return;
        }
    }
}

extern "C" fn child() {
    for (a, l) in &MAP_TABLE {
        let addr = a.swap(0, Ordering::AcqRel);
        let len = l.swap(0, Ordering::AcqRel);
        if addr != 0 && len != 0 {
            // SAFETY: the range is a mapping this library made (arena or
            // shared state) and the child must not use; nothing in the child
            // refers to it after the generation bump above.
            unsafe { libc::munmap(addr as *mut libc::c_void, len) };
        }
    }
    for slot in &FD_TABLE {
        let fd = slot.swap(-1, Ordering::AcqRel);
        if fd >= 0 {
            // SAFETY: the descriptor is the child's copy of one this library
            // opened; the objects that own it are inert in the child and
            // never close it (they check the generation).
            unsafe { libc::close(fd) };
        }
    }
}
