//! The operators of the emulated NPU, without a C ABI: the objects an
//! operator call is described with ([`objects`]: tensor descriptors, data
//! buffers, attribute sets), the checks of a call's tensors against what
//! the kernels need ([`operand`]), element types and tensors ([`tensor`]),
//! and the kernels ([`kernels`]), one per operator of the catalogue's list
//! ([`aclmem_sys::with_operators!`]), so that one list is the source of the
//! kernel table, the catalogue and `docs/operators.md`.
//!
//! A kernel reads its inputs through [`kernels::Inputs`] (the emulated
//! library gives it the device's memory; the tests here, host memory) and
//! answers what each output holds. Operators outside the list answer
//! `ACL_ERROR_OP_NOT_FOUND` (100024) from the library, which marshals
//! `aclopCompileAndExecute(V2)` into this crate.

pub mod aclnn;
pub mod atb;
pub mod formats;
pub mod kernels;
pub mod linalg;
pub mod objects;
pub mod onednn;
pub mod operand;
pub mod parallel;
pub mod tensor;

#[doc(inline)]
pub use aclmem_sys::catalogue::OPERATORS;
