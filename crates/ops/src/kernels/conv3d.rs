//! Convolutions in NCDHW, as torch_npu launches them for `nn.Conv3d`
//! (`Conv3D(x, filter[, bias]) -> y`), its backward
//! (`Conv3DBackpropInput(input_size, filter, out_backprop)`,
//! `Conv3DBackpropFilter(x, filter_size, out_backprop)`) and
//! `nn.ConvTranspose3d` (`Conv3DTranspose(input_size, x, filter[, bias])`).
//! The sizes are host int32 `[5]`. Attributes in NCDHW order: `strides`
//! `{1, 1, sD, sH, sW}`, `pads` `{front, back, top, bottom, left, right}`,
//! `dilations` `{1, 1, dD, dH, dW}`, `groups`, `data_format` `"NCDHW"`
//! (another format is 100027), and for the transposed one
//! `output_padding` `{0, 0, oD, oH, oW}`.
//!
//! The 2-D convolutions' code computes them (`super::conv`,
//! `super::conv_backprop`: im2col or col2im and a matrix product per
//! image and group through the `gemm` crate), with the depth as a third
//! spatial axis. Types as there.

#![allow(non_snake_case)]

use super::call::*;
use super::conv::{convolution, transposed};
use super::conv_backprop::{backprop_filter, backprop_input};

/// `Conv3D(x, filter[, bias]) -> y`: x `[n, c, d, h, w]`, filter
/// `[co, c / groups, kd, kh, kw]`, bias `[co]`.
pub(super) fn Conv3D(call: &Call<'_>) -> Result<Written, AclError> {
    convolution(call, 3)
}

/// `Conv3DBackpropInput(input_size, filter, out_backprop) -> y`: the
/// gradient of `Conv3D`'s x, a transposed convolution of the output's
/// gradient.
pub(super) fn Conv3DBackpropInput(call: &Call<'_>) -> Result<Written, AclError> {
    backprop_input(call, 3)
}

/// `Conv3DBackpropFilter(x, filter_size, out_backprop) -> y`: the
/// gradient of `Conv3D`'s filter, summed over the images.
pub(super) fn Conv3DBackpropFilter(call: &Call<'_>) -> Result<Written, AclError> {
    backprop_filter(call, 3)
}

/// `Conv3DTranspose(input_size, x, filter[, bias]) -> y`: x
/// `[n, ci, d, h, w]`, filter `[ci, co / groups, kd, kh, kw]`, into
/// `input_size`; `output_padding` adds planes, rows and columns at the
/// end.
pub(super) fn Conv3DTranspose(call: &Call<'_>) -> Result<Written, AclError> {
    transposed(call, 3)
}

#[cfg(test)]
mod tests;
