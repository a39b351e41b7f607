//! Selections and scans of a transformer's step: `Select` (`torch.where`),
//! `MaskedFill`, `Triu`/`Tril` (a causal mask), `ArgMaxV2` and `Cumsum`,
//! as torch_npu launches them.
//!
//! Values are copied (selections) or summed in the working type (floats:
//! fp32 for the half types, fp64 for float64, rounded once; integers in
//! 64 bits, wrapping); NaN counts as the largest value, as PyTorch's CPU
//! kernels count it.

#![allow(non_snake_case)]

use std::cmp::Ordering;

use super::call::*;
use super::float::{axis, out_type};
use super::shape::{broadcast, broadcast_index};

/// `a` against `b`, NaN above every number (and equal to NaN).
pub(super) fn order(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::I(x), Num::I(y)) => x.cmp(&y),
        _ => {
            let (x, y) = (a.f64(), b.f64());
            match (x.is_nan(), y.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
            }
        }
    }
}

/// The output's shape when it must be `want` (the same count passes:
/// the caller may have flattened it).
fn fits(out: &Spec, want: &[usize]) -> Result<(), AclError> {
    if out.dims == want || Tensor::numel_of(want)? == out.numel() {
        Ok(())
    } else {
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    }
}

/// `Select(condition, x1, x2) -> y`: `x1` where `condition` is true (not
/// zero), else `x2`, the three broadcast to one shape; `x1`, `x2` and `y`
/// of one type, `condition` of any (torch_npu passes bool or uint8).
pub(super) fn Select(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 3)?;
    let (c, a, b) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    if a.dtype != dtype || b.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let shape = broadcast(&broadcast(&c.dims, &a.dims)?, &b.dims)?;
    fits(call.out(0), &shape)?;
    let size = dtype.size();
    let mut y = Vec::with_capacity(Tensor::numel_of(&shape)? * size);
    let picks = broadcast_index(&c.dims, &shape)
        .zip(broadcast_index(&a.dims, &shape))
        .zip(broadcast_index(&b.dims, &shape));
    for ((ci, ai), bi) in picks {
        let (from, at) = if c.at(ci).truthy() {
            (&a, ai)
        } else {
            (&b, bi)
        };
        y.extend_from_slice(&from.bytes[at * size..(at + 1) * size]);
    }
    Ok(vec![y])
}

/// `MaskedFill(x, mask, value) -> y`: `x` with `value` (one element,
/// converted to `x`'s type) where `mask` (bool, broadcast to `x`'s shape)
/// is true.
pub(super) fn MaskedFill(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 3)?;
    let (x, mask) = (call.tensor(0)?, call.tensor(1)?);
    if x.dtype != dtype || mask.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if broadcast(&x.dims, &mask.dims)? != x.dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    fits(call.out(0), &x.dims)?;
    let value = dtype.bytes_of(call.scalar(2)?);
    let size = dtype.size();
    let mut y = x.bytes.clone();
    for (i, m) in broadcast_index(&mask.dims, &x.dims).enumerate() {
        if mask.at(m).truthy() {
            y[i * size..(i + 1) * size].copy_from_slice(&value);
        }
    }
    Ok(vec![y])
}

/// `Triu`/`Tril`: the elements of each matrix (the last two axes) kept
/// where `keep(row, column)`, else 0.
fn triangle(call: &Call<'_>, keep: impl Fn(i64, i64) -> bool) -> Result<Written, AclError> {
    let dtype = out_type(call, 1)?;
    let x = call.tensor(0)?;
    if x.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let [.., rows, cols] = x.dims[..] else {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    };
    fits(call.out(0), &x.dims)?;
    let size = dtype.size();
    let mut y = x.bytes.clone();
    for (i, e) in y.chunks_exact_mut(size).enumerate() {
        let (r, c) = ((i / cols.max(1)) % rows.max(1), i % cols.max(1));
        if !keep(r as i64, c as i64) {
            e.fill(0);
        }
    }
    Ok(vec![y])
}

/// `Triu(x) -> y`, attribute `diagonal`: each matrix's elements on and
/// above the `diagonal`-th diagonal (column - row >= diagonal), the rest
/// 0; `x` of two axes or more (100021 otherwise).
pub(super) fn Triu(call: &Call<'_>) -> Result<Written, AclError> {
    let d = call.attr_int("diagonal", 0)?;
    triangle(call, |r, c| c - r >= d)
}

/// `Tril(x) -> y`, attribute `diagonal`: each matrix's elements on and
/// below the `diagonal`-th diagonal (column - row <= diagonal).
pub(super) fn Tril(call: &Call<'_>) -> Result<Written, AclError> {
    let d = call.attr_int("diagonal", 0)?;
    triangle(call, |r, c| c - r <= d)
}

/// `ReverseV2(x, axis) -> y`: `x` with the order of each axis `axis`
/// lists (int64, negative from the end; 100023 outside the rank) reversed
/// (`torch.flip`, and cumsum's backward).
pub(super) fn ReverseV2(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    let x = call.tensor(0)?;
    if x.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let mut flip = vec![false; x.dims.len()];
    for a in call.ints(1)? {
        if let Some(f) = flip.get_mut(axis(a, x.dims.len())?) {
            *f = true;
        }
    }
    fits(call.out(0), &x.dims)?;
    let size = dtype.size();
    let mut y = Vec::with_capacity(x.bytes.len());
    for i in 0..x.numel() {
        // The source of element i: its coordinates, the flipped ones
        // mirrored.
        let (mut rest, mut from, mut stride) = (i, 0, 1);
        for (k, &d) in x.dims.iter().enumerate().rev() {
            let c = rest % d.max(1);
            rest /= d.max(1);
            from += if flip[k] { d - 1 - c } else { c } * stride;
            stride *= d;
        }
        y.extend_from_slice(&x.bytes[from * size..(from + 1) * size]);
    }
    Ok(vec![y])
}

/// `ScatterElements(data, indices, updates) -> y`, attributes `axis`,
/// `reduction` (`none`, `add`, `mul`): `data` with, for each position of
/// `indices`, the element it names along `axis` (its other coordinates
/// the position's) set to (or increased, multiplied by) the element of
/// `updates` at that position, as PyTorch's `scatter` does (the backward
/// of topk and sort). `indices` (int32/int64) of `data`'s rank, no larger
/// than `data` on the other axes nor than `updates` on any (100021
/// otherwise); an index outside the axis is 100000 and nothing is written.
/// Sums and products are formed in f64 (integers in i64), each element
/// rounded once.
pub(super) fn ScatterElements(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 3)?;
    let (data, idx, src) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    if data.dtype != dtype || src.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if !matches!(idx.dtype, DType::I32 | DType::I64) {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let rank = data.dims.len();
    let a = axis(call.attr_int("axis", 0)?, rank)?;
    let reduction = call.attr_string("reduction", "none")?;
    if !matches!(reduction, "none" | "add" | "mul") {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    let fits_in = |k: usize, d: usize| {
        (k == a || d <= data.dims.get(k).copied().unwrap_or(1))
            && d <= src.dims.get(k).copied().unwrap_or(1)
    };
    let same_rank = idx.dims.len() == rank.max(1) && src.dims.len() == idx.dims.len();
    if !same_rank || !idx.dims.iter().enumerate().all(|(k, &d)| fits_in(k, d)) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    fits(call.out(0), &data.dims)?;
    let len = data.dims.get(a).copied().unwrap_or(1) as i64;
    let mut y: Vec<Num> = data.nums().collect();
    let data_strides = super::shape::contiguous_strides(&data.dims);
    let src_strides = super::shape::contiguous_strides(&src.dims);
    for (p, i) in idx.nums().enumerate() {
        let i = i.i64();
        if !(0..len).contains(&i) {
            return Err(AclError::INVALID_PARAM);
        }
        // The position's coordinates in indices' shape.
        let (mut rest, mut to, mut from) = (p, 0, 0);
        for k in (0..idx.dims.len()).rev() {
            let c = rest % idx.dims[k].max(1);
            rest /= idx.dims[k].max(1);
            let at = if k == a { i as usize } else { c };
            to += at * data_strides.get(k).copied().unwrap_or(1);
            from += c * src_strides.get(k).copied().unwrap_or(1);
        }
        let (old, new) = (y[to], src.at(from));
        y[to] = match (reduction, dtype.is_float()) {
            ("add", true) => Num::F(old.f64() + new.f64()),
            ("add", false) => Num::I(old.i64().wrapping_add(new.i64())),
            ("mul", true) => Num::F(old.f64() * new.f64()),
            ("mul", false) => Num::I(old.i64().wrapping_mul(new.i64())),
            _ => new,
        };
    }
    Ok(vec![Tensor::from_nums(dtype, data.dims.clone(), y).bytes])
}

/// The (outer, length, inner) split of `dims` around axis `a`.
pub(super) fn split(dims: &[usize], a: usize) -> (usize, usize, usize) {
    let len = dims.get(a).copied().unwrap_or(1);
    (
        dims[..a.min(dims.len())].iter().product(),
        len,
        dims.get(a + 1..).map_or(1, |d| d.iter().product()),
    )
}

/// Input `i`, an integer scalar (an axis; 100020 for a float).
fn int_scalar(call: &Call<'_>, i: usize) -> Result<i64, AclError> {
    if call.spec(i)?.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    Ok(call.scalar(i)?.i64())
}

/// `ArgMaxV2(x, dimension) -> y` (int32 or int64), attribute `keep_dims`:
/// the index of the largest element along `dimension` (a host int; the
/// first of equal ones, NaN the largest), the axis dropped (kept as 1 with
/// `keep_dims`).
pub(super) fn ArgMaxV2(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    if dtype != DType::I32 && dtype != DType::I64 {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let x = call.tensor(0)?;
    if x.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let a = axis(int_scalar(call, 1)?, x.dims.len())?;
    if x.numel() == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let mut want = x.dims.clone();
    if call.attr_bool("keep_dims", false)? {
        if let Some(d) = want.get_mut(a) {
            *d = 1;
        }
    } else if a < want.len() {
        want.remove(a);
    }
    fits(call.out(0), &want)?;
    let (outer, len, inner) = split(&x.dims, a);
    let mut y = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| x.at((o * len + k) * inner + i);
            let mut best = 0;
            for k in 1..len {
                if order(at(k), at(best)) == Ordering::Greater {
                    best = k;
                }
            }
            y.push(Num::I(best as i64));
        }
    }
    Ok(vec![Tensor::from_nums(dtype, want, y).bytes])
}

/// `Cumsum(x, axis) -> y`, attributes `exclusive`, `reverse`: the running
/// sums along `axis` (a host int), from the end with `reverse`, each
/// without its own element with `exclusive`. Floats are summed in the
/// working type and each sum rounded once; integers in 64 bits.
pub(super) fn Cumsum(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    let x = call.tensor(0)?;
    if x.dtype != dtype || dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let a = axis(int_scalar(call, 1)?, x.dims.len())?;
    fits(call.out(0), &x.dims)?;
    let exclusive = call.attr_bool("exclusive", false)?;
    let reverse = call.attr_bool("reverse", false)?;
    let (outer, len, inner) = split(&x.dims, a);
    // f32 sums for the narrow floats, f64 for float64, i64 for integers.
    let narrow = matches!(dtype, DType::F32 | DType::F16 | DType::Bf16);
    let mut y = vec![Num::I(0); x.numel()];
    for o in 0..outer {
        for i in 0..inner {
            let (mut fs, mut is) = (0f64, 0i64);
            for step in 0..len {
                let k = if reverse { len - 1 - step } else { step };
                let at = (o * len + k) * inner + i;
                let v = x.at(at);
                let before = if dtype.is_float() {
                    Num::F(fs)
                } else {
                    Num::I(is)
                };
                if dtype.is_float() {
                    fs += v.f64();
                    if narrow {
                        fs = fs as f32 as f64;
                    }
                } else {
                    is = is.wrapping_add(v.i64());
                }
                let now = if dtype.is_float() {
                    Num::F(fs)
                } else {
                    Num::I(is)
                };
                y[at] = if exclusive { before } else { now };
            }
        }
    }
    Ok(vec![Tensor::from_nums(dtype, x.dims.clone(), y).bytes])
}

#[cfg(test)]
mod tests;
