//! The operator API's matrix products of two matrices (`aclnnMm`,
//! `aclnnMatmul` of 2-D tensors, `aclnnAddmm`: what `torch.mm`, `@` and
//! `nn.Linear` launch) computed straight from device memory: each operand
//! read once into a buffer of `f32` (the half types widened), multiplied by
//! [`linalg::gemm`] through its own strides (a transposed operand is not
//! gathered), the product written once; bfloat16 operands are read as they
//! are stored and multiplied by oneDNN where it has a native bfloat16
//! kernel ([`onednn`]). The buffers are the calling
//! thread's, kept between calls up to [`KEEP`] elements each, so a model's
//! products do not fault fresh pages in at every call. The values are the
//! general path's: the same widening, the same product, the same rounding
//! (`Addmm` rounds the product to the output's type, then adds `beta · c`
//! in `f64`). Anything else (batches, broadcasts of `c` other than a row
//! or a scalar, sparse strided operands, `f64`, integers) takes the general
//! path of [`Plan::run`](super::Plan::run).

use std::cell::RefCell;

use aclmem_core::AclError;

use super::View;
use super::memory::Memory;
use super::plan::{Arg, Kind, Plan};
use super::stream::{narrow, widen};
use crate::linalg::{self, View as Mat};
use crate::onednn;
use crate::tensor::{DType, Num};

/// Elements a kept buffer may hold (64 MiB of `f32`); larger ones are
/// freed after the call.
const KEEP: usize = 1 << 24;

/// The calling thread's buffers: the two operands and the product as
/// `f32`, the raw elements of half-type operands, the product's bytes.
#[derive(Default)]
struct Buffers {
    wide: [Vec<f32>; 3],
    raw: [Vec<u16>; 2],
    bytes: Vec<u8>,
}

impl Buffers {
    /// Frees what grew beyond [`KEEP`] elements.
    fn trim(&mut self) {
        for buf in &mut self.wide {
            if buf.capacity() > KEEP {
                *buf = Vec::new();
            }
        }
        for raw in &mut self.raw {
            if raw.capacity() > KEEP {
                *raw = Vec::new();
            }
        }
        if self.bytes.capacity() > 4 * KEEP {
            self.bytes = Vec::new();
        }
    }
}

thread_local! {
    static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::default());
}

/// Runs a product `plan` this way when it has this module's form; `None`
/// when it does not.
pub(super) fn run(plan: &Plan, mem: &dyn Memory) -> Option<Result<(), AclError>> {
    let out = &plan.out;
    let (a, b, c) = match (&plan.kind, plan.args.as_slice()) {
        (Kind::Matmul, [Arg::Tensor(a), Arg::Tensor(b)]) => (a, b, None),
        (Kind::Addmm { beta, alpha }, [Arg::Tensor(c), Arg::Tensor(a), Arg::Tensor(b)]) => {
            (a, b, Some((c, beta.f64(), alpha.f64())))
        }
        _ => return None,
    };
    let dtype = out.dtype;
    let two = |v: &View| v.dims.len() == 2 && v.dtype == dtype;
    let fits = matches!(dtype, DType::F32 | DType::F16 | DType::Bf16)
        && two(a)
        && two(b)
        && two(out)
        && out.is_contiguous()
        && dense(a)
        && dense(b);
    if !fits {
        return None;
    }
    let (m, k, n) = (a.dims[0], a.dims[1], b.dims[1]);
    if b.dims[0] != k || out.dims != [m, n] {
        return None;
    }
    // `c`: a contiguous row of `n` (or `[1, n]`), the whole `[m, n]`, or
    // one element; anything else is the general path's.
    let c_step = match c {
        Some((c, ..)) if c.dtype != dtype || !c.is_contiguous() => return None,
        Some((c, ..)) => match c.numel() {
            1 => Some(0),
            x if x == n && c.dims.last() == Some(&n) && c.dims.len() <= 2 => Some(0),
            x if x == m * n && c.dims == [m, n] => Some(n),
            _ => return None,
        },
        None => None,
    };
    Some(BUFFERS.with(|cell| {
        // Taken out for the call (a product's band threads never touch
        // them), put back after.
        let mut bufs = std::mem::take(&mut *cell.borrow_mut());
        let result = product(a, b, out, c.zip(c_step), mem, &mut bufs);
        bufs.trim();
        *cell.borrow_mut() = bufs;
        result
    }))
}

/// Whether a matrix view's storage holds little besides its elements (its
/// extent at most twice its count), so that reading the extent is reading
/// the matrix.
fn dense(v: &View) -> bool {
    let size = v.dtype.size();
    v.extent()
        .is_none_or(|(_, bytes)| bytes / size <= 2 * v.numel().max(1))
}

/// `v`'s matrix view in a buffer of its extent.
fn matrix(v: &View) -> Mat {
    Mat {
        rows: v.dims[0],
        cols: v.dims[1],
        offset: 0,
        row_stride: v.strides[0],
        col_stride: v.strides[1],
    }
}

/// `v`'s extent (of a half type) read into `raw`, as it is stored.
fn read_raw(v: &View, mem: &dyn Memory, raw: &mut Vec<u16>) -> Result<(), AclError> {
    let (start, bytes) = v.extent().unwrap_or((0, 0));
    raw.clear();
    raw.resize(bytes / 2, 0);
    mem.read(start, bytemuck::cast_slice_mut(raw.as_mut_slice()))
}

/// `v`'s extent read into `buf` as `f32` (through `raw` for a half type).
fn load(
    v: &View,
    mem: &dyn Memory,
    buf: &mut Vec<f32>,
    raw: &mut Vec<u16>,
) -> Result<(), AclError> {
    let (start, bytes) = v.extent().unwrap_or((0, 0));
    let count = bytes / v.dtype.size();
    buf.clear();
    buf.resize(count, 0.0);
    match v.dtype {
        DType::F32 => mem.read(start, bytemuck::cast_slice_mut(buf.as_mut_slice())),
        _ => {
            read_raw(v, mem, raw)?;
            widen(v.dtype, bytemuck::cast_slice(raw.as_slice()), buf);
            Ok(())
        }
    }
}

/// `out = a · b` (or `beta · c + alpha · (a · b)`), through `bufs`.
fn product(
    a: &View,
    b: &View,
    out: &View,
    c: Option<((&View, f64, f64), usize)>,
    mem: &dyn Memory,
    bufs: &mut Buffers,
) -> Result<(), AclError> {
    let Buffers {
        wide: [ab, bb, ob],
        raw: [ra, rb],
        bytes,
    } = bufs;
    let (m, n) = (out.dims[0], out.dims[1]);
    let (av, bv, d) = (matrix(a), matrix(b), Mat::dense(m, n, 0));
    ob.clear();
    ob.resize(m * n, 0.0);
    // bfloat16 through oneDNN where it is to be had (its raw elements, not
    // widened), `gemm` on the widened elements otherwise.
    let native = a.dtype == DType::Bf16 && onednn::status().is_ok() && {
        read_raw(a, mem, ra)?;
        read_raw(b, mem, rb)?;
        onednn::bf16_product(ob, d, ra, av, rb, bv)?
    };
    if !native {
        load(a, mem, ab, ra)?;
        load(b, mem, bb, rb)?;
        linalg::gemm(ob.as_mut_slice(), d, ab, av, bb, bv, false)?;
    }
    let dtype = out.dtype;
    let size = dtype.size();
    bytes.clear();
    bytes.resize(m * n * size, 0);
    match c {
        None => narrow(dtype, ob, bytes),
        Some(((c, beta, alpha), step)) => {
            // The product rounded to the output's type first, as the
            // general path's product is.
            narrow(dtype, ob, bytes);
            widen(dtype, bytes, ob);
            let mut cv = vec![0u8; c.numel() * size];
            let (start, _) = c.extent().unwrap_or((0, 0));
            mem.read(start, &mut cv)?;
            let at = |i: usize| dtype.get(&cv[i * size..]).f64();
            for (r, row) in bytes.chunks_exact_mut(n * size).enumerate() {
                for (j, slot) in row.chunks_exact_mut(size).enumerate() {
                    let ci = if c.numel() == 1 { 0 } else { r * step + j };
                    let v = beta * at(ci) + alpha * f64::from(ob[r * n + j]);
                    dtype.put(Num::F(v), slot);
                }
            }
        }
    }
    mem.write(out.data + out.offset * size, bytes)
}

#[cfg(test)]
mod tests;
