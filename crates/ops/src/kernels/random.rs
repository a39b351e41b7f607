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
    let mut seed = [0u8; 32];
    for (i, v) in key.iter().chain(&counter).take(4).enumerate() {
        seed[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    if let Some(t) = call.attr_type("dtype")?
        && t != call.out(0).dtype
    {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if !call.out(0).dtype.is_float() {
        return Err(AclError::UNSUPPORTED_DATA_TYPE);
    }
    Ok(rand_chacha::ChaCha8Rng::from_seed(seed))
}

/// A uniform value in `[0, 1)` with 53 random bits.
pub(super) fn unit(rng: &mut impl Rng) -> f64 {
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
    let nums = (0..out.numel()).map(|_| {
        let u1 = 1.0 - unit(&mut rng); // (0, 1]
        let u2 = unit(&mut rng);
        Num::F((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos())
    });
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}
