//! HCCL on the emulated machine: communicators over Gloo, whose TCP
//! connections carry every collective between processes and hosts.
//!
//! * [`api`]: the C functions torch_npu, vllm-ascend and C programs call;
//! * [`comm`]: communicators, the agreement every collective starts with,
//!   and the data movement;
//! * [`rendezvous`]: the root info and the store Gloo's rendezvous uses;
//! * [`engine`]: `libaclmem_gloo.so`, loaded at the first communicator;
//! * [`types`] and [`reduce`]: HCCL's values, and the reductions.
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
pub(crate) mod reduce;
pub(crate) mod rendezvous;
pub mod types;

pub use api::*;
pub use collectives::*;
pub use group::*;
