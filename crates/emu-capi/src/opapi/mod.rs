//! The operator API (`aclnn*`), as CANN's `libopapi.so` and
//! `libnnopbase.so` export it: the objects an operator call is described
//! with (`aclCreateTensor` and the others, here) and the operators
//! (`ops.rs`, `math.rs`). Frameworks find every one of them by name (torch_npu's
//! `GetOpApiFuncAddr`), and take this path before the `aclop` one when
//! both pairs `aclnnX`/`aclnnXGetWorkspaceSize` resolve; during graph
//! capture it is the only path torch_npu allows. The objects and the
//! plans live in `aclmem_ops::aclnn`; this module marshals.

pub mod attention;
pub mod foreach;
mod marshal;
pub mod math;
pub mod objects;
pub mod ops;
pub mod optim;
