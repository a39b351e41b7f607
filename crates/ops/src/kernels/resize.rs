//! Image resizing, as torch_npu launches it for `F.interpolate` (modes
//! `nearest` and `bilinear`) and its gradients:
//! `ResizeNearestNeighborV2(x, size) -> y`,
//! `ResizeNearestNeighborV2Grad(grads, size) -> y`,
//! `ResizeBilinearV2(x, size) -> y` and
//! `ResizeBilinearV2Grad(grads, original_image) -> y`, each with
//! `align_corners` and `half_pixel_centers`. Tensors are NCHW (what
//! torch_npu hands them); `size` is an int32 or int64 pair, the output's
//! height and width (the input's, for the nearest gradient).
//!
//! The source coordinate of output position `d` follows the operators'
//! (TensorFlow's) definition: the scale is `in / out`, or
//! `(in − 1) / (out − 1)` with `align_corners`; the source is `d·scale`,
//! or `(d + ½)·scale` (nearest) / `(d + ½)·scale − ½` (bilinear) with
//! `half_pixel_centers`. Nearest takes the floor (rounds, with
//! `align_corners`), clamped to the input; bilinear blends the two
//! neighbours of the source, clamped at the edges. For integer scale
//! factors and sizes these are PyTorch's `nearest` and `bilinear`. The
//! gradients scatter each incoming gradient back with the same weights.
//! Computed in fp32 (fp64 for float64), each output rounded once.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};

/// How one axis resamples: for each output position, the input
/// positions it reads and their weights.
pub(super) type Taps = Vec<Vec<(usize, f64)>>;

#[derive(Debug, Clone, Copy)]
pub(super) struct Mode {
    pub(super) bilinear: bool,
    pub(super) align_corners: bool,
    pub(super) half_pixel: bool,
}

fn mode(call: &Call<'_>, bilinear: bool) -> Result<Mode, AclError> {
    let align_corners = call.attr_bool("align_corners", false)?;
    let half_pixel = call.attr_bool("half_pixel_centers", false)?;
    if align_corners && half_pixel {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    Ok(Mode {
        bilinear,
        align_corners,
        half_pixel,
    })
}

/// The taps of an axis of `input` positions resampled to `output`.
pub(super) fn taps(m: Mode, input: usize, output: usize) -> Taps {
    let scale = if m.align_corners && output > 1 {
        (input as f64 - 1.0) / (output as f64 - 1.0)
    } else {
        input as f64 / output as f64
    };
    let last = input - 1;
    (0..output)
        .map(|d| {
            let d = d as f64;
            if m.bilinear {
                let src = if m.half_pixel {
                    (d + 0.5) * scale - 0.5
                } else {
                    d * scale
                };
                let low = src.floor();
                let lerp = src - low;
                let lo = (low.max(0.0) as usize).min(last);
                let hi = (src.ceil().max(0.0) as usize).min(last);
                vec![(lo, 1.0 - lerp), (hi, lerp)]
            } else {
                let src = if m.half_pixel {
                    (d + 0.5) * scale
                } else {
                    d * scale
                };
                let i = if m.align_corners {
                    src.round()
                } else {
                    src.floor()
                };
                vec![((i.max(0.0) as usize).min(last), 1.0)]
            }
        })
        .collect()
}

/// A size pair from input `i`: two positive sizes.
fn size_pair(call: &Call<'_>, i: usize) -> Result<[usize; 2], AclError> {
    match call.sizes(i)?.as_slice() {
        [h, w] if *h > 0 && *w > 0 => Ok([*h, *w]),
        [_, _] => Err(AclError::INVALID_PARAM),
        _ => Err(AclError::OP_INPUT_NOT_MATCH),
    }
}

/// Resamples `[planes, d, h, w]` to `[planes, od, oh, ow]` (`forward`;
/// the taps' lengths are the output's), or scatters a gradient
/// `[planes, od, oh, ow]` back to `[planes, d, h, w]`.
pub(super) fn resample<T: Real>(
    v: &[T],
    planes: usize,
    dhw: [usize; 3],
    taps: [&Taps; 3],
    forward: bool,
) -> Vec<T> {
    let [d, h, w] = dhw;
    let [td, th, tw] = taps;
    let (od, oh, ow) = (td.len(), th.len(), tw.len());
    let (inner, outer) = (d * h * w, od * oh * ow);
    let mut out = vec![T::ZERO; planes * if forward { outer } else { inner }];
    for p in 0..planes {
        for (z, depth) in td.iter().enumerate() {
            for (a, row) in th.iter().enumerate() {
                for (b, col) in tw.iter().enumerate() {
                    let at = p * outer + (z * oh + a) * ow + b;
                    for &(k, wk) in depth {
                        for &(i, wi) in row {
                            for &(j, wj) in col {
                                let wt = T::of(wk * wi * wj);
                                let src = p * inner + (k * h + i) * w + j;
                                if forward {
                                    out[at] += wt * v[src];
                                } else {
                                    out[src] += wt * v[at];
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// `[N, C, H, W]` as planes and the plane's size (100021 otherwise).
fn planes(dims: &[usize]) -> Result<(usize, usize, usize), AclError> {
    match dims {
        [n, c, h, w] => Ok((n * c, *h, *w)),
        _ => Err(AclError::OP_INPUT_NOT_MATCH),
    }
}

fn resize<T: Real>(call: &Call<'_>, bilinear: bool, grad: bool) -> Result<Written, AclError> {
    let m = mode(call, bilinear)?;
    let x = call.tensor(0)?;
    let (p, h, w) = planes(&x.dims)?;
    // The other side's plane: from the size input, or the original image.
    let [oh, ow] = if grad && bilinear {
        let (q, oh, ow) = planes(&call.spec(1)?.dims)?;
        if q != p {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        [oh, ow]
    } else {
        size_pair(call, 1)?
    };
    let out = call.out(0);
    let want = [x.dims[0], x.dims[1], oh, ow];
    if out.dims != want || out.dtype != x.dtype {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if p * h * w == 0 {
        return Ok(vec![bytes::<T>(out.dtype, &vec![T::ZERO; out.numel()])?]);
    }
    let v = values::<T>(&x)?;
    let one = taps(m, 1, 1);
    let y = if grad {
        // x is the gradient of an [oh, ow] → [h, w] resize.
        let (th, tw) = (taps(m, oh, h), taps(m, ow, w));
        resample(&v, p, [1, oh, ow], [&one, &th, &tw], false)
    } else {
        let (th, tw) = (taps(m, h, oh), taps(m, w, ow));
        resample(&v, p, [1, h, w], [&one, &th, &tw], true)
    };
    Ok(vec![bytes(out.dtype, &y)?])
}

fn dispatch(call: &Call<'_>, bilinear: bool, grad: bool) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || resize::<f32>(call, bilinear, grad),
        || resize::<f64>(call, bilinear, grad),
    )
}

/// `ResizeNearestNeighborV2(x, size) -> y`, `align_corners`,
/// `half_pixel_centers`: each output pixel the input pixel its source
/// coordinate falls in.
pub(super) fn ResizeNearestNeighborV2(call: &Call<'_>) -> Result<Written, AclError> {
    dispatch(call, false, false)
}

/// `ResizeNearestNeighborV2Grad(grads, size) -> y`: each gradient added
/// to the input pixel its output pixel copied (`size`: the input's
/// height and width).
pub(super) fn ResizeNearestNeighborV2Grad(call: &Call<'_>) -> Result<Written, AclError> {
    dispatch(call, false, true)
}

/// `ResizeBilinearV2(x, size) -> y`, `align_corners`,
/// `half_pixel_centers`: each output pixel the bilinear blend of the four
/// input pixels around its source coordinate.
pub(super) fn ResizeBilinearV2(call: &Call<'_>) -> Result<Written, AclError> {
    dispatch(call, true, false)
}

/// `ResizeBilinearV2Grad(grads, original_image) -> y`: each gradient
/// shared among the four input pixels with the forward's weights (y has
/// the original image's shape).
pub(super) fn ResizeBilinearV2Grad(call: &Call<'_>) -> Result<Written, AclError> {
    dispatch(call, true, true)
}

#[cfg(test)]
mod tests;
