//! Layout: strided views and copies, transposes, broadcasts, slices, joins.

#![allow(non_snake_case)]

use super::call::*;
use super::shape::{Strided, broadcast, broadcast_index, contiguous_strides};

/// The number of elements a strided view touches from its start: one past
/// its farthest element (0 when it is empty).
pub(super) fn extent(dims: &[usize], strides: &[usize], offset: usize) -> Result<usize, AclError> {
    if dims.contains(&0) {
        return Ok(0);
    }
    dims.iter()
        .zip(strides)
        .try_fold(offset, |acc, (&d, &s)| {
            (d - 1).checked_mul(s).and_then(|x| acc.checked_add(x))
        })
        .and_then(|last| last.checked_add(1))
        .ok_or(AclError::INVALID_PARAM)
}

/// Reads input `i`'s view of `dims`/`strides`/`offset` (elements from
/// the buffer's start), as a contiguous tensor.
pub(super) fn gather(
    call: &Call<'_>,
    i: usize,
    dims: &[usize],
    strides: &[usize],
    offset: usize,
) -> Result<Tensor, AclError> {
    if dims.len() != strides.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let dtype = call.spec(i)?.dtype;
    let size = dtype.size();
    let base = call.inputs.prefix(i, extent(dims, strides, offset)?)?;
    let mut bytes = Vec::with_capacity(Tensor::numel_of(dims)? * size);
    for at in Strided::new(dims.to_vec(), strides.to_vec(), offset) {
        bytes.extend_from_slice(&base[at * size..at * size + size]);
    }
    Ok(Tensor {
        dtype,
        dims: dims.to_vec(),
        bytes,
    })
}

/// `AsStrided(x, size, stride, storage_offset) -> y`: the view of `x`'s
/// buffer (its storage's start) with those sizes, strides and offset,
/// made contiguous.
pub(super) fn AsStrided(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(4, 1)?;
    let (dims, strides) = (call.sizes(1)?, call.sizes(2)?);
    let offset = usize::try_from(call.scalar(3)?.i64()).map_err(|_| AclError::INVALID_PARAM)?;
    if dims != call.out(0).dims || call.spec(0)?.dtype != call.out(0).dtype {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![gather(call, 0, &dims, &strides, offset)?.bytes])
}

/// `ViewCopy(dst, dst_size, dst_stride, dst_offset, src, src_size,
/// src_stride, src_offset) -> dst`: the view of `src` written into the view
/// of `dst` (both from their buffers' starts; `src` broadcast to `dst`'s
/// sizes). The output is `dst`'s buffer: only the elements of the view
/// change.
pub(super) fn ViewCopy(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(8, 1)?;
    let (dst_dims, dst_strides) = (call.sizes(1)?, call.sizes(2)?);
    let dst_offset = usize::try_from(call.scalar(3)?.i64()).map_err(|_| AclError::INVALID_PARAM)?;
    let (src_dims, src_strides) = (call.sizes(5)?, call.sizes(6)?);
    let src_offset = usize::try_from(call.scalar(7)?.i64()).map_err(|_| AclError::INVALID_PARAM)?;
    if dst_dims.len() != dst_strides.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let dtype = call.spec(0)?.dtype;
    let src = gather(call, 4, &src_dims, &src_strides, src_offset)?;
    if src.dtype != dtype || call.out(0).dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if broadcast(&src.dims, &dst_dims)? != dst_dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let size = dtype.size();
    let mut dst = call
        .inputs
        .prefix(0, extent(&dst_dims, &dst_strides, dst_offset)?)?;
    for (at, from) in Strided::new(dst_dims.clone(), dst_strides, dst_offset)
        .zip(broadcast_index(&src.dims, &dst_dims))
    {
        dst[at * size..at * size + size]
            .copy_from_slice(&src.bytes[from * size..from * size + size]);
    }
    Ok(vec![dst])
}

/// `Transpose(x, perm) -> y`: `y`'s axis `k` is `x`'s axis `perm[k]`.
pub(super) fn Transpose(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let x = call.spec(0)?.clone();
    let perm = call.sizes(1)?;
    let strides = contiguous_strides(&x.dims);
    let mut seen = vec![false; x.dims.len()];
    let mut dims = Vec::with_capacity(perm.len());
    let mut view = Vec::with_capacity(perm.len());
    for &p in &perm {
        if p >= x.dims.len() || std::mem::replace(&mut seen[p], true) {
            return Err(AclError::INVALID_PARAM);
        }
        dims.push(x.dims[p]);
        view.push(strides[p]);
    }
    if perm.len() != x.dims.len() || dims != call.out(0).dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![gather(call, 0, &dims, &view, 0)?.bytes])
}

/// `BroadcastTo(x, shape) -> y`.
pub(super) fn BroadcastTo(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let x = call.tensor(0)?;
    let shape = call.sizes(1)?;
    if broadcast(&x.dims, &shape)? != shape || shape != call.out(0).dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let size = x.dtype.size();
    let mut bytes = Vec::with_capacity(Tensor::numel_of(&shape)? * size);
    for from in broadcast_index(&x.dims, &shape) {
        bytes.extend_from_slice(&x.bytes[from * size..from * size + size]);
    }
    Ok(vec![bytes])
}

/// `Slice(x, offsets, size) -> y`: the block at `offsets` of `size`
/// (`-1`: to the end).
pub(super) fn Slice(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let x = call.spec(0)?.clone();
    let offsets = call.sizes(1)?;
    let sizes = call.ints(2)?;
    if offsets.len() != x.dims.len() || sizes.len() != x.dims.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let strides = contiguous_strides(&x.dims);
    let mut dims = Vec::new();
    let mut offset = 0;
    for k in 0..x.dims.len() {
        let len = if sizes[k] < 0 {
            x.dims[k]
                .checked_sub(offsets[k])
                .ok_or(AclError::INVALID_PARAM)?
        } else {
            sizes[k] as usize
        };
        if offsets[k]
            .checked_add(len)
            .is_none_or(|end| end > x.dims[k])
        {
            return Err(AclError::INVALID_PARAM);
        }
        dims.push(len);
        offset += offsets[k] * strides[k];
    }
    if dims != call.out(0).dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![gather(call, 0, &dims, &strides, offset)?.bytes])
}

/// `StridedSlice(x, begin, end, strides) -> y` with every mask 0 and
/// positive strides (the form torch_npu's select and indexing launch).
pub(super) fn StridedSlice(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(4, 1)?;
    for mask in ["begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask"] {
        if !matches!(call.attr(mask), None | Some(AttrValue::Int(0))) {
            return Err(AclError::OP_ATTR_NOT_MATCH);
        }
    }
    let shrink = match call.attr("shrink_axis_mask") {
        None => 0,
        Some(AttrValue::Int(m)) => *m,
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let x = call.spec(0)?.clone();
    let (begin, end, step) = (call.ints(1)?, call.ints(2)?, call.ints(3)?);
    if begin.len() != end.len() || begin.len() != step.len() || begin.len() > x.dims.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let strides = contiguous_strides(&x.dims);
    let mut dims = Vec::new();
    let mut view = Vec::new();
    let mut offset = 0usize;
    for (k, (&dim, &stride)) in x.dims.iter().zip(&strides).enumerate() {
        let d = dim as i64;
        let (b, e, s) = match (begin.get(k), end.get(k), step.get(k)) {
            (Some(&b), Some(&e), Some(&s)) => (b, e, s),
            _ => (0, d, 1),
        };
        if s <= 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let clamp = |v: i64| (if v < 0 { v + d } else { v }).clamp(0, d);
        let (b, e) = (clamp(b), clamp(e));
        let len = if e > b { (e - b + s - 1) / s } else { 0 } as usize;
        offset += b as usize * stride;
        if shrink & (1 << k) != 0 {
            continue;
        }
        dims.push(len);
        view.push(stride * s as usize);
    }
    if Tensor::numel_of(&dims)? != call.out(0).numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![gather(call, 0, &dims, &view, offset)?.bytes])
}

/// Joins the inputs along `axis` of their shapes: each input's blocks of
/// `inner` elements, in turn, `outer` times.
pub(super) fn join(call: &Call<'_>, axis: usize, stacked: bool) -> Result<Written, AclError> {
    let n = call.inputs.count();
    if n == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let first = call.spec(0)?.clone();
    let mut parts = Vec::with_capacity(n);
    for i in 0..n {
        let t = call.tensor(i)?;
        let fits = t.dtype == first.dtype
            && t.dims.len() == first.dims.len()
            && t.dims
                .iter()
                .zip(&first.dims)
                .enumerate()
                .all(|(k, (a, b))| a == b || (!stacked && k == axis));
        if !fits || axis > t.dims.len() || (!stacked && axis == t.dims.len()) {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        parts.push(t);
    }
    let outer: usize = first.dims[..axis].iter().product();
    let size = first.dtype.size();
    let out = call.out(0);
    let total: usize = parts.iter().map(Tensor::numel).sum();
    if out.numel() != total || out.dtype != first.dtype {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let mut bytes = Vec::with_capacity(total * size);
    for o in 0..outer {
        for t in &parts {
            let inner = t.numel() / outer.max(1) * size;
            bytes.extend_from_slice(&t.bytes[o * inner..(o + 1) * inner]);
        }
    }
    Ok(vec![bytes])
}

/// An axis attribute, counted from the end when negative, over `rank`.
pub(super) fn axis(call: &Call<'_>, name: &str, rank: usize) -> Result<usize, AclError> {
    let a = match call.attr(name) {
        Some(AttrValue::Int(a)) => *a,
        None => 0,
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let a = if a < 0 { a + rank as i64 } else { a };
    usize::try_from(a)
        .ok()
        .filter(|&a| a < rank)
        .ok_or(AclError::INVALID_PARAM)
}

/// `Pack(x0, ..., xN-1) -> y`, attributes `axis`, `N`: the inputs stacked
/// along a new axis.
pub(super) fn Pack(call: &Call<'_>) -> Result<Written, AclError> {
    let rank = call.spec(0)?.dims.len() + 1;
    join(call, axis(call, "axis", rank)?, true)
}

/// `ConcatD(x0, ..., xN-1) -> y`, attributes `concat_dim`, `N`: the inputs
/// joined along an axis.
pub(super) fn ConcatD(call: &Call<'_>) -> Result<Written, AclError> {
    let rank = call.spec(0)?.dims.len();
    join(call, axis(call, "concat_dim", rank)?, false)
}

/// `PadV3(x, paddings[, constant_values]) -> y`, mode `constant` (the
/// form torch_npu's padding and its collectives' staging launch): x with
/// `before`/`after` elements of the constant (0 without one) around each
/// axis. `paddings` holds before and after per axis in turn
/// (`paddings_contiguous`, the default) or every before then every after.
/// Modes `reflect`, `symmetric` and `edge` are `mirror.rs`'s. Other
/// modes, and negative paddings (cropping), are refused with
/// `ACL_ERROR_OP_ATTR_NOT_MATCH` / `ACL_ERROR_INVALID_PARAM`.
pub(super) fn PadV3(call: &Call<'_>) -> Result<Written, AclError> {
    let n = call.inputs.count();
    if !(2..=3).contains(&n) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.outputs.len() != 1 {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    match call.attr("mode") {
        None => {}
        Some(AttrValue::String(m)) if m == "constant" => {}
        // reflect, symmetric, edge: the tensor's own elements (the
        // constant, when given, is not read).
        Some(AttrValue::String(m)) if super::mirror::is_mirror_mode(m) => {
            return super::mirror::mirror_pad(call, m);
        }
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    let x = call.tensor(0)?;
    let pads = call.sizes(1)?;
    let rank = x.dims.len();
    if pads.len() != 2 * rank {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let contiguous = call.attr_bool("paddings_contiguous", true)?;
    let (before, after): (Vec<usize>, Vec<usize>) = if contiguous {
        (0..rank).map(|k| (pads[2 * k], pads[2 * k + 1])).unzip()
    } else {
        (0..rank).map(|k| (pads[k], pads[rank + k])).unzip()
    };
    let dims: Vec<usize> = (0..rank)
        .map(|k| x.dims[k] + before[k] + after[k])
        .collect();
    if dims != call.out(0).dims || call.out(0).dtype != x.dtype {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let fill = if n == 3 { call.scalar(2)? } else { Num::I(0) };
    let mut y = Tensor::full(x.dtype, dims.clone(), fill)?;
    let size = x.dtype.size();
    let out_strides = contiguous_strides(&dims);
    // Each element of x, to its place in y.
    let in_strides = contiguous_strides(&x.dims);
    for i in 0..x.numel() {
        let mut at = 0;
        for k in 0..rank {
            at += (i / in_strides[k] % x.dims[k] + before[k]) * out_strides[k];
        }
        y.bytes[at * size..at * size + size].copy_from_slice(&x.bytes[i * size..i * size + size]);
    }
    Ok(vec![y.bytes])
}
