//! Activations and their gradients, as torch_npu launches them
//! (`op-plugin`, `op_plugin/ops/aclops/`): `relu` is `Relu`, its backward
//! `ReluGrad(dy, y)` (`ThresholdGradV2D` with a threshold other than 0);
//! `gelu` is `Gelu` (the tanh form, whatever `approximate` says) and
//! `GeluGrad(dy, x, y)`; `silu` is `Swish` (`scale` 1) and
//! `SiluGrad(dy, x)`; `Sigmoid` / `SigmoidGrad(y, dy)`, `Tanh` /
//! `TanhGrad(y, dy)`; `softplus` is `SoftplusV2` / `SoftplusV2Grad(dy, x)`
//! with `beta` and `threshold`; `threshold` is `ThresholdV2D`;
//! `leaky_relu` is `LeakyRelu` / `LeakyReluGrad(dy, x)` with
//! `negative_slope`; `elu` (and `selu`, `celu`) is `Elu` /
//! `EluGradV2(dy, x or y)` with `alpha`, `scale`, `input_scale`
//! (`is_result`); `mish` is `Mish` / `MishGrad(dy, x)`; `logsigmoid` is
//! `LogSigmoid` / `LogSigmoidGrad(grads, features)`.
//!
//! Floating types (float32, float16, bfloat16, float64; `Relu` also the
//! integer types), every input of the output's type (100020 otherwise),
//! broadcast to the output's shape; computed in fp32 (fp64 for float64)
//! and rounded once (`super::float`).

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, attr, by_type, out_type, pointwise};

/// `√(2/π)`, the tanh form of GELU's constant.
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
/// The tanh form of GELU's cubic coefficient.
const GELU_CUBIC: f64 = 0.044_715;

fn sigmoid<T: Real>(x: T) -> T {
    T::ONE / (T::ONE + (-x).exp())
}

/// `Relu(x) -> y`: `max(x, 0)` (NaN stays NaN); integers too.
pub(super) fn Relu(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let dtype = call.spec(0)?.dtype;
    if !dtype.is_float() {
        if call.out(0).dtype != dtype {
            return Err(AclError::OP_TYPE_NOT_MATCH);
        }
        return super::elementwise::unary(call, |x| Num::I(x.i64().max(0)));
    }
    by_type(
        dtype,
        || pointwise::<f32>(call, 1, |v| relu(v[0])),
        || pointwise::<f64>(call, 1, |v| relu(v[0])),
    )
}

fn relu<T: Real>(x: T) -> T {
    if x < T::ZERO { T::ZERO } else { x }
}

/// `ReluGrad(gradients, features) -> backprops`: the gradient where the
/// feature (relu's output) is positive, else 0.
pub(super) fn ReluGrad(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    by_type(
        dtype,
        || pointwise::<f32>(call, 2, |v| if v[1] > 0.0 { v[0] } else { 0.0 }),
        || pointwise::<f64>(call, 2, |v| if v[1] > 0.0 { v[0] } else { 0.0 }),
    )
}

/// `ThresholdV2D(x) -> y`, attributes `threshold`, `value`: `x` where
/// `x > threshold`, else `value`.
pub(super) fn ThresholdV2D(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let (th, value) = (
            attr::<T>(call, "threshold", 0.0)?,
            attr::<T>(call, "value", 0.0)?,
        );
        pointwise::<T>(call, 1, |v| if v[0] > th { v[0] } else { value })
    }
    by_type(out_type(call, 1)?, || run::<f32>(call), || run::<f64>(call))
}

/// `ThresholdGradV2D(gradients, features) -> backprops`, attribute
/// `threshold`: the gradient where `features > threshold`, else 0.
pub(super) fn ThresholdGradV2D(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let th = attr::<T>(call, "threshold", 0.0)?;
        pointwise::<T>(call, 2, |v| if v[1] > th { v[0] } else { T::ZERO })
    }
    by_type(out_type(call, 2)?, || run::<f32>(call), || run::<f64>(call))
}

fn gelu<T: Real>(x: T) -> T {
    let u = T::of(SQRT_2_OVER_PI) * (x + T::of(GELU_CUBIC) * x * x * x);
    T::of(0.5) * x * (T::ONE + u.tanh())
}

fn gelu_grad<T: Real>(dy: T, x: T) -> T {
    let c = T::of(SQRT_2_OVER_PI);
    let a = T::of(GELU_CUBIC);
    let t = (c * (x + a * x * x * x)).tanh();
    let du = c * (T::ONE + T::of(3.0) * a * x * x);
    let half = T::of(0.5);
    dy * (half * (T::ONE + t) + half * x * (T::ONE - t * t) * du)
}

/// `Gelu(x) -> y`: `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`, the tanh
/// form the NPU computes (torch_npu ignores `approximate`).
pub(super) fn Gelu(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 1)?,
        || pointwise::<f32>(call, 1, |v| gelu(v[0])),
        || pointwise::<f64>(call, 1, |v| gelu(v[0])),
    )
}

/// `GeluGrad(dy, x, y) -> z`: `dy` times the tanh form's derivative at
/// `x` (torch_npu passes `dy` again as `y`, which the result ignores).
pub(super) fn GeluGrad(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 3)?,
        || pointwise::<f32>(call, 3, |v| gelu_grad(v[0], v[1])),
        || pointwise::<f64>(call, 3, |v| gelu_grad(v[0], v[1])),
    )
}

/// `Swish(x) -> y`, attribute `scale` (default 1): `x·σ(scale·x)`.
pub(super) fn Swish(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let scale = attr::<T>(call, "scale", 1.0)?;
        pointwise::<T>(call, 1, |v| v[0] * sigmoid(scale * v[0]))
    }
    by_type(out_type(call, 1)?, || run::<f32>(call), || run::<f64>(call))
}

fn silu_grad<T: Real>(dy: T, x: T) -> T {
    let s = sigmoid(x);
    dy * s * (T::ONE + x * (T::ONE - s))
}

/// `SiluGrad(dy, x) -> dx`: `dy·σ(x)·(1 + x·(1 − σ(x)))`.
pub(super) fn SiluGrad(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 2)?,
        || pointwise::<f32>(call, 2, |v| silu_grad(v[0], v[1])),
        || pointwise::<f64>(call, 2, |v| silu_grad(v[0], v[1])),
    )
}

/// `Sigmoid(x) -> y`: `1 / (1 + e⁻ˣ)`.
pub(super) fn Sigmoid(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 1)?,
        || pointwise::<f32>(call, 1, |v| sigmoid(v[0])),
        || pointwise::<f64>(call, 1, |v| sigmoid(v[0])),
    )
}

/// `SigmoidGrad(y, dy) -> z`: `dy·y·(1 − y)`, `y` the sigmoid's output.
pub(super) fn SigmoidGrad(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 2)?,
        || pointwise::<f32>(call, 2, |v| v[1] * v[0] * (1.0 - v[0])),
        || pointwise::<f64>(call, 2, |v| v[1] * v[0] * (1.0 - v[0])),
    )
}

/// `Tanh(x) -> y`.
pub(super) fn Tanh(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 1)?,
        || pointwise::<f32>(call, 1, |v| v[0].tanh()),
        || pointwise::<f64>(call, 1, |v| v[0].tanh()),
    )
}

/// `TanhGrad(y, dy) -> z`: `dy·(1 − y²)`, `y` the tanh's output.
pub(super) fn TanhGrad(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 2)?,
        || pointwise::<f32>(call, 2, |v| v[1] * (1.0 - v[0] * v[0])),
        || pointwise::<f64>(call, 2, |v| v[1] * (1.0 - v[0] * v[0])),
    )
}

/// `SoftplusV2(x) -> y`, attributes `beta` (default 1) and `threshold`
/// (default 20): `ln(1 + e^(β·x)) / β`, or `x` where `β·x > threshold`.
pub(super) fn SoftplusV2(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let (beta, th) = (
            attr::<T>(call, "beta", 1.0)?,
            attr::<T>(call, "threshold", 20.0)?,
        );
        pointwise::<T>(call, 1, |v| {
            let bx = beta * v[0];
            if bx > th {
                v[0]
            } else {
                bx.exp().ln_1p() / beta
            }
        })
    }
    by_type(out_type(call, 1)?, || run::<f32>(call), || run::<f64>(call))
}

/// `SoftplusV2Grad(dy, x) -> dx`, attributes as `SoftplusV2`:
/// `dy·σ(β·x)`, or `dy` where `β·x > threshold`.
pub(super) fn SoftplusV2Grad(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let (beta, th) = (
            attr::<T>(call, "beta", 1.0)?,
            attr::<T>(call, "threshold", 20.0)?,
        );
        pointwise::<T>(call, 2, |v| {
            let bx = beta * v[1];
            if bx > th { v[0] } else { v[0] * sigmoid(bx) }
        })
    }
    by_type(out_type(call, 2)?, || run::<f32>(call), || run::<f64>(call))
}

/// `LeakyRelu(x) -> y`, attribute `negative_slope` (default 0): `x`, or
/// `negative_slope·x` where `x ≤ 0`.
pub(super) fn LeakyRelu(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let slope = attr::<T>(call, "negative_slope", 0.0)?;
        pointwise::<T>(
            call,
            1,
            |v| if v[0] > T::ZERO { v[0] } else { slope * v[0] },
        )
    }
    by_type(out_type(call, 1)?, || run::<f32>(call), || run::<f64>(call))
}

/// `LeakyReluGrad(gradients, features) -> backprops`, attribute
/// `negative_slope`: the gradient where the feature is positive, else the
/// gradient times `negative_slope`.
pub(super) fn LeakyReluGrad(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let slope = attr::<T>(call, "negative_slope", 0.0)?;
        pointwise::<T>(
            call,
            2,
            |v| if v[1] > T::ZERO { v[0] } else { slope * v[0] },
        )
    }
    by_type(out_type(call, 2)?, || run::<f32>(call), || run::<f64>(call))
}

/// ELU's attributes: `alpha`, `scale`, `input_scale` (each default 1).
fn elu_attrs<T: Real>(call: &Call<'_>) -> Result<[T; 3], AclError> {
    Ok([
        attr::<T>(call, "alpha", 1.0)?,
        attr::<T>(call, "scale", 1.0)?,
        attr::<T>(call, "input_scale", 1.0)?,
    ])
}

/// `Elu(x) -> y`, attributes `alpha`, `scale`, `input_scale`:
/// `scale·x` where `x > 0`, else `scale·alpha·(e^(input_scale·x) − 1)`
/// (`elu`, `selu`, `celu`).
pub(super) fn Elu(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let [alpha, scale, input] = elu_attrs::<T>(call)?;
        pointwise::<T>(call, 1, |v| {
            if v[0] > T::ZERO {
                scale * v[0]
            } else {
                scale * alpha * ((input * v[0]).exp() - T::ONE)
            }
        })
    }
    by_type(out_type(call, 1)?, || run::<f32>(call), || run::<f64>(call))
}

/// `EluGradV2(grads, activations) -> y`, attributes as `Elu` and
/// `is_result` (whether `activations` is the forward's output or its
/// input): `scale·dy` on the positive side, else
/// `input_scale·(y + scale·alpha)·dy` from the output or
/// `input_scale·scale·alpha·e^(input_scale·x)·dy` from the input.
pub(super) fn EluGradV2(call: &Call<'_>) -> Result<Written, AclError> {
    fn run<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
        let [alpha, scale, input] = elu_attrs::<T>(call)?;
        let is_result = call.attr_bool("is_result", false)?;
        pointwise::<T>(call, 2, |v| {
            let (dy, a) = (v[0], v[1]);
            if a > T::ZERO {
                scale * dy
            } else if is_result {
                input * (a + scale * alpha) * dy
            } else {
                input * scale * alpha * (input * a).exp() * dy
            }
        })
    }
    by_type(out_type(call, 2)?, || run::<f32>(call), || run::<f64>(call))
}

/// `ln(1 + eˣ)`, without overflow for large `x`.
fn softplus<T: Real>(x: T) -> T {
    if x > T::of(20.0) { x } else { x.exp().ln_1p() }
}

/// `Mish(x) -> y`: `x·tanh(ln(1 + eˣ))`.
pub(super) fn Mish(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 1)?,
        || pointwise::<f32>(call, 1, |v| v[0] * softplus(v[0]).tanh()),
        || pointwise::<f64>(call, 1, |v| v[0] * softplus(v[0]).tanh()),
    )
}

fn mish_grad<T: Real>(dy: T, x: T) -> T {
    let t = softplus(x).tanh();
    dy * (t + x * sigmoid(x) * (T::ONE - t * t))
}

/// `MishGrad(grad, x) -> x_grad`: `dy·(tanh(sp) + x·σ(x)·(1 − tanh²(sp)))`,
/// `sp = ln(1 + eˣ)`.
pub(super) fn MishGrad(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 2)?,
        || pointwise::<f32>(call, 2, |v| mish_grad(v[0], v[1])),
        || pointwise::<f64>(call, 2, |v| mish_grad(v[0], v[1])),
    )
}

/// `ln σ(x) = min(x, 0) − ln(1 + e^−|x|)`, without overflow either way.
fn log_sigmoid<T: Real>(x: T) -> T {
    let neg_abs = if x < T::ZERO { x } else { -x };
    let low = if x < T::ZERO { x } else { T::ZERO };
    low - neg_abs.exp().ln_1p()
}

/// `LogSigmoid(x) -> y`: `ln(1 / (1 + e⁻ˣ))` (`F.logsigmoid`).
pub(super) fn LogSigmoid(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 1)?,
        || pointwise::<f32>(call, 1, |v| log_sigmoid(v[0])),
        || pointwise::<f64>(call, 1, |v| log_sigmoid(v[0])),
    )
}

/// `LogSigmoidGrad(grads, features) -> backprops`: `dy·σ(−x)`, `x` the
/// forward's input.
pub(super) fn LogSigmoidGrad(call: &Call<'_>) -> Result<Written, AclError> {
    by_type(
        out_type(call, 2)?,
        || pointwise::<f32>(call, 2, |v| v[0] * sigmoid(-v[1])),
        || pointwise::<f64>(call, 2, |v| v[0] * sigmoid(-v[1])),
    )
}

#[cfg(test)]
mod tests;
