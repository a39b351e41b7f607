//! The operating system underneath the emulator: every system call
//! ([`sys`]), the pool files physical memory lives in ([`pool`]), the
//! address-space arenas reservations are carved from ([`arena`]) and what a
//! forked child must drop ([`fork`]).

pub(crate) mod arena;
pub(crate) mod fork;
pub(crate) mod host;
pub(crate) mod pool;
pub(crate) mod sys;
