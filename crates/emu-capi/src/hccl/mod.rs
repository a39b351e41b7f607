//! HCCL on the emulated machine: communicators over Gloo, whose TCP
//! connections carry every collective between processes and hosts.
//!
//! * [`api`]: communicators, the C functions torch_npu, vllm-ascend and C
//!   programs call to make and query them; [`collectives`] and [`group`]:
//!   the operations, run now or at the end of a group;
//! * `comm`, `movement`: communicators, the agreement every collective
//!   starts with, and the data movement;
//! * `rendezvous`: the root info and the store Gloo's rendezvous uses;
//! * `engine`: `libaclmem_gloo.so`, loaded at the first communicator;
//! * `fake`: the fake world; `rank_table`: communicators from a rank table;
//! * [`types`] and `reduce`: HCCL's values, and the reductions.
//!
//! `docs/hccl.md` tells what each call does here, and what is not
//! emulated.

pub mod api;
pub mod collectives;
pub(crate) mod comm;
pub(crate) mod engine;
mod fake;
pub mod group;
mod movement;
pub(crate) mod rank_table;
pub(crate) mod reduce;
pub(crate) mod rendezvous;
pub mod types;

pub use api::*;
pub use collectives::*;
pub use group::*;
