//! The operator API's matrix products (`aclnnMm`, `aclnnMatmul`,
//! `aclnnBatchMatMul`, `aclnnAddmm`: what `torch.mm`, `@`, `torch.bmm`
//! and `nn.Linear` launch) computed straight from device memory: each
//! operand read once into a buffer of `f32` (the half types widened),
//! multiplied by [`linalg::gemm`] through its own strides (a transposed
//! operand is not gathered), the product written once; bfloat16 operands
//! are read as they are stored and multiplied by oneDNN where it has a
//! native bfloat16 kernel ([`onednn`]). A batch of `a` over one `b` whose
//! rows fold (a contiguous `[batch..., m, k]`) is one product of all its
//! rows; other batches (the same on both sides, or one side a single
//! matrix, an expanded one included) are a product per batch, small ones
//! a band of batches per core. The buffers are the calling thread's, kept
//! between calls up to [`KEEP`] elements each, so a model's products do
//! not fault fresh pages in at every call. The values are the general
//! path's: the same widening, the same products, the same rounding
//! (`Addmm`, of matrices only, rounds the product to the output's type,
//! then adds `beta · c` in `f64`). Anything else (vectors, batches that
//! broadcast against each other, broadcasts of `c` other than a row or a
//! scalar, sparse strided operands, `f64`, integers) takes the general
//! path of [`Plan::run`](super::Plan::run).

use std::cell::RefCell;

use aclmem_core::AclError;

use super::View;
use super::memory::Memory;
use super::plan::{Arg, Kind, Plan};
use super::stream::{narrow, widen};
use crate::linalg::{self, View as Mat};
use crate::onednn;
use crate::parallel;
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
    let fits = matches!(dtype, DType::F32 | DType::F16 | DType::Bf16)
        && [a, b].iter().all(|v| v.dtype == dtype && dense(v))
        && out.is_contiguous();
    if !fits {
        return None;
    }
    let form = form(a, b, out)?;
    let (m, n) = (form.a.rows, form.b.cols);
    if m == 0 || n == 0 || form.batches.is_empty() {
        return None;
    }
    if c.is_some() && (a.dims.len() != 2 || b.dims.len() != 2) {
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
        let result = product(a, b, &form, out, c.zip(c_step), mem, &mut bufs);
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

/// A product's matrices in the buffers of its operands' extents: `a`'s and
/// `b`'s first (`m × k`, `k × n`), and where each output matrix's operands
/// start (elements from each view's first element).
struct Form {
    a: Mat,
    b: Mat,
    batches: Vec<(usize, usize)>,
}

/// The last two dimensions of `v` as a matrix at offset 0, its rows
/// `rows` (more than `v`'s last-but-one when earlier dimensions fold into
/// them).
fn matrix(v: &View, rows: usize) -> Mat {
    let d = v.dims.len();
    Mat {
        rows,
        cols: v.dims[d - 1],
        offset: 0,
        row_stride: v.strides[d - 2],
        col_stride: v.strides[d - 1],
    }
}

/// The form of `a · b` into `out` when this module computes it: matrices
/// (at least 2-D each) whose batch dimensions are the same or one side's
/// absent, the output `[batch..., m, n]`. A batch of `a` over a single `b`
/// whose dimensions fold into rows (as a contiguous tensor's do) is one
/// product of all their rows.
fn form(a: &View, b: &View, out: &View) -> Option<Form> {
    let (da, db) = (a.dims.len(), b.dims.len());
    if da < 2 || db < 2 || a.dims[da - 1] != b.dims[db - 2] {
        return None;
    }
    let (ba, bb) = (&a.dims[..da - 2], &b.dims[..db - 2]);
    let batch = match (ba.len(), bb.len()) {
        (_, 0) => ba,
        (0, _) => bb,
        _ if ba == bb => ba,
        _ => return None,
    };
    let (m, n) = (a.dims[da - 2], b.dims[db - 1]);
    let mut want = batch.to_vec();
    want.extend([m, n]);
    if out.dims != want {
        return None;
    }
    let folds = db == 2 && (0..da - 2).all(|i| a.strides[i] == a.strides[i + 1] * a.dims[i + 1]);
    if folds {
        let rows = a.dims[..da - 1].iter().product();
        return Some(Form {
            a: matrix(a, rows),
            b: matrix(b, b.dims[0]),
            batches: vec![(0, 0)],
        });
    }
    // Row-major over the batch dimensions: each operand's offset.
    let count = batch.iter().product::<usize>();
    let offset = |v: &View, mut i: usize| {
        let lead = &v.dims[..v.dims.len() - 2];
        let mut at = 0;
        for (d, &size) in lead.iter().enumerate().rev() {
            at += (i % size) * v.strides[d];
            i /= size;
        }
        at
    };
    Some(Form {
        a: matrix(a, m),
        b: matrix(b, b.dims[db - 2]),
        batches: (0..count).map(|i| (offset(a, i), offset(b, i))).collect(),
    })
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
    form: &Form,
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
    let (m, k, n) = (form.a.rows, form.a.cols, form.b.cols);
    let at = |v: Mat, offset: usize| Mat { offset, ..v };
    ob.clear();
    ob.resize(form.batches.len() * m * n, 0.0);
    // bfloat16 through oneDNN where it is to be had (its raw elements, not
    // widened), one product after another; `gemm` on the widened elements
    // otherwise, products too small to split in bands each on a thread of
    // a band of them.
    let native = a.dtype == DType::Bf16 && onednn::status().is_ok() && {
        read_raw(a, mem, ra)?;
        read_raw(b, mem, rb)?;
        let mut all = true;
        for (o, &(ao, bo)) in ob.chunks_exact_mut(m * n).zip(&form.batches) {
            let d = Mat::dense(m, n, 0);
            all = all && onednn::bf16_product(o, d, ra, at(form.a, ao), rb, at(form.b, bo))?;
        }
        all
    };
    if !native {
        load(a, mem, ab, ra)?;
        load(b, mem, bb, rb)?;
        let work = m.saturating_mul(k).saturating_mul(n);
        let parts = if work < linalg::MIN_WORK {
            parallel::parts(form.batches.len(), 1)
                .min(work.saturating_mul(form.batches.len()) / linalg::MIN_WORK)
                .max(1)
        } else {
            1
        };
        let results = parallel::bands_mut(ob, m * n, parts, |first, band| {
            for (o, &(ao, bo)) in band.chunks_exact_mut(m * n).zip(&form.batches[first..]) {
                let d = Mat::dense(m, n, 0);
                linalg::gemm(o, d, ab, at(form.a, ao), bb, at(form.b, bo), false)?;
            }
            Ok::<_, AclError>(())
        });
        results.into_iter().collect::<Result<(), _>>()?;
    }
    let dtype = out.dtype;
    let size = dtype.size();
    bytes.clear();
    bytes.resize(ob.len() * size, 0);
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
