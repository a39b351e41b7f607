//! Random tensors, reproducible from the key and counter torch_npu passes.

#![allow(non_snake_case)]

use super::call::*;

/// The generator of a stateless random operator: one stream per key and
/// counter (ChaCha8), so the same seed and offset give the same values.
pub(super) fn rng(call: &Call<'_>) -> Result<rand_chacha::ChaCha8Rng, AclError> {
    call.expect(4, 1)?;
    let dims = call.sizes(0)?;
    if dims != call.out(0).dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let key = call.ints(1)?;
    let counter = call.ints(2)?;
    if let Some(t) = call.attr_type("dtype")?
        && t != call.out(0).dtype
    {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if !call.out(0).dtype.is_float() {
        return Err(AclError::UNSUPPORTED_DATA_TYPE);
    }
    Ok(generator(key.iter().chain(&counter).copied()))
}

/// The stream of a key and a counter: their first four words, as the
/// little-endian bytes of a ChaCha8 seed (zeros after the last).
pub(crate) fn generator(words: impl IntoIterator<Item = i64>) -> rand_chacha::ChaCha8Rng {
    let mut seed = [0u8; 32];
    for (i, v) in words.into_iter().take(4).enumerate() {
        seed[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    rand_chacha::ChaCha8Rng::from_seed(seed)
}

/// The stream's 32-bit words one element takes: a uniform value draws one
/// `u64`, a normal one two ([`standard_normal`]); so element `i` starts at
/// word `i` times this, and a band of elements can seek to its first.
pub(crate) const fn words_per_element(normal: bool) -> u128 {
    if normal { 4 } else { 2 }
}

/// A standard normal value from two uniform draws (Box-Muller).
pub(crate) fn standard_normal(rng: &mut impl Rng) -> f64 {
    let u1 = 1.0 - unit(rng); // (0, 1]
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A uniform value in `[0, 1)` with 53 random bits.
pub(crate) fn unit(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `StatelessRandomUniformV2(shape, key, counter, alg) -> y`, attribute
/// `dtype`: uniform in `[0, 1)`.
pub(super) fn StatelessRandomUniformV2(call: &Call<'_>) -> Result<Written, AclError> {
    let mut rng = rng(call)?;
    let out = call.out(0);
    let nums = (0..out.numel()).map(|_| Num::F(unit(&mut rng)));
    let mut t = Tensor::from_nums(out.dtype, out.dims.clone(), nums);
    // A narrow type may round a value just below 1 up to 1: keep [0, 1).
    for i in 0..t.numel() {
        if t.at(i).f64() >= 1.0 {
            let s = out.dtype.size();
            out.dtype.put(Num::F(0.0), &mut t.bytes[i * s..]);
        }
    }
    Ok(vec![t.bytes])
}

/// `StatelessRandomNormalV2(shape, key, counter, alg) -> y`, attribute
/// `dtype`: standard normal (Box-Muller).
pub(super) fn StatelessRandomNormalV2(call: &Call<'_>) -> Result<Written, AclError> {
    let mut rng = rng(call)?;
    let out = call.out(0);
    let nums = (0..out.numel()).map(|_| Num::F(standard_normal(&mut rng)));
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}
