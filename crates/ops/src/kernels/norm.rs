//! Layer and RMS normalisation, forward and backward, as torch_npu
//! launches them: `LayerNorm(x, gamma, beta) -> (y, mean, variance)` with
//! `begin_norm_axis`, `begin_params_axis` and `epsilon` (the third output
//! is the variance, which torch_npu hands back to
//! `LayerNormGrad(dy, x, variance, mean, gamma) -> (dx, dgamma, dbeta)`);
//! `RmsNorm(x, gamma) -> (y, rstd)` with `epsilon` (rstd float32) and
//! `RmsNormGrad(dy, x, rstd, gamma) -> (dx, dgamma)` (dgamma float32), for
//! `torch_npu.npu_rms_norm`.
//!
//! Each row (the elements from the normalised axis on) is reduced in the
//! working type (fp32 for float32, float16 and bfloat16; fp64 for
//! float64) and every output is rounded once to its own type (gamma,
//! beta and the statistics may be of another float type than x). As the
//! NPU's `LayerNormGrad` does, the backward takes the variance, not the
//! standard deviation, and adds its own epsilon: 1e-12 for float32 x,
//! 1e-5 for the others.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, axis, by_type, bytes, values};

/// `x` split into `rows` rows of `n` elements, with parameters of `p`
/// elements repeating along each row.
#[derive(Debug, Clone, Copy)]
struct Split {
    rows: usize,
    n: usize,
    p: usize,
}

/// The parameter (gamma or beta) at input `i`: float, of `p` elements.
fn param<T: Real>(call: &Call<'_>, i: usize, p: usize) -> Result<Vec<T>, AclError> {
    let t = call.tensor(i)?;
    let v = values::<T>(&t)?;
    if v.len() != p {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    Ok(v)
}

/// Output `o` must hold `numel` elements.
fn holds(call: &Call<'_>, o: usize, numel: usize) -> Result<(), AclError> {
    if call.out(o).numel() == numel {
        Ok(())
    } else {
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    }
}

fn layer_norm<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let x = call.tensor(0)?;
    let rank = x.dims.len();
    let norm = axis(call.attr_int("begin_norm_axis", 0)?, rank)?;
    let params = axis(call.attr_int("begin_params_axis", 0)?, rank)?;
    if params < norm {
        return Err(AclError::OP_ATTR_NOT_MATCH);
    }
    let eps = T::of(f64::from(call.attr_float("epsilon", 1e-7)?));
    let tail = |from: usize| x.dims.get(from..).unwrap_or(&[]).iter().product::<usize>();
    let s = Split {
        rows: x.dims.get(..norm).unwrap_or(&[]).iter().product(),
        n: tail(norm),
        p: tail(params),
    };
    let xv = values::<T>(&x)?;
    let (gamma, beta) = (param::<T>(call, 1, s.p)?, param::<T>(call, 2, s.p)?);
    holds(call, 0, xv.len())?;
    holds(call, 1, s.rows)?;
    holds(call, 2, s.rows)?;
    let mut y = vec![T::ZERO; xv.len()];
    let (mut mean, mut var) = (vec![T::ZERO; s.rows], vec![T::ZERO; s.rows]);
    let count = T::of(s.n as f64);
    for r in 0..s.rows {
        let row = &xv[r * s.n..(r + 1) * s.n];
        let m = row.iter().fold(T::ZERO, |a, &v| a + v) / count;
        let v = row.iter().fold(T::ZERO, |a, &v| a + (v - m) * (v - m)) / count;
        let rstd = T::ONE / (v + eps).sqrt();
        for (j, &xj) in row.iter().enumerate() {
            y[r * s.n + j] = (xj - m) * rstd * gamma[j % s.p] + beta[j % s.p];
        }
        (mean[r], var[r]) = (m, v);
    }
    Ok(vec![
        bytes(call.out(0).dtype, &y)?,
        bytes(call.out(1).dtype, &mean)?,
        bytes(call.out(2).dtype, &var)?,
    ])
}

/// `LayerNorm(x, gamma, beta) -> (y, mean, variance)`, attributes
/// `begin_norm_axis`, `begin_params_axis`, `epsilon`: each row of x (the
/// elements from `begin_norm_axis` on) normalised by its mean and
/// (population) variance, times gamma plus beta (of the dims from
/// `begin_params_axis` on).
pub(super) fn LayerNorm(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 3)?;
    by_type(
        call.spec(0)?.dtype,
        || layer_norm::<f32>(call),
        || layer_norm::<f64>(call),
    )
}

/// The rows of a backward call: `stats` statistics (one per row) for x of
/// `numel` elements and parameters of `p`.
fn split_by_stats(numel: usize, stats: usize, p: usize) -> Result<Split, AclError> {
    if stats == 0 || !numel.is_multiple_of(stats) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let n = numel / stats;
    if p == 0 || !n.is_multiple_of(p) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    Ok(Split { rows: stats, n, p })
}

/// `dx` of a row normalised to `xh = (x − mean)·rstd` and scaled by
/// gamma: `rstd·(g − mean(g) − xh·mean(g·xh))` with `g = dy·gamma`
/// (`centred` false drops the `mean(g)` term, as RMS normalisation does).
fn row_grad<T: Real>(dy: &[T], xh: &[T], gamma: &[T], rstd: T, centred: bool, dx: &mut [T]) {
    let n = T::of(dy.len() as f64);
    let (mut sum_g, mut sum_gx) = (T::ZERO, T::ZERO);
    for (j, (&d, &h)) in dy.iter().zip(xh).enumerate() {
        let g = d * gamma[j % gamma.len()];
        sum_g += g;
        sum_gx += g * h;
    }
    let (mean_g, mean_gx) = (if centred { sum_g / n } else { T::ZERO }, sum_gx / n);
    for (j, slot) in dx.iter_mut().enumerate() {
        let g = dy[j] * gamma[j % gamma.len()];
        *slot = rstd * (g - mean_g - xh[j] * mean_gx);
    }
}

fn layer_norm_grad<T: Real>(call: &Call<'_>, eps: f64) -> Result<Written, AclError> {
    let (dy, x) = (call.tensor(0)?, call.tensor(1)?);
    if dy.dims != x.dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let (var, mean) = (
        values::<T>(&call.tensor(2)?)?,
        values::<T>(&call.tensor(3)?)?,
    );
    if var.len() != mean.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let gamma = values::<T>(&call.tensor(4)?)?;
    let s = split_by_stats(x.numel(), var.len(), gamma.len())?;
    let (dyv, xv) = (values::<T>(&dy)?, values::<T>(&x)?);
    holds(call, 0, xv.len())?;
    holds(call, 1, s.p)?;
    holds(call, 2, s.p)?;
    let mut dx = vec![T::ZERO; xv.len()];
    let (mut dgamma, mut dbeta) = (vec![T::ZERO; s.p], vec![T::ZERO; s.p]);
    let mut xh = vec![T::ZERO; s.n];
    for r in 0..s.rows {
        let span = r * s.n..(r + 1) * s.n;
        let rstd = T::ONE / (var[r] + T::of(eps)).sqrt();
        for (h, &v) in xh.iter_mut().zip(&xv[span.clone()]) {
            *h = (v - mean[r]) * rstd;
        }
        let d = &dyv[span.clone()];
        for (j, (&dj, &hj)) in d.iter().zip(&xh).enumerate() {
            dgamma[j % s.p] += dj * hj;
            dbeta[j % s.p] += dj;
        }
        row_grad(d, &xh, &gamma, rstd, true, &mut dx[span]);
    }
    Ok(vec![
        bytes(call.out(0).dtype, &dx)?,
        bytes(call.out(1).dtype, &dgamma)?,
        bytes(call.out(2).dtype, &dbeta)?,
    ])
}

/// `LayerNormGrad(dy, x, variance, mean, gamma) -> (pd_x, pd_gamma,
/// pd_beta)`: the gradients of `LayerNorm` (the rows are as many as the
/// statistics), with `rstd = 1/√(variance + ε)`, ε 1e-12 for float32 x and
/// 1e-5 otherwise (the operator's own; it has no attribute).
pub(super) fn LayerNormGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(5, 3)?;
    let dtype = call.spec(1)?.dtype;
    let eps = if dtype == DType::F32 { 1e-12 } else { 1e-5 };
    by_type(
        dtype,
        || layer_norm_grad::<f32>(call, eps),
        || layer_norm_grad::<f64>(call, eps),
    )
}

/// Whether `gamma` is `x`'s last dims (RMS normalisation's rows).
fn trailing(x: &[usize], gamma: &[usize]) -> bool {
    x.len()
        .checked_sub(gamma.len())
        .is_some_and(|k| x[k..] == *gamma)
}

fn rms_norm<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let x = call.tensor(0)?;
    let g = call.tensor(1)?;
    let xv = values::<T>(&x)?;
    let gamma = values::<T>(&g)?;
    if !trailing(&x.dims, &g.dims) || gamma.is_empty() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let n = gamma.len();
    let rows = xv.len() / n;
    holds(call, 0, xv.len())?;
    holds(call, 1, rows)?;
    let eps = T::of(f64::from(call.attr_float("epsilon", 1e-6)?));
    let mut y = vec![T::ZERO; xv.len()];
    let mut rstd = vec![T::ZERO; rows];
    for r in 0..rows {
        let row = &xv[r * n..(r + 1) * n];
        let ms = row.iter().fold(T::ZERO, |a, &v| a + v * v) / T::of(n as f64);
        rstd[r] = T::ONE / (ms + eps).sqrt();
        for (j, &v) in row.iter().enumerate() {
            y[r * n + j] = v * rstd[r] * gamma[j];
        }
    }
    Ok(vec![
        bytes(call.out(0).dtype, &y)?,
        bytes(call.out(1).dtype, &rstd)?,
    ])
}

/// `RmsNorm(x, gamma) -> (y, rstd)`, attribute `epsilon`: each row of x
/// (gamma's dims at its end) times `rstd = 1/√(mean(x²) + ε)` and gamma;
/// rstd (float32 from torch_npu) one per row.
pub(super) fn RmsNorm(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 2)?;
    by_type(
        call.spec(0)?.dtype,
        || rms_norm::<f32>(call),
        || rms_norm::<f64>(call),
    )
}

fn rms_norm_grad<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let (dy, x) = (call.tensor(0)?, call.tensor(1)?);
    if dy.dims != x.dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let rstd = values::<T>(&call.tensor(2)?)?;
    let g = call.tensor(3)?;
    if !trailing(&x.dims, &g.dims) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let gamma = values::<T>(&g)?;
    let s = split_by_stats(x.numel(), rstd.len(), gamma.len())?;
    if s.n != s.p {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let (dyv, xv) = (values::<T>(&dy)?, values::<T>(&x)?);
    holds(call, 0, xv.len())?;
    holds(call, 1, s.p)?;
    let mut dx = vec![T::ZERO; xv.len()];
    let mut dgamma = vec![T::ZERO; s.p];
    let mut xh = vec![T::ZERO; s.n];
    for (r, &rs) in rstd.iter().enumerate() {
        let span = r * s.n..(r + 1) * s.n;
        for (h, &v) in xh.iter_mut().zip(&xv[span.clone()]) {
            *h = v * rs;
        }
        let d = &dyv[span.clone()];
        for (j, (&dj, &hj)) in d.iter().zip(&xh).enumerate() {
            dgamma[j] += dj * hj;
        }
        row_grad(d, &xh, &gamma, rs, false, &mut dx[span]);
    }
    Ok(vec![
        bytes(call.out(0).dtype, &dx)?,
        bytes(call.out(1).dtype, &dgamma)?,
    ])
}

/// `RmsNormGrad(dy, x, rstd, gamma) -> (dx, dgamma)`: the gradients of
/// `RmsNorm` (dgamma float32 from torch_npu).
pub(super) fn RmsNormGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(4, 2)?;
    by_type(
        call.spec(1)?.dtype,
        || rms_norm_grad::<f32>(call),
        || rms_norm_grad::<f64>(call),
    )
}

#[cfg(test)]
mod tests;
