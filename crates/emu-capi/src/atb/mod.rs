//! The Ascend Transformer Boost library (`libatb.so`), as much of it as
//! torch_npu's ATB plugin (`libop_plugin_atb.so`, which names `libatb.so`
//! as NEEDED) links: C++ functions of namespace `atb`, exported under
//! their Itanium-mangled names, and the `atb::Context` and
//! `atb::Operation` objects they hand out (`objects.rs`: layouts, virtual
//! tables, memory and lifetime).
//!
//! Emulated: `CreateContext`, `DestroyContext`, `DestroyOperation`,
//! `Utils::GetTensorSize(const Tensor&)`, and
//! `CreateOperation<infer::PagedAttentionParam>`, whose operation's
//! `Setup` answers workspace 0 and `Execute` enqueues the paged attention
//! (`aclmem_ops::atb::paged`) on the context's stream (recorded when the
//! stream captures a graph, replayed with it). The other operations
//! op-plugin creates (`Linear`, `Elewise`, `RmsNorm`, `GroupTopk`,
//! `SelfAttention`, `ReshapeAndCache`, `Rope`) are the catalogue's
//! not-supported entries (`aclmem_sys::catalogue`, generated in
//! `stand_ins`: recorded, reported as `ACLMEM_EMU_UNSUPPORTED` says) and
//! answer `ERROR_OPERATION_NULL_RUNNER` (10), handing out no operation. Virtual
//! methods op-plugin does not call answer an error status (see each slot).
//!
//! The ABI facts this follows (layouts, virtual-method order, the calls
//! torch_npu's plugin makes, in order) and their sources are in
//! docs/operators.md, "The Ascend Transformer Boost".

mod abi;
mod api;
mod objects;
mod paged;
mod status;
#[cfg(test)]
mod tests;

pub use api::{
    _ZN3atb5Utils13GetTensorSizeERKNS_6TensorE, _ZN3atb13CreateContextEPPNS_7ContextE,
    _ZN3atb14DestroyContextEPNS_7ContextE,
    _ZN3atb15CreateOperationINS_5infer19PagedAttentionParamEEEiRKT_PPNS_9OperationE,
    _ZN3atb16DestroyOperationEPNS_9OperationE,
};
