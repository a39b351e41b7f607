//! The framework functions of the catalogue that are emulated beyond the
//! typed API: what torch_npu and the libraries like it call by name.
//!
//! * [`runtime`]: streams with a configuration, events, system parameters,
//!   errors, capture state;
//! * [`host_memory`]: host memory registered or made for the device;
//! * [`reduce`]: reductions between device buffers (`aclrtReduceAsync`);
//! * [`copies`]: 2D copies, copies through base pointers and descriptors;
//! * [`batch`]: batched copies between host and device;
//! * [`allocation`]: allocations with a configuration, cached, freed after
//!   a device synchronisation, and cache maintenance;
//! * [`options`]: compile options, versions;
//! * [`values`]: stream value operations (`aclrtValueWrite`, `aclrtValueWait`);
//! * [`pools`]: stream-ordered memory pools (`aclrtMemPool*`);
//! * [`managed`]: managed memory, peer mappings and peer access status;
//! * [`cache`]: cache maintenance (`aclrtCmo*`) and memory errors (UCE);
//! * [`mapping`]: CANN 9.x's reservations and mappings, and IPC links;
//! * [`allocator`]: the custom allocator's descriptors and registrations;
//! * [`symbols`]: device variables (every symbol unknown: no kernel binaries);
//! * [`mstx`]: the mstx range and marker API.
//!
//! The ones answered from the catalogue without emulation are generated in
//! `stand_ins`.

pub mod allocation;
pub mod allocator;
pub mod batch;
pub mod cache;
pub mod copies;
pub mod host_memory;
pub mod managed;
pub mod mapping;
pub mod mstx;
pub mod options;
pub mod pools;
pub mod reduce;
pub mod runtime;
pub mod symbols;
pub mod values;

pub use allocation::*;
pub use allocator::*;
pub use batch::*;
pub use cache::*;
pub use copies::*;
pub use host_memory::*;
pub use managed::*;
pub use mapping::*;
pub use mstx::*;
pub use options::*;
pub use pools::*;
pub use reduce::*;
pub use runtime::*;
pub use symbols::*;
pub use values::*;
