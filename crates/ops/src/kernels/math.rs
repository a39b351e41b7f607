//! The elementwise math of a training step: exponentials, logarithms,
//! roots, trigonometry and powers, in `f64` and rounded to the output's
//! type (integer inputs are read as floats, as PyTorch promotes them).

use aclmem_core::AclError;

use super::call::{Call, Written};
use super::elementwise::{binary, unary};
use crate::tensor::Num;

/// A unary operator of a float function.
fn float(call: &Call<'_>, f: impl Fn(f64) -> f64) -> Result<Written, AclError> {
    unary(call, |x| Num::F(f(x.f64())))
}

/// `Exp(x) -> y` (base e; the operator's `base`, `scale` and `shift`
/// attributes at their defaults).
pub(super) fn Exp(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::exp)
}

/// `Log(x) -> y`, attributes `base` (-1: e), `scale` (1), `shift` (0):
/// `log_base(scale·x + shift)` (NaN below 0, -inf at 0): `log`, `log2`,
/// `log10` (torch_npu passes base 2 and 10); a base of 1 or not positive
/// (but -1) is 100023.
pub(super) fn Log(call: &Call<'_>) -> Result<Written, AclError> {
    let base = f64::from(call.attr_float("base", -1.0)?);
    let scale = f64::from(call.attr_float("scale", 1.0)?);
    let shift = f64::from(call.attr_float("shift", 0.0)?);
    if base != -1.0 && (base <= 0.0 || base == 1.0) {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    float(call, move |x| {
        let v = scale * x + shift;
        if base == -1.0 {
            v.ln()
        } else if base == 2.0 {
            v.log2()
        } else if base == 10.0 {
            v.log10()
        } else {
            v.ln() / base.ln()
        }
    })
}

/// `Sqrt(x) -> y`.
pub(super) fn Sqrt(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::sqrt)
}

/// `Rsqrt(x) -> y`: `1 / sqrt(x)`.
pub(super) fn Rsqrt(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, |x| 1.0 / x.sqrt())
}

/// `Reciprocal(x) -> y`: `1 / x`.
pub(super) fn Reciprocal(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, |x| 1.0 / x)
}

/// `Sin(x) -> y`.
pub(super) fn Sin(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::sin)
}

/// `Cos(x) -> y`.
pub(super) fn Cos(call: &Call<'_>) -> Result<Written, AclError> {
    float(call, f64::cos)
}

/// `Floor(x) -> y`: the greatest integer not above `x`.
pub(super) fn Floor(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i),
        Num::F(f) => Num::F(f.floor()),
    })
}

/// `Square(x) -> y`: `x * x`.
pub(super) fn Square(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i.wrapping_mul(i)),
        Num::F(f) => Num::F(f * f),
    })
}

/// `Pow(x1, x2) -> y`, broadcast: `x1` to the power `x2` (integers by
/// repeated multiplication, wrapping, 0 for a negative exponent but of 1
/// and -1, as PyTorch's CPU kernel).
pub(super) fn Pow(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| match (x, y) {
        (Num::I(b), Num::I(e)) if e >= 0 => {
            Num::I(b.wrapping_pow(u32::try_from(e).unwrap_or(u32::MAX)))
        }
        (Num::I(b), Num::I(e)) => Num::I(match b {
            1 => 1,
            -1 if e % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        }),
        _ => Num::F(x.f64().powf(y.f64())),
    })
}
