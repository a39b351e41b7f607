//! The operating system underneath the emulator, and the only home of its
//! system calls: mappings, pool files, locks and process facts ([`sys`]),
//! copies the kernel checks ([`transfer`]), whether a plain copy may touch
//! a caller's buffer ([`host`]), the pool files physical memory lives in
//! ([`pool`]), the address-space arenas reservations are carved from
//! ([`arena`]) and what a forked child must drop ([`fork`]).

pub(crate) mod arena;
pub(crate) mod fork;
pub(crate) mod host;
pub(crate) mod pool;
pub(crate) mod shared;
pub(crate) mod sys;
pub(crate) mod transfer;
pub(crate) mod window;
