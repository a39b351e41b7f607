//! The library's `pthread_atfork` handlers, installed by the first
//! `aclInit`: one place for the order in which the library's locks are
//! taken before a fork and given back after it.
//!
//! Before the fork, the forking thread takes the library's state for
//! writing (`state`, a `std::sync::RwLock`: a futex word, no table of
//! waiting threads, no hand-off), so that the child never copies it held
//! by a thread it lacks or half-changed, then the lock of the library's
//! unwinding (`site`, a leaf). In the parent it is let go. In the
//! child the forking thread, the child's only thread, lets its copy go
//! after forgetting the state (the parent's process is not the child's: it
//! starts uninitialised), and the fault counters start from 0.
//!
//! Every other table of the library, the engine, HCCL and the operators
//! (objects, options, records, learned calls, communicators, the engine's
//! machines and arenas) is an `aclmem_fork::ForkMutex`, which a child gets
//! anew at its first use: none needs a handler. The engine's own child
//! handler (`aclmem_emu`'s fork notes) and the fork generation's run too,
//! in the order they were installed, the generation's first. The
//! sanitizer, loaded before the library, keeps its own order (its docs).

use std::sync::Once;

use crate::{faults, site, state};

/// Installs the handlers, once per process.
pub(crate) fn install() {
    // The generation's handler first (the engine's objects check it).
    aclmem_fork::install();
    static ONCE: Once = Once::new();
    // SAFETY: the three handlers are `extern "C"` functions of this library,
    // valid for the life of the process.
    ONCE.call_once(|| unsafe {
        libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
    });
}

extern "C" fn prepare() {
    state::before_fork();
    // A leaf: taken under the state, never the other way round.
    site::hold_for_fork();
}

extern "C" fn parent() {
    aclmem_fork::release_held();
    state::after_fork_parent();
}

extern "C" fn child() {
    aclmem_fork::release_held();
    state::after_fork_child();
    faults::after_fork();
}
