//! The operators of [`super`], each a formula per element.

use super::*;

/// `MseLoss(x, target) -> y`, `reduction`: `(x − target)²`.
pub(in super::super) fn MseLoss(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        forward::<T>(call, 2, false, |a| (a[0] - a[1]) * (a[0] - a[1]))
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `MseLossGrad(x, target, dy) -> dx`, `reduction`: `2·(x − target)·dy`.
pub(in super::super) fn MseLossGrad(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        backward::<T>(call, &[0, 1, 2], 0, 2, false, |a| {
            T::of(2.0) * (a[0] - a[1]) * a[2]
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `ln(1 + e^(−x))` without overflow: `ln(1 + e^(−|x|)) + max(−x, 0)`.
fn softplus_neg<T: Real>(x: T) -> T {
    (-abs(x)).exp().ln_1p() + if x < T::ZERO { -x } else { T::ZERO }
}

/// `SigmoidCrossEntropyWithLogitsV2(x, target, weight, pos_weight) -> y`,
/// `reduction`: `weight·((1 − t)·x + (1 + (pos_weight − 1)·t)·ln(1 + e^(−x)))`,
/// binary cross-entropy of the logits x.
pub(in super::super) fn SigmoidCrossEntropyWithLogitsV2(
    call: &Call<'_>,
) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        forward::<T>(call, 4, false, |a| {
            let (x, t, w, pw) = (a[0], a[1], a[2], a[3]);
            let lw = (pw - T::ONE) * t + T::ONE;
            w * ((T::ONE - t) * x + lw * softplus_neg(x))
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `SigmoidCrossEntropyWithLogitsGradV2(x, target, dy, weight, pos_weight)
/// -> dx`, `reduction`: `weight·dy·((1 − t) − (1 + (pos_weight − 1)·t)·σ(−x))`.
pub(in super::super) fn SigmoidCrossEntropyWithLogitsGradV2(
    call: &Call<'_>,
) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        backward::<T>(call, &[0, 1, 2, 3, 4], 0, 2, false, |a| {
            let (x, t, dy, w, pw) = (a[0], a[1], a[2], a[3], a[4]);
            let lw = (pw - T::ONE) * t + T::ONE;
            w * dy * ((T::ONE - t) - lw * sigmoid(-x))
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `ln v`, at least −100 (PyTorch's clamp of `binary_cross_entropy`).
fn clamped_ln<T: Real>(v: T) -> T {
    let l = v.ln();
    if l < T::of(-100.0) { T::of(-100.0) } else { l }
}

/// `BinaryCrossEntropy(x, target, weight) -> y`, `reduction`:
/// `−weight·(t·ln x + (1 − t)·ln(1 − x))`, each logarithm at least −100.
pub(in super::super) fn BinaryCrossEntropy(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        forward::<T>(call, 3, false, |a| {
            let (x, t, w) = (a[0], a[1], a[2]);
            -w * (t * clamped_ln(x) + (T::ONE - t) * clamped_ln(T::ONE - x))
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `BinaryCrossEntropyGrad(x, target, dy, weight) -> dx`, `reduction`:
/// `weight·dy·(x − t) / max(x·(1 − x), 1e-12)`.
pub(in super::super) fn BinaryCrossEntropyGrad(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        backward::<T>(call, &[0, 1, 2, 3], 0, 2, false, |a| {
            let (x, t, dy, w) = (a[0], a[1], a[2], a[3]);
            let d = x * (T::ONE - x);
            let d = if d < T::of(1e-12) { T::of(1e-12) } else { d };
            w * dy * (x - t) / d
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `LpLoss(x, target) -> y`, `reduction`, `p` (1, the only one):
/// `|x − target|`.
pub(in super::super) fn LpLoss(call: &Call<'_>) -> Result<Written, AclError> {
    if call.attr_int("p", 1)? != 1 {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        forward::<T>(call, 2, false, |a| abs(a[0] - a[1]))
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `L1LossGrad(dy, x, target) -> dx`, `reduction`: `sign(x − target)·dy`.
pub(in super::super) fn L1LossGrad(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        backward::<T>(call, &[1, 2, 0], 1, 0, false, |a| sign(a[0] - a[1]) * a[2])
    }
    by_type(call.spec(1)?.dtype, || go::<f32>(call), || go::<f64>(call))
}

/// `SmoothL1LossV2(x, target) -> y`, `reduction`, `sigma` (β, default
/// 1): with `d = x − target`, `d²/(2β)` where `|d| < β`, else `|d| − β/2`
/// (β 0: `|d|`).
pub(in super::super) fn SmoothL1LossV2(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let beta = sigma::<T>(call)?;
        forward::<T>(call, 2, false, |a| {
            let d = abs(a[0] - a[1]);
            if d < beta {
                T::of(0.5) * d * d / beta
            } else {
                d - T::of(0.5) * beta
            }
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// The `sigma` (β) attribute: not negative (100023).
fn sigma<T: Real>(call: &Call<'_>) -> Result<T, AclError> {
    let beta = call.attr_float("sigma", 1.0)?;
    if beta.is_nan() || beta < 0.0 {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    Ok(T::of(f64::from(beta)))
}

/// `SmoothL1LossGradV2(x, target, dy) -> dx`, `reduction`, `sigma`:
/// `dy·d/β` where `|d| < β`, else `dy·sign(d)`.
pub(in super::super) fn SmoothL1LossGradV2(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let beta = sigma::<T>(call)?;
        backward::<T>(call, &[0, 1, 2], 0, 2, false, |a| {
            let d = a[0] - a[1];
            if abs(d) < beta {
                d / beta * a[2]
            } else {
                sign(d) * a[2]
            }
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `KLDiv(x, target) -> y`, `reduction` (`"none"`, `"sum"`, `"mean"`,
/// `"batchmean"`), `log_target`: `t·(ln t − x)` (0 where t is 0), or
/// `eᵗ·(t − x)` for a log target.
pub(in super::super) fn KLDiv(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let log_target = call.attr_bool("log_target", false)?;
        forward::<T>(call, 2, true, |a| {
            let (x, t) = (a[0], a[1]);
            if log_target {
                t.exp() * (t - x)
            } else if t == T::ZERO {
                T::ZERO
            } else {
                t * (t.ln() - x)
            }
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `KlDivLossGrad(dy, x, target) -> dx`, `reduction`, `log_target`:
/// `−t·dy` (`−eᵗ·dy` for a log target).
pub(in super::super) fn KlDivLossGrad(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let log_target = call.attr_bool("log_target", false)?;
        backward::<T>(call, &[1, 2, 0], 1, 0, true, |a| {
            let t = if log_target { a[1].exp() } else { a[1] };
            -t * a[2]
        })
    }
    by_type(call.spec(1)?.dtype, || go::<f32>(call), || go::<f64>(call))
}

/// `SoftMarginLoss(x, target) -> y`, `reduction`: `ln(1 + e^(−t·x))`.
pub(in super::super) fn SoftMarginLoss(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        forward::<T>(call, 2, false, |a| softplus_neg(a[1] * a[0]))
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}

/// `SoftMarginLossGrad(x, target, dy) -> dx`, `reduction`:
/// `−t·σ(−t·x)·dy`.
pub(in super::super) fn SoftMarginLossGrad(call: &Call<'_>) -> Result<Written, AclError> {
    fn go<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        backward::<T>(call, &[0, 1, 2], 0, 2, false, |a| {
            -a[1] * sigmoid(-a[1] * a[0]) * a[2]
        })
    }
    typed(call, || go::<f32>(call), || go::<f64>(call))
}
