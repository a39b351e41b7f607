//! Selections whose output size depends on the data.

#![allow(non_snake_case)]

use super::advanced::picks;
use super::basic::same_count;
use super::call::*;
use super::shape::{broadcast, broadcast_index, contiguous_strides};

/// `NonZero(x) -> y` (int64), attribute `transpose`: the coordinates of
/// the non-zero elements of `x`, row-major: `[count, rank]`, or
/// `[rank, count]` when `transpose`. The caller's `y` holds the most
/// (`numel` coordinates); its real shape is reported.
pub(super) fn NonZero(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let x = call.tensor(0)?;
    let out = call.out(0);
    if out.dtype != DType::I64 && out.dtype != DType::I32 {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let transpose = call.attr_bool("transpose", false)?;
    let rank = x.dims.len();
    let strides = contiguous_strides(&x.dims);
    let coords: Vec<Vec<i64>> = (0..x.numel())
        .filter(|&i| x.at(i).truthy())
        .map(|i| {
            strides
                .iter()
                .zip(&x.dims)
                .map(|(&s, &d)| ((i / s.max(1)) % d.max(1)) as i64)
                .collect()
        })
        .collect();
    let count = coords.len();
    if count * rank > out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (dims, nums): (Vec<usize>, Vec<i64>) = if transpose {
        (
            vec![rank, count],
            (0..rank)
                .flat_map(|k| coords.iter().map(move |c| c[k]))
                .collect(),
        )
    } else {
        (vec![count, rank], coords.concat())
    };
    call.reshape(0, dims.clone());
    Ok(vec![
        Tensor::from_nums(out.dtype, dims, nums.into_iter().map(Num::I)).bytes,
    ])
}

/// `MaskedSelect(x, mask) -> y`: the elements of `x` where `mask` (both
/// broadcast to one shape) is true, in order, as a 1-D `y`. The caller's
/// `y` holds the most; its real shape is reported.
pub(super) fn MaskedSelect(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let (x, mask) = (call.tensor(0)?, call.tensor(1)?);
    let out = call.out(0);
    if out.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let shape = broadcast(&x.dims, &mask.dims)?;
    let picked: Vec<Num> = broadcast_index(&x.dims, &shape)
        .zip(broadcast_index(&mask.dims, &shape))
        .filter(|&(_, m)| mask.at(m).truthy())
        .map(|(i, _)| x.at(i))
        .collect();
    if picked.len() > out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let dims = vec![picked.len()];
    call.reshape(0, dims.clone());
    Ok(vec![Tensor::from_nums(out.dtype, dims, picked).bytes])
}

/// `IndexPutV2(x, value, indexed_sizes, indexed_strides, indices0, ...) ->
/// y`, attribute `accumulate`: `x` with the elements the index tensors
/// pick set to (or, accumulating, increased by) `value`, as PyTorch's
/// `index_put_` does. `indexed_sizes` marks each axis of `x` that has an
/// index tensor (1) or is taken whole (0); the index tensors are broadcast
/// to one shape, which takes the indexed axes' place when they are
/// adjacent and comes first otherwise; `value` is broadcast to the
/// result. A negative index counts from the end; one out of range is
/// 100000 and nothing is written.
pub(super) fn IndexPutV2(call: &Call<'_>) -> Result<Written, AclError> {
    let inputs = call.inputs.count();
    if inputs < 5 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    call.expect(inputs, 1)?;
    let x = call.tensor(0)?;
    let value = call.tensor(1)?;
    let out = call.out(0);
    if out.dtype != x.dtype || value.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    same_count(call.spec(0)?, out)?;
    let marks = call.ints(2)?;
    let indices = (4..inputs)
        .map(|i| call.tensor(i))
        .collect::<Result<Vec<_>, _>>()?;
    let (result, from) = picks(&x.dims, &marks, &indices)?;
    let writes: Vec<(usize, Num)> = from
        .into_iter()
        .zip(broadcast_index(&value.dims, &result))
        .map(|(f, v)| (f, value.at(v)))
        .collect();
    let mut updated = x.clone();
    let size = x.dtype.size();
    let accumulate = call.attr_bool("accumulate", false)?;
    for (flat, v) in writes {
        let n = if accumulate {
            let now = updated.at(flat);
            if x.dtype.is_float() {
                Num::F(now.f64() + v.f64())
            } else {
                Num::I(now.i64().wrapping_add(v.i64()))
            }
        } else {
            v
        };
        x.dtype.put(n, &mut updated.bytes[flat * size..]);
    }
    Ok(vec![updated.bytes])
}
