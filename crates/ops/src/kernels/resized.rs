//! One-axis linear resizing, as torch_npu launches `F.interpolate(mode=
//! 'linear')` on `[N, C, W]` (unsqueezed to `[N, C, 1, W]`):
//! `ResizeD(x) -> y` with `sizes` (the output width), `scales`, `mode`
//! `"linear"` and `coordinate_transformation_mode` (`"half_pixel"` or
//! `"align_corners"`), and its gradient `ResizeGradD(grads) -> y` with
//! `original_size` too. The last axis is resized (its length is y's last
//! dim), every other element a row; the source coordinates are
//! `super::resize`'s bilinear ones on that axis, so the values are
//! PyTorch's `linear` for sizes and integer scale factors (the `scales`
//! attribute is not read: the scale is `in/out`). Other modes (`cubic`,
//! `nearest`) are 100023. Computed in fp32 (fp64 for float64), each
//! output rounded once.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};
use super::resize::{Mode, resample, taps};

fn resize_d<T: Real>(call: &Call<'_>, grad: bool) -> Result<Written, AclError> {
    if call.attr_string("mode", "linear")? != "linear" {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
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
    let (Some(&w), Some(&ow)) = (x.dims.last(), out.dims.last()) else {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    };
    if out.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if w == 0 || ow == 0 || x.dims[..x.dims.len() - 1].iter().product::<usize>() != out.numel() / ow
    {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if !grad {
        match call.attr("sizes") {
            Some(AttrValue::ListInt(s)) if s.last() == Some(&(ow as i64)) => {}
            _ => return Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }
    let rows = x.numel() / w;
    let v = values::<T>(&x)?;
    let one = taps(m, 1, 1);
    let y = if grad {
        resample(&v, rows, [1, 1, ow], [&one, &one, &taps(m, ow, w)], false)
    } else {
        resample(&v, rows, [1, 1, w], [&one, &one, &taps(m, w, ow)], true)
    };
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
