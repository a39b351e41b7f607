//! The gradients of a 2-D convolution, as torch_npu launches them for
//! `nn.Conv1d`/`nn.Conv2d`'s backward (`Conv2dBackwardKernelNpu.cpp`):
//! `Conv2DBackpropInput(input_size, filter, out_backprop)` and
//! `Conv2DBackpropFilter(x, filter_size, out_backprop)`, the sizes host
//! int32 `[4]`, with `Conv2D`'s attributes (`super::conv`).
//!
//! The input's gradient is the transposed convolution of the output's
//! gradient with the same filter (`conv2d_transpose`: a matrix product
//! and col2im); the filter's is, per image and group, the output's
//! gradient times the input's patches transposed (im2col, then a matrix
//! product accumulated over the images). Products through the `gemm`
//! crate (`crate::linalg`), in fp32 for float32, float16 and bfloat16
//! (rounded once) and fp64 for float64. torch_npu asks for the filter's
//! gradient in float32 whatever the input's type, and casts it back.

#![allow(non_snake_case)]

use super::call::*;
use super::conv::{Geometry, conv_extent, conv2d_transpose, dims4, geometry, im2col};
use super::float::{Real, by_type, bytes, values};
use crate::linalg::{self, View};

/// The output extents (H, W) of the convolution of an input of `hw` by a
/// filter of `k`, or 100021.
fn extents(hw: [usize; 2], k: [usize; 2], g: &Geometry) -> Result<[usize; 2], AclError> {
    let ho = conv_extent(hw[0], g.p[0] + g.p[1], g.d[0], k[0], g.s[0]);
    let wo = conv_extent(hw[1], g.p[2] + g.p[3], g.d[1], k[1], g.s[1]);
    match (ho, wo) {
        (Some(ho), Some(wo)) => Ok([ho, wo]),
        _ => Err(AclError::OP_INPUT_NOT_MATCH),
    }
}

/// A host size input of four dims.
fn size4(call: &Call<'_>, i: usize) -> Result<[usize; 4], AclError> {
    <[usize; 4]>::try_from(call.sizes(i)?.as_slice()).map_err(|_| AclError::OP_INPUT_NOT_MATCH)
}

/// Checks a convolution's shapes: x `[n, c, h, w]`, filter
/// `[co, c / groups, kh, kw]`, dy `[n, co, ho, wo]` with the extents the
/// attributes give.
fn agree(x: [usize; 4], f: [usize; 4], dy: &[usize], g: &Geometry) -> Result<(), AclError> {
    let [n, c, h, w] = x;
    let [co, cg, kh, kw] = f;
    if c % g.groups != 0 || co % g.groups != 0 || cg != c / g.groups || kh == 0 || kw == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let [ho, wo] = extents([h, w], [kh, kw], g)?;
    if dy != [n, co, ho, wo] {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    Ok(())
}

/// Two float inputs of one type (100020 otherwise).
fn same_type(a: &Tensor, b: &Tensor) -> Result<DType, AclError> {
    if a.dtype != b.dtype || !a.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    Ok(a.dtype)
}

fn input_grad<T: Real>(
    call: &Call<'_>,
    xd: [usize; 4],
    f: &Tensor,
    dy: &Tensor,
    g: &Geometry,
) -> Result<Written, AclError> {
    let (fv, dyv) = (values::<T>(f)?, values::<T>(dy)?);
    let dyd = dims4(dy)?;
    let fd = dims4(f)?;
    let dx = conv2d_transpose(&dyv, dyd, &fv, fd, None, g, [xd[2], xd[3]])?;
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `Conv2DBackpropInput(input_size, filter, out_backprop) -> y`: the
/// gradient of `Conv2D`'s x (`input_size`, host int32, its shape).
pub(super) fn Conv2DBackpropInput(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let xd = size4(call, 0)?;
    let (f, dy) = (call.tensor(1)?, call.tensor(2)?);
    let dtype = same_type(&f, &dy)?;
    let g = geometry(call)?;
    agree(xd, dims4(&f)?, &dy.dims, &g)?;
    if call.out(0).dims != xd {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    by_type(
        dtype,
        || input_grad::<f32>(call, xd, &f, &dy, &g),
        || input_grad::<f64>(call, xd, &f, &dy, &g),
    )
}

fn filter_grad<T: Real>(
    call: &Call<'_>,
    x: &Tensor,
    fd: [usize; 4],
    dy: &Tensor,
    g: &Geometry,
) -> Result<Written, AclError> {
    let (xv, dyv) = (values::<T>(x)?, values::<T>(dy)?);
    let [n, c, h, w] = dims4(x)?;
    let [co, cg, kh, kw] = fd;
    let [_, _, ho, wo] = dims4(dy)?;
    let cog = co / g.groups;
    let rows = cg * kh * kw;
    let mut dw = vec![T::ZERO; co * rows];
    let mut col = vec![T::ZERO; rows * ho * wo];
    for img in 0..n {
        for grp in 0..g.groups {
            let base = (img * c + grp * cg) * h * w;
            im2col(&xv, base, cg, [h, w], [kh, kw], [ho, wo], g, &mut col);
            // dw_g (cog × rows) += dy_g (cog × ho·wo) · colᵀ (ho·wo × rows).
            let dst = View::dense(cog, rows, grp * cog * rows);
            let a = View::dense(cog, ho * wo, (img * co + grp * cog) * ho * wo);
            let b = View::dense(rows, ho * wo, 0).t();
            linalg::gemm(&mut dw, dst, &dyv, a, &col, b, true)?;
        }
    }
    Ok(vec![bytes(call.out(0).dtype, &dw)?])
}

/// `Conv2DBackpropFilter(x, filter_size, out_backprop) -> y`: the
/// gradient of `Conv2D`'s filter (`filter_size`, host int32, its shape),
/// summed over the images.
pub(super) fn Conv2DBackpropFilter(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let fd = size4(call, 1)?;
    let (x, dy) = (call.tensor(0)?, call.tensor(2)?);
    let dtype = same_type(&x, &dy)?;
    let g = geometry(call)?;
    agree(dims4(&x)?, fd, &dy.dims, &g)?;
    if call.out(0).dims != fd {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    by_type(
        dtype,
        || filter_grad::<f32>(call, &x, fd, &dy, &g),
        || filter_grad::<f64>(call, &x, fd, &dy, &g),
    )
}

#[cfg(test)]
mod tests;
