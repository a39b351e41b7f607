//! The operators of an optimizer's step and of `clip_grad_norm_`: the
//! ternary pointwise updates (`Lerp`, `Addcmul`, `Addcdiv`), clamping
//! (`ClipByValueV2`) and the two halves of an Lp norm (`LpNormReduceV2`,
//! `LpNormUpdateV2`). Float types only (fp32, fp16, bf16, fp64), every
//! input of the output's type and broadcast to its shape, computed in the
//! working type of `float.rs` (fp32 for the narrow types, fp64 for
//! fp64) and rounded once.

use super::call::*;
use super::float::{Real, by_type, bytes, out_type, pointwise, values};

/// `Lerp(start, end, weight) -> y`, broadcast: `start + weight·(end -
/// start)`, in PyTorch's two-sided form (from `end` when `|weight| >=
/// 0.5`, so `weight` 1 gives `end` exactly).
pub(super) fn Lerp(call: &Call<'_>) -> Result<Written, AclError> {
    fn lerp<T: Real>(v: &[T]) -> T {
        let (s, e, w) = (v[0], v[1], v[2]);
        let half = T::of(0.5);
        let abs = if w < T::ZERO { -w } else { w };
        if abs < half {
            s + w * (e - s)
        } else {
            e - (e - s) * (T::ONE - w)
        }
    }
    let dtype = out_type(call, 3)?;
    by_type(
        dtype,
        || pointwise::<f32>(call, 3, lerp),
        || pointwise::<f64>(call, 3, lerp),
    )
}

/// `Addcmul(input_data, x1, x2, value) -> y`, broadcast: `input_data +
/// value·x1·x2`.
pub(super) fn Addcmul(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 4)?;
    by_type(
        dtype,
        || pointwise::<f32>(call, 4, |v| v[0] + v[3] * v[1] * v[2]),
        || pointwise::<f64>(call, 4, |v| v[0] + v[3] * v[1] * v[2]),
    )
}

/// `Addcdiv(input_data, x1, x2, value) -> y`, broadcast: `input_data +
/// value·x1 / x2`.
pub(super) fn Addcdiv(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 4)?;
    by_type(
        dtype,
        || pointwise::<f32>(call, 4, |v| v[0] + v[3] * (v[1] / v[2])),
        || pointwise::<f64>(call, 4, |v| v[0] + v[3] * (v[1] / v[2])),
    )
}

/// `ClipByValueV2(x, clip_value_min, clip_value_max) -> y`, broadcast:
/// `min(max(x, min), max)` (NaN stays NaN), as `torch.clamp`.
pub(super) fn ClipByValueV2(call: &Call<'_>) -> Result<Written, AclError> {
    fn clip<T: Real>(v: &[T]) -> T {
        let x = v[0];
        if x.f64().is_nan() {
            return x;
        }
        let low = if x < v[1] { v[1] } else { x };
        if low > v[2] { v[2] } else { low }
    }
    let dtype = out_type(call, 3)?;
    by_type(
        dtype,
        || pointwise::<f32>(call, 3, clip),
        || pointwise::<f64>(call, 3, clip),
    )
}

/// The `p` attribute of the Lp norm operators: torch_npu passes infinity
/// as `INT_MAX` and minus infinity as `INT_MIN` (as floats).
fn norm_p(call: &Call<'_>) -> Result<f64, AclError> {
    let p = f64::from(call.attr_float("p", 2.0)?);
    Ok(if p >= f64::from(i32::MAX) {
        f64::INFINITY
    } else if p <= f64::from(i32::MIN) {
        f64::NEG_INFINITY
    } else {
        p
    })
}

/// `LpNormReduceV2(x) -> y`, attributes `p`, `axes` (empty: all),
/// `keepdim`, `epsilon`: over the axes, `Σ|x|^p` (`max|x|` for infinity,
/// `min|x|` for minus infinity, the count of non-zero elements for 0,
/// `Σ|x|` for 1); `LpNormUpdateV2` finishes the norm. The output has the
/// reduced shape (with or without the kept 1s: the element count decides).
pub(super) fn LpNormReduceV2(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>, p: f64) -> Result<Written, AclError> {
        let x = call.tensor(0)?;
        let out = call.out(0);
        if x.dtype != out.dtype {
            return Err(AclError::OP_TYPE_NOT_MATCH);
        }
        let rank = x.dims.len();
        let listed = match call.attr("axes") {
            None => Vec::new(),
            Some(AttrValue::ListInt(v)) => v.clone(),
            Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
        };
        let mut gone = vec![listed.is_empty(); rank];
        for &a in &listed {
            let a = if a < 0 { a + rank as i64 } else { a };
            let slot = usize::try_from(a)
                .ok()
                .and_then(|a| gone.get_mut(a))
                .ok_or(AclError::OP_ATTR_NOT_MATCH)?;
            *slot = true;
        }
        let kept: Vec<usize> = x
            .dims
            .iter()
            .zip(&gone)
            .map(|(&d, &g)| if g { 1 } else { d })
            .collect();
        let count = Tensor::numel_of(&kept)?;
        if count != out.numel() {
            return Err(AclError::OP_OUTPUT_NOT_MATCH);
        }
        let v = values::<T>(&x)?;
        let (init, f): (f64, fn(f64, f64, f64) -> f64) = if p == f64::INFINITY {
            (f64::NEG_INFINITY, |a, x, _| a.max(x))
        } else if p == f64::NEG_INFINITY {
            (f64::INFINITY, |a, x, _| a.min(x))
        } else if p == 0.0 {
            (0.0, |a, x, _| a + f64::from(u8::from(x != 0.0)))
        } else if p == 1.0 {
            (0.0, |a, x, _| a + x)
        } else {
            (0.0, |a, x, p| a + x.powf(p))
        };
        let mut acc = vec![T::of(init); count];
        let mut nan = vec![false; count];
        for (i, o) in super::shape::broadcast_index(&kept, &x.dims).enumerate() {
            let a = v[i].f64().abs();
            nan[o] |= a.is_nan();
            acc[o] = T::of(f(acc[o].f64(), a, p));
        }
        for (a, n) in acc.iter_mut().zip(nan) {
            if n {
                *a = T::of(f64::NAN);
            }
        }
        Ok(vec![bytes(out.dtype, &acc)?])
    }
    call.expect(1, 1)?;
    let p = norm_p(call)?;
    call.attr_bool("keepdim", false)?;
    call.attr_float("epsilon", 0.0)?;
    by_type(
        call.out(0).dtype,
        || run::<f32>(call, p),
        || run::<f64>(call, p),
    )
}

/// `LpNormUpdateV2(x) -> y`, attributes `p`, `epsilon`: `LpNormReduceV2`'s
/// sums to the norm, `x^(1/p)` (`x` itself for 0, 1 and the infinities),
/// at least `epsilon`.
pub(super) fn LpNormUpdateV2(call: &Call<'_>) -> Result<Written, AclError> {
    let p = norm_p(call)?;
    let eps = f64::from(call.attr_float("epsilon", 0.0)?);
    let root = move |x: f64| {
        let y = if p == 0.0 || p == 1.0 || p.is_infinite() {
            x
        } else {
            x.powf(1.0 / p)
        };
        if y < eps { eps } else { y }
    };
    let dtype = out_type(call, 1)?;
    by_type(
        dtype,
        || pointwise::<f32>(call, 1, |v| f32::of(root(v[0].f64()))),
        || pointwise::<f64>(call, 1, |v| root(v[0])),
    )
}

#[cfg(test)]
mod tests;
