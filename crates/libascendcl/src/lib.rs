//! `libascendcl.so`, emulated. Every exported function lives in the
//! `aclmem-emu-capi` crate; linking it here is all this crate does.

pub use aclmem_emu_capi::LINKED;
