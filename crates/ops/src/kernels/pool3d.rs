//! 3-D pooling in NCDHW as torch_npu launches it: `MaxPool3D` and
//! `MaxPool3DGrad` (`F.max_pool3d`, `nn.MaxPool3d`), `AvgPool3D` and
//! `AvgPool3DGrad` (`F.avg_pool3d`, `nn.AvgPool3d`). Every leading dim of
//! x is a volume (`[C, D, H, W]` or `[N, C, D, H, W]`); the windows along
//! each of D, H, W are those of the 2-D pools ([`super::pool`]'s `Axis`:
//! the output extent, `ceil_mode`, the taps inside the input).
//!
//! The list attributes are in NCDHW order (`data_format` `"NCDHW"`;
//! another is 100027): `ksize`, `strides` and `dilation` `{1, 1, kD, kH,
//! kW}` (three entries are taken as `{kD, kH, kW}`; the leading two are
//! the operator's constants and not read), `pads` `{front, back, top,
//! bottom, left, right}`. torch_npu gives the max pool's `ceil_mode` as an
//! int and adds to each back pad what makes the last window end on the
//! padded input; the average pool gets torch's padding on both sides and
//! `ceil_mode` as a bool.
//!
//! A maximum is taken over the window's elements inside the input (the
//! padding never wins), the first maximum in row-major order (a NaN wins),
//! as torch's CPU kernel picks it. `MaxPool3DGrad(orig_x, orig_y, grads)`
//! takes no dilation and no `ceil_mode` (torch_npu passes neither): the
//! output extent is `grads`', which must be one of the two `ceil_mode`
//! gives; each gradient goes to the element its window's maximum came from,
//! found in `orig_x` again by the forward's rule (`orig_y`'s type and
//! shape are checked, its values not read), so ties go where the forward
//! took them. An average's divisor is `divisor_override` when set, else
//! the window's extent up to the end of the padding
//! (`count_include_pad`), else its elements inside the input, as torch's
//! CPU kernel divides.
//!
//! Float types (float32, float16, bfloat16, float64); sums in the working
//! type (float32 for the half types), each output rounded once.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};
use super::pool::{Axis, ints_attr};

/// `x`'s volumes and `[D, H, W]` (at least 4 dims; a shape whose counts
/// overflow is refused too).
fn volumes(dims: &[usize]) -> Result<(usize, [usize; 3]), AclError> {
    match dims {
        [lead @ .., d, h, w] if !lead.is_empty() => Tensor::numel_of(lead)
            .ok()
            .filter(|p| Tensor::numel_of(&[*d, *h, *w, *p]).is_ok())
            .map(|p| (p, [*d, *h, *w]))
            .ok_or(AclError::OP_INPUT_NOT_MATCH),
        _ => Err(AclError::OP_INPUT_NOT_MATCH),
    }
}

/// Whether `spec` holds `volumes` volumes of `o`, its last dims `o`.
fn holds(spec: &Spec, volumes: usize, o: [usize; 3]) -> bool {
    spec.dims.len() >= 3
        && spec.dims[spec.dims.len() - 3..] == o
        && Tensor::numel_of(&[volumes, o[0], o[1], o[2]]) == Ok(spec.numel())
}

/// `data_format`: absent or `"NCDHW"` (another string is 100027).
fn ncdhw(call: &Call<'_>) -> Result<(), AclError> {
    match call.attr("data_format") {
        None => Ok(()),
        Some(AttrValue::String(f)) if f == "NCDHW" => Ok(()),
        Some(AttrValue::String(_)) => Err(AclError::FORMAT_NOT_MATCH),
        Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
    }
}

/// The D, H, W entries of a list attribute of three or five entries, each
/// at least `min`, or `default` when absent (none: 100023).
fn spatial(
    call: &Call<'_>,
    name: &str,
    default: Option<[usize; 3]>,
    min: usize,
) -> Result<[usize; 3], AclError> {
    let len = match call.attr(name) {
        None => return default.ok_or(AclError::OP_ATTR_NOT_MATCH),
        Some(AttrValue::ListInt(v)) if v.len() == 3 || v.len() == 5 => v.len(),
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let v = ints_attr(call, name, len, &[], min)?;
    Ok([v[len - 3], v[len - 2], v[len - 1]])
}

/// `ceil_mode`, a bool or an int (absent: false).
fn ceil_mode(call: &Call<'_>) -> Result<bool, AclError> {
    match call.attr("ceil_mode") {
        None => Ok(false),
        Some(AttrValue::Bool(b)) => Ok(*b),
        Some(AttrValue::Int(i)) => Ok(*i != 0),
        Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
    }
}

/// The windows along D, H, W over an input of `dhw` from the attributes
/// (`dilation` when `dilated`, else 1; pads zero for `padding` `"VALID"`).
fn windows(call: &Call<'_>, dhw: [usize; 3], dilated: bool) -> Result<[Axis; 3], AclError> {
    ncdhw(call)?;
    let k = spatial(call, "ksize", None, 1)?;
    let s = spatial(call, "strides", Some(k), 1)?;
    let d = if dilated {
        spatial(call, "dilation", Some([1; 3]), 1)?
    } else {
        [1; 3]
    };
    let mut p = ints_attr(call, "pads", 6, &[0; 6], 0)?;
    match call.attr_string("padding", "CALCULATED")? {
        "CALCULATED" => {}
        "VALID" => p = vec![0; 6],
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    let ceil = ceil_mode(call)?;
    let axes = [0, 1, 2].map(|a| Axis {
        input: dhw[a],
        k: k[a],
        s: s[a],
        d: d[a],
        pad: [p[2 * a], p[2 * a + 1]],
        ceil,
    });
    // torch refuses a front pad above half the (dilated) window.
    if axes.iter().any(|a| 2 * a.pad[0] > a.d * (a.k - 1) + 1) {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    Ok(axes)
}

/// Calls `f(output, input)` for each output of a volume of `o` and each
/// input element of its window (numbered within the volume).
fn each_tap(ax: &[Axis; 3], o: [usize; 3], mut f: impl FnMut(usize, usize)) {
    let [_, h, w] = ax.each_ref().map(|a| a.input);
    for i in 0..o[0] {
        for j in 0..o[1] {
            for l in 0..o[2] {
                let out = (i * o[1] + j) * o[2] + l;
                for (_, z) in ax[0].taps(i) {
                    for (_, y) in ax[1].taps(j) {
                        for (_, x) in ax[2].taps(l) {
                            f(out, (z * h + y) * w + x);
                        }
                    }
                }
            }
        }
    }
}

/// For each volume and output of `o`, the index in the volume of its
/// window's maximum (`None` for a window wholly in the padding).
fn maxima<T: Real>(x: &[T], volumes: usize, ax: &[Axis; 3], o: [usize; 3]) -> Vec<Option<usize>> {
    let vol = ax.iter().map(|a| a.input).product::<usize>();
    let per = o.iter().product::<usize>();
    let mut found = vec![None; volumes * per];
    for v in 0..volumes {
        let xv = &x[v * vol..(v + 1) * vol];
        let best = &mut found[v * per..(v + 1) * per];
        each_tap(ax, o, |out, at| {
            let better = match best[out] {
                None => true,
                Some(cur) => xv[at] > xv[cur] || xv[at].f64().is_nan(),
            };
            if better {
                best[out] = Some(at);
            }
        });
    }
    found
}

fn max_pool<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let x = call.tensor(0)?;
    let (vols, dhw) = volumes(&x.dims)?;
    let ax = windows(call, dhw, true)?;
    let o = [ax[0].out()?, ax[1].out()?, ax[2].out()?];
    if !holds(call.out(0), vols, o) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if call.out(0).dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let xv = values::<T>(&x)?;
    let (vol, per) = (dhw.iter().product::<usize>(), o.iter().product::<usize>());
    let y: Vec<T> = maxima(&xv, vols, &ax, o)
        .into_iter()
        .enumerate()
        .map(|(n, f)| f.map_or(T::of(f64::NEG_INFINITY), |at| xv[(n / per) * vol + at]))
        .collect();
    Ok(vec![bytes(call.out(0).dtype, &y)?])
}

/// `MaxPool3D(x) -> y`, attributes `ksize`, `strides`, `padding`
/// (`"CALCULATED"` or `"VALID"`), `pads`, `dilation`, `ceil_mode`,
/// `data_format` (module docs): each window's maximum.
pub(super) fn MaxPool3D(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || max_pool::<f32>(call),
        || max_pool::<f64>(call),
    )
}

fn max_pool_grad<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let (x, grad) = (call.tensor(0)?, call.tensor(2)?);
    let orig_y = call.spec(1)?;
    // The gradient may be wider than x: torch_npu asks float32 of a
    // float16 x's.
    if grad.dtype != x.dtype || orig_y.dtype != x.dtype || !call.out(0).dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let (vols, dhw) = volumes(&x.dims)?;
    let mut ax = windows(call, dhw, false)?;
    let o: [usize; 3] = match grad.dims.len() {
        n if n >= 3 => [grad.dims[n - 3], grad.dims[n - 2], grad.dims[n - 1]],
        _ => return Err(AclError::OP_INPUT_NOT_MATCH),
    };
    // The extent is grads': one of those ceil_mode gives.
    for (a, &want) in ax.iter_mut().zip(&o) {
        a.ceil = false;
        if a.out()? != want {
            a.ceil = true;
            if a.out()? != want {
                return Err(AclError::OP_INPUT_NOT_MATCH);
            }
        }
    }
    let grad_spec = Spec {
        dtype: grad.dtype,
        dims: grad.dims.clone(),
    };
    if !holds(&grad_spec, vols, o) || !holds(orig_y, vols, o) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.out(0).numel() != x.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (xv, dy) = (values::<T>(&x)?, values::<T>(&grad)?);
    let (vol, per) = (dhw.iter().product::<usize>(), o.iter().product::<usize>());
    let mut dx = vec![T::ZERO; xv.len()];
    for (n, f) in maxima(&xv, vols, &ax, o).into_iter().enumerate() {
        if let Some(at) = f {
            dx[(n / per) * vol + at] += dy[n];
        }
    }
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `MaxPool3DGrad(orig_x, orig_y, grads) -> y`, attributes as `MaxPool3D`
/// but no dilation (module docs): each output's gradient added to the
/// input element its maximum came from; `y` of any float type (torch_npu
/// asks float32 for float16 inputs), the inputs of one.
pub(super) fn MaxPool3DGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || max_pool_grad::<f32>(call),
        || max_pool_grad::<f64>(call),
    )
}

/// An average pool's windows and divisor.
struct AvgWindows {
    ax: [Axis; 3],
    include_pad: bool,
    divisor: usize,
}

impl AvgWindows {
    fn new(call: &Call<'_>, dhw: [usize; 3]) -> Result<AvgWindows, AclError> {
        let ax = windows(call, dhw, false)?;
        let include_pad = call.attr_bool("count_include_pad", true)?;
        let divisor = usize::try_from(call.attr_int("divisor_override", 0)?)
            .map_err(|_| AclError::OP_ATTR_NOT_MATCH)?;
        Ok(AvgWindows {
            ax,
            include_pad,
            divisor,
        })
    }

    fn out(&self) -> Result<[usize; 3], AclError> {
        Ok([self.ax[0].out()?, self.ax[1].out()?, self.ax[2].out()?])
    }

    /// The divisor of output `n` of a volume of `o`.
    fn divisor(&self, n: usize, o: [usize; 3]) -> usize {
        if self.divisor > 0 {
            return self.divisor;
        }
        let at = [n / (o[1] * o[2]), (n / o[2]) % o[1], n % o[2]];
        (0..3)
            .map(|a| {
                let (ax, i) = (&self.ax[a], at[a]);
                if self.include_pad {
                    let start = (i * ax.s) as i64 - ax.pad[0] as i64;
                    let end = (start + ax.k as i64).min((ax.input + ax.pad[1]) as i64);
                    usize::try_from(end - start).unwrap_or(0)
                } else {
                    ax.taps(i).count()
                }
            })
            .product()
    }
}

fn avg_pool<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let x = call.tensor(0)?;
    let (vols, dhw) = volumes(&x.dims)?;
    let win = AvgWindows::new(call, dhw)?;
    let o = win.out()?;
    if !holds(call.out(0), vols, o) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if call.out(0).dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let xv = values::<T>(&x)?;
    let (vol, per) = (dhw.iter().product::<usize>(), o.iter().product::<usize>());
    let mut y = vec![T::ZERO; vols * per];
    for v in 0..vols {
        each_tap(&win.ax, o, |out, at| y[v * per + out] += xv[v * vol + at]);
    }
    for (n, v) in y.iter_mut().enumerate() {
        *v = *v / T::of(win.divisor(n % per, o) as f64);
    }
    Ok(vec![bytes(call.out(0).dtype, &y)?])
}

/// `AvgPool3D(x) -> y`, attributes `ksize`, `strides`, `pads`,
/// `ceil_mode`, `count_include_pad`, `divisor_override`, `data_format`
/// (module docs): each window's sum over the input's elements in it,
/// divided by the window's divisor.
pub(super) fn AvgPool3D(call: &Call<'_>) -> Result<Written, AclError> {
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
    let (vols, dhw) = volumes(&shape)?;
    // The shape is bounded by the output's memory before any window's
    // arithmetic is done on it.
    if Tensor::numel_of(&shape) != Ok(call.out(0).numel()) {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if call.out(0).dtype != grad.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let win = AvgWindows::new(call, dhw)?;
    let o = win.out()?;
    let grad_spec = Spec {
        dtype: grad.dtype,
        dims: grad.dims.clone(),
    };
    if !holds(&grad_spec, vols, o) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let dy = values::<T>(&grad)?;
    let (vol, per) = (dhw.iter().product::<usize>(), o.iter().product::<usize>());
    let scaled: Vec<T> = (0..dy.len())
        .map(|n| dy[n] / T::of(win.divisor(n % per, o) as f64))
        .collect();
    let mut dx = vec![T::ZERO; vols * vol];
    for v in 0..vols {
        each_tap(&win.ax, o, |out, at| {
            dx[v * vol + at] += scaled[v * per + out]
        });
    }
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `AvgPool3DGrad(orig_input_shape, grads) -> output`, `AvgPool3D`'s
/// attributes: each output's gradient divided by its divisor and added to
/// every input element of its window; the input's shape from the host int
/// tensor `orig_input_shape`.
pub(super) fn AvgPool3DGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    by_type(
        call.spec(1)?.dtype,
        || avg_pool_grad::<f32>(call),
        || avg_pool_grad::<f64>(call),
    )
}

#[cfg(test)]
mod tests;
