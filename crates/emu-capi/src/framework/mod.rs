//! The framework functions of the catalogue that are emulated beyond the
//! typed API: what torch_npu and the libraries like it call by name.
//!
//! * [`runtime`]: streams with a configuration, events, system parameters,
//!   errors, capture state;
//! * [`host_memory`]: host memory registered or made for the device;
//! * [`options`]: compile options, versions;
//! * [`mstx`]: the mstx range and marker API.
//!
//! The ones answered from the catalogue without emulation are generated in
//! `stand_ins`.

pub mod host_memory;
pub mod mstx;
pub mod options;
pub mod runtime;

pub use host_memory::*;
pub use mstx::*;
pub use options::*;
pub use runtime::*;
