//! Sorting as torch_npu launches it: `Sort` (`torch.sort`, `argsort`) and
//! `TopKV2` (`torch.topk`), each along the last axis (torch_npu transposes
//! another axis there first), values and int32 indices; and
//! `UniqueWithCountsAndSorting` (`torch.unique`), `UniqueWithCountsExt2`
//! (`torch.unique` along a dim) and `UniqueConsecutive`
//! (`torch.unique_consecutive`), whose output lengths depend on the data.
//!
//! The order is stable (equal values keep their order, in both
//! directions) and NaN is the largest value, as PyTorch's CPU sort orders
//! them.

#![allow(non_snake_case)]

use super::call::*;
use super::float::axis;
use super::index::{order, split};

/// Each row of `x` along axis `a`: its first `k` positions in sorted order
/// (descending for `largest`), as (values, indices) tensors of `x`'s type
/// and `index`.
fn rows(x: &Tensor, a: usize, k: usize, largest: bool, index: DType) -> Result<Written, AclError> {
    let (outer, len, inner) = split(&x.dims, a);
    let mut dims = x.dims.clone();
    if let Some(d) = dims.get_mut(a) {
        *d = k;
    }
    let count = outer * k * inner;
    let mut values = vec![Num::I(0); count];
    let mut indices = vec![Num::I(0); count];
    let mut idx: Vec<usize> = Vec::with_capacity(len);
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| x.at((o * len + j) * inner + i);
            idx.clear();
            idx.extend(0..len);
            // A stable sort: equal values keep their order either way.
            idx.sort_by(|&p, &q| {
                let c = order(at(p), at(q));
                if largest { c.reverse() } else { c }
            });
            for (r, &j) in idx.iter().take(k).enumerate() {
                let to = (o * k + r) * inner + i;
                values[to] = at(j);
                indices[to] = Num::I(j as i64);
            }
        }
    }
    Ok(vec![
        Tensor::from_nums(x.dtype, dims.clone(), values).bytes,
        Tensor::from_nums(index, dims, indices).bytes,
    ])
}

/// The two outputs' checks: values of `x`'s type, indices int32 or int64,
/// both of `dims`.
fn outputs(call: &Call<'_>, x: &Tensor, dims: &[usize]) -> Result<DType, AclError> {
    let (values, indices) = (call.out(0), call.out(1));
    if values.dtype != x.dtype || !matches!(indices.dtype, DType::I32 | DType::I64) {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if values.dims != dims || indices.dims != dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(indices.dtype)
}

/// `Sort(x) -> (y, indices)`, attributes `axis` (-1), `descending`: `x`
/// sorted along the axis and where each value came from.
pub(super) fn Sort(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 2)?;
    let x = call.tensor(0)?;
    if x.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let a = axis(call.attr_int("axis", -1)?, x.dims.len())?;
    let descending = call.attr_bool("descending", false)?;
    let index = outputs(call, &x, &x.dims)?;
    let len = x.dims.get(a).copied().unwrap_or(1);
    rows(&x, a, len, descending, index)
}

/// `TopKV2(x, k) -> (values, indices)`, attributes `dim` (-1), `largest`
/// (true), `sorted` (true): the `k` largest (smallest) elements along
/// `dim`, in order; `k` a host int of at most the axis' length (100000
/// otherwise). Unsorted, they are given in the same order.
pub(super) fn TopKV2(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 2)?;
    let x = call.tensor(0)?;
    if x.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let a = axis(call.attr_int("dim", -1)?, x.dims.len())?;
    let largest = call.attr_bool("largest", true)?;
    call.attr_bool("sorted", true)?;
    let len = x.dims.get(a).copied().unwrap_or(1);
    let k = usize::try_from(call.scalar(1)?.i64())
        .ok()
        .filter(|&k| k <= len)
        .ok_or(AclError::INVALID_PARAM)?;
    let mut dims = x.dims.clone();
    match dims.get_mut(a) {
        Some(d) => *d = k,
        // A 0-dim x has one element: k is 1.
        None if k != 1 => return Err(AclError::INVALID_PARAM),
        None => {}
    }
    let index = outputs(call, &x, &dims)?;
    rows(&x, a, k, largest, index)
}

/// `UniqueWithCountsAndSorting(x) -> (y, inverse, counts)`, attributes
/// `sorted`, `return_inverse`, `return_counts`: the distinct values of
/// `x` (flattened) in ascending order (also when `sorted` is false: any
/// order is an unsorted one, and the CPU's is this one too), each
/// element's position among them (`inverse`, `x`'s shape) and how often
/// each occurs (`counts`). torch_npu allocates `y` of `x`'s element count,
/// `inverse` of `x`'s shape (`[1]` when it wants neither it nor the
/// counts) and `counts` of the element count (`[1]` without
/// `return_counts`), all int64 but `y`, and reads the real shapes back
/// from the output descriptors after the run (the operator's outputs are
/// synchronised): `y`, and `counts` when asked for, become `[distinct]`.
/// `inverse` is written whenever its buffer holds one index per element.
/// NaNs are each distinct (they equal nothing), last, as PyTorch's CPU
/// sort-based unique gives them.
pub(super) fn UniqueWithCountsAndSorting(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 3)?;
    let x = call.tensor(0)?;
    call.attr_bool("sorted", true)?;
    let want_inverse = call.attr_bool("return_inverse", false)?;
    let want_counts = call.attr_bool("return_counts", false)?;
    let (y, inverse, counts) = (call.out(0), call.out(1), call.out(2));
    let index = |d: DType| matches!(d, DType::I32 | DType::I64);
    if y.dtype != x.dtype || !index(inverse.dtype) || !index(counts.dtype) {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let n = x.numel();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&p, &q| order(x.at(p), x.at(q)));
    let mut values: Vec<Num> = Vec::new();
    let mut count: Vec<Num> = Vec::new();
    let mut group = vec![Num::I(0); n];
    for &j in &idx {
        let v = x.at(j);
        if !values.last().is_some_and(|&u| same(u, v)) {
            values.push(v);
            count.push(Num::I(0));
        }
        group[j] = Num::I(values.len() as i64 - 1);
        if let Some(Num::I(c)) = count.last_mut() {
            *c += 1;
        }
    }
    let k = values.len();
    if y.numel() < k || want_inverse && inverse.numel() != n || want_counts && counts.numel() < k {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    call.reshape(0, vec![k]);
    let inverse = if inverse.numel() == n {
        Tensor::from_nums(inverse.dtype, inverse.dims.clone(), group).bytes
    } else {
        Vec::new()
    };
    let counts = if want_counts {
        call.reshape(2, vec![k]);
        Tensor::from_nums(counts.dtype, vec![k], count).bytes
    } else {
        Vec::new()
    };
    Ok(vec![
        Tensor::from_nums(x.dtype, vec![k], values).bytes,
        inverse,
        counts,
    ])
}

/// `UniqueWithCountsExt2(x, axis) -> (y, idx, count, inverse_idx)`,
/// attributes `sorted`, `return_inverse`: the distinct slices of `x`
/// along `axis` (a host int scalar, may count from the end) in ascending
/// lexicographic order (`torch.unique(x, dim=axis)`, sorted whatever
/// `sorted` says, as the CPU sorts them), where each first occurs
/// (`idx`), how often each occurs (`count`) and which each slice is
/// (`inverse_idx`). torch_npu allocates `y` of `x`'s shape and the others
/// of the axis' length, all int64 but `y`, and reads back the shapes of
/// `y` (the distinct count on the axis), `count` and `inverse_idx`.
/// UNCONFIRMED: what the NPU writes in `idx`, which torch_npu does not
/// read; here each distinct slice's first position.
pub(super) fn UniqueWithCountsExt2(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 4)?;
    let x = call.tensor(0)?;
    call.attr_bool("sorted", true)?;
    call.attr_bool("return_inverse", false)?;
    let a = axis(call.scalar(1)?.i64(), x.dims.len())?;
    let (y, idx, count, inverse) = (call.out(0), call.out(1), call.out(2), call.out(3));
    let index = |d: DType| matches!(d, DType::I32 | DType::I64);
    if y.dtype != x.dtype || !index(idx.dtype) || !index(count.dtype) || !index(inverse.dtype) {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let (outer, len, inner) = split(&x.dims, a);
    let at = |j: usize, e: usize| x.at(((e / inner) * len + j) * inner + e % inner);
    let width = outer * inner;
    let mut slices: Vec<usize> = (0..len).collect();
    slices.sort_by(|&p, &q| {
        (0..width)
            .map(|e| order(at(p, e), at(q, e)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut firsts: Vec<usize> = Vec::new();
    let mut counts: Vec<Num> = Vec::new();
    let mut which = vec![Num::I(0); len];
    for &j in &slices {
        let fresh = firsts
            .last()
            .is_none_or(|&f| !(0..width).all(|e| same(at(f, e), at(j, e))));
        if fresh {
            firsts.push(j);
            counts.push(Num::I(0));
        }
        which[j] = Num::I(firsts.len() as i64 - 1);
        if let Some(Num::I(c)) = counts.last_mut() {
            *c += 1;
        }
    }
    let k = firsts.len();
    let mut y_dims = x.dims.clone();
    if let Some(d) = y_dims.get_mut(a) {
        *d = k;
    }
    if y.numel() < width * k || idx.numel() < k || count.numel() < k || inverse.numel() != len {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let values = (0..outer).flat_map(|o| {
        let at = &at;
        firsts
            .iter()
            .flat_map(move |&f| (0..inner).map(move |i| at(f, o * inner + i)))
    });
    let y_bytes = Tensor::from_nums(x.dtype, y_dims.clone(), values).bytes;
    call.reshape(0, y_dims);
    call.reshape(2, vec![k]);
    call.reshape(3, vec![len]);
    let first = firsts.iter().map(|&f| Num::I(f as i64));
    Ok(vec![
        y_bytes,
        Tensor::from_nums(idx.dtype, vec![k], first).bytes,
        Tensor::from_nums(count.dtype, vec![k], counts).bytes,
        Tensor::from_nums(inverse.dtype, vec![len], which).bytes,
    ])
}

/// Whether two elements are one value (NaN equals nothing, `-0` is `0`).
fn same(a: Num, b: Num) -> bool {
    match (a, b) {
        (Num::I(x), Num::I(y)) => x == y,
        _ => a.f64() == b.f64(),
    }
}

/// `UniqueConsecutive(x) -> (y, idx, count)`, attributes `return_idx`,
/// `return_counts`, `axis` (absent or 1000: the flattened input): each run
/// of equal consecutive elements (slices along `axis`) once, which run
/// each element (slice) is in, and each run's length. torch_npu allocates
/// `y` of the element count (of `x`'s shape along an axis), `idx` of
/// `x`'s shape (the axis' length), `count` of the element count (the
/// axis' length), and reads back the shapes of `y` and `count`: `y`
/// becomes `[runs]` (`x`'s shape with `runs` on the axis) and `count`
/// `[runs]`. `idx` is written when it holds one index per element
/// (slice), `count` when it holds the runs. NaNs are each distinct, as
/// PyTorch's CPU kernel compares them.
pub(super) fn UniqueConsecutive(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 3)?;
    let x = call.tensor(0)?;
    let want_idx = call.attr_bool("return_idx", false)?;
    let want_counts = call.attr_bool("return_counts", false)?;
    let a = match call.attr_int("axis", 1000)? {
        1000 => None,
        v => Some(axis(v, x.dims.len())?),
    };
    let (y, idx, count) = (call.out(0), call.out(1), call.out(2));
    let index = |d: DType| matches!(d, DType::I32 | DType::I64);
    if y.dtype != x.dtype || !index(idx.dtype) || !index(count.dtype) {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    // Slices: the whole input flattened is one axis of single elements.
    let (outer, len, inner) = match a {
        Some(a) => split(&x.dims, a),
        None => (1, x.numel(), 1),
    };
    let slice_same = |p: usize, q: usize| {
        (0..outer).all(|o| {
            (0..inner).all(|i| {
                same(
                    x.at((o * len + p) * inner + i),
                    x.at((o * len + q) * inner + i),
                )
            })
        })
    };
    let mut firsts: Vec<usize> = Vec::new();
    let mut runs: Vec<Num> = Vec::new();
    let mut which = Vec::with_capacity(len);
    for j in 0..len {
        match firsts.last() {
            Some(&f) if slice_same(f, j) => {
                if let Some(Num::I(c)) = runs.last_mut() {
                    *c += 1;
                }
            }
            _ => {
                firsts.push(j);
                runs.push(Num::I(1));
            }
        }
        which.push(Num::I(firsts.len() as i64 - 1));
    }
    let k = firsts.len();
    let y_dims = match a {
        Some(a) => {
            let mut d = x.dims.clone();
            if let Some(e) = d.get_mut(a) {
                *e = k;
            }
            d
        }
        None => vec![k],
    };
    if y.numel() < outer * k * inner
        || want_idx && idx.numel() != len
        || want_counts && count.numel() < k
    {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let values = (0..outer).flat_map(|o| {
        let x = &x;
        firsts
            .iter()
            .flat_map(move |&f| (0..inner).map(move |i| x.at((o * len + f) * inner + i)))
    });
    let y_bytes = Tensor::from_nums(x.dtype, y_dims.clone(), values).bytes;
    call.reshape(0, y_dims);
    let idx_bytes = if idx.numel() == len {
        Tensor::from_nums(idx.dtype, idx.dims.clone(), which).bytes
    } else {
        Vec::new()
    };
    let count_bytes = if count.numel() >= k {
        call.reshape(2, vec![k]);
        Tensor::from_nums(count.dtype, vec![k], runs).bytes
    } else {
        Vec::new()
    };
    Ok(vec![y_bytes, idx_bytes, count_bytes])
}

#[cfg(test)]
mod tests;
