//! Padding by the tensor's own elements, as torch_npu launches it for
//! `F.pad` with `mode='reflect'` (`MirrorPad(x, paddings) -> y`, mode
//! `REFLECT`; also `SYMMETRIC`) and `mode='replicate'` (`PadV3` with mode
//! `edge`, which [`super::layout`]'s `PadV3` hands here, as it does
//! `reflect` and `symmetric`), and their gradient
//! `PadV3Grad(grad, paddings) -> dx` (modes `reflect`, `edge`,
//! `symmetric`; `paddings_contiguous`).
//!
//! `paddings` holds a before and an after count per axis (int32 or
//! int64). Along each axis, an output position before the start reads
//! the input mirrored about its first element (`reflect`: position −k
//! reads k), about the edge between (`symmetric`: −k reads k − 1), or the
//! first element (`edge`); likewise after the end. Reflecting needs
//! paddings below the axis's length, symmetric ones at most it, edge a
//! non-empty axis (100000 otherwise). The forward copies elements of any
//! type; the gradient adds each incoming gradient into the element it
//! read, in fp32 (fp64 for float64), rounded once.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};
use super::shape::contiguous_strides;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Reflect,
    Symmetric,
    Edge,
}

fn mode_named(name: &str) -> Result<Mode, AclError> {
    match name.to_ascii_lowercase().as_str() {
        "reflect" => Ok(Mode::Reflect),
        "symmetric" => Ok(Mode::Symmetric),
        "edge" => Ok(Mode::Edge),
        _ => Err(AclError::OP_ATTR_NOT_MATCH),
    }
}

/// Whether `PadV3`'s `mode` is one of these (not `constant`).
pub(super) fn is_mirror_mode(name: &str) -> bool {
    mode_named(name).is_ok()
}

/// Each axis's padding before and after, from input `i`, for a tensor of
/// `rank` axes; checked against the axes' lengths for `mode`.
fn paddings(
    call: &Call<'_>,
    i: usize,
    dims: &[usize],
    mode: Mode,
    contiguous: bool,
) -> Result<Vec<(usize, usize)>, AclError> {
    let p = call.sizes(i)?;
    let rank = dims.len();
    if p.len() != 2 * rank {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let pairs: Vec<(usize, usize)> = (0..rank)
        .map(|k| {
            if contiguous {
                (p[2 * k], p[2 * k + 1])
            } else {
                (p[k], p[rank + k])
            }
        })
        .collect();
    for (&len, &(b, a)) in dims.iter().zip(&pairs) {
        let fits = match mode {
            Mode::Reflect => b < len && a < len,
            Mode::Symmetric => b <= len && a <= len,
            Mode::Edge => len > 0 || b + a == 0,
        };
        if !fits {
            return Err(AclError::INVALID_PARAM);
        }
    }
    Ok(pairs)
}

/// The input position output position `o` of an axis of `len` padded by
/// `before` reads.
fn source(mode: Mode, o: usize, before: usize, len: usize) -> usize {
    let p = o as i64 - before as i64;
    let n = len as i64;
    let s = if p < 0 {
        match mode {
            Mode::Reflect => -p,
            Mode::Symmetric => -p - 1,
            Mode::Edge => 0,
        }
    } else if p >= n {
        match mode {
            Mode::Reflect => 2 * (n - 1) - p,
            Mode::Symmetric => 2 * n - 1 - p,
            Mode::Edge => n - 1,
        }
    } else {
        p
    };
    s as usize
}

/// For each element of the padded shape (row-major), the flat index of
/// the input element it reads.
fn gather_map(mode: Mode, dims: &[usize], pads: &[(usize, usize)]) -> (Vec<usize>, Vec<usize>) {
    let out: Vec<usize> = dims.iter().zip(pads).map(|(d, (b, a))| d + b + a).collect();
    let strides = contiguous_strides(dims);
    let total: usize = out.iter().product();
    let mut index = vec![0usize; out.len()];
    let mut map = Vec::with_capacity(total);
    for _ in 0..total {
        let at = (0..out.len())
            .map(|k| source(mode, index[k], pads[k].0, dims[k]) * strides[k])
            .sum();
        map.push(at);
        for k in (0..out.len()).rev() {
            index[k] += 1;
            if index[k] < out[k] {
                break;
            }
            index[k] = 0;
        }
    }
    (out, map)
}

/// x padded by `mode` (input 1 the paddings): the output's bytes.
pub(super) fn mirror_pad(call: &Call<'_>, mode_name: &str) -> Result<Written, AclError> {
    let mode = mode_named(mode_name)?;
    let contiguous = call.attr_bool("paddings_contiguous", true)?;
    let x = call.tensor(0)?;
    let pads = paddings(call, 1, &x.dims, mode, contiguous)?;
    let out_dims: Vec<usize> = x
        .dims
        .iter()
        .zip(&pads)
        .map(|(d, (b, a))| d + b + a)
        .collect();
    let out = call.out(0);
    if out.dims != out_dims || out.dtype != x.dtype {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Tensor::numel_of(&out_dims)?;
    let (_, map) = gather_map(mode, &x.dims, &pads);
    let size = x.dtype.size();
    let mut y = Vec::with_capacity(map.len() * size);
    for i in map {
        y.extend_from_slice(&x.bytes[i * size..(i + 1) * size]);
    }
    Ok(vec![y])
}

/// `MirrorPad(x, paddings) -> y`, `mode` `REFLECT` or `SYMMETRIC`: x
/// padded by its own elements mirrored at each end of each axis.
pub(super) fn MirrorPad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let name = call.attr_string("mode", "REFLECT")?.to_string();
    if mode_named(&name)? == Mode::Edge {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    mirror_pad(call, &name)
}

fn pad_grad<T: Real>(call: &Call<'_>, mode: Mode) -> Result<Written, AclError> {
    let contiguous = call.attr_bool("paddings_contiguous", true)?;
    let g = call.tensor(0)?;
    let out = call.out(0);
    if out.dtype != g.dtype || out.dims.len() != g.dims.len() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let pads = paddings(call, 1, &out.dims, mode, contiguous)?;
    let padded: Vec<usize> = out
        .dims
        .iter()
        .zip(&pads)
        .map(|(d, (b, a))| d + b + a)
        .collect();
    if padded != g.dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let gv = values::<T>(&g)?;
    let (_, map) = gather_map(mode, &out.dims, &pads);
    let mut dx = vec![T::ZERO; out.numel()];
    for (v, i) in gv.into_iter().zip(map) {
        dx[i] += v;
    }
    Ok(vec![bytes(out.dtype, &dx)?])
}

/// `PadV3Grad(grad, paddings) -> dx`, `mode` (`reflect`, `edge`,
/// `symmetric`), `paddings_contiguous`: each gradient of the padded
/// tensor added into the element of x it was read from.
pub(super) fn PadV3Grad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let mode = mode_named(call.attr_string("mode", "reflect")?)?;
    by_type(
        call.spec(0)?.dtype,
        || pad_grad::<f32>(call, mode),
        || pad_grad::<f64>(call, mode),
    )
}

#[cfg(test)]
mod tests;
