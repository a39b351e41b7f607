//! Bags of embeddings, as torch_npu launches `F.embedding_bag` /
//! `nn.EmbeddingBag`: `EmbeddingBag(weight, indices, offsets
//! [, per_sample_weights]) -> (y, offset2bag, bag_size, max_indices)` with
//! `mode` (`"sum"`, `"mean"`, `"max"`), `include_last_offset`,
//! `padding_idx` (negative: none), `scale_grad_by_freq` and `sparse`
//! (which only the backward reads).
//!
//! weight is `[V, D]`; indices int32 (torch_npu casts int64 ones), 1-D
//! with `offsets` the start of each bag (the last bag runs to the end, or,
//! with `include_last_offset`, offsets' last element ends the bags), or
//! 2-D with one bag per row (offsets not read). Each bag's row of y is the
//! sum, the mean or the element-wise maximum of the weight rows its
//! indices name, skipping `padding_idx`; an empty bag's row is 0.
//! `per_sample_weights` (sum only) scales each row first. offset2bag is
//! each index's bag, bag_size each bag's count of indices (padding not
//! counted), max_indices for `max` the row each maximum came from (0 for
//! an empty bag) and otherwise the bag sizes again, as torch's CPU returns
//! them. An index outside the weight, offsets decreasing or outside the
//! indices are `ACL_ERROR_INVALID_PARAM` (100000). Computed in fp32 for
//! float32, float16 and bfloat16 (rounded once), fp64 for float64.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Sum,
    Mean,
    Max,
}

/// Integers of input `i` (100020 for floats).
fn int_input(call: &Call<'_>, i: usize) -> Result<Tensor, AclError> {
    let t = call.tensor(i)?;
    if t.dtype.is_float() || t.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    Ok(t)
}

/// The bags: for each, the positions in `indices` it holds.
fn bags(call: &Call<'_>, idx: &Tensor) -> Result<Vec<std::ops::Range<usize>>, AclError> {
    let n = idx.numel();
    match idx.dims.as_slice() {
        [rows, len] => Ok((0..*rows).map(|r| r * len..(r + 1) * len).collect()),
        [_] => {
            let offsets = int_input(call, 2)?;
            if offsets.dims.len() != 1 {
                return Err(AclError::OP_INPUT_NOT_MATCH);
            }
            let starts = offsets
                .ints()
                .into_iter()
                .map(|o| {
                    usize::try_from(o)
                        .ok()
                        .filter(|&o| o <= n)
                        .ok_or(AclError::INVALID_PARAM)
                })
                .collect::<Result<Vec<usize>, _>>()?;
            if starts.windows(2).any(|w| w[0] > w[1]) {
                return Err(AclError::INVALID_PARAM);
            }
            let mut ends: Vec<usize> = starts.iter().skip(1).copied().collect();
            let mut starts = starts;
            if call.attr_bool("include_last_offset", false)? {
                starts.pop().ok_or(AclError::OP_INPUT_NOT_MATCH)?;
            } else {
                ends.push(n);
            }
            Ok(starts.into_iter().zip(ends).map(|(s, e)| s..e).collect())
        }
        _ => Err(AclError::OP_INPUT_NOT_MATCH),
    }
}

fn embedding_bag<T: Real>(call: &Call<'_>, mode: Mode) -> Result<Written, AclError> {
    let w = call.tensor(0)?;
    let [v, d] =
        <[usize; 2]>::try_from(w.dims.as_slice()).map_err(|_| AclError::OP_INPUT_NOT_MATCH)?;
    let idx = int_input(call, 1)?;
    let rows = idx
        .ints()
        .into_iter()
        .map(|i| {
            usize::try_from(i)
                .ok()
                .filter(|&i| i < v)
                .ok_or(AclError::INVALID_PARAM)
        })
        .collect::<Result<Vec<usize>, _>>()?;
    let bags = bags(call, &idx)?;
    let padding = usize::try_from(call.attr_int("padding_idx", -1)?).ok();
    call.attr_bool("scale_grad_by_freq", false)?;
    call.attr_bool("sparse", false)?;
    let scale = if call.inputs.count() == 4 {
        let p = call.tensor(3)?;
        if mode != Mode::Sum {
            return Err(AclError::OP_ATTR_NOT_MATCH);
        }
        if p.dtype != w.dtype {
            return Err(AclError::OP_TYPE_NOT_MATCH);
        }
        if p.numel() != rows.len() {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        Some(values::<T>(&p)?)
    } else {
        None
    };
    let nb = bags.len();
    let (y_spec, o2b, size_spec, max_spec) = (call.out(0), call.out(1), call.out(2), call.out(3));
    let max_len = if mode == Mode::Max { nb * d } else { nb };
    if y_spec.dims != [nb, d]
        || o2b.numel() != rows.len()
        || size_spec.numel() != nb
        || max_spec.numel() != max_len
    {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if y_spec.dtype != w.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if [o2b, size_spec, max_spec]
        .iter()
        .any(|s| s.dtype.is_float() || s.dtype == DType::Bool)
    {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let wv = values::<T>(&w)?;
    let mut y = vec![T::ZERO; nb * d];
    let mut offset2bag = vec![0i64; rows.len()];
    let mut sizes = vec![0i64; nb];
    let mut argmax = vec![0i64; nb * d];
    for (b, range) in bags.iter().enumerate() {
        let out = &mut y[b * d..(b + 1) * d];
        for k in range.clone() {
            offset2bag[k] = b as i64;
            let r = rows[k];
            if Some(r) == padding {
                continue;
            }
            let row = &wv[r * d..(r + 1) * d];
            let first = sizes[b] == 0;
            sizes[b] += 1;
            for (j, (o, &x)) in out.iter_mut().zip(row).enumerate() {
                match mode {
                    Mode::Max => {
                        if first || x > *o {
                            *o = x;
                            argmax[b * d + j] = r as i64;
                        }
                    }
                    _ => *o += scale.as_ref().map_or(x, |s| x * s[k]),
                }
            }
        }
        if mode == Mode::Mean && sizes[b] > 0 {
            let n = T::of(sizes[b] as f64);
            out.iter_mut().for_each(|o| *o = *o / n);
        }
    }
    let ints = |spec: &Spec, v: &[i64]| {
        Tensor::from_nums(spec.dtype, spec.dims.clone(), v.iter().map(|&i| Num::I(i))).bytes
    };
    let max_out = if mode == Mode::Max { &argmax } else { &sizes };
    Ok(vec![
        bytes(y_spec.dtype, &y)?,
        ints(o2b, &offset2bag),
        ints(size_spec, &sizes),
        ints(max_spec, max_out),
    ])
}

/// `EmbeddingBag(weight, indices, offsets[, per_sample_weights]) -> (y,
/// offset2bag, bag_size, max_indices)`, attributes `mode`,
/// `include_last_offset`, `padding_idx`, `scale_grad_by_freq`, `sparse`:
/// each bag's sum, mean or maximum of the weight rows it names.
pub(super) fn EmbeddingBag(call: &Call<'_>) -> Result<Written, AclError> {
    if !(3..=4).contains(&call.inputs.count()) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.outputs.len() != 4 {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let mode = match call.attr_string("mode", "mean")? {
        "sum" => Mode::Sum,
        "mean" => Mode::Mean,
        "max" => Mode::Max,
        _ => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    by_type(
        call.spec(0)?.dtype,
        || embedding_bag::<f32>(call, mode),
        || embedding_bag::<f64>(call, mode),
    )
}

#[cfg(test)]
mod tests;
