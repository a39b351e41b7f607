//! HCCL on the emulated machine, without its C ABI: communicators over
//! Gloo, whose TCP connections carry every collective between processes
//! and hosts.
//!
//! * [`comm`]: communicators; [`op`]: the operations as typed values;
//!   `agreement`: the agreement every collective starts with; `movement`: the data
//!   movement of each operation; `fake`: the fake world's communicators,
//!   which have no peers;
//! * [`connect`]: making communicators (root info, one process's
//!   devices, rank table, fake world);
//! * [`rendezvous`]: the root info and the store Gloo's rendezvous uses;
//!   [`rank_table`]: communicators from a rank table;
//! * [`engine`]: `libaclmem_gloo.so`, loaded at the first communicator, and
//!   [`engine::abi`], the one definition of its C interface;
//! * [`result`], [`types`] and [`reduce`]: HCCL's codes and values, and the
//!   reductions.
//!
//! The C functions (`HcclCommInitRootInfo`, `HcclAllReduce`, ...) that
//! marshal a caller's arguments into these types are in `aclmem-emu-capi`;
//! `docs/hccl.md` tells what each call does here, and what is not emulated.

mod agreement;
pub mod comm;
pub mod connect;
pub mod engine;
pub mod fake;
mod movement;
pub mod op;
pub mod rank_table;
pub mod reduce;
pub mod rendezvous;
pub mod result;
pub mod types;

pub use result::{Hccl, HcclResult};
