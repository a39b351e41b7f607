//! Matrix products: `MatMul`, `MatMulV2`, `BatchMatMul`, `BatchMatMulV2`
//! and `Dot`, as torch_npu launches them for `mm`, `addmm`, `mv`, `bmm`,
//! `baddbmm`, `dot` and `nn.Linear` (`docs/operators.md`).
//!
//! The descriptors hold the row-major storage shape; `transpose_x1` /
//! `transpose_x2` (`adj_x1` / `adj_x2` for the batched forms) ask for the
//! transpose of an input, which the product reads through a transposed
//! view, never a copy. Floating types only: `float32` and `float64`
//! multiply in their own type; `float16` and `bfloat16` are widened to
//! `float32`, multiplied and accumulated there, and rounded once (the
//! NPU's cube unit accumulates in fp32). The products themselves are the
//! `gemm` crate's (`crate::linalg`).

#![allow(non_snake_case)]

use std::ops::AddAssign;

use half::{bf16, f16};

use super::call::*;
use super::shape::broadcast;

use crate::linalg::{self, Element, View};

/// A float tensor's elements, widened: `f64` for `float64`, else `f32`.
pub(super) enum Wide {
    /// `float32`, or a half type widened.
    F32(Vec<f32>),
    /// `float64`.
    F64(Vec<f64>),
}

/// The floating types the products take.
pub(super) fn float_type(t: DType) -> Result<(), AclError> {
    match t {
        DType::F32 | DType::F16 | DType::Bf16 | DType::F64 => Ok(()),
        _ => Err(AclError::OP_TYPE_NOT_MATCH),
    }
}

/// A float tensor's elements, widened (`OP_TYPE_NOT_MATCH` for others).
pub(super) fn widen(t: &Tensor) -> Result<Wide, AclError> {
    let b = &t.bytes;
    Ok(match t.dtype {
        DType::F32 => Wide::F32(
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
        DType::F16 => Wide::F32(
            b.chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        ),
        DType::Bf16 => Wide::F32(
            b.chunks_exact(2)
                .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        ),
        DType::F64 => Wide::F64(
            b.chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect(),
        ),
        _ => return Err(AclError::OP_TYPE_NOT_MATCH),
    })
}

/// The result in `dtype`, rounded once.
pub(super) fn narrow(dtype: DType, wide: &Wide) -> Vec<u8> {
    match (dtype, wide) {
        (DType::F32, Wide::F32(v)) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        (DType::F16, Wide::F32(v)) => v
            .iter()
            .flat_map(|x| f16::from_f32(*x).to_le_bytes())
            .collect(),
        (DType::Bf16, Wide::F32(v)) => v
            .iter()
            .flat_map(|x| bf16::from_f32(*x).to_le_bytes())
            .collect(),
        (_, Wide::F64(v)) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        (_, Wide::F32(v)) => v.iter().flat_map(|x| f64::from(*x).to_le_bytes()).collect(),
    }
}

/// One product of a (batched) call: where the matrices lie.
struct Plan {
    m: usize,
    k: usize,
    n: usize,
    /// Per output matrix: the offsets of its `a` and `b` (elements).
    batches: Vec<(usize, usize)>,
    a_t: bool,
    b_t: bool,
}

/// The views of batch `(ao, bo)`'s operands: `a` stored `m × k` (or
/// `k × m` when transposed), `b` stored `k × n` (or `n × k`).
fn views(p: &Plan, ao: usize, bo: usize) -> (View, View) {
    let av = if p.a_t {
        View::dense(p.k, p.m, ao).t()
    } else {
        View::dense(p.m, p.k, ao)
    };
    let bv = if p.b_t {
        View::dense(p.n, p.k, bo).t()
    } else {
        View::dense(p.k, p.n, bo)
    };
    (av, bv)
}

/// The products of `plan` on one element type, with a bias of `n`
/// elements added to every row when given.
fn products<T: Element + AddAssign>(
    plan: &Plan,
    a: &[T],
    b: &[T],
    bias: Option<&[T]>,
) -> Result<Vec<T>, AclError> {
    let mn = plan.m * plan.n;
    let total = mn
        .checked_mul(plan.batches.len())
        .ok_or(AclError::INVALID_PARAM)?;
    let mut dst = vec![T::ZERO; total];
    for (i, &(ao, bo)) in plan.batches.iter().enumerate() {
        let (av, bv) = views(plan, ao, bo);
        linalg::gemm(
            &mut dst,
            View::dense(plan.m, plan.n, i * mn),
            a,
            av,
            b,
            bv,
            false,
        )?;
    }
    if let Some(bias) = bias {
        add_bias(&mut dst, bias, 1);
    }
    Ok(dst)
}

/// Runs `plan` on `x1`, `x2`, adds a bias of `n` elements (broadcast over
/// rows) when given, and gives the output's bytes.
fn run(
    plan: &Plan,
    x1: &Tensor,
    x2: &Tensor,
    bias: Option<&Tensor>,
    out: DType,
) -> Result<Vec<u8>, AclError> {
    compute(
        x1,
        x2,
        bias,
        out,
        |a, b, bias| products(plan, a, b, bias),
        |a, b, bias| products(plan, a, b, bias),
    )
}

/// Adds `bias[c]` to every element of channel `c` of `y`, whose channels
/// are runs of `inner` elements repeating every `bias.len()` runs (a
/// matrix's columns: `inner` 1; an NCHW tensor's channels: `inner` H × W).
pub(super) fn add_bias<T: Copy + AddAssign>(y: &mut [T], bias: &[T], inner: usize) {
    for (i, v) in y.iter_mut().enumerate() {
        *v += bias[(i / inner) % bias.len()];
    }
}

/// Runs `f32_op` or `f64_op` on the widened inputs (a float type, the
/// same for all: `OP_TYPE_NOT_MATCH` otherwise) and gives the output's
/// bytes in `out`, rounded once.
pub(super) fn compute(
    x: &Tensor,
    f: &Tensor,
    b: Option<&Tensor>,
    out: DType,
    f32_op: impl FnOnce(&[f32], &[f32], Option<&[f32]>) -> Result<Vec<f32>, AclError>,
    f64_op: impl FnOnce(&[f64], &[f64], Option<&[f64]>) -> Result<Vec<f64>, AclError>,
) -> Result<Vec<u8>, AclError> {
    let b = b.map(widen).transpose()?;
    let wide = match (widen(x)?, widen(f)?, b) {
        (Wide::F32(x), Wide::F32(f), None) => Wide::F32(f32_op(&x, &f, None)?),
        (Wide::F32(x), Wide::F32(f), Some(Wide::F32(b))) => Wide::F32(f32_op(&x, &f, Some(&b))?),
        (Wide::F64(x), Wide::F64(f), None) => Wide::F64(f64_op(&x, &f, None)?),
        (Wide::F64(x), Wide::F64(f), Some(Wide::F64(b))) => Wide::F64(f64_op(&x, &f, Some(&b))?),
        _ => return Err(AclError::OP_TYPE_NOT_MATCH),
    };
    Ok(narrow(out, &wide))
}

/// The bias of a `MatMul`: `n` elements, 1-D or `(1, n)`, of the inputs'
/// type.
fn bias_of(call: &Call<'_>, i: usize, n: usize, dtype: DType) -> Result<Option<Tensor>, AclError> {
    if call.inputs.count() <= i {
        return Ok(None);
    }
    let bias = call.tensor(i)?;
    if bias.dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let ok = match bias.dims.as_slice() {
        [len] | [1, len] => *len == n,
        _ => false,
    };
    if !ok {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    Ok(Some(bias))
}

/// `MatMul(x1, x2[, bias]) -> y`, 2-D: `y = op(x1) · op(x2) (+ bias)`,
/// `op` a transpose where `transpose_x1` / `transpose_x2` say.
pub(super) fn MatMul(call: &Call<'_>) -> Result<Written, AclError> {
    matmul_2d(call, 3)
}

/// `MatMulV2(x1, x2[, bias[, offset_w]]) -> y`: as `MatMul` (`offset_x`
/// must be 0: the quantised forms are not emulated).
pub(super) fn MatMulV2(call: &Call<'_>) -> Result<Written, AclError> {
    match call.attr("offset_x") {
        None | Some(AttrValue::Int(0)) => {}
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    }
    if call.inputs.count() == 4 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    matmul_2d(call, 3)
}

fn matmul_2d(call: &Call<'_>, max_inputs: usize) -> Result<Written, AclError> {
    let inputs = call.inputs.count();
    if !(2..=max_inputs).contains(&inputs) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.outputs.len() != 1 {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (x1, x2) = (call.tensor(0)?, call.tensor(1)?);
    float_type(x1.dtype)?;
    if x2.dtype != x1.dtype || call.out(0).dtype != x1.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let (a_t, b_t) = (
        call.attr_bool("transpose_x1", false)?,
        call.attr_bool("transpose_x2", false)?,
    );
    let ([r1, c1], [r2, c2]) = (dims2(&x1)?, dims2(&x2)?);
    let (m, k) = if a_t { (c1, r1) } else { (r1, c1) };
    let (k2, n) = if b_t { (c2, r2) } else { (r2, c2) };
    if k != k2 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let out = call.out(0);
    if out.dims != [m, n] {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let bias = bias_of(call, 2, n, x1.dtype)?;
    let plan = Plan {
        m,
        k,
        n,
        batches: vec![(0, 0)],
        a_t,
        b_t,
    };
    Ok(vec![run(&plan, &x1, &x2, bias.as_ref(), out.dtype)?])
}

fn dims2(t: &Tensor) -> Result<[usize; 2], AclError> {
    match t.dims.as_slice() {
        [r, c] => Ok([*r, *c]),
        _ => Err(AclError::OP_INPUT_NOT_MATCH),
    }
}

/// `BatchMatMul(x1, x2) -> y`: matrices `[..., m, k]` times `[..., k, n]`
/// (`adj_x1` / `adj_x2` transpose them), the batch dims broadcast.
pub(super) fn BatchMatMul(call: &Call<'_>) -> Result<Written, AclError> {
    batch_matmul(call, 2)
}

/// `BatchMatMulV2(x1, x2[, bias]) -> y`: as `BatchMatMul`, with a bias of
/// `n` elements added to every row.
pub(super) fn BatchMatMulV2(call: &Call<'_>) -> Result<Written, AclError> {
    batch_matmul(call, 3)
}

fn batch_matmul(call: &Call<'_>, max_inputs: usize) -> Result<Written, AclError> {
    let inputs = call.inputs.count();
    if !(2..=max_inputs).contains(&inputs) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.outputs.len() != 1 {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (x1, x2) = (call.tensor(0)?, call.tensor(1)?);
    float_type(x1.dtype)?;
    if x2.dtype != x1.dtype || call.out(0).dtype != x1.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let (a_t, b_t) = (
        call.attr_bool("adj_x1", false)?,
        call.attr_bool("adj_x2", false)?,
    );
    if x1.dims.len() < 2 || x2.dims.len() < 2 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let (ab, am) = x1.dims.split_at(x1.dims.len() - 2);
    let (bb, bm) = x2.dims.split_at(x2.dims.len() - 2);
    let (m, k) = if a_t { (am[1], am[0]) } else { (am[0], am[1]) };
    let (k2, n) = if b_t { (bm[1], bm[0]) } else { (bm[0], bm[1]) };
    if k != k2 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let batch = broadcast(ab, bb)?;
    let out = call.out(0);
    let mut want = batch.clone();
    want.extend([m, n]);
    if out.dims != want {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    // Each output matrix's operands: the batch index broadcast into each
    // input's own batch dims.
    let count = Tensor::numel_of(&batch)?;
    let batches = (0..count)
        .map(|i| {
            (
                batch_offset(&batch, ab, m * k, i),
                batch_offset(&batch, bb, k * n, i),
            )
        })
        .collect();
    let bias = bias_of(call, 2, n, x1.dtype)?;
    let plan = Plan {
        m,
        k,
        n,
        batches,
        a_t,
        b_t,
    };
    Ok(vec![run(&plan, &x1, &x2, bias.as_ref(), out.dtype)?])
}

/// The element offset, in an input whose batch dims are `dims` (right
/// aligned with `batch`, 1 where it broadcasts) and whose matrices hold
/// `size` elements, of the matrix output batch `i` reads.
fn batch_offset(batch: &[usize], dims: &[usize], size: usize, i: usize) -> usize {
    let mut off = 0;
    let mut stride = size;
    let mut rest = i;
    for (axis, &extent) in batch.iter().enumerate().rev() {
        let along = rest % extent.max(1);
        rest /= extent.max(1);
        let Some(own) = (axis + dims.len()).checked_sub(batch.len()) else {
            continue;
        };
        let d = dims[own];
        if d != 1 {
            off += along * stride;
        }
        stride *= d;
    }
    off
}

/// `Dot(x1, x2) -> y`: the inner product of two 1-D tensors, a scalar.
pub(super) fn Dot(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let (x1, x2) = (call.tensor(0)?, call.tensor(1)?);
    float_type(x1.dtype)?;
    if x2.dtype != x1.dtype || call.out(0).dtype != x1.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let ([n1], [n2]) = (x1.dims.as_slice(), x2.dims.as_slice()) else {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    };
    if n1 != n2 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    if call.out(0).numel() != 1 {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let plan = Plan {
        m: 1,
        k: *n1,
        n: 1,
        batches: vec![(0, 0)],
        a_t: false,
        b_t: false,
    };
    Ok(vec![run(&plan, &x1, &x2, None, call.out(0).dtype)?])
}

#[cfg(test)]
mod tests;
