//! The element-wise losses and their gradients, as torch_npu launches
//! them: `MseLoss`, `SigmoidCrossEntropyWithLogitsV2`,
//! `BinaryCrossEntropy`, `LpLoss` (p 1: `l1_loss`), `SmoothL1LossV2`,
//! `SoftMarginLoss`, `KLDiv`, and `MseLossGrad`,
//! `SigmoidCrossEntropyWithLogitsGradV2`, `BinaryCrossEntropyGrad`,
//! `L1LossGrad`, `SmoothL1LossGradV2`, `SoftMarginLossGrad`,
//! `KlDivLossGrad`.
//!
//! Each forward operator computes one loss per element of x (the other
//! inputs broadcast to x's shape) and reduces them by its `reduction`
//! attribute: `"none"` (x's shape), `"sum"` or `"mean"` (a scalar; `KLDiv`
//! names its mean `"batchmean"`, the sum over x's first dim, which
//! torch_npu then divides by the rest). Each gradient operator multiplies
//! the loss's derivative by the incoming gradient (one element, or
//! broadcast to x's shape) and, for a mean, divides by the count. Computed
//! in fp32 for float32, float16 and bfloat16 (rounded once), fp64 for
//! float64; every input must be of x's type and the output too.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};
use super::shape::{broadcast, broadcast_index};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reduction {
    None,
    Mean,
    Sum,
    /// `KLDiv`'s: the sum over the first dim.
    BatchMean,
}

fn reduction(call: &Call<'_>, batch_mean: bool) -> Result<Reduction, AclError> {
    Ok(match call.attr_string("reduction", "mean")? {
        "none" => Reduction::None,
        "mean" => Reduction::Mean,
        "sum" => Reduction::Sum,
        "batchmean" if batch_mean => Reduction::BatchMean,
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    })
}

/// What a call reads: x's shape and, per input, its elements broadcast to
/// that shape, in the working type.
struct Operands<T> {
    dims: Vec<usize>,
    columns: Vec<Vec<T>>,
}

/// Inputs `order` (the first is x, which decides the shape unless
/// `shape_of` names another), each broadcast to x's shape and of its
/// type; input `loose` (the incoming gradient of a reduced loss) may also
/// hold one element.
fn operands<T: Real>(
    call: &Call<'_>,
    order: &[usize],
    shape_of: usize,
    loose: Option<usize>,
) -> Result<Operands<T>, AclError> {
    let x = call.spec(shape_of)?.clone();
    let mut columns = Vec::with_capacity(order.len());
    for &i in order {
        let t = call.tensor(i)?;
        if t.dtype != x.dtype {
            return Err(AclError::OP_TYPE_NOT_MATCH);
        }
        let v = values::<T>(&t)?;
        if t.dims == x.dims {
            columns.push(v);
        } else if loose == Some(i) && v.len() == 1 {
            columns.push(vec![v[0]; x.numel()]);
        } else if broadcast(&x.dims, &t.dims)? == x.dims {
            columns.push(broadcast_index(&t.dims, &x.dims).map(|k| v[k]).collect());
        } else {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
    }
    Ok(Operands {
        dims: x.dims,
        columns,
    })
}

/// The divisor of a mean over `dims`.
fn count(r: Reduction, dims: &[usize]) -> f64 {
    match r {
        Reduction::Mean => dims.iter().product::<usize>() as f64,
        Reduction::BatchMean => dims.first().copied().unwrap_or(1) as f64,
        Reduction::None | Reduction::Sum => 1.0,
    }
}

/// A forward loss of `arity` inputs: `f` of each element's operands,
/// reduced.
fn forward<T: Real>(
    call: &Call<'_>,
    arity: usize,
    batch_mean: bool,
    f: impl Fn(&[T]) -> T,
) -> Result<Written, AclError> {
    call.expect(arity, 1)?;
    let r = reduction(call, batch_mean)?;
    let order: Vec<usize> = (0..arity).collect();
    let ops = operands::<T>(call, &order, 0, None)?;
    let n = ops.columns[0].len();
    let mut args = vec![T::ZERO; arity];
    let losses: Vec<T> = (0..n)
        .map(|i| {
            for (a, c) in args.iter_mut().zip(&ops.columns) {
                *a = c[i];
            }
            f(&args)
        })
        .collect();
    let out = call.out(0);
    if out.dtype != call.spec(0)?.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let y = if r == Reduction::None {
        losses
    } else {
        let sum = losses.iter().fold(T::ZERO, |a, &l| a + l);
        vec![sum / T::of(count(r, &ops.dims))]
    };
    if out.numel() != y.len() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![bytes(out.dtype, &y)?])
}

/// A loss's gradient: `order` lists the inputs `f` reads (the incoming
/// gradient at `grad`), x the one at `x`; `f` of each element's operands
/// (the gradient among them, at its place in `order`), divided by the
/// count for a mean.
fn backward<T: Real>(
    call: &Call<'_>,
    order: &[usize],
    x: usize,
    grad: usize,
    batch_mean: bool,
    f: impl Fn(&[T]) -> T,
) -> Result<Written, AclError> {
    call.expect(order.len(), 1)?;
    let r = reduction(call, batch_mean)?;
    let loose = (r != Reduction::None).then_some(grad);
    let ops = operands::<T>(call, order, x, loose)?;
    let out = call.out(0);
    if out.dtype != call.spec(x)?.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if out.numel() != ops.columns[0].len() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let scale = T::of(1.0 / count(r, &ops.dims));
    let mut args = vec![T::ZERO; order.len()];
    let dx: Vec<T> = (0..out.numel())
        .map(|i| {
            for (a, c) in args.iter_mut().zip(&ops.columns) {
                *a = c[i];
            }
            f(&args) * scale
        })
        .collect();
    Ok(vec![bytes(out.dtype, &dx)?])
}

fn abs<T: Real>(v: T) -> T {
    if v < T::ZERO { -v } else { v }
}

fn sign<T: Real>(v: T) -> T {
    if v > T::ZERO {
        T::ONE
    } else if v < T::ZERO {
        -T::ONE
    } else {
        T::ZERO
    }
}

fn sigmoid<T: Real>(v: T) -> T {
    T::ONE / (T::ONE + (-v).exp())
}

/// Runs `narrow` or `wide` by input 0's type.
fn typed(
    call: &Call<'_>,
    narrow: impl FnOnce() -> Result<Written, AclError>,
    wide: impl FnOnce() -> Result<Written, AclError>,
) -> Result<Written, AclError> {
    by_type(call.spec(0)?.dtype, narrow, wide)
}

mod ops;
pub(super) use ops::*;

#[cfg(test)]
mod tests;
