//! Convolutions in NCHW: `Conv2D` and `Conv2DTranspose`, as torch_npu
//! launches them for `nn.Conv1d`/`nn.Conv2d` (a 1-D convolution is a 2-D
//! one of height 1) and `nn.ConvTranspose1d`/`2d` (`docs/operators.md`).
//! The code is three-dimensional (a 2-D convolution has a depth of 1):
//! `super::conv3d`'s NCDHW operators share it.
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

/// The spatial parameters of a convolution, in three dims (a 2-D one has
/// a depth of 1: stride and dilation 1, no pads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Geometry {
    /// Strides (D, H, W).
    pub(super) s: [usize; 3],
    /// Pads (front, back, top, bottom, left, right).
    pub(super) p: [usize; 6],
    /// Dilations (D, H, W).
    pub(super) d: [usize; 3],
    /// Groups.
    pub(super) groups: usize,
}

pub(super) fn list(
    call: &Call<'_>,
    name: &str,
    len: usize,
    default: i64,
) -> Result<Vec<usize>, AclError> {
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

/// The geometry of a convolution of `spatial` (2: NCHW, 3: NCDHW) dims
/// from its attributes.
pub(super) fn geometry(call: &Call<'_>, spatial: usize) -> Result<Geometry, AclError> {
    let format = if spatial == 3 { "NCDHW" } else { "NCHW" };
    match call.attr("data_format") {
        None => {}
        Some(AttrValue::String(f)) if f == format => {}
        Some(AttrValue::String(_)) => return Err(AclError::FORMAT_NOT_MATCH),
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    let s = list(call, "strides", spatial + 2, 1)?;
    let p = list(call, "pads", 2 * spatial, 0)?;
    let d = list(call, "dilations", spatial + 2, 1)?;
    let groups = match call.attr("groups") {
        None => 1,
        Some(AttrValue::Int(g)) => usize::try_from(*g).map_err(|_| AclError::OP_ATTR_NOT_MATCH)?,
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    // The missing depth of a 2-D convolution.
    let lift = |v: &[usize], one: usize| -> [usize; 3] {
        let mut a = [one; 3];
        a[3 - (v.len() - 2)..].copy_from_slice(&v[2..]);
        a
    };
    let mut pads = [0; 6];
    pads[6 - p.len()..].copy_from_slice(&p);
    let g = Geometry {
        s: lift(&s, 1),
        p: pads,
        d: lift(&d, 1),
        groups,
    };
    if g.s.contains(&0) || g.d.contains(&0) || g.groups == 0 || s[0] != 1 || s[1] != 1 {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    Ok(g)
}

/// A tensor of `spatial` + 2 dims as `[n, c, d, h, w]` (a depth of 1 for
/// a 2-D one), or 100021.
pub(super) fn dims5(dims: &[usize], spatial: usize) -> Result<[usize; 5], AclError> {
    match (spatial, dims) {
        (2, [n, c, h, w]) => Ok([*n, *c, 1, *h, *w]),
        (3, [n, c, d, h, w]) => Ok([*n, *c, *d, *h, *w]),
        _ => Err(AclError::OP_INPUT_NOT_MATCH),
    }
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

/// The output extents (D, H, W) of the convolution of an input of `dhw`
/// by a filter of `k`, or 100021.
pub(super) fn extents(
    dhw: [usize; 3],
    k: [usize; 3],
    g: &Geometry,
) -> Result<[usize; 3], AclError> {
    let mut out = [0; 3];
    for a in 0..3 {
        out[a] = conv_extent(dhw[a], g.p[2 * a] + g.p[2 * a + 1], g.d[a], k[a], g.s[a])
            .ok_or(AclError::OP_INPUT_NOT_MATCH)?;
    }
    Ok(out)
}

/// The input position output position `o` reads at kernel tap `k` on
/// axis `a`, if inside the input of `len`.
fn tap(g: &Geometry, a: usize, o: usize, k: usize, len: usize) -> Option<usize> {
    (o * g.s[a] + k * g.d[a])
        .checked_sub(g.p[2 * a])
        .filter(|&v| v < len)
}

/// The patches of one image's channels `c0..c0 + cg` as columns: row
/// `(c, kz, ky, kx)`, column `(oz, oy, ox)`, zero where the patch lies in
/// the pads.
#[allow(clippy::too_many_arguments)]
pub(super) fn im2col<T: Element>(
    x: &[T],
    base: usize,
    cg: usize,
    dhw: [usize; 3],
    k: [usize; 3],
    out: [usize; 3],
    g: &Geometry,
    col: &mut [T],
) {
    let [d, h, w] = dhw;
    let [kd, kh, kw] = k;
    let [dout, ho, wo] = out;
    let plane = dout * ho * wo;
    for c in 0..cg {
        for kz in 0..kd {
            for ky in 0..kh {
                for kx in 0..kw {
                    let row = ((c * kd + kz) * kh + ky) * kw + kx;
                    for oz in 0..dout {
                        let iz = tap(g, 0, oz, kz, d);
                        for oy in 0..ho {
                            let iy = tap(g, 1, oy, ky, h);
                            for ox in 0..wo {
                                let ix = tap(g, 2, ox, kx, w);
                                col[row * plane + (oz * ho + oy) * wo + ox] = match (iz, iy, ix) {
                                    (Some(iz), Some(iy), Some(ix)) => {
                                        x[base + ((c * d + iz) * h + iy) * w + ix]
                                    }
                                    _ => T::ZERO,
                                };
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A convolution on one element type: x `[n, c, d, h, w]`, filter
/// `[co, c / groups, kd, kh, kw]`, into `[n, co, out...]`.
#[allow(clippy::too_many_arguments)]
pub(super) fn conv_nd<T: Element + AddAssign>(
    x: &[T],
    xd: [usize; 5],
    f: &[T],
    fd: [usize; 5],
    bias: Option<&[T]>,
    g: &Geometry,
    out: [usize; 3],
) -> Result<Vec<T>, AclError> {
    let [n, c, d, h, w] = xd;
    let [co, cg, kd, kh, kw] = fd;
    let plane = out.iter().product::<usize>();
    let cog = co / g.groups;
    let rows = cg * kd * kh * kw;
    let mut y = vec![T::ZERO; n * co * plane];
    let mut col = vec![T::ZERO; rows * plane];
    for img in 0..n {
        for grp in 0..g.groups {
            let base = (img * c + grp * cg) * d * h * w;
            im2col(x, base, cg, [d, h, w], [kd, kh, kw], out, g, &mut col);
            let dst = View::dense(cog, plane, (img * co + grp * cog) * plane);
            let a = View::dense(cog, rows, grp * cog * rows);
            let b = View::dense(rows, plane, 0);
            linalg::gemm(&mut y, dst, f, a, &col, b, false)?;
        }
    }
    if let Some(bias) = bias {
        add_bias(&mut y, bias, plane);
    }
    Ok(y)
}

/// A transposed convolution on one element type: `x` `[n, ci, d, h, w]`,
/// filter `[ci, cog, kd, kh, kw]`, into `[n, cog * groups, out...]`.
#[allow(clippy::too_many_arguments)]
pub(super) fn conv_nd_transpose<T: Element + AddAssign>(
    x: &[T],
    xd: [usize; 5],
    f: &[T],
    fd: [usize; 5],
    bias: Option<&[T]>,
    g: &Geometry,
    out: [usize; 3],
) -> Result<Vec<T>, AclError> {
    let [n, ci, d, h, w] = xd;
    let [_, cog, kd, kh, kw] = fd;
    let [dout, ho, wo] = out;
    let (plane, inner) = (dout * ho * wo, d * h * w);
    let cig = ci / g.groups;
    let co = cog * g.groups;
    let rows = cog * kd * kh * kw;
    let mut y = vec![T::ZERO; n * co * plane];
    let mut cols = vec![T::ZERO; rows * inner];
    for img in 0..n {
        for grp in 0..g.groups {
            // cols = filter_g^T (rows × cig) · x_g (cig × d·h·w).
            let a = View::dense(cig, rows, grp * cig * rows).t();
            let b = View::dense(cig, inner, (img * ci + grp * cig) * inner);
            linalg::gemm(&mut cols, View::dense(rows, inner, 0), f, a, x, b, false)?;
            // col2im: each column (iz, iy, ix) adds into the output
            // positions its patch covers.
            let ybase = (img * co + grp * cog) * plane;
            for (row, column) in cols.chunks_exact(inner).enumerate() {
                let (c, kz, ky, kx) = (
                    row / (kd * kh * kw),
                    row / (kh * kw) % kd,
                    row / kw % kh,
                    row % kw,
                );
                for iz in 0..d {
                    let Some(oz) = tap(g, 0, iz, kz, dout) else {
                        continue;
                    };
                    for iy in 0..h {
                        let Some(oy) = tap(g, 1, iy, ky, ho) else {
                            continue;
                        };
                        for ix in 0..w {
                            let Some(ox) = tap(g, 2, ix, kx, wo) else {
                                continue;
                            };
                            y[ybase + ((c * dout + oz) * ho + oy) * wo + ox] +=
                                column[(iz * h + iy) * w + ix];
                        }
                    }
                }
            }
        }
    }
    if let Some(bias) = bias {
        add_bias(&mut y, bias, plane);
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

/// A convolution of `spatial` dims: `(x, filter[, bias]) -> y`.
pub(super) fn convolution(call: &Call<'_>, spatial: usize) -> Result<Written, AclError> {
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
    let g = geometry(call, spatial)?;
    let (xd, fd) = (dims5(&x.dims, spatial)?, dims5(&f.dims, spatial)?);
    let [n, c, d, h, w] = xd;
    let [co, cg, kd, kh, kw] = fd;
    if c % g.groups != 0 || co % g.groups != 0 || cg != c / g.groups || kd * kh * kw == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let out = extents([d, h, w], [kd, kh, kw], &g)?;
    if dims5(&call.out(0).dims, spatial) != Ok([n, co, out[0], out[1], out[2]]) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let b = bias(call, 2, co, x.dtype)?;
    Ok(vec![compute(
        &x,
        &f,
        b.as_ref(),
        x.dtype,
        |x, f, b| conv_nd(x, xd, f, fd, b, &g, out),
        |x, f, b| conv_nd(x, xd, f, fd, b, &g, out),
    )?])
}

/// `Conv2D(x, filter[, bias[, offset_w]]) -> y`: x `[n, c, h, w]`, filter
/// `[co, c / groups, kh, kw]`, bias `[co]`.
pub(super) fn Conv2D(call: &Call<'_>) -> Result<Written, AclError> {
    convolution(call, 2)
}

/// A transposed convolution of `spatial` dims:
/// `(input_size, x, filter[, bias]) -> y`.
pub(super) fn transposed(call: &Call<'_>, spatial: usize) -> Result<Written, AclError> {
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
    let g = geometry(call, spatial)?;
    let op = list(call, "output_padding", spatial + 2, 0)?;
    let (xd, fd) = (dims5(&x.dims, spatial)?, dims5(&f.dims, spatial)?);
    let [n, ci, d, h, w] = xd;
    let [fci, cog, kd, kh, kw] = fd;
    if fci != ci || ci % g.groups != 0 || kd * kh * kw == 0 || d * h * w == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let co = cog * g.groups;
    let (input, k) = ([d, h, w], [kd, kh, kw]);
    // input_size gives the output's extents: at least what the attributes
    // give, and (as torch_npu's 3-D form, which leaves output_padding 0,
    // needs) up to max(stride, dilation) − 1 more at the end.
    let size = dims5(&size, spatial)?;
    if size[..2] != [n, co] {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let mut out = [0; 3];
    for a in 0..3 {
        // The output padding of axis a (none for a 2-D one's depth).
        let o = if a + spatial >= 3 {
            op[2 + a + spatial - 3]
        } else {
            0
        };
        let base = ((input[a] - 1) * g.s[a] + g.d[a] * (k[a] - 1) + o + 1)
            .checked_sub(g.p[2 * a] + g.p[2 * a + 1])
            .ok_or(AclError::OP_INPUT_NOT_MATCH)?;
        let extra = size[2 + a].checked_sub(base);
        if extra.is_none_or(|e| e >= g.s[a].max(g.d[a])) {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        out[a] = size[2 + a];
    }
    let want = dims_of(spatial, [n, co, out[0], out[1], out[2]]);
    if call.out(0).dims != want {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let b = bias(call, 3, co, x.dtype)?;
    Ok(vec![compute(
        &x,
        &f,
        b.as_ref(),
        x.dtype,
        |x, f, b| conv_nd_transpose(x, xd, f, fd, b, &g, out),
        |x, f, b| conv_nd_transpose(x, xd, f, fd, b, &g, out),
    )?])
}

/// `[n, c, d, h, w]` as the shape of a tensor of `spatial` dims (the
/// depth dropped for 2).
pub(super) fn dims_of(spatial: usize, d: [usize; 5]) -> Vec<usize> {
    if spatial == 3 {
        d.to_vec()
    } else {
        vec![d[0], d[1], d[3], d[4]]
    }
}

/// `Conv2DTranspose(input_size, x, filter[, bias]) -> y`: `input_size`
/// (host int32 `[4]`) is y's shape; x `[n, ci, h, w]`, filter
/// `[ci, co / groups, kh, kw]`, bias `[co]`; `output_padding`
/// `{0, 0, oH, oW}` adds rows and columns at the end.
pub(super) fn Conv2DTranspose(call: &Call<'_>) -> Result<Written, AclError> {
    transposed(call, 2)
}

#[cfg(test)]
mod tests;
