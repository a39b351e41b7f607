//! The library's `pthread_atfork` handlers, installed by the first
//! `aclInit`: one place for the order in which the library's locks are
//! taken before a fork and given back after it.
//!
//! Before the fork: the fault plan's learning record (`faults`), then the
//! library's state (`state`), so that no lock the child needs is held by
//! a thread that exists only in the parent. In the parent both are let go
//! in the same order. In the child, the state is forgotten (the parent's
//! process is not the child's: it starts uninitialised) and the fault
//! counters start from 0.

use std::sync::Once;

use crate::{faults, state};

/// Installs the handlers, once per process.
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    // SAFETY: the three handlers are `extern "C"` functions of this library,
    // valid for the life of the process.
    ONCE.call_once(|| unsafe {
        libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
    });
}

extern "C" fn prepare() {
    faults::before_fork();
    state::before_fork();
}

extern "C" fn parent() {
    faults::after_fork_parent();
    state::after_fork_parent();
}

extern "C" fn child() {
    state::after_fork_child();
    faults::after_fork();
}
