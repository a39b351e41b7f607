//! One-axis linear resizing, as torch_npu launches `F.interpolate(mode=
//! 'linear')` on `[N, C, W]` (unsqueezed to `[N, C, 1, W]`):
//! `ResizeD(x) -> y` with `sizes` (the output width), `scales`, `mode`
//! `"linear"` and `coordinate_transformation_mode` (`"half_pixel"` or
//! `"align_corners"`), and its gradient `ResizeGradD(grads) -> y` with
//! `original_size` too. The last axis is resized (its length is y's last
//! dim), every other element a row; the source coordinates are
//! `super::resize`'s bilinear ones on that axis, so the values are
//! PyTorch's `linear` for sizes and integer scale factors (the `scales`
//! attribute is not read: the scale is `in/out`).
//!
//! `mode` `"cubic"` is `F.interpolate(mode='bicubic')`: the last two axes
//! of an NCHW x resized to `sizes` (oH, oW) by PyTorch's bicubic rule
//! (`cubic_coeff_a`, −0.75 from torch_npu: the four positions around the
//! source `(d + ½)·in/out − ½`, or `d·(in − 1)/(out − 1)` with
//! `align_corners`, clamped to the axis); its gradient takes the incoming
//! gradient in HWNC (`data_format`: `[oH, oW, N, C]`, as torch_npu
//! permutes it) and writes HWNC too (y's descriptor holds
//! `[N, C, H, W]`; torch_npu reads the buffer as HWNC, which the torch
//! scenario confirms). Other modes (`nearest`) are 100023. Computed in fp32 (fp64 for
//! float64), each output rounded once.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};
use super::resize::{Mode, Taps, resample, taps};

/// PyTorch's bicubic taps on one axis (`cubic_coeff_a` `a`): the four
/// positions around the source, clamped to the axis, and their weights.
fn cubic_taps(align_corners: bool, input: usize, output: usize, a: f64) -> Taps {
    let scale = if align_corners {
        if output > 1 {
            (input as f64 - 1.0) / (output as f64 - 1.0)
        } else {
            0.0
        }
    } else {
        input as f64 / output as f64
    };
    let near = |x: f64| ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    let far = |x: f64| ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    (0..output)
        .map(|d| {
            let src = if align_corners {
                d as f64 * scale
            } else {
                (d as f64 + 0.5) * scale - 0.5
            };
            let f = src.floor();
            let t = src - f;
            let weights = [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)];
            (0..4)
                .map(|k| {
                    let i = (f as i64 + k as i64 - 1).clamp(0, input as i64 - 1) as usize;
                    (i, weights[k])
                })
                .collect()
        })
        .collect()
}

/// `[H, W, N, C]` (HWNC) as `[N, C, H, W]`.
fn hwnc_to_nchw<T: Copy>(v: &[T], [h, w, n, c]: [usize; 4]) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for i in 0..n * c {
        for y in 0..h {
            for x in 0..w {
                out.push(v[(y * w + x) * n * c + i]);
            }
        }
    }
    out
}

/// `[N, C, H, W]` as `[H, W, N, C]` (HWNC).
fn nchw_to_hwnc<T: Copy>(v: &[T], [n, c, h, w]: [usize; 4]) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for y in 0..h {
        for x in 0..w {
            for i in 0..n * c {
                out.push(v[(i * h + y) * w + x]);
            }
        }
    }
    out
}

fn resize_d<T: Real>(call: &Call<'_>, grad: bool) -> Result<Written, AclError> {
    let cubic = match call.attr_string("mode", "linear")? {
        "linear" => false,
        "cubic" => true,
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let align_corners = match call.attr_string("coordinate_transformation_mode", "half_pixel")? {
        "half_pixel" | "pytorch_half_pixel" => false,
        "align_corners" => true,
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let m = Mode {
        bilinear: true,
        align_corners,
        half_pixel: !align_corners,
    };
    let x = call.tensor(0)?;
    let out = call.out(0);
    if out.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let mut v = values::<T>(&x)?;
    // x's dims as NCHW (a linear resize: rows of its last axis).
    let xd: Vec<usize> = if cubic && grad {
        // torch_npu hands the bicubic gradient over as HWNC.
        if call.attr_string("data_format", "HWNC")? != "HWNC" {
            return Err(AclError::FORMAT_NOT_MATCH);
        }
        let [h, w, n, c] =
            <[usize; 4]>::try_from(x.dims.as_slice()).map_err(|_| AclError::OP_INPUT_NOT_MATCH)?;
        v = hwnc_to_nchw(&v, [h, w, n, c]);
        vec![n, c, h, w]
    } else {
        x.dims.clone()
    };
    let axes = if cubic { 2 } else { 1 };
    if xd.len() < axes || out.dims.len() < axes {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (lead, tail) = xd.split_at(xd.len() - axes);
    let (out_lead, out_tail) = out.dims.split_at(out.dims.len() - axes);
    let rows: usize = lead.iter().product();
    let fits =
        rows * out_tail.iter().product::<usize>() == out.numel() && (!cubic || out_lead == lead);
    if tail.contains(&0) || out_tail.contains(&0) || !fits {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if !grad {
        match call.attr("sizes") {
            Some(AttrValue::ListInt(s))
                if s.len() >= axes
                    && s[s.len() - axes..]
                        .iter()
                        .zip(out_tail)
                        .all(|(&a, &b)| a == b as i64) => {}
            _ => return Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }
    // The forward's input and output extents of the resized axes, as
    // [1, H, W] (a linear one: [1, 1, W]).
    let lift = |t: &[usize]| if cubic { [1, t[0], t[1]] } else { [1, 1, t[0]] };
    let (small, big) = if grad {
        (lift(out_tail), lift(tail))
    } else {
        (lift(tail), lift(out_tail))
    };
    let a = f64::from(call.attr_float("cubic_coeff_a", -0.75)?);
    let axis_taps = |i: usize, o: usize| {
        if cubic {
            cubic_taps(align_corners, i, o, a)
        } else {
            taps(m, i, o)
        }
    };
    let t: Vec<Taps> = (0..3).map(|k| axis_taps(small[k], big[k])).collect();
    let mut y = resample(&v, rows, small, [&t[0], &t[1], &t[2]], !grad);
    if cubic && grad {
        // Written in HWNC too, as torch_npu reads it.
        y = nchw_to_hwnc(&y, [lead[0], lead[1], small[1], small[2]]);
    }
    Ok(vec![bytes(out.dtype, &y)?])
}

/// `ResizeD(x) -> y`, `sizes`, `mode` `"linear"`,
/// `coordinate_transformation_mode`: x's last axis resized linearly.
pub(super) fn ResizeD(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || resize_d::<f32>(call, false),
        || resize_d::<f64>(call, false),
    )
}

/// `ResizeGradD(grads) -> y`, `original_size`, `mode` `"linear"`,
/// `coordinate_transformation_mode`: each gradient shared between the two
/// input positions with the forward's weights.
pub(super) fn ResizeGradD(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || resize_d::<f32>(call, true),
        || resize_d::<f64>(call, true),
    )
}

#[cfg(test)]
mod tests;
