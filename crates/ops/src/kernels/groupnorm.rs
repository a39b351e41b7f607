//! Group normalisation, as torch_npu launches it for `group_norm`:
//! `GroupNorm(x, gamma, beta) -> (y, mean, variance)` with `num_groups`,
//! `eps` and `is_training`. x is `[N, C, *]`; each image's channels are
//! split into `num_groups` groups of `C / num_groups` channels, each group
//! (with all its spatial elements) normalised by its mean and population
//! variance, then scaled by the channel's gamma and shifted by its beta.
//! The statistics are `[N, num_groups]`. torch_npu computes the backward
//! from them with the batch-norm operators, so there is no
//! `GroupNormGrad`.
//!
//! Reduced in fp32 for float32, float16 and bfloat16, fp64 for float64;
//! each output rounded once to its own type.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};

fn group_norm<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let x = call.tensor(0)?;
    let (n, c) = match x.dims.as_slice() {
        [n, c, ..] => (*n, *c),
        _ => return Err(AclError::OP_INPUT_NOT_MATCH),
    };
    let groups = usize::try_from(call.attr_int("num_groups", 1)?)
        .ok()
        .filter(|&g| g > 0 && c.is_multiple_of(g))
        .ok_or(AclError::OP_ATTR_NOT_MATCH)?;
    let eps = T::of(f64::from(call.attr_float("eps", 1e-5)?));
    call.attr_bool("is_training", true)?;
    let xv = values::<T>(&x)?;
    let gamma = values::<T>(&call.tensor(1)?)?;
    let beta = values::<T>(&call.tensor(2)?)?;
    if gamma.len() != c || beta.len() != c {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let (y_spec, m_spec, v_spec) = (call.out(0), call.out(1), call.out(2));
    if y_spec.numel() != xv.len() || m_spec.numel() != n * groups || v_spec.numel() != n * groups {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    // Elements per channel and per group.
    let hw = xv.len().checked_div(n * c).unwrap_or(0);
    let per = c / groups * hw;
    let mut y = vec![T::ZERO; xv.len()];
    let mut mean = vec![T::ZERO; n * groups];
    let mut var = vec![T::ZERO; n * groups];
    let count = T::of(per as f64);
    for g in 0..n * groups {
        let block = &xv[g * per..(g + 1) * per];
        let m = block.iter().fold(T::ZERO, |a, &v| a + v) / count;
        let v = block.iter().fold(T::ZERO, |a, &v| a + (v - m) * (v - m)) / count;
        let rstd = T::ONE / (v + eps).sqrt();
        for (j, &xj) in block.iter().enumerate() {
            let ch = (g % groups) * (c / groups) + j / hw;
            y[g * per + j] = (xj - m) * rstd * gamma[ch] + beta[ch];
        }
        (mean[g], var[g]) = (m, v);
    }
    Ok(vec![
        bytes(y_spec.dtype, &y)?,
        bytes(m_spec.dtype, &mean)?,
        bytes(v_spec.dtype, &var)?,
    ])
}

/// `GroupNorm(x, gamma, beta) -> (y, mean, variance)`, attributes
/// `num_groups` (dividing x's dim 1), `eps`, `is_training`: each group of
/// channels of each image normalised by its mean and population variance,
/// times the channel's gamma plus its beta.
pub(super) fn GroupNorm(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 3)?;
    by_type(
        call.spec(0)?.dtype,
        || group_norm::<f32>(call),
        || group_norm::<f64>(call),
    )
}

#[cfg(test)]
mod tests;
