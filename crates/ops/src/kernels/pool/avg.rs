//! Average pooling: `AvgPoolV2`/`AvgPoolV2Grad` and
//! `AdaptiveAvgPool2d`/`AdaptiveAvgPool2dGrad`.
//!
//! `AvgPoolV2`'s attributes are in NCHW order (`data_format` `"NCHW"`;
//! another is 100027): `ksize` `{1, 1, kH, kW}`, `strides` `{1, 1, sH,
//! sW}`, `padding_mode` `"CALCULATED"` (then `pads` `{top, bottom, left,
//! right}` and `ceil_mode`), `"VALID"` (no pads) or `"SAME"` (the output
//! `⌈H/s⌉`, the pads split with the smaller half first), `global_pooling`
//! (the whole plane), `exclusive` and `divisor_override`. The divisor is
//! `divisor_override` when it is not 0; else, with `exclusive`, the
//! window's elements inside the input; else the window's extent up to the
//! end of the bottom/right pad: torch's `count_include_pad`, and also its
//! divisor under `ceil_mode`, for torch_npu gives the forward a bottom pad
//! that ends the last window (not torch's padding) and the backward
//! torch's padding. torch_npu asks float16 forwards for `exclusive`
//! whatever `count_include_pad` says (and its backward for what it says):
//! the operators do what they are asked.

use super::super::call::*;
use super::super::float::{Real, by_type, bytes, values};
use super::{Axis, fits, ints_attr, planes};

/// An average pool's windows and divisor.
struct AvgWindows {
    ax: [Axis; 2],
    exclusive: bool,
    divisor: usize,
}

impl AvgWindows {
    /// The divisor of output `[i, j]`.
    fn divisor(&self, i: usize, j: usize) -> usize {
        if self.divisor > 0 {
            return self.divisor;
        }
        let [h, w] = [(&self.ax[0], i), (&self.ax[1], j)].map(|(a, o)| {
            if self.exclusive {
                a.taps(o).count()
            } else {
                let start = (o * a.s) as i64 - a.pad[0] as i64;
                let end = (start + a.k as i64).min((a.input + a.pad[1]) as i64);
                usize::try_from(end - start).unwrap_or(0)
            }
        });
        h * w
    }
}

fn avg_windows(call: &Call<'_>, hw: [usize; 2]) -> Result<AvgWindows, AclError> {
    match call.attr("data_format") {
        None => {}
        Some(AttrValue::String(f)) if f == "NCHW" => {}
        Some(AttrValue::String(_)) => return Err(AclError::FORMAT_NOT_MATCH),
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    if call.attr("ksize").is_none() {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    let k = ints_attr(call, "ksize", 4, &[], 1)?;
    let s = ints_attr(call, "strides", 4, &k, 1)?;
    let p = ints_attr(call, "pads", 4, &[0; 4], 0)?;
    let ceil = call.attr_bool("ceil_mode", false)?;
    let exclusive = call.attr_bool("exclusive", true)?;
    let divisor = usize::try_from(call.attr_int("divisor_override", 0)?)
        .map_err(|_| AclError::OP_ATTR_NOT_MATCH)?;
    let mut ax = [0, 1].map(|a| Axis {
        input: hw[a],
        k: k[a + 2],
        s: s[a + 2],
        d: 1,
        pad: [p[2 * a], p[2 * a + 1]],
        ceil,
    });
    if call.attr_bool("global_pooling", false)? {
        for a in &mut ax {
            (a.k, a.s, a.pad, a.ceil) = (a.input, 1, [0, 0], false);
        }
        return Ok(AvgWindows {
            ax,
            exclusive,
            divisor,
        });
    }
    match call.attr_string("padding_mode", "CALCULATED")? {
        "CALCULATED" => {}
        "VALID" => {
            for a in &mut ax {
                (a.pad, a.ceil) = ([0, 0], false);
            }
        }
        "SAME" => {
            for a in &mut ax {
                let o = a.input.div_ceil(a.s);
                let total = ((o.max(1) - 1) * a.s + a.k).saturating_sub(a.input);
                (a.pad, a.ceil) = ([total / 2, total - total / 2], false);
            }
        }
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    Ok(AvgWindows {
        ax,
        exclusive,
        divisor,
    })
}

/// Calls `f(plane, output, input)` for each output of each plane and each
/// input element of its window; outputs are numbered within the plane,
/// inputs are indices within it.
fn each_tap(
    planes: usize,
    ax: &[Axis; 2],
    o: [usize; 2],
    mut f: impl FnMut(usize, [usize; 2], usize),
) {
    for p in 0..planes {
        for i in 0..o[0] {
            for j in 0..o[1] {
                for (_, h) in ax[0].taps(i) {
                    for (_, w) in ax[1].taps(j) {
                        f(p, [i, j], h * ax[1].input + w);
                    }
                }
            }
        }
    }
}

fn avg_pool<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let x = call.tensor(0)?;
    let (planes, hw) = planes(&x.dims)?;
    let win = avg_windows(call, hw)?;
    let o = [win.ax[0].out()?, win.ax[1].out()?];
    fits(call.out(0), planes, o)?;
    if call.out(0).dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let xv = values::<T>(&x)?;
    let plane = hw[0] * hw[1];
    let mut y = vec![T::ZERO; planes * o[0] * o[1]];
    each_tap(planes, &win.ax, o, |p, [i, j], at| {
        y[(p * o[0] + i) * o[1] + j] += xv[p * plane + at];
    });
    for (n, v) in y.iter_mut().enumerate() {
        let (i, j) = ((n / o[1]) % o[0], n % o[1]);
        *v = *v / T::of(win.divisor(i, j) as f64);
    }
    Ok(vec![bytes(call.out(0).dtype, &y)?])
}

/// `AvgPoolV2(x) -> y` (module docs' attributes): each window's sum over
/// the input's elements in it, divided by the window's divisor.
pub(in super::super) fn AvgPoolV2(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || avg_pool::<f32>(call),
        || avg_pool::<f64>(call),
    )
}

fn avg_pool_grad<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let shape = call.sizes(0)?;
    let grad = call.tensor(1)?;
    let (planes, hw) = planes(&shape)?;
    // The shape is bounded by the output's memory before any window's
    // arithmetic is done on it.
    if Tensor::numel_of(&shape) != Ok(call.out(0).numel()) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let win = avg_windows(call, hw)?;
    let o = [win.ax[0].out()?, win.ax[1].out()?];
    let grad_spec = Spec {
        dtype: grad.dtype,
        dims: grad.dims.clone(),
    };
    if fits(&grad_spec, planes, o).is_err() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.out(0).dtype != grad.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let dy = values::<T>(&grad)?;
    let plane = hw[0] * hw[1];
    let mut dx = vec![T::ZERO; planes * plane];
    each_tap(planes, &win.ax, o, |p, [i, j], at| {
        let g = dy[(p * o[0] + i) * o[1] + j];
        dx[p * plane + at] += g / T::of(win.divisor(i, j) as f64);
    });
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `AvgPoolV2Grad(orig_input_shape, input_grad) -> out_grad`, `AvgPoolV2`'s
/// attributes: each output's gradient divided by its divisor and added to
/// every input element of its window; the input's shape from the int
/// tensor `orig_input_shape`.
pub(in super::super) fn AvgPoolV2Grad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    by_type(
        call.spec(1)?.dtype,
        || avg_pool_grad::<f32>(call),
        || avg_pool_grad::<f64>(call),
    )
}

/// Output `i` of `o` over an input of `n`: `[⌊i·n/o⌋, ⌈(i + 1)·n/o⌉)`.
fn bin(i: usize, o: usize, n: usize) -> std::ops::Range<usize> {
    (i * n) / o..((i + 1) * n).div_ceil(o)
}

/// Calls `f(output, input, count)` over each adaptive bin of a plane of
/// `hw` pooled to `o` (`count` the bin's elements), outputs and inputs
/// numbered within the plane.
fn each_bin<T: Real>(hw: [usize; 2], o: [usize; 2], mut f: impl FnMut(usize, usize, T)) {
    for i in 0..o[0] {
        let rows = bin(i, o[0], hw[0]);
        for j in 0..o[1] {
            let cols = bin(j, o[1], hw[1]);
            let count = T::of((rows.len() * cols.len()) as f64);
            for h in rows.clone() {
                for w in cols.clone() {
                    f(i * o[1] + j, h * hw[1] + w, count);
                }
            }
        }
    }
}

fn adaptive<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let x = call.tensor(0)?;
    let (planes, hw) = planes(&x.dims)?;
    if call.attr("output_size").is_none() {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    let size = ints_attr(call, "output_size", 2, &[], 1)?;
    let o = [size[0], size[1]];
    fits(call.out(0), planes, o)?;
    if call.out(0).dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let xv = values::<T>(&x)?;
    let (plane, outs) = (hw[0] * hw[1], o[0] * o[1]);
    let mut y = vec![T::ZERO; planes * outs];
    let mut counts = vec![T::ONE; outs];
    for p in 0..planes {
        each_bin::<T>(hw, o, |out, at, count| {
            y[p * outs + out] += xv[p * plane + at];
            counts[out] = count;
        });
    }
    for (n, v) in y.iter_mut().enumerate() {
        *v = *v / counts[n % outs];
    }
    Ok(vec![bytes(call.out(0).dtype, &y)?])
}

/// `AdaptiveAvgPool2d(x) -> y`, attribute `output_size` `{oH, oW}`: output
/// `[i, j]` the mean of rows `⌊i·H/oH⌋..⌈(i + 1)·H/oH⌉` and the columns
/// alike.
pub(in super::super) fn AdaptiveAvgPool2d(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || adaptive::<f32>(call),
        || adaptive::<f64>(call),
    )
}

fn adaptive_grad<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let grad = call.tensor(0)?;
    let shape = match call.attr("orig_input_shape") {
        Some(AttrValue::ListInt(v)) => v
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| AclError::OP_ATTR_NOT_MATCH))
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let (planes, hw) = planes(&shape).map_err(|_| AclError::OP_ATTR_NOT_MATCH)?;
    if Tensor::numel_of(&shape) != Ok(call.out(0).numel()) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (gplanes, o) = super::planes(&grad.dims)?;
    if gplanes != planes || o.contains(&0) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.out(0).dtype != grad.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let dy = values::<T>(&grad)?;
    let (plane, outs) = (hw[0] * hw[1], o[0] * o[1]);
    let mut dx = vec![T::ZERO; planes * plane];
    for p in 0..planes {
        each_bin::<T>(hw, o, |out, at, count| {
            dx[p * plane + at] += dy[p * outs + out] / count;
        });
    }
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `AdaptiveAvgPool2dGrad(input_grad) -> output_grad`, attribute
/// `orig_input_shape` (the input's dims): each output's gradient shared
/// equally among the input elements of its bin.
pub(in super::super) fn AdaptiveAvgPool2dGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || adaptive_grad::<f32>(call),
        || adaptive_grad::<f64>(call),
    )
}

#[cfg(test)]
mod tests;
