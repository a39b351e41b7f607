//! Dropout as torch_npu launches it (`_npu_dropout`, `native_dropout` and
//! their backward): a bit mask made by
//! `StatelessDropOutGenMask(shape, keep_prob, seed, seed1, offset)` and
//! applied by `DropOutDoMask(x, mask, keep_prob)`, which is also the
//! backward (the same mask on the upstream gradient).
//!
//! The mask holds one bit per element, element `i` in bit `i % 8` of byte
//! `i / 8` (1: kept), and is as long as torch_npu allocates it: the
//! element count rounded up to a multiple of 128, over 8 bytes. Its bits
//! are drawn from a stream keyed by the seed, `seed1` and the offset (as
//! the stateless random kernels draw theirs), each kept with probability
//! `keep_prob`: the same seed and offset give the same mask, but its
//! numbers are not an NPU's.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};
use super::random::unit;

/// The bytes of the mask of `count` elements: `count` rounded up to a
/// multiple of 128, over 8.
pub(super) fn mask_len(count: usize) -> Option<usize> {
    Some(count.checked_add(127)? / 128 * 16)
}

/// Input `i`, a probability in `[0, 1]` of a floating type (100020 for
/// another type, 100000 outside the range).
fn probability(call: &Call<'_>, i: usize) -> Result<f64, AclError> {
    let t = call.tensor(i)?;
    if !t.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let p = call.scalar(i)?.f64();
    if !(0.0..=1.0).contains(&p) {
        return Err(AclError::INVALID_PARAM);
    }
    Ok(p)
}

/// `StatelessDropOutGenMask(shape, keep_prob, seed, seed1, offset) ->
/// mask` (uint8): bit `i` set with probability `keep_prob` for each of the
/// `shape`'s elements, the padding bits 0. `seed` and `seed1` are int
/// scalars, `offset` torch_npu's `{0, offset}` (int64); the stream is
/// ChaCha8 keyed by the four, as the other stateless random kernels key
/// theirs.
pub(super) fn StatelessDropOutGenMask(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(5, 1)?;
    let count = Tensor::numel_of(&call.sizes(0)?)?;
    let keep = probability(call, 1)?;
    let seed = call.scalar(2)?;
    let seed1 = call.scalar(3)?;
    if call.spec(2)?.dtype.is_float() || call.spec(3)?.dtype.is_float() {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let offset = call.ints(4)?;
    let out = call.out(0);
    if out.dtype != DType::U8 {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let len = mask_len(count).ok_or(AclError::INVALID_PARAM)?;
    if out.numel() != len {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let mut key = [0u8; 32];
    let words = [seed.i64(), seed1.i64()].into_iter().chain(offset);
    for (i, v) in words.take(4).enumerate() {
        key[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    let mut rng = rand_chacha::ChaCha8Rng::from_seed(key);
    let mut mask = vec![0u8; len];
    for i in 0..count {
        if unit(&mut rng) < keep {
            mask[i / 8] |= 1 << (i % 8);
        }
    }
    Ok(vec![mask])
}

fn do_mask<T: Real>(x: &Tensor, mask: &[u8], keep: f64, out: DType) -> Result<Written, AclError> {
    let v = values::<T>(x)?;
    // keep_prob 0 drops everything (no division by it).
    let scale = if keep > 0.0 {
        T::of(1.0 / keep)
    } else {
        T::ZERO
    };
    let y: Vec<T> = v
        .iter()
        .enumerate()
        .map(|(i, &e)| {
            if mask[i / 8] >> (i % 8) & 1 == 1 {
                e * scale
            } else {
                T::ZERO
            }
        })
        .collect();
    Ok(vec![bytes(out, &y)?])
}

/// `DropOutDoMask(x, mask, keep_prob) -> y`: `x / keep_prob` where the
/// mask's bit is set, else 0 (every element 0 for `keep_prob` 0). `x` and
/// `y` of one floating type and count, `keep_prob` a float scalar in
/// `[0, 1]`, `mask` uint8 of [`mask_len`] bytes (100021 otherwise).
pub(super) fn DropOutDoMask(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let x = call.tensor(0)?;
    let mask = call.tensor(1)?;
    let keep = probability(call, 2)?;
    let out = call.out(0);
    if out.dtype != x.dtype || mask.dtype != DType::U8 {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if out.numel() != x.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    if Some(mask.numel()) != mask_len(x.numel()) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    by_type(
        x.dtype,
        || do_mask::<f32>(&x, &mask.bytes, keep, out.dtype),
        || do_mask::<f64>(&x, &mask.bytes, keep, out.dtype),
    )
}

#[cfg(test)]
mod tests;
