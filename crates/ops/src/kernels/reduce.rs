//! Reductions over axes.

#![allow(non_snake_case)]

use super::call::*;
use super::elementwise::arith;
use super::shape::broadcast_index;

/// A reduction over the axes of input 1 (all of them when empty; negative
/// ones count from the end), attribute `keep_dims`.
pub(super) fn reduce(
    call: &Call<'_>,
    init: Num,
    f: impl Fn(Num, Num) -> Num,
    finish: impl Fn(Num, usize) -> Num,
) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let x = call.tensor(0)?;
    let rank = x.dims.len() as i64;
    let mut axes = vec![false; x.dims.len()];
    let listed = call.ints(1)?;
    for a in &listed {
        let a = if *a < 0 { a + rank } else { *a };
        let slot = usize::try_from(a)
            .ok()
            .and_then(|a| axes.get_mut(a))
            .ok_or(AclError::INVALID_PARAM)?;
        *slot = true;
    }
    if listed.is_empty() {
        axes.iter_mut().for_each(|a| *a = true);
    }
    let kept: Vec<usize> = x
        .dims
        .iter()
        .zip(&axes)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let out = call.out(0);
    let count = Tensor::numel_of(&kept)?;
    if count != out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let floats = x.dtype.is_float();
    let start = if floats { Num::F(init.f64()) } else { init };
    let mut acc = vec![start; count];
    let per = x.numel() / count.max(1);
    for (i, o) in broadcast_index(&kept, &x.dims).enumerate() {
        let v = x.at(i);
        let v = if floats { Num::F(v.f64()) } else { v };
        acc[o] = f(acc[o], v);
    }
    let nums = acc.into_iter().map(|a| finish(a, per));
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}

/// `ReduceSum(x, axes) -> y`.
pub(super) fn ReduceSum(call: &Call<'_>) -> Result<Written, AclError> {
    reduce(
        call,
        Num::I(0),
        |a, v| arith(a, v, i64::wrapping_add, |a, b| a + b),
        |a, _| a,
    )
}

/// `ReduceMean(x, axes) -> y`.
pub(super) fn ReduceMean(call: &Call<'_>) -> Result<Written, AclError> {
    reduce(
        call,
        Num::F(0.0),
        |a, v| Num::F(a.f64() + v.f64()),
        |a, n| Num::F(a.f64() / n as f64),
    )
}

/// The largest or smallest element over the axes (`pick` of two): integers
/// stay integers, NaN wins. The reduction starts from `from` (an infinity)
/// and takes the first element as it is.
pub(super) fn extreme(
    call: &Call<'_>,
    from: f64,
    pick: fn(i64, i64) -> i64,
    fpick: fn(f64, f64) -> f64,
) -> Result<Written, AclError> {
    reduce(
        call,
        Num::F(from),
        move |a, v| match (a, v) {
            (Num::I(x), Num::I(y)) => Num::I(pick(x, y)),
            (Num::F(x), Num::I(y)) if x == from => Num::I(y),
            _ if v.f64().is_nan() || a.f64().is_nan() => Num::F(f64::NAN),
            _ => Num::F(fpick(a.f64(), v.f64())),
        },
        |a, _| a,
    )
}

/// `ReduceMax(x, axes) -> y`.
pub(super) fn ReduceMax(call: &Call<'_>) -> Result<Written, AclError> {
    extreme(call, f64::NEG_INFINITY, i64::max, f64::max)
}

/// `ReduceMin(x, axes) -> y`.
pub(super) fn ReduceMin(call: &Call<'_>) -> Result<Written, AclError> {
    extreme(call, f64::INFINITY, i64::min, f64::min)
}

/// `ReduceAll(x, axes) -> y` (bool).
pub(super) fn ReduceAll(call: &Call<'_>) -> Result<Written, AclError> {
    reduce(
        call,
        Num::I(1),
        |a, v| Num::I((a.truthy() && v.truthy()) as i64),
        |a, _| a,
    )
}

/// `ReduceAny(x, axes) -> y` (bool).
pub(super) fn ReduceAny(call: &Call<'_>) -> Result<Written, AclError> {
    reduce(
        call,
        Num::I(0),
        |a, v| Num::I((a.truthy() || v.truthy()) as i64),
        |a, _| a,
    )
}
