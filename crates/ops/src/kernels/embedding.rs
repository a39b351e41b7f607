//! Embeddings as torch_npu launches them: `embedding` and `index_select`
//! are `GatherV2(x, indices, axis)` (axis a host int `{dim}`, attribute
//! `batch_dims` 0), the embedding's backward
//! `EmbeddingDenseGrad(grad, indices)` (indices int32) with `num_weights`,
//! `padding_idx` and `scale_grad_by_freq`.
//!
//! `GatherV2` copies elements of any type; an index outside the axis
//! (negative included) is `ACL_ERROR_INVALID_PARAM` (100000), where an NPU
//! would fault the stream. `EmbeddingDenseGrad` sums the gradient's rows
//! into the rows their indices name, in fp32 for float32, float16 and
//! bfloat16 (rounded once) and fp64 for float64.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, axis, by_type, bytes, values};

/// Indices of an integer type (100020 otherwise), each in `0..len`
/// (100000 otherwise).
fn indices(t: &Tensor, len: usize) -> Result<Vec<usize>, AclError> {
    if t.dtype.is_float() || t.dtype == DType::Bool {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    t.ints()
        .into_iter()
        .map(|i| {
            usize::try_from(i)
                .ok()
                .filter(|&i| i < len)
                .ok_or(AclError::INVALID_PARAM)
        })
        .collect()
}

/// `GatherV2(x, indices, axis) -> y`, attribute `batch_dims` (0): the
/// slices of x along `axis` that the indices name, in the indices' shape:
/// y is `x[:axis] + indices + x[axis + 1:]`.
pub(super) fn GatherV2(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    match call.attr("batch_dims") {
        None | Some(AttrValue::Int(0)) => {}
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    let (x, idx) = (call.tensor(0)?, call.tensor(1)?);
    if x.dims.is_empty() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let a = axis(call.scalar(2)?.i64(), x.dims.len()).map_err(|_| AclError::INVALID_PARAM)?;
    let out = call.out(0);
    if out.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let mut want = x.dims[..a].to_vec();
    want.extend(&idx.dims);
    want.extend(&x.dims[a + 1..]);
    if out.dims != want {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let len = x.dims[a];
    let picks = indices(&idx, len)?;
    let outer: usize = x.dims[..a].iter().product();
    let inner = x.dims[a + 1..].iter().product::<usize>() * x.dtype.size();
    let mut y = Vec::with_capacity(outer * picks.len() * inner);
    for o in 0..outer {
        for &k in &picks {
            let at = (o * len + k) * inner;
            y.extend_from_slice(&x.bytes[at..at + inner]);
        }
    }
    Ok(vec![y])
}

fn embedding_grad<T: Real>(
    call: &Call<'_>,
    grad: &Tensor,
    rows: &[usize],
    width: usize,
    padding: Option<usize>,
) -> Result<Written, AclError> {
    let g = values::<T>(grad)?;
    let weights = call.out(0).dims[0];
    let scale = call.attr_bool("scale_grad_by_freq", false)?;
    let mut count = vec![0usize; weights];
    for &r in rows {
        count[r] += 1;
    }
    let mut dw = vec![T::ZERO; weights * width];
    for (k, &r) in rows.iter().enumerate() {
        if Some(r) == padding {
            continue;
        }
        let by = if scale {
            T::ONE / T::of(count[r] as f64)
        } else {
            T::ONE
        };
        for j in 0..width {
            dw[r * width + j] += g[k * width + j] * by;
        }
    }
    Ok(vec![bytes(call.out(0).dtype, &dw)?])
}

/// `EmbeddingDenseGrad(grad, indices) -> y`, attributes `num_weights`,
/// `padding_idx` (negative: none), `scale_grad_by_freq`: y
/// `[num_weights, D]`, row `i` the sum of the gradient's rows (of D) whose
/// index is `i` (each divided by how often `i` occurs when scaled); the
/// padding row stays 0.
pub(super) fn EmbeddingDenseGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let (grad, idx) = (call.tensor(0)?, call.tensor(1)?);
    let weights = usize::try_from(call.attr_int("num_weights", -1)?)
        .map_err(|_| AclError::OP_ATTR_NOT_MATCH)?;
    let padding = usize::try_from(call.attr_int("padding_idx", -1)?).ok();
    let width = *grad.dims.last().ok_or(AclError::OP_INPUT_NOT_MATCH)?;
    if idx.numel().checked_mul(width) != Some(grad.numel()) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let out = call.out(0);
    if out.dims != [weights, width] {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if out.dtype != grad.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let rows = indices(&idx, weights)?;
    by_type(
        grad.dtype,
        || embedding_grad::<f32>(call, &grad, &rows, width, padding),
        || embedding_grad::<f64>(call, &grad, &rows, width, padding),
    )
}

#[cfg(test)]
mod tests;
