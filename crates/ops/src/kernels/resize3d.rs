//! Volume resizing, as torch_npu launches `F.interpolate` on NCDHW
//! tensors: `UpsampleNearest3d(x) -> y` and `UpsampleTrilinear3d(x) -> y`
//! with `output_size` (D, H, W; the trilinear one `align_corners`), and
//! their gradients `UpsampleNearest3dGrad(grads) -> y` and
//! `UpsampleTrilinear3dGrad(grads) -> y` with `input_size` (the forward
//! input's five dims) and `output_size` too.
//!
//! The source coordinates are `super::resize`'s on each of the three axes:
//! nearest `⌊d·in/out⌋` (clamped to the input), trilinear the blend of the
//! two neighbours of `(d + ½)·in/out − ½`, or of `d·(in − 1)/(out − 1)`
//! with `align_corners`, clamped at the edges: PyTorch's `nearest` and
//! `trilinear` for sizes and integer scale factors. The gradients scatter
//! back with the same weights. Computed in fp32 (fp64 for float64), each
//! output rounded once.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};
use super::resize::{Mode, resample, taps};

/// A list attribute of `len` positive sizes (100023 otherwise).
fn sizes_attr(call: &Call<'_>, name: &str, len: usize) -> Result<Vec<usize>, AclError> {
    match call.attr(name) {
        Some(AttrValue::ListInt(v)) if v.len() == len => v
            .iter()
            .map(|&s| {
                usize::try_from(s)
                    .ok()
                    .filter(|&s| s > 0)
                    .ok_or(AclError::OP_ATTR_NOT_MATCH)
            })
            .collect(),
        _ => Err(AclError::OP_ATTR_NOT_MATCH),
    }
}

fn upsample<T: Real>(call: &Call<'_>, linear: bool, grad: bool) -> Result<Written, AclError> {
    let align_corners = linear && call.attr_bool("align_corners", false)?;
    let m = Mode {
        bilinear: linear,
        align_corners,
        half_pixel: linear && !align_corners,
    };
    let x = call.tensor(0)?;
    let [n, c, d, h, w] =
        <[usize; 5]>::try_from(x.dims.as_slice()).map_err(|_| AclError::OP_INPUT_NOT_MATCH)?;
    let size = sizes_attr(call, "output_size", 3)?;
    // The forward's input and output volumes.
    let (small, big) = if grad {
        let input = sizes_attr(call, "input_size", 5)?;
        if input[..2] != [n, c] || size != [d, h, w] {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        ([input[2], input[3], input[4]], [d, h, w])
    } else {
        ([d, h, w], [size[0], size[1], size[2]])
    };
    let out = call.out(0);
    let target = if grad { small } else { big };
    if out.dims != [n, c, target[0], target[1], target[2]] || out.dtype != x.dtype {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let t: Vec<_> = (0..3).map(|a| taps(m, small[a], big[a])).collect();
    let v = values::<T>(&x)?;
    let y = if n * c == 0 {
        vec![T::ZERO; out.numel()]
    } else {
        resample(&v, n * c, small, [&t[0], &t[1], &t[2]], !grad)
    };
    Ok(vec![bytes(out.dtype, &y)?])
}

fn dispatch(call: &Call<'_>, linear: bool, grad: bool) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || upsample::<f32>(call, linear, grad),
        || upsample::<f64>(call, linear, grad),
    )
}

/// `UpsampleNearest3d(x) -> y`, `output_size`: each output voxel the
/// input voxel its source coordinates fall in.
pub(super) fn UpsampleNearest3d(call: &Call<'_>) -> Result<Written, AclError> {
    dispatch(call, false, false)
}

/// `UpsampleNearest3dGrad(grads) -> y`, `input_size`, `output_size`: each
/// gradient added to the voxel its output voxel copied.
pub(super) fn UpsampleNearest3dGrad(call: &Call<'_>) -> Result<Written, AclError> {
    dispatch(call, false, true)
}

/// `UpsampleTrilinear3d(x) -> y`, `output_size`, `align_corners`: each
/// output voxel the trilinear blend of the eight around its source.
pub(super) fn UpsampleTrilinear3d(call: &Call<'_>) -> Result<Written, AclError> {
    dispatch(call, true, false)
}

/// `UpsampleTrilinear3dGrad(grads) -> y`, `input_size`, `output_size`,
/// `align_corners`: each gradient shared among the eight voxels with the
/// forward's weights.
pub(super) fn UpsampleTrilinear3dGrad(call: &Call<'_>) -> Result<Written, AclError> {
    dispatch(call, true, true)
}

#[cfg(test)]
mod tests;
