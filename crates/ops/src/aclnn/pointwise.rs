//! Elementwise arithmetic of floating tensors (`aclnnAdd`, `aclnnSub`,
//! `aclnnMul`, `aclnnDiv` and their scalar and in-place forms) streamed
//! through device memory a chunk at a time, in bands per core, when every
//! tensor is contiguous and of the output's shape and type (or holds one
//! element, or is a row the output repeats: a bias over the last
//! dimensions, read once), as most of a model's are: O(N) time and
//! O(chunk + row) host memory.
//! Each element is computed in `f32` and rounded once to the output's type,
//! which gives the general path's values: for `+ - × ÷` of operands of at
//! most 24 significant bits, the `f32` result rounded again is the exactly
//! rounded one. Anything else (other broadcasts, strides, integers, `f64`,
//! an `alpha` other than 1) takes the general path
//! of [`Plan::run`](super::Plan::run).

use aclmem_core::AclError;

use super::View;
use super::memory::Memory;
use super::plan::{Arg, Kind, Plan};
use super::stream::{BAND, CHUNK, buffer, in_bands, narrow, start, widen};
use crate::tensor::{DType, Num};

/// One operand: a contiguous tensor of the output's shape, one value, or
/// a row the output repeats.
enum Operand {
    /// The address of its first element.
    Tensor(usize),
    /// A value, already rounded to the output's type.
    Value(f32),
    /// The elements of a contiguous tensor whose shape is the output's
    /// last dimensions (leading ones aside), as `f32`: element `i` of the
    /// output takes element `i % len` of it.
    Row(Vec<f32>),
}

/// The most elements a repeated row may hold (16 MiB of `f32`).
const MAX_ROW: usize = 1 << 22;

/// The operation of a binary kernel.
fn operation(kernel: &str) -> Option<fn(f32, f32) -> f32> {
    Some(match kernel {
        "Add" => |a, b| a + b,
        "Sub" => |a, b| a - b,
        "Mul" => |a, b| a * b,
        "RealDiv" => |a, b| a / b,
        _ => return None,
    })
}

/// `v` rounded to `dtype`, as `f32`.
fn rounded(dtype: DType, v: f64) -> f32 {
    dtype.get(&dtype.bytes_of(Num::F(v))).f64() as f32
}

/// Runs a binary `plan` streamed when it has this module's form; `None`
/// when it does not.
pub(super) fn run(plan: &Plan, mem: &dyn Memory) -> Option<Result<(), AclError>> {
    let Kind::Binary { kernel, alpha } = &plan.kind else {
        return None;
    };
    if alpha.is_some_and(|a| a.f64() != 1.0) {
        return None;
    }
    let op = operation(kernel)?;
    let out = &plan.out;
    if !matches!(out.dtype, DType::F32 | DType::F16 | DType::Bf16) || !out.is_contiguous() {
        return None;
    }
    let operand = |arg: &Arg| -> Option<Result<Operand, AclError>> {
        match arg {
            Arg::Scalar(s) => Some(Ok(Operand::Value(rounded(out.dtype, s.value.f64())))),
            Arg::Tensor(v) if v.dtype != out.dtype => None,
            Arg::Tensor(v) if v.dims == out.dims && v.is_contiguous() => {
                Some(Ok(Operand::Tensor(start(v))))
            }
            Arg::Tensor(v) if v.numel() == 1 && v.dims.len() <= out.dims.len() => {
                Some(one(v, mem).map(Operand::Value))
            }
            Arg::Tensor(v) if repeated(v, out) => Some(row(v, mem).map(Operand::Row)),
            _ => None,
        }
    };
    let [a, b] = plan.args.as_slice() else {
        return None;
    };
    let (a, b) = (operand(a)?, operand(b)?);
    Some(a.and_then(|a| b.and_then(|b| binary(op, &a, &b, out, mem))))
}

/// Whether the output repeats `v`, a contiguous tensor whose shape
/// (leading ones aside) is the output's last dimensions, of at most
/// [`MAX_ROW`] elements.
fn repeated(v: &View, out: &View) -> bool {
    let first = v.dims.iter().position(|&d| d != 1).unwrap_or(v.dims.len());
    let dims = &v.dims[first..];
    v.is_contiguous()
        && v.numel() > 0
        && v.numel() <= MAX_ROW
        && v.dims.len() <= out.dims.len()
        && out.dims.ends_with(dims)
}

/// The elements of a contiguous tensor of a floating type, as `f32`.
fn row(v: &View, mem: &dyn Memory) -> Result<Vec<f32>, AclError> {
    let n = v.numel();
    let mut raw = buffer(n * v.dtype.size());
    let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut raw)[..n * v.dtype.size()];
    mem.read(start(v), bytes)?;
    let mut wide = vec![0f32; n];
    widen(v.dtype, bytes, &mut wide);
    Ok(wide)
}

/// The value of a one-element tensor of a floating type.
fn one(v: &View, mem: &dyn Memory) -> Result<f32, AclError> {
    let mut bytes = [0u8; 8];
    let bytes = &mut bytes[..v.dtype.size()];
    mem.read(start(v), bytes)?;
    Ok(v.dtype.get(bytes).f64() as f32)
}

/// `out = op(a, b)`, chunk by chunk, in bands.
fn binary(
    op: fn(f32, f32) -> f32,
    a: &Operand,
    b: &Operand,
    out: &View,
    mem: &dyn Memory,
) -> Result<(), AclError> {
    let size = out.dtype.size();
    let to = start(out);
    in_bands(out.numel(), BAND, |band| {
        let n = CHUNK.min(band.len());
        let mut raw = buffer(n * size);
        let (mut wa, mut wb) = (vec![0f32; n], vec![0f32; n]);
        let mut done = band.start;
        while done < band.end {
            let k = CHUNK.min(band.end - done);
            load(a, &mut wa[..k], done, out.dtype, &mut raw, mem)?;
            load(b, &mut wb[..k], done, out.dtype, &mut raw, mem)?;
            for (x, &y) in wa[..k].iter_mut().zip(&wb[..k]) {
                *x = op(*x, y);
            }
            let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut raw)[..k * size];
            narrow(out.dtype, &wa[..k], bytes);
            mem.write(to + done * size, bytes)?;
            done += k;
        }
        Ok(())
    })
}

/// `wide` = the operand's elements `at..at + wide.len()`, as `f32`.
fn load(
    operand: &Operand,
    wide: &mut [f32],
    at: usize,
    dtype: DType,
    raw: &mut [u64],
    mem: &dyn Memory,
) -> Result<(), AclError> {
    match operand {
        Operand::Value(v) => wide.fill(*v),
        Operand::Row(row) => {
            for (i, w) in wide.iter_mut().enumerate() {
                *w = row[(at + i) % row.len()];
            }
        }
        Operand::Tensor(from) => {
            let size = dtype.size();
            let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(raw)[..wide.len() * size];
            mem.read(from + at * size, bytes)?;
            widen(dtype, bytes, wide);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
