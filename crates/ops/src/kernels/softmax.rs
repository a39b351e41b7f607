//! Softmax and log-softmax along one axis, and their gradients, as
//! torch_npu launches them: `SoftmaxV2(x)` and `LogSoftmaxV2(x)` with
//! `axes` `{dim}`, `SoftmaxGrad(y, dy)` with `axes`, and
//! `LogSoftmaxGrad(dy, y)` with `axis` (the attribute's name differs, as
//! in the operators' definitions). The axis may count from the end; one
//! axis only (a list of another length is 100023). Floating types, every
//! input of the output's type; computed in fp32 (fp64 for float64),
//! rounded once.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, axis, by_type, bytes, out_type, values};

/// Where the rows along `axis` of a tensor of `dims` lie: `outer` blocks
/// of `len × inner` elements, a row's elements `inner` apart.
struct Rows {
    outer: usize,
    len: usize,
    inner: usize,
}

impl Rows {
    fn of(dims: &[usize], axis: usize) -> Rows {
        if dims.is_empty() {
            return Rows {
                outer: 1,
                len: 1,
                inner: 1,
            };
        }
        Rows {
            outer: dims[..axis].iter().product(),
            len: dims[axis],
            inner: dims[axis + 1..].iter().product(),
        }
    }

    /// Calls `f` with each row's element indices.
    fn each(&self, mut f: impl FnMut(&[usize])) {
        let mut idx = vec![0; self.len];
        for o in 0..self.outer {
            for i in 0..self.inner {
                for (k, slot) in idx.iter_mut().enumerate() {
                    *slot = (o * self.len + k) * self.inner + i;
                }
                f(&idx);
            }
        }
    }
}

/// The one axis of attribute `name` (default the last).
fn one_axis(call: &Call<'_>, name: &str, rank: usize) -> Result<usize, AclError> {
    match call.attr(name) {
        None => axis(-1, rank),
        Some(AttrValue::ListInt(v)) if v.len() == 1 => axis(v[0], rank),
        Some(AttrValue::Int(a)) => axis(*a, rank),
        Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
    }
}

/// The inputs of a softmax operator: each of the output's type and shape.
fn operands<T: Real>(call: &Call<'_>, n: usize) -> Result<Vec<Vec<T>>, AclError> {
    let out = call.out(0);
    (0..n)
        .map(|i| {
            let t = call.tensor(i)?;
            if t.dtype != out.dtype {
                return Err(AclError::OP_TYPE_NOT_MATCH);
            }
            if t.dims != out.dims {
                return Err(AclError::OP_INPUT_NOT_MATCH);
            }
            values::<T>(&t)
        })
        .collect()
}

fn softmax<T: Real>(call: &Call<'_>, log: bool) -> Result<Written, AclError> {
    let out = call.out(0);
    let rows = Rows::of(&out.dims, one_axis(call, "axes", out.dims.len())?);
    let x = operands::<T>(call, 1)?.remove(0);
    let mut y = vec![T::ZERO; x.len()];
    rows.each(|idx| {
        let max = idx
            .iter()
            .fold(T::of(f64::NEG_INFINITY), |m, &i| m.max_nan(x[i]));
        let mut sum = T::ZERO;
        for &i in idx {
            let e = (x[i] - max).exp();
            y[i] = e;
            sum += e;
        }
        for &i in idx {
            y[i] = if log {
                x[i] - max - sum.ln()
            } else {
                y[i] / sum
            };
        }
    });
    Ok(vec![bytes(out.dtype, &y)?])
}

/// `SoftmaxV2(x) -> y`, attribute `axes` `{dim}`: `eˣ / Σ eˣ` along the
/// axis (computed from `x − max`).
pub(super) fn SoftmaxV2(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 1)?;
    by_type(
        dtype,
        || softmax::<f32>(call, false),
        || softmax::<f64>(call, false),
    )
}

/// `LogSoftmaxV2(logits) -> logsoftmax`, attribute `axes` `{dim}`:
/// `x − max − ln Σ e^(x − max)` along the axis.
pub(super) fn LogSoftmaxV2(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 1)?;
    by_type(
        dtype,
        || softmax::<f32>(call, true),
        || softmax::<f64>(call, true),
    )
}

fn softmax_grad<T: Real>(call: &Call<'_>, log: bool) -> Result<Written, AclError> {
    let out = call.out(0);
    let name = if log { "axis" } else { "axes" };
    let rows = Rows::of(&out.dims, one_axis(call, name, out.dims.len())?);
    let v = operands::<T>(call, 2)?;
    // SoftmaxGrad(y, dy); LogSoftmaxGrad(dy, y).
    let (y, dy) = if log { (&v[1], &v[0]) } else { (&v[0], &v[1]) };
    let mut dx = vec![T::ZERO; y.len()];
    rows.each(|idx| {
        if log {
            let sum = idx.iter().fold(T::ZERO, |s, &i| s + dy[i]);
            for &i in idx {
                dx[i] = dy[i] - y[i].exp() * sum;
            }
        } else {
            let dot = idx.iter().fold(T::ZERO, |s, &i| s + dy[i] * y[i]);
            for &i in idx {
                dx[i] = y[i] * (dy[i] - dot);
            }
        }
    });
    Ok(vec![bytes(out.dtype, &dx)?])
}

/// `SoftmaxGrad(softmax, grad_softmax) -> grad_x`, attribute `axes`:
/// `y·(dy − Σ dy·y)` along the axis.
pub(super) fn SoftmaxGrad(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    by_type(
        dtype,
        || softmax_grad::<f32>(call, false),
        || softmax_grad::<f64>(call, false),
    )
}

/// `LogSoftmaxGrad(grad, x) -> y`, attribute `axis` (`x` the forward's
/// output): `dy − e^y·Σ dy` along the axis.
pub(super) fn LogSoftmaxGrad(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    by_type(
        dtype,
        || softmax_grad::<f32>(call, true),
        || softmax_grad::<f64>(call, true),
    )
}

#[cfg(test)]
mod tests;
