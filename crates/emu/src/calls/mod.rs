//! The calls of the API, one module per area an ACL user knows: physical
//! memory, virtual memory, sharing, device memory (`aclrtMalloc` and host
//! memory), copies, queries, IPC keys, the runtime (contexts and streams), events,
//! and the instruments (call counts, faults, stats, leak reports).
//!
//! Each module implements its part of [`Emulator`](crate::Emulator) (and
//! of the `aclmem-hal` traits) directly over the process; no layer
//! forwards.

pub(crate) mod copy;
pub(crate) mod device_memory;
pub(crate) mod events;
pub(crate) mod graph_conds;
pub(crate) mod graphs;
pub(crate) mod host_register;
pub(crate) mod instrument;
pub(crate) mod ipc;
pub(crate) mod maintenance;
pub(crate) mod managed;
pub(crate) mod physical;
pub(crate) mod pools;
pub(crate) mod query;
pub(crate) mod runtime;
pub(crate) mod sharing;
pub(crate) mod values;
pub(crate) mod virtual_memory;
