//! More elementwise operators torch_npu launches: the inverse and
//! hyperbolic trigonometric functions (`Atanh` too), `Erf`/`Erfc`, `Expm1`/`Log1p`,
//! `Atan2`, `Sign`, `ClipByValue` (hardtanh, relu6) and its gradient,
//! `FloorDiv`/`FloorMod` (floor_divide, remainder) and the bitwise ones.
//!
//! Floats are computed in f64 and rounded once to the output's type
//! (integer inputs of the float functions read as floats, as PyTorch
//! promotes them); `FloorDiv` and `FloorMod` follow PyTorch's CPU
//! formulas (a float quotient from `fmod`, not `floor(a / b)`).

#![allow(non_snake_case)]

use super::call::*;
use super::elementwise::{binary, unary};
use super::shape::{broadcast, broadcast_index};

/// A unary operator of a float function.
fn float(call: &Call<'_>, f: impl Fn(f64) -> f64) -> Result<Written, AclError> {
    unary(call, |x| Num::F(f(x.f64())))
}

/// `Erf(x) -> y`: the error function.
pub(super) fn Erf(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, libm::erf)
}

/// `Erfc(x) -> y`: `1 - erf(x)`, without cancellation.
pub(super) fn Erfc(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, libm::erfc)
}

/// `Atan(x) -> y`.
pub(super) fn Atan(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::atan)
}

/// `Asin(x) -> y` (NaN outside [-1, 1]).
pub(super) fn Asin(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::asin)
}

/// `Acos(x) -> y` (NaN outside [-1, 1]).
pub(super) fn Acos(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::acos)
}

/// `Tan(x) -> y`.
pub(super) fn Tan(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::tan)
}

/// `Atanh(x) -> y`: `½·ln((1 + x) / (1 − x))` (±inf at ±1, NaN outside
/// [-1, 1]; `torch.atanh`, `atanh_`).
pub(super) fn Atanh(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::atanh)
}

/// `Sinh(x) -> y`.
pub(super) fn Sinh(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::sinh)
}

/// `Cosh(x) -> y`.
pub(super) fn Cosh(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::cosh)
}

/// `Expm1(x) -> y`: `eˣ - 1`, exact near 0.
pub(super) fn Expm1(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::exp_m1)
}

/// `Log1p(x) -> y`: `ln(1 + x)`, exact near 0.
pub(super) fn Log1p(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::ln_1p)
}

/// `Atan2(x1, x2) -> y`, broadcast: the angle of the point `(x2, x1)`.
pub(super) fn Atan2(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |y, x| Num::F(y.f64().atan2(x.f64())))
}

/// `Sign(x) -> y`: -1, 0 or 1 (0 for ±0; NaN stays NaN, as PyTorch's CPU
/// kernel gives it).
pub(super) fn Sign(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i.signum()),
        Num::F(f) if f.is_nan() => Num::F(f),
        Num::F(f) => Num::F(if f > 0.0 {
            1.0
        } else if f < 0.0 {
            -1.0
        } else {
            0.0
        }),
    })
}

/// `ClipByValue(x, clip_value_min, clip_value_max) -> y`: `x` clamped to
/// `[min, max]`, the bounds broadcast to `x` (hardtanh, relu6; NaN stays
/// NaN). `x`, the bounds and `y` of one type.
pub(super) fn ClipByValue(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let (x, lo, hi) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    let out = call.out(0);
    if lo.dtype != x.dtype || hi.dtype != x.dtype || out.dtype != x.dtype || x.dtype == DType::Bool
    {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let shape = broadcast(&broadcast(&x.dims, &lo.dims)?, &hi.dims)?;
    if shape != x.dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if out.numel() != x.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let y = broadcast_index(&lo.dims, &shape)
        .zip(broadcast_index(&hi.dims, &shape))
        .enumerate()
        .map(|(i, (l, h))| match (x.at(i), lo.at(l), hi.at(h)) {
            (Num::I(v), Num::I(l), Num::I(h)) => Num::I(v.max(l).min(h)),
            (v, _, _) if v.f64().is_nan() => v,
            (v, l, h) => Num::F(v.f64().max(l.f64()).min(h.f64())),
        });
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), y).bytes,
    ])
}

/// `HardtanhGrad(result, gradient) -> y`, attributes `min_val`, `max_val`:
/// the gradient where `min_val < result < max_val`, else 0 (torch_npu
/// passes hardtanh's input as `result`).
pub(super) fn HardtanhGrad(call: &Call<'_>) -> Result<Written, AclError> {
    let lo = f64::from(call.attr_float("min_val", -1.0)?);
    let hi = f64::from(call.attr_float("max_val", 1.0)?);
    if call.spec(0)?.dtype != call.spec(1)?.dtype || !call.spec(0)?.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    binary(call, move |x, dy| {
        let x = x.f64();
        Num::F(if x > lo && x < hi { dy.f64() } else { 0.0 })
    })
}

/// PyTorch's floor division of floats: from `fmod`, the quotient rounded
/// to the nearest integer when `floor` is off by more than a half.
fn floor_div(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        return a / b;
    }
    let m = a % b;
    let mut d = (a - m) / b;
    if m != 0.0 && (b < 0.0) != (m < 0.0) {
        d -= 1.0;
    }
    if d == 0.0 {
        return 0f64.copysign(a / b);
    }
    let f = d.floor();
    if d - f > 0.5 { f + 1.0 } else { f }
}

/// PyTorch's remainder of floats: `fmod`, moved to the divisor's sign.
fn floor_mod(a: f64, b: f64) -> f64 {
    let m = a % b;
    if m != 0.0 && (b < 0.0) != (m < 0.0) {
        m + b
    } else {
        m
    }
}

/// `FloorDiv(x1, x2) -> y`, broadcast: the quotient rounded toward minus
/// infinity; an integer divided by 0 gives 0 (PyTorch's CPU kernel raises
/// an error; the NPU does not).
pub(super) fn FloorDiv(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| match (x, y) {
        (Num::I(_), Num::I(0)) => Num::I(0),
        (Num::I(a), Num::I(b)) => {
            let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
            Num::I(if r != 0 && (r < 0) != (b < 0) {
                q - 1
            } else {
                q
            })
        }
        _ => Num::F(floor_div(x.f64(), y.f64())),
    })
}

/// `FloorMod(x1, x2) -> y`, broadcast: the remainder of the floor
/// division, of the divisor's sign (`torch.remainder`); an integer modulo
/// 0 gives 0.
pub(super) fn FloorMod(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| match (x, y) {
        (Num::I(_), Num::I(0)) => Num::I(0),
        (Num::I(a), Num::I(b)) => {
            let r = a.wrapping_rem(b);
            Num::I(if r != 0 && (r < 0) != (b < 0) {
                r + b
            } else {
                r
            })
        }
        _ => Num::F(floor_mod(x.f64(), y.f64())),
    })
}

/// A bitwise operator of integers (and bool; floats are 100020).
fn bitwise(call: &Call<'_>, f: fn(i64, i64) -> i64) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    if (0..2).any(|i| call.spec(i).is_ok_and(|s| s.dtype.is_float())) {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    binary(call, move |x, y| Num::I(f(x.i64(), y.i64())))
}

/// `BitwiseAnd(x1, x2) -> y`, broadcast.
pub(super) fn BitwiseAnd(call: &Call<'_>) -> Result<Written, AclError> {
    bitwise(call, |a, b| a & b)
}

/// `BitwiseOr(x1, x2) -> y`, broadcast.
pub(super) fn BitwiseOr(call: &Call<'_>) -> Result<Written, AclError> {
    bitwise(call, |a, b| a | b)
}

/// `BitwiseXor(x1, x2) -> y`, broadcast.
pub(super) fn BitwiseXor(call: &Call<'_>) -> Result<Written, AclError> {
    bitwise(call, |a, b| a ^ b)
}

/// `Invert(x) -> y`: the bitwise not of integers (`~x`; bool is not).
pub(super) fn Invert(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let t = call.spec(0)?.dtype;
    if t.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    unary(call, move |x| {
        if t == DType::Bool {
            Num::I(!x.truthy() as i64)
        } else {
            Num::I(!x.i64())
        }
    })
}

/// `Round(x) -> y`, attribute `decimals` (0): to the nearest integer,
/// halves to even (`torch.round`); with `decimals`, of `x·10^decimals`,
/// divided back (negative: tens, hundreds, ...). Integers stay.
pub(super) fn Round(call: &Call<'_>) -> Result<Written, AclError> {
    let d = call.attr_int("decimals", 0)?;
    let d = i32::try_from(d).map_err(|_| AclError::OP_ATTR_NOT_MATCH)?;
    let scale = 10f64.powi(d.abs());
    unary(call, move |x| match x {
        Num::I(i) => Num::I(i),
        Num::F(f) if d > 0 => Num::F((f * scale).round_ties_even() / scale),
        Num::F(f) if d < 0 => Num::F((f / scale).round_ties_even() * scale),
        Num::F(f) => Num::F(f.round_ties_even()),
    })
}

/// `Trunc(x) -> y`: toward zero (integers stay).
pub(super) fn Trunc(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i),
        Num::F(f) => Num::F(f.trunc()),
    })
}

/// `Mod(x1, x2) -> y`, broadcast: the remainder of the division truncated
/// toward zero, of `x1`'s sign (`torch.fmod`); an integer modulo 0 gives
/// 0 (PyTorch's CPU kernel raises an error).
pub(super) fn Mod(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| match (x, y) {
        (Num::I(_), Num::I(0)) => Num::I(0),
        (Num::I(a), Num::I(b)) => Num::I(a.wrapping_rem(b)),
        _ => Num::F(x.f64() % y.f64()),
    })
}

/// `LogAddExp(x1, x2) -> y`, broadcast, attributes `base` (-1: e),
/// `scale` (1), `shift` (0): `log_b(b^u + b^v)` of `u = scale·x1 + shift`,
/// `v = scale·x2 + shift`, formed around the larger (`logaddexp`,
/// `logaddexp2` with base 2; float types).
pub(super) fn LogAddExp(call: &Call<'_>) -> Result<Written, AclError> {
    let base = f64::from(call.attr_float("base", -1.0)?);
    let scale = f64::from(call.attr_float("scale", 1.0)?);
    let shift = f64::from(call.attr_float("shift", 0.0)?);
    if base != -1.0 && base <= 0.0 || base == 1.0 {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    call.expect(2, 1)?;
    if !call.out(0).dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let ln_b = if base == -1.0 { 1.0 } else { base.ln() };
    binary(call, move |x, y| {
        let (u, v) = (scale * x.f64() + shift, scale * y.f64() + shift);
        let (hi, lo) = if u >= v { (u, v) } else { (v, u) };
        Num::F(if hi.is_nan() || lo.is_nan() {
            f64::NAN
        } else if hi == f64::INFINITY || lo == f64::NEG_INFINITY {
            hi
        } else {
            hi + ((lo - hi) * ln_b).exp().ln_1p() / ln_b
        })
    })
}

/// The inverse error function: a rational first guess refined by
/// Newton's steps on `erf` (±inf at ±1, NaN outside [-1, 1]).
pub(super) fn erfinv(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y.abs() == 1.0 {
        return y * f64::INFINITY;
    }
    // Giles' single-precision approximation as the start.
    let w = -((1.0 - y) * (1.0 + y)).ln();
    let mut x = if w < 5.0 {
        let w = w - 2.5;
        let p = [
            2.810_226_36e-08,
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ];
        p.iter().fold(0.0, |acc, c| acc * w + c)
    } else {
        let w = w.sqrt() - 3.0;
        let p = [
            -0.000_200_214_257,
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ];
        p.iter().fold(0.0, |acc, c| acc * w + c)
    } * y;
    let k = 2.0 / std::f64::consts::PI.sqrt();
    for _ in 0..3 {
        let d = k * (-x * x).exp();
        if d == 0.0 {
            break;
        }
        x -= (libm::erf(x) - y) / d;
    }
    x
}

/// `Erfinv(x) -> y`: the inverse error function (`torch.erfinv`).
pub(super) fn Erfinv(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, erfinv)
}

#[cfg(test)]
mod tests;
