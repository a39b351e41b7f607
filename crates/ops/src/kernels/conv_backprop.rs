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
use super::conv::{Geometry, conv_nd_transpose, dims_of, dims5, extents, geometry, im2col};
use super::float::{Real, by_type, bytes, values};
use crate::linalg::{self, View};

/// A host size input of a tensor of `spatial` + 2 dims, as
/// `[n, c, d, h, w]`.
fn size5(call: &Call<'_>, i: usize, spatial: usize) -> Result<[usize; 5], AclError> {
    dims5(&call.sizes(i)?, spatial)
}

/// Checks a convolution's shapes: x `[n, c, d, h, w]`, filter
/// `[co, c / groups, kd, kh, kw]`, dy `[n, co, out...]` with the extents
/// the attributes give.
fn agree(x: [usize; 5], f: [usize; 5], dy: [usize; 5], g: &Geometry) -> Result<(), AclError> {
    let [n, c, d, h, w] = x;
    let [co, cg, kd, kh, kw] = f;
    if c % g.groups != 0 || co % g.groups != 0 || cg != c / g.groups || kd * kh * kw == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let [od, oh, ow] = extents([d, h, w], [kd, kh, kw], g)?;
    if dy != [n, co, od, oh, ow] {
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

/// The operands of a backward call: the geometry and the shapes.
struct Shapes {
    g: Geometry,
    x: [usize; 5],
    f: [usize; 5],
    dy: [usize; 5],
}

fn input_grad<T: Real>(
    call: &Call<'_>,
    s: &Shapes,
    f: &Tensor,
    dy: &Tensor,
) -> Result<Written, AclError> {
    let (fv, dyv) = (values::<T>(f)?, values::<T>(dy)?);
    let out = [s.x[2], s.x[3], s.x[4]];
    let dx = conv_nd_transpose(&dyv, s.dy, &fv, s.f, None, &s.g, out)?;
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// The gradient of a convolution's x, of `spatial` dims:
/// `(input_size, filter, out_backprop) -> y`.
pub(super) fn backprop_input(call: &Call<'_>, spatial: usize) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let x = size5(call, 0, spatial)?;
    let (f, dy) = (call.tensor(1)?, call.tensor(2)?);
    let dtype = same_type(&f, &dy)?;
    let g = geometry(call, spatial)?;
    let s = Shapes {
        g,
        x,
        f: dims5(&f.dims, spatial)?,
        dy: dims5(&dy.dims, spatial)?,
    };
    agree(s.x, s.f, s.dy, &g)?;
    if call.out(0).dims != dims_of(spatial, x) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    by_type(
        dtype,
        || input_grad::<f32>(call, &s, &f, &dy),
        || input_grad::<f64>(call, &s, &f, &dy),
    )
}

/// `Conv2DBackpropInput(input_size, filter, out_backprop) -> y`: the
/// gradient of `Conv2D`'s x (`input_size`, host int32, its shape).
pub(super) fn Conv2DBackpropInput(call: &Call<'_>) -> Result<Written, AclError> {
    backprop_input(call, 2)
}

fn filter_grad<T: Real>(
    call: &Call<'_>,
    s: &Shapes,
    x: &Tensor,
    dy: &Tensor,
) -> Result<Written, AclError> {
    let (xv, dyv) = (values::<T>(x)?, values::<T>(dy)?);
    let [n, c, d, h, w] = s.x;
    let [co, cg, kd, kh, kw] = s.f;
    let out = [s.dy[2], s.dy[3], s.dy[4]];
    let plane = out.iter().product::<usize>();
    let g = &s.g;
    let cog = co / g.groups;
    let rows = cg * kd * kh * kw;
    let mut dw = vec![T::ZERO; co * rows];
    let mut col = vec![T::ZERO; rows * plane];
    for img in 0..n {
        for grp in 0..g.groups {
            let base = (img * c + grp * cg) * d * h * w;
            im2col(&xv, base, cg, [d, h, w], [kd, kh, kw], out, g, &mut col);
            // dw_g (cog × rows) += dy_g (cog × plane) · colᵀ (plane × rows).
            let dst = View::dense(cog, rows, grp * cog * rows);
            let a = View::dense(cog, plane, (img * co + grp * cog) * plane);
            let b = View::dense(rows, plane, 0).t();
            linalg::gemm(&mut dw, dst, &dyv, a, &col, b, true)?;
        }
    }
    Ok(vec![bytes(call.out(0).dtype, &dw)?])
}

/// The gradient of a convolution's filter, of `spatial` dims:
/// `(x, filter_size, out_backprop) -> y`, summed over the images.
pub(super) fn backprop_filter(call: &Call<'_>, spatial: usize) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let f = size5(call, 1, spatial)?;
    let (x, dy) = (call.tensor(0)?, call.tensor(2)?);
    let dtype = same_type(&x, &dy)?;
    let g = geometry(call, spatial)?;
    let s = Shapes {
        g,
        x: dims5(&x.dims, spatial)?,
        f,
        dy: dims5(&dy.dims, spatial)?,
    };
    agree(s.x, s.f, s.dy, &g)?;
    if call.out(0).dims != dims_of(spatial, f) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    by_type(
        dtype,
        || filter_grad::<f32>(call, &s, &x, &dy),
        || filter_grad::<f64>(call, &s, &x, &dy),
    )
}

/// `Conv2DBackpropFilter(x, filter_size, out_backprop) -> y`: the
/// gradient of `Conv2D`'s filter (`filter_size`, host int32, its shape),
/// summed over the images.
pub(super) fn Conv2DBackpropFilter(call: &Call<'_>) -> Result<Written, AclError> {
    backprop_filter(call, 2)
}

#[cfg(test)]
mod tests;
