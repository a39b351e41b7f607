//! Batch normalisation as torch_npu launches it for `nn.BatchNorm1d/2d`
//! (`x` reshaped to 4-D NCHW: `[N, C]` as `[N, C, 1, 1]`, `[N, C, L]` as
//! `[N, C, L, 1]`) and, through the `BN3D*` names, `nn.BatchNorm3d`'s
//! training: any `x` of at least 2 dims normalised per channel (dim 1)
//! over every other dim, its `M` elements per channel.
//!
//! Training forward is two operators: `BNTrainingReduce(x) -> (sum,
//! square_sum)`, then `BNTrainingUpdate(x, sum, square_sum, scale, offset,
//! mean, variance) -> (y, mean, variance, batch_mean, batch_variance)`
//! (attributes `epsilon`, `factor`: torch's momentum). The batch variance
//! is the population one (`square_sum/M − mean²`), and it is what
//! `batch_variance` hands back (torch_npu keeps it as `save_invstd` and
//! gives it to the backward, which adds epsilon itself); the running
//! variance is updated with the unbiased one, `·M/(M−1)`, as torch does.
//! Evaluation is `BNInfer(x, scale, offset, mean, variance) -> y`. The
//! backward: `BNTrainingUpdateGrad(grads, x, batch_mean, batch_variance)
//! -> (diff_scale, diff_offset)`, then `BNTrainingReduceGrad(grads, x,
//! diff_scale, diff_offset, scale, batch_mean, batch_variance) -> y`, or in
//! evaluation mode `BNInferGrad(grads, scale, batch_variance) -> x_backprop`.
//!
//! Every per-channel tensor may be of any float type (torch_npu casts
//! scale and the statistics to float32 but not offset); sums over a
//! channel are accumulated in float64 (as torch's CPU statistics are),
//! the elementwise work is in the working type (`float`), and each
//! output is rounded once to its own type.

#![allow(non_snake_case)]

use super::call::*;
use super::float::{Real, by_type, bytes, values};

/// `x` of `[N, C, ...]`: `c` channels of `inner` contiguous elements in
/// each of `outer` blocks.
#[derive(Debug, Clone, Copy)]
struct Channels {
    outer: usize,
    c: usize,
    inner: usize,
}

impl Channels {
    /// The channels of x (at least 2 dims; counts that overflow, which
    /// a shape holding a 0 may have, are refused).
    fn of(dims: &[usize]) -> Result<Channels, AclError> {
        let [n, c, rest @ ..] = dims else {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        };
        let inner = Tensor::numel_of(rest).map_err(|_| AclError::OP_INPUT_NOT_MATCH)?;
        for counts in [[*n, inner], [*c, inner]] {
            Tensor::numel_of(&counts).map_err(|_| AclError::OP_INPUT_NOT_MATCH)?;
        }
        Ok(Channels {
            outer: *n,
            c: *c,
            inner,
        })
    }

    /// The elements per channel.
    fn m(&self) -> usize {
        self.outer * self.inner
    }

    /// The channel of element `e`.
    fn of_element(&self, e: usize) -> usize {
        (e / self.inner.max(1)) % self.c.max(1)
    }

    /// Per channel, the sum of `f` over its elements, in float64.
    fn sums(&self, n: usize, f: impl Fn(usize) -> f64) -> Vec<f64> {
        let mut s = vec![0.0; self.c];
        for e in 0..n {
            s[self.of_element(e)] += f(e);
        }
        s
    }
}

/// The float tensor at input `i`, of `dims`.
fn same_as<T: Real>(call: &Call<'_>, i: usize, dims: &[usize]) -> Result<Vec<T>, AclError> {
    let t = call.tensor(i)?;
    if t.dims != dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    values::<T>(&t)
}

/// The per-channel tensor at input `i`: `c` floats.
fn per_channel<T: Real>(call: &Call<'_>, i: usize, c: usize) -> Result<Vec<T>, AclError> {
    let v = values::<T>(&call.tensor(i)?)?;
    if v.len() != c {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    Ok(v)
}

/// Outputs `outs` must each hold `numel` elements.
fn hold(call: &Call<'_>, outs: std::ops::Range<usize>, numel: usize) -> Result<(), AclError> {
    if outs.into_iter().all(|o| call.out(o).numel() == numel) {
        Ok(())
    } else {
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    }
}

/// The x of a call (input `i`): its values and channels.
fn input_x<T: Real>(call: &Call<'_>, i: usize) -> Result<(Vec<T>, Channels, Vec<usize>), AclError> {
    let x = call.tensor(i)?;
    let ch = Channels::of(&x.dims)?;
    Ok((values::<T>(&x)?, ch, x.dims))
}

/// `1/√(v + ε)` per channel.
fn rstd<T: Real>(var: &[T], eps: T) -> Vec<T> {
    var.iter().map(|&v| T::ONE / (v + eps).sqrt()).collect()
}

fn epsilon<T: Real>(call: &Call<'_>) -> Result<T, AclError> {
    Ok(T::of(f64::from(call.attr_float("epsilon", 1e-4)?)))
}

fn reduce<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let (x, ch, _) = input_x::<T>(call, 0)?;
    epsilon::<T>(call)?;
    hold(call, 0..2, ch.c)?;
    let sum = ch.sums(x.len(), |e| x[e].f64());
    let square = ch.sums(x.len(), |e| x[e].f64() * x[e].f64());
    Ok(vec![
        bytes(call.out(0).dtype, &sum)?,
        bytes(call.out(1).dtype, &square)?,
    ])
}

/// `BNTrainingReduce(x) -> (sum, square_sum)`: per channel, the sum of x
/// and of x² (float64 sums, rounded to the outputs' type, float32 from
/// torch_npu). Its `epsilon` is not used (checked only).
pub(super) fn BNTrainingReduce(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 2)?;
    by_type(
        call.spec(0)?.dtype,
        || reduce::<f32>(call),
        || reduce::<f64>(call),
    )
}

/// `BN3DTrainingReduce`: `BNTrainingReduce` of a 5-D x (any rank works).
pub(super) fn BN3DTrainingReduce(call: &Call<'_>) -> Result<Written, AclError> {
    BNTrainingReduce(call)
}

fn update<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let (x, ch, _) = input_x::<T>(call, 0)?;
    let (sum, square) = (
        per_channel::<f64>(call, 1, ch.c)?,
        per_channel::<f64>(call, 2, ch.c)?,
    );
    let (scale, offset) = (
        per_channel::<T>(call, 3, ch.c)?,
        per_channel::<T>(call, 4, ch.c)?,
    );
    let (run_mean, run_var) = (
        per_channel::<f64>(call, 5, ch.c)?,
        per_channel::<f64>(call, 6, ch.c)?,
    );
    let eps = epsilon::<T>(call)?;
    let factor = f64::from(call.attr_float("factor", 0.1)?);
    hold(call, 0..1, x.len())?;
    hold(call, 1..5, ch.c)?;
    let m = ch.m() as f64;
    let mean: Vec<f64> = sum.iter().map(|s| s / m).collect();
    let var: Vec<f64> = square
        .iter()
        .zip(&mean)
        .map(|(q, mu)| (q / m - mu * mu).max(0.0))
        .collect();
    let unbiased = if ch.m() > 1 { m / (m - 1.0) } else { 1.0 };
    let new_mean: Vec<f64> = (run_mean.iter().zip(&mean))
        .map(|(r, b)| factor * b + (1.0 - factor) * r)
        .collect();
    let new_var: Vec<f64> = (run_var.iter().zip(&var))
        .map(|(r, v)| factor * v * unbiased + (1.0 - factor) * r)
        .collect();
    let (mean_t, var_t): (Vec<T>, Vec<T>) = (
        mean.iter().map(|&v| T::of(v)).collect(),
        var.iter().map(|&v| T::of(v)).collect(),
    );
    let rs = rstd(&var_t, eps);
    let y: Vec<T> = (0..x.len())
        .map(|e| {
            let k = ch.of_element(e);
            (x[e] - mean_t[k]) * rs[k] * scale[k] + offset[k]
        })
        .collect();
    Ok(vec![
        bytes(call.out(0).dtype, &y)?,
        bytes(call.out(1).dtype, &new_mean)?,
        bytes(call.out(2).dtype, &new_var)?,
        bytes(call.out(3).dtype, &mean)?,
        bytes(call.out(4).dtype, &var)?,
    ])
}

/// `BNTrainingUpdate(x, sum, square_sum, scale, offset, mean, variance) ->
/// (y, mean, variance, batch_mean, batch_variance)`, attributes `epsilon`
/// and `factor`: the batch's mean `sum/M` and population variance
/// `square_sum/M − mean²`; `y = (x − mean)/√(var + ε)·scale + offset`; the
/// running statistics `factor·batch + (1 − factor)·running` (the variance
/// unbiased, `·M/(M − 1)`, or as it is for `M` 1, which torch refuses
/// before launching); and the batch's mean and variance.
pub(super) fn BNTrainingUpdate(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(7, 5)?;
    by_type(
        call.spec(0)?.dtype,
        || update::<f32>(call),
        || update::<f64>(call),
    )
}

/// `BN3DTrainingUpdate`: `BNTrainingUpdate` of a 5-D x.
pub(super) fn BN3DTrainingUpdate(call: &Call<'_>) -> Result<Written, AclError> {
    BNTrainingUpdate(call)
}

fn infer<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let (x, ch, _) = input_x::<T>(call, 0)?;
    let p: Vec<Vec<T>> = (1..5)
        .map(|i| per_channel::<T>(call, i, ch.c))
        .collect::<Result<_, _>>()?;
    hold(call, 0..1, x.len())?;
    let rs = rstd(&p[3], epsilon::<T>(call)?);
    let y: Vec<T> = (0..x.len())
        .map(|e| {
            let k = ch.of_element(e);
            (x[e] - p[2][k]) * rs[k] * p[0][k] + p[1][k]
        })
        .collect();
    Ok(vec![bytes(call.out(0).dtype, &y)?])
}

/// `BNInfer(x, scale, offset, mean, variance) -> y`, attribute `epsilon`:
/// `(x − mean)/√(variance + ε)·scale + offset` with the given (running)
/// statistics.
pub(super) fn BNInfer(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(5, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || infer::<f32>(call),
        || infer::<f64>(call),
    )
}

/// The normalised x, `(x − mean)·rstd`, of a backward call whose x is
/// input 1 and statistics inputs `stats` (mean, variance).
struct Normalised<T> {
    dy: Vec<T>,
    xh: Vec<T>,
    rstd: Vec<T>,
    ch: Channels,
}

fn normalised<T: Real>(call: &Call<'_>, stats: [usize; 2]) -> Result<Normalised<T>, AclError> {
    let (x, ch, dims) = input_x::<T>(call, 1)?;
    let dy = same_as::<T>(call, 0, &dims)?;
    let mean = per_channel::<T>(call, stats[0], ch.c)?;
    let var = per_channel::<T>(call, stats[1], ch.c)?;
    let rstd = rstd(&var, epsilon::<T>(call)?);
    let xh = (0..x.len())
        .map(|e| {
            let k = ch.of_element(e);
            (x[e] - mean[k]) * rstd[k]
        })
        .collect();
    Ok(Normalised { dy, xh, rstd, ch })
}

fn update_grad<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let n = normalised::<T>(call, [2, 3])?;
    hold(call, 0..2, n.ch.c)?;
    let diff_scale = n.ch.sums(n.dy.len(), |e| n.dy[e].f64() * n.xh[e].f64());
    let diff_offset = n.ch.sums(n.dy.len(), |e| n.dy[e].f64());
    Ok(vec![
        bytes(call.out(0).dtype, &diff_scale)?,
        bytes(call.out(1).dtype, &diff_offset)?,
    ])
}

/// `BNTrainingUpdateGrad(grads, x, batch_mean, batch_variance) ->
/// (diff_scale, diff_offset)`, attribute `epsilon`: per channel
/// `Σ grads·(x − mean)/√(variance + ε)` and `Σ grads`.
pub(super) fn BNTrainingUpdateGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(4, 2)?;
    by_type(
        call.spec(1)?.dtype,
        || update_grad::<f32>(call),
        || update_grad::<f64>(call),
    )
}

/// `BN3DTrainingUpdateGrad`: `BNTrainingUpdateGrad` of a 5-D x.
pub(super) fn BN3DTrainingUpdateGrad(call: &Call<'_>) -> Result<Written, AclError> {
    BNTrainingUpdateGrad(call)
}

fn reduce_grad<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let n = normalised::<T>(call, [5, 6])?;
    let c = n.ch.c;
    let (diff_scale, diff_offset) = (per_channel::<T>(call, 2, c)?, per_channel::<T>(call, 3, c)?);
    let scale = per_channel::<T>(call, 4, c)?;
    hold(call, 0..1, n.dy.len())?;
    let m = T::of(n.ch.m() as f64);
    let dx: Vec<T> = (0..n.dy.len())
        .map(|e| {
            let k = n.ch.of_element(e);
            let centred = n.dy[e] - diff_offset[k] / m - n.xh[e] * diff_scale[k] / m;
            scale[k] * n.rstd[k] * centred
        })
        .collect();
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `BNTrainingReduceGrad(grads, x, diff_scale, diff_offset, scale,
/// batch_mean, batch_variance) -> y`, attribute `epsilon`: the gradient of
/// x, `scale·rstd·(grads − diff_offset/M − xh·diff_scale/M)` with
/// `rstd = 1/√(variance + ε)` and `xh = (x − mean)·rstd`.
pub(super) fn BNTrainingReduceGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(7, 1)?;
    by_type(
        call.spec(1)?.dtype,
        || reduce_grad::<f32>(call),
        || reduce_grad::<f64>(call),
    )
}

/// `BN3DTrainingReduceGrad`: `BNTrainingReduceGrad` of a 5-D x.
pub(super) fn BN3DTrainingReduceGrad(call: &Call<'_>) -> Result<Written, AclError> {
    BNTrainingReduceGrad(call)
}

fn infer_grad<T: Real>(call: &Call<'_>) -> Result<Written, AclError> {
    let (dy, ch, _) = input_x::<T>(call, 0)?;
    let scale = per_channel::<T>(call, 1, ch.c)?;
    let var = per_channel::<T>(call, 2, ch.c)?;
    hold(call, 0..1, dy.len())?;
    let rs = rstd(&var, epsilon::<T>(call)?);
    let dx: Vec<T> = (0..dy.len())
        .map(|e| {
            let k = ch.of_element(e);
            dy[e] * scale[k] * rs[k]
        })
        .collect();
    Ok(vec![bytes(call.out(0).dtype, &dx)?])
}

/// `BNInferGrad(grads, scale, batch_variance) -> x_backprop`, attribute
/// `epsilon`: the gradient of x through `BNInfer` (fixed statistics),
/// `grads·scale/√(variance + ε)`.
pub(super) fn BNInferGrad(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    by_type(
        call.spec(0)?.dtype,
        || infer_grad::<f32>(call),
        || infer_grad::<f64>(call),
    )
}

#[cfg(test)]
mod tests;
