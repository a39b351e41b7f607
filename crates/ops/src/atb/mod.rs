//! The operations of the Ascend Transformer Boost library (`libatb.so`,
//! reached by torch_npu's op-plugin through `atb::Operation` objects) that
//! the emulator computes: [`paged`], the paged attention of decoding
//! (`atb::infer::PagedAttentionParam`).
//!
//! Like the operator API's plans ([`crate::aclnn`]), an operation here is a
//! value made when the C++ caller executes it (every shape, address and
//! host value copied) and run on the device's memory later: at once, or at
//! each replay of a graph that captured it.

pub mod paged;

#[cfg(test)]
mod tests;
