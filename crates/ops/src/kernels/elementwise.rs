//! Elementwise operators: arithmetic with broadcasting, comparisons, unary functions.

#![allow(non_snake_case)]

use super::basic::{filled, same_count};
use super::call::*;
use super::shape::{broadcast, broadcast_index};

/// A binary elementwise operator: `f` on each pair of broadcast elements,
/// computed in floating point when either input is, else in integers.
pub(super) fn binary(call: &Call<'_>, f: impl Fn(Num, Num) -> Num) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let (a, b) = (call.tensor(0)?, call.tensor(1)?);
    let out = call.out(0);
    let shape = broadcast(&a.dims, &b.dims)?;
    if shape != out.dims && Tensor::numel_of(&shape)? != out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let floats = a.dtype.is_float() || b.dtype.is_float();
    let nums = broadcast_index(&a.dims, &shape)
        .zip(broadcast_index(&b.dims, &shape))
        .map(|(i, j)| {
            let (x, y) = (a.at(i), b.at(j));
            if floats {
                f(Num::F(x.f64()), Num::F(y.f64()))
            } else {
                f(x, y)
            }
        });
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}

pub(super) fn arith(x: Num, y: Num, fi: fn(i64, i64) -> i64, ff: fn(f64, f64) -> f64) -> Num {
    match (x, y) {
        (Num::I(a), Num::I(b)) => Num::I(fi(a, b)),
        _ => Num::F(ff(x.f64(), y.f64())),
    }
}

/// `Add(x1, x2) -> y`, broadcast.
pub(super) fn Add(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| arith(x, y, i64::wrapping_add, |a, b| a + b))
}

/// `Sub(x1, x2) -> y`, broadcast.
pub(super) fn Sub(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| arith(x, y, i64::wrapping_sub, |a, b| a - b))
}

/// `Mul(x1, x2) -> y`, broadcast.
pub(super) fn Mul(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| arith(x, y, i64::wrapping_mul, |a, b| a * b))
}

/// `RealDiv(x1, x2) -> y`, broadcast, in floating point.
pub(super) fn RealDiv(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| Num::F(x.f64() / y.f64()))
}

/// `Maximum(x1, x2) -> y`, broadcast (NaN wins).
pub(super) fn Maximum(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| match (x, y) {
        (Num::I(a), Num::I(b)) => Num::I(a.max(b)),
        _ if x.f64().is_nan() || y.f64().is_nan() => Num::F(f64::NAN),
        _ => Num::F(x.f64().max(y.f64())),
    })
}

/// `Minimum(x1, x2) -> y`, broadcast (NaN wins).
pub(super) fn Minimum(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| match (x, y) {
        (Num::I(a), Num::I(b)) => Num::I(a.min(b)),
        _ if x.f64().is_nan() || y.f64().is_nan() => Num::F(f64::NAN),
        _ => Num::F(x.f64().min(y.f64())),
    })
}

/// `AxpyV2(x1, x2, alpha) -> y`: `x1 + alpha·x2`, broadcast.
pub(super) fn AxpyV2(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let alpha = call.scalar(2)?;
    let two = TwoOf(call);
    let inner = Call::new(&two, call.outputs.clone(), OpAttr::new());
    binary(&inner, |x, y| {
        let scaled = arith(y, alpha, i64::wrapping_mul, |a, b| a * b);
        arith(x, scaled, i64::wrapping_add, |a, b| a + b)
    })
}

/// The first two inputs of a call.
pub(super) struct TwoOf<'a, 'c>(&'a Call<'c>);

impl Inputs for TwoOf<'_, '_> {
    fn count(&self) -> usize {
        2
    }
    fn spec(&self, i: usize) -> Result<&Spec, AclError> {
        self.0.inputs.spec(i)
    }
    fn prefix(&self, i: usize, elements: usize) -> Result<Vec<u8>, AclError> {
        self.0.inputs.prefix(i, elements)
    }
}

pub(super) fn compare(
    call: &Call<'_>,
    f: fn(f64, f64) -> bool,
    fi: fn(i64, i64) -> bool,
) -> Result<Written, AclError> {
    binary(call, move |x, y| {
        Num::I(match (x, y) {
            (Num::I(a), Num::I(b)) => fi(a, b),
            _ => f(x.f64(), y.f64()),
        } as i64)
    })
}

/// `Equal(x1, x2) -> y` (bool), broadcast.
pub(super) fn Equal(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a == b, |a, b| a == b)
}

/// `NotEqual(x1, x2) -> y` (bool), broadcast.
pub(super) fn NotEqual(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a != b, |a, b| a != b)
}

/// `Less(x1, x2) -> y` (bool), broadcast.
pub(super) fn Less(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a < b, |a, b| a < b)
}

/// `LessEqual(x1, x2) -> y` (bool), broadcast.
pub(super) fn LessEqual(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a <= b, |a, b| a <= b)
}

/// `Greater(x1, x2) -> y` (bool), broadcast.
pub(super) fn Greater(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a > b, |a, b| a > b)
}

/// `GreaterEqual(x1, x2) -> y` (bool), broadcast.
pub(super) fn GreaterEqual(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a >= b, |a, b| a >= b)
}

/// `LogicalAnd(x1, x2) -> y` (bool), broadcast.
pub(super) fn LogicalAnd(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| Num::I((x.truthy() && y.truthy()) as i64))
}

/// `LogicalOr(x1, x2) -> y` (bool), broadcast.
pub(super) fn LogicalOr(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| Num::I((x.truthy() || y.truthy()) as i64))
}

/// `IsClose(x1, x2) -> y` (bool), attributes `rtol`, `atol`, `equal_nan`:
/// `|x1 - x2| <= atol + rtol·|x2|`, as PyTorch decides it.
pub(super) fn IsClose(call: &Call<'_>) -> Result<Written, AclError> {
    let rtol = call.attr_float("rtol", 1e-5)? as f64;
    let atol = call.attr_float("atol", 1e-8)? as f64;
    let equal_nan = call.attr_bool("equal_nan", false)?;
    binary(call, move |x, y| {
        let (a, b) = (x.f64(), y.f64());
        let close = if a.is_nan() || b.is_nan() {
            equal_nan && a.is_nan() && b.is_nan()
        } else {
            a == b || (a - b).abs() <= atol + rtol * b.abs()
        };
        Num::I(close as i64)
    })
}

/// `TensorEqual(x1, x2) -> y` (bool `[1]`): same shape and every element
/// equal.
pub(super) fn TensorEqual(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let (a, b) = (call.tensor(0)?, call.tensor(1)?);
    let equal = a.dims == b.dims && a.nums().zip(b.nums()).all(|(x, y)| x.f64() == y.f64());
    filled(call, 0, Num::I(equal as i64))
}

/// A unary elementwise operator.
pub(super) fn unary(call: &Call<'_>, f: impl Fn(Num) -> Num) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let x = call.tensor(0)?;
    let out = call.out(0);
    same_count(call.spec(0)?, out)?;
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), x.nums().map(f)).bytes,
    ])
}

/// `Neg(x) -> y`.
pub(super) fn Neg(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i.wrapping_neg()),
        Num::F(f) => Num::F(-f),
    })
}

/// `Abs(x) -> y`.
pub(super) fn Abs(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i.wrapping_abs()),
        Num::F(f) => Num::F(f.abs()),
    })
}

/// `LogicalNot(x) -> y` (bool).
pub(super) fn LogicalNot(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| Num::I(!x.truthy() as i64))
}

/// `IsFinite(x) -> y` (bool): neither infinite nor NaN (integers always).
pub(super) fn IsFinite(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(_) => Num::I(1),
        Num::F(f) => Num::I(f.is_finite() as i64),
    })
}

/// `Ceil(x) -> y`: the least integer not below `x`.
pub(super) fn Ceil(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i),
        Num::F(f) => Num::F(f.ceil()),
    })
}
