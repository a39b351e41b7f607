//! Reductions and scans beyond sums: `ArgMaxWithValue`/`ArgMinWithValue`
//! (`torch.max(x, dim)`, `torch.min(x, dim)`), `ReduceProd`,
//! `ReduceLogSumExp`, `ReduceMeanD`, `ReduceStdWithMean` (`std`),
//! `ReduceStdV2Update` (`var`) and `Cumprod`, as torch_npu launches them.
//!
//! Floats are computed in f64 and each output rounded once to its type
//! (the running products of `Cumprod` in the working type, as `Cumsum`'s
//! sums: f32 for the half types); integers in i64, wrapping. NaN wins
//! `max` and `min`, as in PyTorch.

#![allow(non_snake_case)]

use super::call::*;
use super::float::axis;
use super::index::split;

/// The reduced axes of a tensor of `dims` from a list (negative from the
/// end, repeats allowed; empty: every axis): per axis whether it is
/// reduced, or 100023 for an axis outside the rank.
fn reduced(dims: &[usize], list: &[i64]) -> Result<Vec<bool>, AclError> {
    let mut axes = vec![list.is_empty(); dims.len()];
    for &a in list {
        let a = axis(a, dims.len())?;
        if let Some(r) = axes.get_mut(a) {
            *r = true;
        }
    }
    Ok(axes)
}

/// The groups of a reduction.
struct Groups {
    /// The kept shape (reduced axes as 1).
    kept: Vec<usize>,
    /// The shape without the reduced axes.
    dropped: Vec<usize>,
    /// For each element (row-major), its group.
    map: Vec<usize>,
}

/// The groups of a reduction of a tensor of `dims` over `axes`.
fn groups(dims: &[usize], axes: &[bool]) -> Result<Groups, AclError> {
    Tensor::numel_of(dims)?;
    let kept: Vec<usize> = dims
        .iter()
        .zip(axes)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let dropped: Vec<usize> = dims
        .iter()
        .zip(axes)
        .filter(|(_, r)| !**r)
        .map(|(&d, _)| d)
        .collect();
    let map = super::shape::broadcast_index(&kept, dims).collect();
    Ok(Groups { kept, dropped, map })
}

/// The output's shape when it must be `kept` (keep_dims) or `dropped`.
fn fits(out: &Spec, kept: &[usize], dropped: &[usize], keep: bool) -> Result<(), AclError> {
    let want = if keep { kept } else { dropped };
    if out.dims == want || Tensor::numel_of(want)? == out.numel() {
        Ok(())
    } else {
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    }
}

/// `ArgMaxWithValue`/`ArgMinWithValue`: `better(candidate, best)` says
/// whether an element replaces the best so far (the first of equal ones
/// is kept).
fn arg_with_value(call: &Call<'_>, better: fn(Num, Num) -> bool) -> Result<Written, AclError> {
    call.expect(1, 2)?;
    let x = call.tensor(0)?;
    let (ispec, vspec) = (call.out(0), call.out(1));
    if !matches!(ispec.dtype, DType::I32 | DType::I64) || vspec.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if x.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let a = axis(call.attr_int("dimension", 0)?, x.dims.len())?;
    let keep = call.attr_bool("keep_dims", false)?;
    if x.numel() == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let mut axes = vec![false; x.dims.len()];
    if let Some(r) = axes.get_mut(a) {
        *r = true;
    }
    let g = groups(&x.dims, &axes)?;
    fits(ispec, &g.kept, &g.dropped, keep)?;
    fits(vspec, &g.kept, &g.dropped, keep)?;
    let (outer, len, inner) = split(&x.dims, a);
    let mut idx = Vec::with_capacity(outer * inner);
    let mut val = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| x.at((o * len + k) * inner + i);
            let mut best = 0;
            for k in 1..len {
                if better(at(k), at(best)) {
                    best = k;
                }
            }
            idx.push(Num::I(best as i64));
            val.push(at(best));
        }
    }
    Ok(vec![
        Tensor::from_nums(ispec.dtype, ispec.dims.clone(), idx).bytes,
        Tensor::from_nums(vspec.dtype, vspec.dims.clone(), val).bytes,
    ])
}

/// Whether `a` is NaN and `b` is not.
fn nan_over(a: Num, b: Num) -> bool {
    a.f64().is_nan() && !b.f64().is_nan()
}

/// `ArgMaxWithValue(x) -> (indices, values)`, attributes `dimension`,
/// `keep_dims`: the index (int32/int64) and value of the largest element
/// along `dimension`, the first of equal ones; a NaN is the largest (the
/// first NaN), as PyTorch's `max(x, dim)`.
pub(super) fn ArgMaxWithValue(call: &Call<'_>) -> Result<Written, AclError> {
    arg_with_value(call, |c, b| match (c, b) {
        (Num::I(x), Num::I(y)) => x > y,
        _ => nan_over(c, b) || (!b.f64().is_nan() && c.f64() > b.f64()),
    })
}

/// `ArgMinWithValue(x) -> (indices, values)`: as [`ArgMaxWithValue`] for
/// the smallest element (a NaN still wins, as PyTorch's `min(x, dim)`).
pub(super) fn ArgMinWithValue(call: &Call<'_>) -> Result<Written, AclError> {
    arg_with_value(call, |c, b| match (c, b) {
        (Num::I(x), Num::I(y)) => x < y,
        _ => nan_over(c, b) || (!b.f64().is_nan() && c.f64() < b.f64()),
    })
}

/// A reduction of `x` over `list`'s axes into the output: `f` of each
/// group's elements (in order) and its count.
fn reduce_with(
    call: &Call<'_>,
    x: &Tensor,
    list: &[i64],
    keep: bool,
    f: impl Fn(&[Num], usize) -> Num,
) -> Result<Written, AclError> {
    let out = call.out(0);
    let axes = reduced(&x.dims, list)?;
    let g = groups(&x.dims, &axes)?;
    fits(out, &g.kept, &g.dropped, keep)?;
    let count = Tensor::numel_of(&g.kept)?;
    let mut members: Vec<Vec<Num>> = vec![Vec::new(); count];
    for (i, &g) in g.map.iter().enumerate() {
        members[g].push(x.at(i));
    }
    let per = x.numel() / count.max(1);
    let y = members.iter().map(|m| f(m, per));
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), y).bytes,
    ])
}

/// `x`, of the output's type, for a reduction of two inputs (`x`, axes).
fn reduction_input(call: &Call<'_>, inputs: usize) -> Result<Tensor, AclError> {
    call.expect(inputs, 1)?;
    let x = call.tensor(0)?;
    if x.dtype != call.out(0).dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    Ok(x)
}

/// `ReduceProd(x, axes) -> y`, attribute `keep_dims`: the product over
/// `axes` (host ints; empty: all), floats in f64, integers wrapping.
pub(super) fn ReduceProd(call: &Call<'_>) -> Result<Written, AclError> {
    let x = reduction_input(call, 2)?;
    if x.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let keep = call.attr_bool("keep_dims", false)?;
    let floats = x.dtype.is_float();
    reduce_with(call, &x, &call.ints(1)?, keep, |m, _| {
        if floats {
            Num::F(m.iter().map(|v| v.f64()).product())
        } else {
            Num::I(m.iter().fold(1i64, |p, v| p.wrapping_mul(v.i64())))
        }
    })
}

/// `ReduceLogSumExp(x, axes) -> y`, attribute `keep_dims`:
/// `ln(Σ exp(x))` over `axes`, formed around each group's maximum (an
/// infinite maximum is the result; float types).
pub(super) fn ReduceLogSumExp(call: &Call<'_>) -> Result<Written, AclError> {
    let x = reduction_input(call, 2)?;
    if !x.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let keep = call.attr_bool("keep_dims", false)?;
    reduce_with(call, &x, &call.ints(1)?, keep, |m, _| {
        let top = m.iter().map(|v| v.f64()).fold(f64::NEG_INFINITY, f64::max);
        if m.iter().any(|v| v.f64().is_nan()) {
            return Num::F(f64::NAN);
        }
        if top.is_infinite() {
            return Num::F(top);
        }
        let s: f64 = m.iter().map(|v| (v.f64() - top).exp()).sum();
        Num::F(top + s.ln())
    })
}

/// An attribute of ints (`ListInt`, or one `Int`), empty when absent.
fn int_list(call: &Call<'_>, name: &str) -> Result<Vec<i64>, AclError> {
    match call.attr(name) {
        None => Ok(Vec::new()),
        Some(AttrValue::ListInt(v)) => Ok(v.clone()),
        Some(AttrValue::Int(v)) => Ok(vec![*v]),
        Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
    }
}

/// `ReduceMeanD(x) -> y`, attributes `axes` (empty: all), `keep_dims`: the
/// mean over `axes`, in f64, rounded once (float types).
pub(super) fn ReduceMeanD(call: &Call<'_>) -> Result<Written, AclError> {
    let x = reduction_input(call, 1)?;
    if !x.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let keep = call.attr_bool("keep_dims", false)?;
    reduce_with(call, &x, &int_list(call, "axes")?, keep, |m, n| {
        Num::F(m.iter().map(|v| v.f64()).sum::<f64>() / n as f64)
    })
}

/// The variance (or, `std`, its root) of `x` about `mean` (broadcast to
/// `x`) over the axes of attribute `dim`: `Σ (x - mean)² / max(0, n -
/// c)`, `c` the attribute `correction` when `unbiased`, else 0.
fn spread(call: &Call<'_>, std: bool) -> Result<Written, AclError> {
    let x = reduction_input(call, 2)?;
    let mean = call.tensor(1)?;
    if !x.dtype.is_float() || mean.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if super::shape::broadcast(&x.dims, &mean.dims)? != x.dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let unbiased = call.attr_bool("unbiased", true)?;
    let correction = if unbiased {
        call.attr_int("correction", 1)?
    } else {
        0
    };
    let keep = call.attr_bool("keepdim", false)?;
    let centred = Tensor::from_nums(
        DType::F64,
        x.dims.clone(),
        super::shape::broadcast_index(&mean.dims, &x.dims)
            .enumerate()
            .map(|(i, m)| Num::F(x.at(i).f64() - mean.at(m).f64())),
    );
    reduce_with(call, &centred, &int_list(call, "dim")?, keep, |m, n| {
        let divisor = (n as f64 - correction as f64).max(0.0);
        let v = m.iter().map(|d| d.f64() * d.f64()).sum::<f64>() / divisor;
        Num::F(if std { v.sqrt() } else { v })
    })
}

/// `ReduceStdWithMean(x, mean) -> y`, attributes `dim`, `unbiased`,
/// `keepdim`, `correction`: the standard deviation over `dim` about
/// `mean` (`x`'s shape; `torch.std`).
pub(super) fn ReduceStdWithMean(call: &Call<'_>) -> Result<Written, AclError> {
    spread(call, true)
}

/// `ReduceStdV2Update(x, mean) -> y`, attributes `dim`, `if_std`,
/// `unbiased`, `keepdim`, `correction`: the variance over `dim` about
/// `mean` (its root with `if_std`; `torch.var`).
pub(super) fn ReduceStdV2Update(call: &Call<'_>) -> Result<Written, AclError> {
    let std = call.attr_bool("if_std", false)?;
    spread(call, std)
}

/// `Cumprod(x, axis) -> y`, attributes `exclusive`, `reverse`: the running
/// products along `axis` (a host int), from the end with `reverse`, each
/// without its own element with `exclusive`. Floats multiply in the
/// working type (f32 for the half types), integers in i64.
pub(super) fn Cumprod(call: &Call<'_>) -> Result<Written, AclError> {
    let x = reduction_input(call, 2)?;
    let dtype = x.dtype;
    if dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if call.spec(1)?.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let a = axis(call.scalar(1)?.i64(), x.dims.len())?;
    if call.out(0).numel() != x.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let exclusive = call.attr_bool("exclusive", false)?;
    let reverse = call.attr_bool("reverse", false)?;
    let (outer, len, inner) = split(&x.dims, a);
    let narrow = matches!(dtype, DType::F32 | DType::F16 | DType::Bf16);
    let mut y = vec![Num::I(0); x.numel()];
    for o in 0..outer {
        for i in 0..inner {
            let (mut fp, mut ip) = (1f64, 1i64);
            for step in 0..len {
                let k = if reverse { len - 1 - step } else { step };
                let at = (o * len + k) * inner + i;
                let before = if dtype.is_float() {
                    Num::F(fp)
                } else {
                    Num::I(ip)
                };
                let v = x.at(at);
                fp *= v.f64();
                if narrow {
                    fp = fp as f32 as f64;
                }
                ip = ip.wrapping_mul(v.i64());
                let now = if dtype.is_float() {
                    Num::F(fp)
                } else {
                    Num::I(ip)
                };
                y[at] = if exclusive { before } else { now };
            }
        }
    }
    Ok(vec![Tensor::from_nums(dtype, x.dims.clone(), y).bytes])
}

/// `ArgMin(x, dimension) -> y` (int32 or int64), attribute `keep_dims`:
/// the index of the smallest element along `dimension` (a host int; the
/// first of equal ones; a NaN wins, the first NaN), as PyTorch's
/// `argmin`.
pub(super) fn ArgMin(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let x = call.tensor(0)?;
    let out = call.out(0);
    if !matches!(out.dtype, DType::I32 | DType::I64) || x.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if call.spec(1)?.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let a = axis(call.scalar(1)?.i64(), x.dims.len())?;
    let keep = call.attr_bool("keep_dims", false)?;
    if x.numel() == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let mut axes = vec![false; x.dims.len()];
    if let Some(r) = axes.get_mut(a) {
        *r = true;
    }
    let g = groups(&x.dims, &axes)?;
    fits(out, &g.kept, &g.dropped, keep)?;
    let (outer, len, inner) = split(&x.dims, a);
    let mut idx = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| x.at((o * len + k) * inner + i);
            let mut best = 0;
            for k in 1..len {
                if smaller(at(k), at(best)) {
                    best = k;
                }
            }
            idx.push(Num::I(best as i64));
        }
    }
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), idx).bytes,
    ])
}

/// Whether `c` replaces `b` as the smallest (a NaN wins over a number).
fn smaller(c: Num, b: Num) -> bool {
    match (c, b) {
        (Num::I(x), Num::I(y)) => x < y,
        _ => nan_over(c, b) || (!b.f64().is_nan() && c.f64() < b.f64()),
    }
}

/// `Cummax(x) -> (y, indices)`, attribute `dim`: the running maximum along
/// `dim` and the index it was taken at (int32/int64), the later of equal
/// elements, a NaN kept from where it appears, as PyTorch's `cummax`.
pub(super) fn Cummax(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 2)?;
    let x = call.tensor(0)?;
    let (vspec, ispec) = (call.out(0), call.out(1));
    if vspec.dtype != x.dtype || !matches!(ispec.dtype, DType::I32 | DType::I64) {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if x.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let a = axis(call.attr_int("dim", 0)?, x.dims.len())?;
    if vspec.numel() != x.numel() || ispec.numel() != x.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (outer, len, inner) = split(&x.dims, a);
    let mut vals = vec![Num::I(0); x.numel()];
    let mut idx = vec![Num::I(0); x.numel()];
    for o in 0..outer {
        for i in 0..inner {
            let mut best: Option<(Num, usize)> = None;
            for k in 0..len {
                let at = (o * len + k) * inner + i;
                let v = x.at(at);
                let take = match best {
                    None => true,
                    Some((b, _)) if b.f64().is_nan() => v.f64().is_nan(),
                    Some((b, _)) => match (v, b) {
                        (Num::I(p), Num::I(q)) => p >= q,
                        _ => v.f64().is_nan() || v.f64() >= b.f64(),
                    },
                };
                if take {
                    best = Some((v, k));
                }
                if let Some((b, bk)) = best {
                    vals[at] = b;
                    idx[at] = Num::I(bk as i64);
                }
            }
        }
    }
    Ok(vec![
        Tensor::from_nums(vspec.dtype, vspec.dims.clone(), vals).bytes,
        Tensor::from_nums(ispec.dtype, ispec.dims.clone(), idx).bytes,
    ])
}

#[cfg(test)]
mod tests;
