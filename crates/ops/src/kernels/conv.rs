//! Convolutions in NCHW: `Conv2D` and `Conv2DTranspose`, as torch_npu
//! launches them for `nn.Conv1d`/`nn.Conv2d` (a 1-D convolution is a 2-D
//! one of height 1) and `nn.ConvTranspose1d`/`2d` (`docs/operators.md`).
//!
//! Each is a matrix product per image and group over the `gemm` crate
//! (`crate::linalg`): a convolution multiplies the filter by the input's
//! patches laid out as columns (im2col); a transposed one multiplies the
//! filter's transpose by the input and adds the columns back into the
//! output (col2im). Attributes in the operator's NCHW order: `strides`
//! `{1, 1, sH, sW}`, `pads` `{top, bottom, left, right}`, `dilations`
//! `{1, 1, dH, dW}`, `groups`, `data_format` `"NCHW"` (another format is
//! 100027), and for the transposed one `output_padding` `{0, 0, oH, oW}`.
//! Types as the matrix products: float32 and float64 in their own type,
//! float16 and bfloat16 accumulated in float32 and rounded once.

#![allow(non_snake_case)]

use std::ops::AddAssign;

use super::call::*;
use super::matmul::{add_bias, compute, float_type};
use crate::linalg::{self, Element, View};

/// The spatial parameters of a 2-D convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Geometry {
    /// Strides (H, W).
    pub(super) s: [usize; 2],
    /// Pads (top, bottom, left, right).
    pub(super) p: [usize; 4],
    /// Dilations (H, W).
    pub(super) d: [usize; 2],
    /// Groups.
    pub(super) groups: usize,
}

fn list(call: &Call<'_>, name: &str, len: usize, default: i64) -> Result<Vec<usize>, AclError> {
    let values = match call.attr(name) {
        None => vec![default; len],
        Some(AttrValue::ListInt(v)) if v.len() == len => v.clone(),
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    values
        .into_iter()
        .map(|v| usize::try_from(v).map_err(|_| AclError::OP_ATTR_NOT_MATCH))
        .collect()
}

pub(super) fn geometry(call: &Call<'_>) -> Result<Geometry, AclError> {
    match call.attr("data_format") {
        None => {}
        Some(AttrValue::String(f)) if f == "NCHW" => {}
        Some(AttrValue::String(_)) => return Err(AclError::FORMAT_NOT_MATCH),
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    let s = list(call, "strides", 4, 1)?;
    let p = list(call, "pads", 4, 0)?;
    let d = list(call, "dilations", 4, 1)?;
    let groups = match call.attr("groups") {
        None => 1,
        Some(AttrValue::Int(g)) => usize::try_from(*g).map_err(|_| AclError::OP_ATTR_NOT_MATCH)?,
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let g = Geometry {
        s: [s[2], s[3]],
        p: [p[0], p[1], p[2], p[3]],
        d: [d[2], d[3]],
        groups,
    };
    if g.s.contains(&0) || g.d.contains(&0) || g.groups == 0 || s[0] != 1 || s[1] != 1 {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    Ok(g)
}

pub(super) fn dims4(t: &Tensor) -> Result<[usize; 4], AclError> {
    <[usize; 4]>::try_from(t.dims.as_slice()).map_err(|_| AclError::OP_INPUT_NOT_MATCH)
}

/// The output extent of a convolution along one axis, if positive.
pub(super) fn conv_extent(
    input: usize,
    pad: usize,
    dil: usize,
    kernel: usize,
    stride: usize,
) -> Option<usize> {
    let span = dil.checked_mul(kernel.checked_sub(1)?)?.checked_add(1)?;
    let padded = input.checked_add(pad)?;
    padded.checked_sub(span).map(|r| r / stride + 1)
}

/// The patches of one image's channels `c0..c0 + cg` as columns: row
/// `(c, ky, kx)`, column `(oy, ox)`, zero where the patch lies in the pads.
#[allow(clippy::too_many_arguments)]
pub(super) fn im2col<T: Element>(
    x: &[T],
    base: usize,
    cg: usize,
    hw: [usize; 2],
    k: [usize; 2],
    out: [usize; 2],
    g: &Geometry,
    col: &mut [T],
) {
    let [h, w] = hw;
    let [kh, kw] = k;
    let [ho, wo] = out;
    for c in 0..cg {
        for ky in 0..kh {
            for kx in 0..kw {
                let row = (c * kh + ky) * kw + kx;
                for oy in 0..ho {
                    let iy = (oy * g.s[0] + ky * g.d[0])
                        .checked_sub(g.p[0])
                        .filter(|&v| v < h);
                    for ox in 0..wo {
                        let ix = (ox * g.s[1] + kx * g.d[1])
                            .checked_sub(g.p[2])
                            .filter(|&v| v < w);
                        col[row * ho * wo + oy * wo + ox] = match (iy, ix) {
                            (Some(iy), Some(ix)) => x[base + (c * h + iy) * w + ix],
                            _ => T::ZERO,
                        };
                    }
                }
            }
        }
    }
}

/// `Conv2D(x, filter[, bias]) -> y` on one element type.
#[allow(clippy::too_many_arguments)]
fn conv2d<T: Element + AddAssign>(
    x: &[T],
    xd: [usize; 4],
    f: &[T],
    fd: [usize; 4],
    bias: Option<&[T]>,
    g: &Geometry,
    out: [usize; 2],
) -> Result<Vec<T>, AclError> {
    let [n, c, h, w] = xd;
    let [co, cg, kh, kw] = fd;
    let [ho, wo] = out;
    let cog = co / g.groups;
    let rows = cg * kh * kw;
    let mut y = vec![T::ZERO; n * co * ho * wo];
    let mut col = vec![T::ZERO; rows * ho * wo];
    for img in 0..n {
        for grp in 0..g.groups {
            im2col(
                x,
                (img * c + grp * cg) * h * w,
                cg,
                [h, w],
                [kh, kw],
                [ho, wo],
                g,
                &mut col,
            );
            let dst = View::dense(cog, ho * wo, (img * co + grp * cog) * ho * wo);
            let a = View::dense(cog, rows, grp * cog * rows);
            let b = View::dense(rows, ho * wo, 0);
            linalg::gemm(&mut y, dst, f, a, &col, b, false)?;
        }
    }
    if let Some(bias) = bias {
        add_bias(&mut y, bias, ho * wo);
    }
    Ok(y)
}

/// `Conv2DTranspose` on one element type: `x` `[n, ci, h, w]`, filter
/// `[ci, cog, kh, kw]`, into `[n, cog * groups, ho, wo]`.
#[allow(clippy::too_many_arguments)]
pub(super) fn conv2d_transpose<T: Element + AddAssign>(
    x: &[T],
    xd: [usize; 4],
    f: &[T],
    fd: [usize; 4],
    bias: Option<&[T]>,
    g: &Geometry,
    out: [usize; 2],
) -> Result<Vec<T>, AclError> {
    let [n, ci, h, w] = xd;
    let [_, cog, kh, kw] = fd;
    let [ho, wo] = out;
    let cig = ci / g.groups;
    let co = cog * g.groups;
    let rows = cog * kh * kw;
    let mut y = vec![T::ZERO; n * co * ho * wo];
    let mut cols = vec![T::ZERO; rows * h * w];
    for img in 0..n {
        for grp in 0..g.groups {
            // cols = filter_g^T (rows × cig) · x_g (cig × h·w).
            let a = View::dense(cig, rows, grp * cig * rows).t();
            let b = View::dense(cig, h * w, (img * ci + grp * cig) * h * w);
            linalg::gemm(&mut cols, View::dense(rows, h * w, 0), f, a, x, b, false)?;
            // col2im: each column (iy, ix) adds into the output positions
            // its patch covers.
            let ybase = (img * co + grp * cog) * ho * wo;
            for c in 0..cog {
                for ky in 0..kh {
                    for kx in 0..kw {
                        let row = (c * kh + ky) * kw + kx;
                        for iy in 0..h {
                            let Some(oy) = (iy * g.s[0] + ky * g.d[0])
                                .checked_sub(g.p[0])
                                .filter(|&v| v < ho)
                            else {
                                continue;
                            };
                            for ix in 0..w {
                                let Some(ox) = (ix * g.s[1] + kx * g.d[1])
                                    .checked_sub(g.p[2])
                                    .filter(|&v| v < wo)
                                else {
                                    continue;
                                };
                                y[ybase + (c * ho + oy) * wo + ox] +=
                                    cols[row * h * w + iy * w + ix];
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(bias) = bias {
        add_bias(&mut y, bias, ho * wo);
    }
    Ok(y)
}

/// The bias at input `i`, if given: 1-D, `len` elements, of the inputs'
/// type.
fn bias(call: &Call<'_>, i: usize, len: usize, dtype: DType) -> Result<Option<Tensor>, AclError> {
    if call.inputs.count() <= i {
        return Ok(None);
    }
    let b = call.tensor(i)?;
    if b.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if b.dims != [len] {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    Ok(Some(b))
}

/// `Conv2D(x, filter[, bias[, offset_w]]) -> y`: x `[n, c, h, w]`, filter
/// `[co, c / groups, kh, kw]`, bias `[co]`.
pub(super) fn Conv2D(call: &Call<'_>) -> Result<Written, AclError> {
    if !(2..=3).contains(&call.inputs.count()) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.outputs.len() != 1 {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (x, f) = (call.tensor(0)?, call.tensor(1)?);
    float_type(x.dtype)?;
    if f.dtype != x.dtype || call.out(0).dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let g = geometry(call)?;
    let (xd, fd) = (dims4(&x)?, dims4(&f)?);
    let [n, c, h, w] = xd;
    let [co, cg, kh, kw] = fd;
    if c % g.groups != 0 || co % g.groups != 0 || cg != c / g.groups || kh == 0 || kw == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let ho =
        conv_extent(h, g.p[0] + g.p[1], g.d[0], kh, g.s[0]).ok_or(AclError::OP_INPUT_NOT_MATCH)?;
    let wo =
        conv_extent(w, g.p[2] + g.p[3], g.d[1], kw, g.s[1]).ok_or(AclError::OP_INPUT_NOT_MATCH)?;
    if call.out(0).dims != [n, co, ho, wo] {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let b = bias(call, 2, co, x.dtype)?;
    let out = [ho, wo];
    Ok(vec![compute(
        &x,
        &f,
        b.as_ref(),
        x.dtype,
        |x, f, b| conv2d(x, xd, f, fd, b, &g, out),
        |x, f, b| conv2d(x, xd, f, fd, b, &g, out),
    )?])
}

/// `Conv2DTranspose(input_size, x, filter[, bias]) -> y`: `input_size`
/// (host int32 `[4]`) is y's shape; x `[n, ci, h, w]`, filter
/// `[ci, co / groups, kh, kw]`, bias `[co]`; `output_padding`
/// `{0, 0, oH, oW}` adds rows and columns at the end.
pub(super) fn Conv2DTranspose(call: &Call<'_>) -> Result<Written, AclError> {
    if !(3..=4).contains(&call.inputs.count()) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.outputs.len() != 1 {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let size = call.sizes(0)?;
    let (x, f) = (call.tensor(1)?, call.tensor(2)?);
    float_type(x.dtype)?;
    if f.dtype != x.dtype || call.out(0).dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let g = geometry(call)?;
    let op = list(call, "output_padding", 4, 0)?;
    let (xd, fd) = (dims4(&x)?, dims4(&f)?);
    let [n, ci, h, w] = xd;
    let [fci, cog, kh, kw] = fd;
    if fci != ci || ci % g.groups != 0 || kh == 0 || kw == 0 || h == 0 || w == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let extent = |i: usize, s: usize, p: usize, d: usize, k: usize, o: usize| -> Option<usize> {
        ((i - 1) * s + d * (k - 1) + o + 1).checked_sub(p)
    };
    let ho = extent(h, g.s[0], g.p[0] + g.p[1], g.d[0], kh, op[2])
        .ok_or(AclError::OP_INPUT_NOT_MATCH)?;
    let wo = extent(w, g.s[1], g.p[2] + g.p[3], g.d[1], kw, op[3])
        .ok_or(AclError::OP_INPUT_NOT_MATCH)?;
    let co = cog * g.groups;
    let want = [n, co, ho, wo];
    if size != want {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.out(0).dims != want {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let b = bias(call, 3, co, x.dtype)?;
    let out = [ho, wo];
    Ok(vec![compute(
        &x,
        &f,
        b.as_ref(),
        x.dtype,
        |x, f, b| conv2d_transpose(x, xd, f, fd, b, &g, out),
        |x, f, b| conv2d_transpose(x, xd, f, fd, b, &g, out),
    )?])
}

#[cfg(test)]
mod tests;
