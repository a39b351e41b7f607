//! HCCL's C functions on the emulated machine: each marshals a caller's
//! arguments into `aclmem_hccl` (communicators, operations, rendezvous,
//! the Gloo engine), which does the work.
//!
//! * [`init`]: the functions that make communicators;
//! * [`api`]: what a communicator holds (rank, size, name, errors,
//!   configuration, suspension, registered memory);
//! * [`collectives`] and [`group`]: the operations, run now or at the end
//!   of a group;
//! * `args`: the entry guard and the marshalling they share.
//!
//! `docs/hccl.md` tells what each call does here, and what is not
//! emulated.

pub mod api;
mod args;
pub mod collectives;
pub mod group;
pub mod init;

pub use api::*;
pub use args::HcclComm;
pub use collectives::*;
pub use group::*;
pub use init::*;
