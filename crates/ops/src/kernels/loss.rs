//! The negative log-likelihood loss and its gradient, as torch_npu
//! launches them for `nll_loss` and `cross_entropy` (which is
//! `LogSoftmaxV2` and then these): `NLLLoss(x, target, weight) -> (y,
//! total_weight)` and `NLLLossGrad(x, grad_output, target, weight,
//! total_weight) -> grad_input`, attributes `reduction` (`"none"`,
//! `"mean"`, `"sum"`) and `ignore_index`. x is `[N, C]` (or `[C]`), the
//! target N class indices (torch_npu casts them to int32), the weight C.
//!
//! A target outside `0..C` that is not `ignore_index` is
//! `ACL_ERROR_INVALID_PARAM` (100000). The mean divides by the total
//! weight of the targets counted (0/0 is NaN, as on the CPU). Computed in
//! fp32 for float32, float16 and bfloat16 (rounded once), fp64 for
//! float64.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reduction {
    None,
    Mean,
    Sum,
}

/// What both operators read: `[N, C]`, the targets (`None` where
/// ignored) and the weights.
struct Problem<T> {
    n: usize,
    c: usize,
    targets: Vec<Option<usize>>,
    weight: Vec<T>,
    reduction: Reduction,
}

fn problem<T: Real>(
    call: &Call<'_>,
    x: &Tensor,
    target: usize,
    weight: usize,
) -> Result<Problem<T>, AclError> {
    let reduction = match call.attr_string("reduction", "mean")? {
        "none" => Reduction::None,
        "mean" => Reduction::Mean,
        "sum" => Reduction::Sum,
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let ignore = call.attr_int("ignore_index", -100)?;
    let (n, c) = match x.dims.as_slice() {
        [n, c] => (*n, *c),
        [c] => (1, *c),
        _ => return Err(AclError::OP_INPUT_NOT_MATCH),
    };
    let t = call.tensor(target)?;
    if t.dtype.is_float() || t.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if t.numel() != n {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let targets = t
        .ints()
        .into_iter()
        .map(|k| {
            if k == ignore {
                Ok(None)
            } else {
                usize::try_from(k)
                    .ok()
                    .filter(|&k| k < c)
                    .map(Some)
                    .ok_or(AclError::INVALID_PARAM)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let weight = values::<T>(&call.tensor(weight)?)?;
    if weight.len() != c {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    Ok(Problem {
        n,
        c,
        targets,
        weight,
        reduction,
    })
}

fn nll_loss<T: Real>(call: &Call<'_>, x: &Tensor) -> Result<Written, AclError> {
    let p = problem::<T>(call, x, 1, 2)?;
    let xv = values::<T>(x)?;
    let mut losses = vec![T::ZERO; p.n];
    let mut total = T::ZERO;
    for (i, t) in p.targets.iter().enumerate() {
        if let Some(k) = *t {
            losses[i] = -p.weight[k] * xv[i * p.c + k];
            total += p.weight[k];
        }
    }
    let y = match p.reduction {
        Reduction::None => losses,
        Reduction::Sum => vec![losses.iter().fold(T::ZERO, |a, &l| a + l)],
        Reduction::Mean => vec![losses.iter().fold(T::ZERO, |a, &l| a + l) / total],
    };
    if call.out(0).numel() != y.len() || call.out(1).numel() != 1 {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![
        bytes(call.out(0).dtype, &y)?,
        bytes(call.out(1).dtype, &[total])?,
    ])
}

/// `NLLLoss(x, target, weight) -> (y, total_weight)`: `−weight[t]·x[i, t]`
/// per row (`reduction` `"none"`: `[N]`), their sum (`"sum"`) or their
/// sum over the total weight (`"mean"`), and the total weight of the
/// targets not ignored.
pub(super) fn NLLLoss(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 2)?;
    let x = call.tensor(0)?;
    by_type(
        x.dtype,
        || nll_loss::<f32>(call, &x),
        || nll_loss::<f64>(call, &x),
    )
}

fn nll_loss_grad<T: Real>(call: &Call<'_>, x: &Tensor) -> Result<Written, AclError> {
    let p = problem::<T>(call, x, 2, 3)?;
    let grad = values::<T>(&call.tensor(1)?)?;
    let total = values::<T>(&call.tensor(4)?)?;
    let want = if p.reduction == Reduction::None {
        p.n
    } else {
        1
    };
    if grad.len() != want || total.len() != 1 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.out(0).numel() != x.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let mut dx = vec![T::ZERO; x.numel()];
    for (i, t) in p.targets.iter().enumerate() {
        let Some(k) = *t else { continue };
        let g = match p.reduction {
            Reduction::None => grad[i],
            Reduction::Sum => grad[0],
            Reduction::Mean => grad[0] / total[0],
        };
        dx[i * p.c + k] = -p.weight[k] * g;
    }
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `NLLLossGrad(x, y_grad, target, weight, total_weight) -> x_grad`:
/// `−weight[t]` times the loss's gradient (divided by the total weight for
/// `"mean"`) at each row's target, 0 elsewhere.
pub(super) fn NLLLossGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(5, 1)?;
    let x = call.tensor(0)?;
    by_type(
        x.dtype,
        || nll_loss_grad::<f32>(call, &x),
        || nll_loss_grad::<f64>(call, &x),
    )
}

#[cfg(test)]
mod tests;
