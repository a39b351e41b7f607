//! 2-D pooling in NCHW as torch_npu launches it: `MaxPoolWithArgmaxV1` and
//! `MaxPoolGradWithArgmaxV1` (`nn.MaxPool2d`), `AvgPoolV2` and
//! `AvgPoolV2Grad` (`nn.AvgPool2d`), and in [`avg`] `AdaptiveAvgPool2d`
//! and `AdaptiveAvgPool2dGrad` (`nn.AdaptiveAvgPool2d`; torch_npu computes
//! an output of 1×1 as a `ReduceMean` and its gradient by a fill and a
//! product). Every leading dim of x is a plane (`[C, H, W]` or `[N, C, H,
//! W]`); the output extent of a window of `k` (dilation `d`, span
//! `d·(k − 1) + 1`) with stride `s` and pads `before`/`after` is
//! `⌊(H + before + after − span)/s⌋ + 1`, or rounded up under `ceil_mode`
//! less a last window that would start in the padding after the input (the
//! extent torch computes).
//!
//! A maximum is taken over the window's elements inside the input (the
//! padding never wins), the first maximum of the window in row-major order
//! (a NaN wins), as torch's CPU kernel picks it. The `argmax` output is
//! the NPU's mask form, `[N, C, kH·kW, ⌈Ho·Wo/16⌉ + 1]` uint16 (torch_npu
//! allocates it so, in NC1HWC0): for window position `k` of plane `p`,
//! bit `o % 16` of element `[p, k, o / 16]` is set when output `o` took
//! its maximum there. UNCONFIRMED: the NPU's own bit order is not
//! documented; this one is the emulator's. The backward does not read
//! the mask: it takes the maximum's position from x by the same rule, so
//! the round trip is exact whatever became of the mask's bits (torch_npu
//! copies an unbatched input's mask through a float32 `Identity` out of
//! NC1HWC0, which does not keep 2-byte elements in place).
//!
//! Float types (float32, float16, bfloat16, float64); sums in the working
//! type (float32 for the half types), each output rounded once.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};

mod avg;

pub(super) use avg::*;

/// The largest size, stride, pad or dilation an attribute may give (so
/// that the windows' arithmetic cannot overflow).
const MOST: usize = i32::MAX as usize;

/// A ListInt attribute of `len` values, each at least `min` and at most
/// `i32::MAX`, or `default` when absent (`OP_ATTR_NOT_MATCH` otherwise).
pub(super) fn ints_attr(
    call: &Call<'_>,
    name: &str,
    len: usize,
    default: &[usize],
    min: usize,
) -> Result<Vec<usize>, AclError> {
    let v = match call.attr(name) {
        None => return Ok(default.to_vec()),
        Some(AttrValue::ListInt(v)) if v.len() == len => v,
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    v.iter()
        .map(|&x| {
            usize::try_from(x)
                .ok()
                .filter(|&x| x >= min && x <= MOST)
                .ok_or(AclError::OP_ATTR_NOT_MATCH)
        })
        .collect()
}

/// A window along one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Axis {
    /// The input's extent.
    pub(super) input: usize,
    /// The window's size.
    pub(super) k: usize,
    /// Its stride.
    pub(super) s: usize,
    /// Its dilation.
    pub(super) d: usize,
    /// The pads before and after.
    pub(super) pad: [usize; 2],
    /// Whether the output's extent is rounded up.
    pub(super) ceil: bool,
}

impl Axis {
    /// The output's extent (`OP_ATTR_NOT_MATCH` for a window larger than
    /// the padded input, or a zero stride or size).
    pub(super) fn out(&self) -> Result<usize, AclError> {
        if self.k == 0 || self.s == 0 || self.d == 0 {
            return Err(AclError::OP_ATTR_NOT_MATCH);
        }
        let span = self.d * (self.k - 1) + 1;
        let total = self.input + self.pad[0] + self.pad[1];
        let room = total.checked_sub(span).ok_or(AclError::OP_ATTR_NOT_MATCH)?;
        let mut o = if self.ceil {
            room.div_ceil(self.s)
        } else {
            room / self.s
        } + 1;
        if self.ceil && (o - 1) * self.s >= self.input + self.pad[0] {
            o -= 1;
        }
        Ok(o)
    }

    /// The places of output `o`'s window that fall inside the input, each
    /// as (place in the window, index in the input): the padding's are
    /// skipped without being visited.
    pub(super) fn taps(&self, o: usize) -> impl Iterator<Item = (usize, usize)> + use<> {
        let start = (o * self.s) as i64 - self.pad[0] as i64;
        let d = self.d.max(1);
        let first = usize::try_from(-start).map_or(0, |before| before.div_ceil(d));
        let end = usize::try_from(self.input as i64 - start).map_or(0, |room| room.div_ceil(d));
        (first..end.min(self.k)).map(move |i| (i, (start + (i * d) as i64) as usize))
    }
}

/// `x`'s planes and `[H, W]` (at least 3 dims, as pooling takes them;
/// a shape whose counts overflow, which one holding a 0 may have, is
/// refused too).
pub(super) fn planes(dims: &[usize]) -> Result<(usize, [usize; 2]), AclError> {
    match dims {
        [lead @ .., h, w] if !lead.is_empty() => Tensor::numel_of(lead)
            .ok()
            .filter(|p| Tensor::numel_of(&[*h, *w, *p]).is_ok())
            .map(|p| (p, [*h, *w]))
            .ok_or(AclError::OP_INPUT_NOT_MATCH),
        _ => Err(AclError::OP_INPUT_NOT_MATCH),
    }
}

/// An output of `planes·[oh, ow]` elements whose last dims are `[oh, ow]`.
pub(super) fn fits(spec: &Spec, planes: usize, o: [usize; 2]) -> Result<(), AclError> {
    if spec.dims.len() >= 2
        && spec.dims[spec.dims.len() - 2..] == o
        && Tensor::numel_of(&[planes, o[0], o[1]]) == Ok(spec.numel())
    {
        Ok(())
    } else {
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    }
}

/// A max-pool's windows from its NHWC-ordered attributes (`ksize`
/// `{1, kH, kW, 1}`, `strides` `{1, sH, sW, 1}`, `pads` `{1, pH, pW, 1}`
/// — the first and last entries are the operator's constants and not
/// read — `dilation` or `dilations` `{1, dH, dW, 1}`, `ceil_mode`) over
/// an input of `[h, w]`; pads above half the dilated window are refused,
/// as torch refuses them.
fn max_windows(call: &Call<'_>, hw: [usize; 2]) -> Result<[Axis; 2], AclError> {
    if call.attr("ksize").is_none() {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    let k = ints_attr(call, "ksize", 4, &[], 1)?;
    let s = ints_attr(call, "strides", 4, &k, 1)?;
    let p = ints_attr(call, "pads", 4, &[0; 4], 0)?;
    let name = if call.attr("dilation").is_some() {
        "dilation"
    } else {
        "dilations"
    };
    let d = ints_attr(call, name, 4, &[1; 4], 1)?;
    let ceil = call.attr_bool("ceil_mode", false)?;
    let axes = [0, 1].map(|a| Axis {
        input: hw[a],
        k: k[a + 1],
        s: s[a + 1],
        d: d[a + 1],
        pad: [p[a + 1]; 2],
        ceil,
    });
    if axes.iter().any(|a| 2 * a.pad[0] > a.d * (a.k - 1) + 1) {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    Ok(axes)
}

/// For each plane and output, the index in the plane of its window's
/// maximum (`None` for a window wholly in the padding) and the value.
fn maxima<T: Real>(
    x: &[T],
    planes: usize,
    ax: &[Axis; 2],
) -> Result<Vec<Option<(usize, usize)>>, AclError> {
    let (oh, ow) = (ax[0].out()?, ax[1].out()?);
    let plane = ax[0].input * ax[1].input;
    let mut found = Vec::with_capacity(planes * oh * ow);
    for p in 0..planes {
        let v = &x[p * plane..(p + 1) * plane];
        for i in 0..oh {
            for j in 0..ow {
                let mut best: Option<(usize, usize)> = None;
                for (a, h) in ax[0].taps(i) {
                    for (b, w) in ax[1].taps(j) {
                        let at = h * ax[1].input + w;
                        let better = match best {
                            None => true,
                            Some((_, cur)) => v[at] > v[cur] || v[at].f64().is_nan(),
                        };
                        if better {
                            best = Some((a * ax[1].k + b, at));
                        }
                    }
                }
                found.push(best);
            }
        }
    }
    Ok(found)
}

/// The outputs of a plane of `o` (an extent the pads make too large to
/// count is `OP_ATTR_NOT_MATCH`).
fn outputs(o: [usize; 2]) -> Result<usize, AclError> {
    o[0].checked_mul(o[1]).ok_or(AclError::OP_ATTR_NOT_MATCH)
}

/// The mask's width: `⌈outputs/16⌉ + 1` uint16 per window position.
fn mask_width(outputs: usize) -> usize {
    outputs.div_ceil(16) + 1
}

/// The mask's elements for `planes` planes, `window` places and
/// `outputs` outputs, if they can be counted.
fn mask_len(planes: usize, window: usize, outputs: usize) -> Option<usize> {
    Tensor::numel_of(&[planes, window, mask_width(outputs)]).ok()
}

fn max_pool<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let x = call.tensor(0)?;
    let (planes, hw) = planes(&x.dims)?;
    let ax = max_windows(call, hw)?;
    let o = [ax[0].out()?, ax[1].out()?];
    let (y_spec, mask_spec) = (call.out(0), call.out(1));
    fits(y_spec, planes, o)?;
    if y_spec.dtype != x.dtype || mask_spec.dtype != DType::U16 {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let (window, outputs) = (ax[0].k * ax[1].k, outputs(o)?);
    let width = mask_width(outputs);
    if mask_len(planes, window, outputs) != Some(mask_spec.numel()) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let xv = values::<T>(&x)?;
    let plane = hw[0] * hw[1];
    let found = maxima(&xv, planes, &ax)?;
    let mut y = Vec::with_capacity(found.len());
    let mut mask = vec![0u16; planes * window * width];
    for (n, f) in found.iter().enumerate() {
        let (p, out) = (n / outputs, n % outputs);
        match *f {
            Some((k, at)) => {
                y.push(xv[p * plane + at]);
                mask[(p * window + k) * width + out / 16] |= 1 << (out % 16);
            }
            None => y.push(T::of(f64::NEG_INFINITY)),
        }
    }
    Ok(vec![
        bytes(y_spec.dtype, &y)?,
        mask.iter().flat_map(|m| m.to_ne_bytes()).collect(),
    ])
}

/// `MaxPoolWithArgmaxV1(x) -> (y, argmax)`, attributes `ksize`, `strides`,
/// `pads`, `dilation`, `ceil_mode` (module docs): each window's maximum,
/// and the mask of where each was taken (uint16, the module docs' layout).
pub(super) fn MaxPoolWithArgmaxV1(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 2)?;
    by_type(
        call.spec(0)?.dtype,
        || max_pool::<f32>(call),
        || max_pool::<f64>(call),
    )
}

fn max_pool_grad<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let (x, grad) = (call.tensor(0)?, call.tensor(1)?);
    let (planes, hw) = planes(&x.dims)?;
    let ax = max_windows(call, hw)?;
    let o = [ax[0].out()?, ax[1].out()?];
    let (window, outputs) = (ax[0].k * ax[1].k, outputs(o)?);
    let mask = call.spec(2)?;
    if grad.dtype != x.dtype || call.out(0).dtype != x.dtype || mask.dtype != DType::U16 {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let grad_fits = fits(
        &Spec {
            dtype: grad.dtype,
            dims: grad.dims.clone(),
        },
        planes,
        o,
    );
    if grad_fits.is_err() || mask_len(planes, window, outputs) != Some(mask.numel()) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.out(0).numel() != x.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (xv, dy) = (values::<T>(&x)?, values::<T>(&grad)?);
    let plane = hw[0] * hw[1];
    let mut dx = vec![T::ZERO; xv.len()];
    for (n, f) in maxima(&xv, planes, &ax)?.into_iter().enumerate() {
        if let Some((_, at)) = f {
            dx[(n / outputs) * plane + at] += dy[n];
        }
    }
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `MaxPoolGradWithArgmaxV1(x, grad, argmax) -> y`, `MaxPoolWithArgmaxV1`'s
/// attributes (`dilations` or `dilation`): each output's gradient added
/// to the input element its maximum came from (taken from x by the
/// forward's rule; argmax's type and size are checked, its bits not read).
pub(super) fn MaxPoolGradWithArgmaxV1(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || max_pool_grad::<f32>(call),
        || max_pool_grad::<f64>(call),
    )
}

#[cfg(test)]
mod tests;
