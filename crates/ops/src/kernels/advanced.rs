//! Gathers and scatters of advanced indexing as torch_npu launches them:
//! `Index` (`x[idx]`, `x[mask]`, `x[:, idx]`), `GatherElements`
//! (`torch.gather`), `InplaceIndexAdd` (`index_add_`), `IndexFillD`
//! (`index_fill_`), `OneHot`, `Tile` (`repeat`) and `Roll`.
//!
//! Elements are copied bit for bit (any type); the one sum
//! (`InplaceIndexAdd`) is formed in f64 (integers in i64, wrapping), each
//! element rounded once. An index outside its axis is 100000 and nothing
//! is written (PyTorch's CPU kernels raise an error there too).

#![allow(non_snake_case)]

use super::call::*;
use super::float::{axis, out_type};
use super::shape::{broadcast, broadcast_index, contiguous_strides};

/// Where each element of an advanced-indexing result comes from: the
/// result's shape and, per element (row-major), its flat index in `x`.
///
/// `marks` has one entry per leading axis of `x` (1: the axis has an index
/// tensor, 0: it is taken whole; axes beyond `marks` are taken whole);
/// the index tensors (integers, one per marked axis) are broadcast to one
/// shape, which takes the indexed axes' place when they are adjacent and
/// comes first otherwise, as PyTorch orders it. A negative index counts
/// from the end; one outside its axis is 100000.
pub(super) fn picks(
    dims: &[usize],
    marks: &[i64],
    indices: &[Tensor],
) -> Result<(Vec<usize>, Vec<usize>), AclError> {
    if marks.len() > dims.len().max(1) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let indexed: Vec<usize> = (0..dims.len())
        .filter(|&k| marks.get(k).is_some_and(|&m| m != 0))
        .collect();
    if indexed.len() != indices.len() || indices.iter().any(|t| t.dtype.is_float()) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let mut picked_shape: Vec<usize> = Vec::new();
    for t in indices {
        picked_shape = broadcast(&picked_shape, &t.dims)?;
    }
    let adjacent = indexed.windows(2).all(|w| w[1] == w[0] + 1);
    let first = indexed.first().copied().unwrap_or(0);
    let rest: Vec<usize> = (0..dims.len()).filter(|k| !indexed.contains(k)).collect();
    let before = if adjacent { first } else { 0 }.min(rest.len());
    let mut result: Vec<usize> = rest[..before].iter().map(|&k| dims[k]).collect();
    result.extend(&picked_shape);
    result.extend(rest[before..].iter().map(|&k| dims[k]));
    let total = Tensor::numel_of(&result)?;
    let strides = contiguous_strides(dims);
    let pick_strides = contiguous_strides(&picked_shape);
    // Each index tensor's values, resolved, per element of the picked shape.
    let resolved = indexed
        .iter()
        .zip(indices)
        .map(|(&a, t)| {
            let d = dims[a] as i64;
            broadcast_index(&t.dims, &picked_shape)
                .map(|i| {
                    let v = t.at(i).i64();
                    let v = if v < 0 { v + d } else { v };
                    if (0..d).contains(&v) {
                        Ok(v as usize * strides[a])
                    } else {
                        Err(AclError::INVALID_PARAM)
                    }
                })
                .collect::<Result<Vec<usize>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let np = picked_shape.len();
    let mut from = Vec::with_capacity(total);
    let mut coord = vec![0usize; result.len()];
    for r in 0..total {
        let mut rem = r;
        for k in (0..result.len()).rev() {
            coord[k] = rem % result[k].max(1);
            rem /= result[k].max(1);
        }
        let p: usize = coord[before..before + np]
            .iter()
            .zip(&pick_strides)
            .map(|(c, s)| c * s)
            .sum();
        let mut flat: usize = resolved.iter().map(|v| v[p]).sum();
        let whole = coord[..before].iter().chain(&coord[before + np..]);
        for (&c, &a) in whole.zip(&rest) {
            flat += c * strides[a];
        }
        from.push(flat);
    }
    Ok((result, from))
}

/// The output's shape when it must be `want` (the same count passes).
fn fits(out: &Spec, want: &[usize]) -> Result<(), AclError> {
    if out.dims == want || Tensor::numel_of(want)? == out.numel() {
        Ok(())
    } else {
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    }
}

/// Elements of `x` picked by flat index, as bytes.
fn copy_picks(x: &Tensor, from: &[usize]) -> Vec<u8> {
    let size = x.dtype.size();
    let mut y = Vec::with_capacity(from.len() * size);
    for &f in from {
        y.extend_from_slice(&x.bytes[f * size..(f + 1) * size]);
    }
    y
}

/// `Index(x, indexed_sizes, indexed_strides, indices0, ...) -> y`: the
/// elements of `x` the index tensors pick (`x[idx]`, `x[:, idx]`; torch_npu
/// turns a bool mask into its non-zero coordinates first), as PyTorch's
/// advanced indexing orders them (see [`picks`]). `indexed_sizes` (host
/// ints) marks the axes that have an index tensor; `indexed_strides` is
/// not read (torch_npu passes the result's sizes there). Any type.
pub(super) fn Index(call: &Call<'_>) -> Result<Written, AclError> {
    let inputs = call.inputs.count();
    if inputs < 4 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let dtype = out_type(call, inputs)?;
    let x = call.tensor(0)?;
    if x.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let marks = call.ints(1)?;
    call.ints(2)?;
    let indices = (3..inputs)
        .map(|i| call.tensor(i))
        .collect::<Result<Vec<_>, _>>()?;
    let (result, from) = picks(&x.dims, &marks, &indices)?;
    fits(call.out(0), &result)?;
    Ok(vec![copy_picks(&x, &from)])
}

/// Index tensor `t` as integers (int32 or int64; 100020 otherwise).
fn index_values(t: &Tensor) -> Result<Vec<i64>, AclError> {
    if !matches!(t.dtype, DType::I32 | DType::I64) {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    Ok(t.ints())
}

/// `GatherElements(x, index) -> y`, attribute `dim`: `y[p]` is the element
/// of `x` at `p` with its `dim` coordinate replaced by `index[p]`
/// (`torch.gather`). `index` (int32/int64) of `x`'s rank, no larger than
/// `x` on the other axes (100021 otherwise); `y` of `index`'s shape.
pub(super) fn GatherElements(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    let (x, idx) = (call.tensor(0)?, call.tensor(1)?);
    if x.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let values = index_values(&idx)?;
    let rank = x.dims.len();
    let a = axis(call.attr_int("dim", 0)?, rank)?;
    let xd = |k: usize| x.dims.get(k).copied().unwrap_or(1);
    if idx.dims.len() != rank
        || idx
            .dims
            .iter()
            .enumerate()
            .any(|(k, &d)| k != a && d > xd(k))
    {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    fits(call.out(0), &idx.dims)?;
    let strides = contiguous_strides(&x.dims);
    let len = xd(a) as i64;
    let mut from = Vec::with_capacity(values.len());
    for (p, &v) in values.iter().enumerate() {
        if !(0..len).contains(&v) {
            return Err(AclError::INVALID_PARAM);
        }
        let (mut rest, mut flat) = (p, 0);
        for k in (0..rank).rev() {
            let c = rest % idx.dims[k].max(1);
            rest /= idx.dims[k].max(1);
            flat += if k == a { v as usize } else { c } * strides[k];
        }
        from.push(flat);
    }
    Ok(vec![copy_picks(&x, &from)])
}

/// `InplaceIndexAdd(var, indices, updates, alpha) -> y`, attribute `axis`:
/// `var` with, for each `i`, `alpha * updates[.., i, ..]` added to
/// `var[.., indices[i], ..]` along `axis` (`index_add_`). `indices` 1-D
/// int32/int64 (negative from the end); `updates` of `var`'s shape but
/// `len(indices)` on `axis` (100021 otherwise); `alpha` one element.
pub(super) fn InplaceIndexAdd(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 4)?;
    let (var, idx, upd) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    if var.dtype != dtype || upd.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let values = index_values(&idx)?;
    let rank = var.dims.len();
    let a = axis(call.attr_int("axis", 0)?, rank)?;
    let mut want = var.dims.clone();
    if let Some(d) = want.get_mut(a) {
        *d = values.len();
    }
    if idx.dims.len() > 1 || upd.dims != want && Tensor::numel_of(&want)? != upd.numel() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    fits(call.out(0), &var.dims)?;
    let alpha = call.scalar(3)?;
    let (outer, len, inner) = super::index::split(&var.dims, a);
    let mut y: Vec<Num> = var.nums().collect();
    for (i, &v) in values.iter().enumerate() {
        let to = if v < 0 { v + len as i64 } else { v };
        if !(0..len as i64).contains(&to) {
            return Err(AclError::INVALID_PARAM);
        }
        for o in 0..outer {
            for n in 0..inner {
                let at = (o * len + to as usize) * inner + n;
                let u = upd.at((o * values.len() + i) * inner + n);
                y[at] = if dtype.is_float() {
                    Num::F(y[at].f64() + alpha.f64() * u.f64())
                } else {
                    Num::I(y[at].i64().wrapping_add(alpha.i64().wrapping_mul(u.i64())))
                };
            }
        }
    }
    Ok(vec![Tensor::from_nums(dtype, var.dims.clone(), y).bytes])
}

/// `IndexFillD(x, assist1, assist2) -> y`, attribute `dim` (required):
/// torch_npu's `index_fill_` with the positions worked out on the host,
/// as two tensors of `x`'s type and shape: `assist1` 0 where an index
/// selects the element (else 1), `assist2` the value there (else 0).
/// Floats: `x` where `assist1 > 0`, else `assist2` (a selection, as the
/// NPU's kernel makes it, so an infinite or NaN `x` is replaced too);
/// integers and bool: `x·assist1 + assist2`, wrapping. `dim` is checked
/// against `x`'s rank (the assists already carry it).
pub(super) fn IndexFillD(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 3)?;
    let (x, a1, a2) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    if x.dtype != dtype || a1.dtype != dtype || a2.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if a1.dims != x.dims || a2.dims != x.dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    match call.attr("dim") {
        Some(AttrValue::Int(d)) => axis(*d, x.dims.len()).map(drop)?,
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    fits(call.out(0), &x.dims)?;
    let y = (0..x.numel()).map(|i| {
        let (v, keep, fill) = (x.at(i), a1.at(i), a2.at(i));
        if !dtype.is_float() {
            Num::I(v.i64().wrapping_mul(keep.i64()).wrapping_add(fill.i64()))
        } else if keep.f64() > 0.0 {
            v
        } else {
            fill
        }
    });
    Ok(vec![Tensor::from_nums(dtype, x.dims.clone(), y).bytes])
}

/// `OneHot(indices, depth, on_value, off_value) -> y`, attribute `axis`
/// (-1: last): `on_value` where the new axis's coordinate equals the
/// index, else `off_value`; `y` is `indices`' shape with `depth` inserted
/// at `axis`. An index outside `0..depth` gives a row of `off_value`, as
/// the NPU's operator does (PyTorch's CPU kernel raises an error). Integer
/// indices; `depth` a host int, not negative.
pub(super) fn OneHot(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 4)?;
    let idx = call.tensor(0)?;
    if idx.dtype.is_float() || idx.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let depth = call.scalar(1)?.i64();
    let depth = usize::try_from(depth).map_err(|_| AclError::INVALID_PARAM)?;
    let (on, off) = (call.scalar(2)?, call.scalar(3)?);
    let rank = idx.dims.len();
    let a = call.attr_int("axis", -1)?;
    let a = if a == -1 {
        rank
    } else {
        usize::try_from(a)
            .ok()
            .filter(|&a| a <= rank)
            .ok_or(AclError::OP_ATTR_NOT_MATCH)?
    };
    let mut want = idx.dims.clone();
    want.insert(a, depth);
    fits(call.out(0), &want)?;
    let (outer, inner) = (
        idx.dims[..a].iter().product::<usize>(),
        idx.dims[a..].iter().product::<usize>(),
    );
    let mut y = Vec::with_capacity(outer * depth * inner);
    for o in 0..outer {
        for d in 0..depth {
            for n in 0..inner {
                let v = idx.at(o * inner + n).i64();
                y.push(if v == d as i64 { on } else { off });
            }
        }
    }
    Ok(vec![Tensor::from_nums(dtype, want, y).bytes])
}

/// `Tile(x, multiples) -> y`: `x` repeated `multiples[k]` times along
/// each axis (`repeat`); `multiples` (host ints, none negative) at least
/// `x`'s rank, `x` taken with leading axes of 1 when it is longer.
pub(super) fn Tile(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    let x = call.tensor(0)?;
    if x.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let m = call.sizes(1)?;
    if m.len() < x.dims.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let mut dims = vec![1; m.len() - x.dims.len()];
    dims.extend(&x.dims);
    let want = dims
        .iter()
        .zip(&m)
        .map(|(&d, &r)| d.checked_mul(r).ok_or(AclError::INVALID_PARAM))
        .collect::<Result<Vec<_>, _>>()?;
    let total = Tensor::numel_of(&want)?;
    fits(call.out(0), &want)?;
    let strides = contiguous_strides(&dims);
    let mut from = Vec::with_capacity(total);
    for r in 0..total {
        let (mut rem, mut flat) = (r, 0);
        for k in (0..want.len()).rev() {
            let c = rem % want[k].max(1);
            rem /= want[k].max(1);
            flat += (c % dims[k].max(1)) * strides[k];
        }
        from.push(flat);
    }
    Ok(vec![copy_picks(&x, &from)])
}

/// `Roll(x) -> y`, attributes `shifts`, `dims` (int lists of one length;
/// `dims` empty: `x` rolled flat by the one shift): each listed axis's
/// elements moved `shift` places forward, wrapping (`torch.roll`).
pub(super) fn Roll(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 1)?;
    let x = call.tensor(0)?;
    if x.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let list = |name: &str| match call.attr(name) {
        None => Ok(Vec::new()),
        Some(AttrValue::ListInt(v)) => Ok(v.clone()),
        Some(AttrValue::Int(v)) => Ok(vec![*v]),
        Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let (shifts, axes) = (list("shifts")?, list("dims")?);
    fits(call.out(0), &x.dims)?;
    let (dims, shifts, axes) = if axes.is_empty() {
        if shifts.len() != 1 {
            return Err(AclError::OP_ATTR_NOT_MATCH);
        }
        (vec![x.numel()], shifts, vec![0])
    } else if axes.len() != shifts.len() {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    } else if x.dims.is_empty() {
        (vec![1], shifts, axes)
    } else {
        (x.dims.clone(), shifts, axes)
    };
    let mut by = vec![0usize; dims.len()];
    for (&s, &a) in shifts.iter().zip(&axes) {
        let a = axis(a, dims.len())?;
        let d = dims.get(a).copied().unwrap_or(1).max(1) as i64;
        by[a] = ((by[a] as i64 + s).rem_euclid(d)) as usize;
    }
    let strides = contiguous_strides(&dims);
    let from: Vec<usize> = (0..x.numel())
        .map(|r| {
            let (mut rem, mut flat) = (r, 0);
            for k in (0..dims.len()).rev() {
                let d = dims[k].max(1);
                let c = rem % d;
                rem /= d;
                flat += ((c + d - by[k]) % d) * strides[k];
            }
            flat
        })
        .collect();
    Ok(vec![copy_picks(&x, &from)])
}

/// `Gather(x, indices) -> y`, attribute `validate_indices` (not read):
/// the slices of `x` along its first axis that `indices` (int32/int64;
/// negative from the end) name, `y` of `indices`' shape and `x`'s other
/// axes (`torch.take`, on a flattened `x`).
pub(super) fn Gather(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 2)?;
    let (x, idx) = (call.tensor(0)?, call.tensor(1)?);
    if x.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let values = index_values(&idx)?;
    let Some((&len, rest)) = x.dims.split_first() else {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    };
    let mut want = idx.dims.clone();
    want.extend(rest);
    fits(call.out(0), &want)?;
    let inner = Tensor::numel_of(rest)?;
    let mut from = Vec::with_capacity(values.len() * inner);
    for &v in &values {
        let v = if v < 0 { v + len as i64 } else { v };
        if !(0..len as i64).contains(&v) {
            return Err(AclError::INVALID_PARAM);
        }
        from.extend((0..inner).map(|i| v as usize * inner + i));
    }
    Ok(vec![copy_picks(&x, &from)])
}

/// `MaskedScatter(x, mask, updates) -> y`: `x` with the elements where
/// `mask` (bool, broadcast to `x`) is true replaced, in order, by the
/// first elements of `updates` (`masked_scatter`); fewer updates than
/// true elements is 100021.
pub(super) fn MaskedScatter(call: &Call<'_>) -> Result<Written, AclError> {
    let dtype = out_type(call, 3)?;
    let (x, mask, upd) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    if x.dtype != dtype || upd.dtype != dtype || mask.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if broadcast(&x.dims, &mask.dims)? != x.dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    fits(call.out(0), &x.dims)?;
    let size = dtype.size();
    let mut y = x.bytes.clone();
    let mut next = 0;
    for (i, m) in broadcast_index(&mask.dims, &x.dims).enumerate() {
        if mask.at(m).truthy() {
            if next >= upd.numel() {
                return Err(AclError::OP_INPUT_NOT_MATCH);
            }
            y[i * size..(i + 1) * size].copy_from_slice(&upd.bytes[next * size..(next + 1) * size]);
            next += 1;
        }
    }
    Ok(vec![y])
}

/// `ScatterNdAdd`/`ScatterNdUpdate`: `var` with, for each row of
/// `indices` (`[..., K]`, int32/int64, negative from the end), the slice
/// of `var` it names in the first `K` axes set to (`add`: increased by)
/// the matching slice of `updates` (`indices`' leading shape and `var`'s
/// axes from `K`).
fn scatter_nd(call: &Call<'_>, add: bool) -> Result<Written, AclError> {
    let dtype = out_type(call, 3)?;
    let (var, idx, upd) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    if var.dtype != dtype || upd.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let values = index_values(&idx)?;
    let Some((&k, lead)) = idx.dims.split_last() else {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    };
    if k == 0 || k > var.dims.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let mut want = lead.to_vec();
    want.extend(&var.dims[k..]);
    if upd.dims != want && Tensor::numel_of(&want)? != upd.numel() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    fits(call.out(0), &var.dims)?;
    let inner = Tensor::numel_of(&var.dims[k..])?;
    let strides = contiguous_strides(&var.dims[..k]);
    let mut y: Vec<Num> = var.nums().collect();
    for (r, row) in values.chunks(k).enumerate() {
        let mut at = 0;
        for ((&v, &d), &s) in row.iter().zip(&var.dims).zip(&strides) {
            let v = if v < 0 { v + d as i64 } else { v };
            if !(0..d as i64).contains(&v) {
                return Err(AclError::INVALID_PARAM);
            }
            at += v as usize * s;
        }
        for i in 0..inner {
            let (to, u) = (at * inner + i, upd.at(r * inner + i));
            y[to] = match (add, dtype.is_float()) {
                (false, _) => u,
                (true, true) => Num::F(y[to].f64() + u.f64()),
                (true, false) => Num::I(y[to].i64().wrapping_add(u.i64())),
            };
        }
    }
    Ok(vec![Tensor::from_nums(dtype, var.dims.clone(), y).bytes])
}

/// `ScatterNdAdd(var, indices, updates) -> y`, attribute `use_locking`
/// (not read): `updates`' slices added at the places `indices` names
/// (`put_` accumulating, `take`'s backward).
pub(super) fn ScatterNdAdd(call: &Call<'_>) -> Result<Written, AclError> {
    scatter_nd(call, true)
}

/// `ScatterNdUpdate(var, indices, updates) -> y`: `updates`' slices
/// written at the places `indices` names (`put_`).
pub(super) fn ScatterNdUpdate(call: &Call<'_>) -> Result<Written, AclError> {
    scatter_nd(call, false)
}

#[cfg(test)]
mod tests;
