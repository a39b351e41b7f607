//! The data operators on contiguous tensors, streamed through device
//! memory a chunk at a time: a copy or cast, a fill, and a reduction of
//! every element read and written in chunks of [`CHUNK`] elements, with
//! loops typed for the floating types, so an operator on N bytes costs
//! O(N) time and O(chunk) host memory rather than host copies of its
//! tensors. A tensor of several chunks is split into bands, one per core,
//! each streamed by a thread of its own ([`crate::parallel`]). Anything
//! else (broadcasts, integer reductions, views of other forms)
//! takes the general path of [`Plan::run`](super::Plan::run), which gives
//! the same values; a strided view copied into a contiguous tensor is
//! [`super::strided`]'s.

use aclmem_core::AclError;
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

use std::ops::Range;

use super::View;
use super::plan::{Arg, Kind, Memory, Plan};
use crate::parallel;
use crate::tensor::{DType, Num};

/// Elements per chunk: 4 MiB of `f32`.
pub(super) const CHUNK: usize = 1 << 20;

/// A band of a split operation is at least this many elements.
pub(super) const BAND: usize = 2 * CHUNK;

/// `f` of each band of `0..n` items (each band at least `least` of them),
/// on as many threads as the bands; the first error, if any.
pub(super) fn in_bands(
    n: usize,
    least: usize,
    f: impl Fn(Range<usize>) -> Result<(), AclError> + Sync,
) -> Result<(), AclError> {
    parallel::bands(n, parallel::parts(n, least), f)
        .into_iter()
        .collect()
}

/// Runs `plan` streamed when it is one of the forms this module carries
/// out; `None` when it is not (the caller takes the general path).
pub(super) fn run(plan: &Plan, mem: &dyn Memory) -> Option<Result<(), AclError>> {
    let out = &plan.out;
    if !out.is_contiguous() {
        return None;
    }
    match (&plan.kind, plan.args.as_slice()) {
        (Kind::Copy, [Arg::Tensor(a)]) if a.dims == out.dims && a.is_contiguous() => {
            Some(copy(a, out, mem))
        }
        (Kind::Copy, [Arg::Tensor(a)]) if a.dims == out.dims => super::strided::copy(a, out, mem),
        (Kind::Binary { .. }, _) => super::pointwise::run(plan, mem),
        (Kind::Fill(value), []) => Some(fill(*value, out, mem)),
        (Kind::Reduce { kernel, axes, .. }, [Arg::Tensor(a)])
            if a.is_contiguous()
                && a.dtype.is_float()
                && out.dtype.is_float()
                && covers(axes, a) =>
        {
            let op = match *kernel {
                "ReduceSum" => Reduce::Sum,
                "ReduceMean" => Reduce::Mean,
                "ReduceMax" => Reduce::Max,
                "ReduceMin" => Reduce::Min,
                _ => return None,
            };
            Some(reduce(op, a, out, mem))
        }
        _ => None,
    }
}

/// Whether `axes` names every axis of `a` (empty names them all).
fn covers(axes: &[i64], a: &View) -> bool {
    let rank = a.dims.len() as i64;
    axes.is_empty() || (0..rank).all(|d| axes.iter().any(|&x| x == d || x + rank == d))
}

/// The start address of a contiguous view.
pub(super) fn start(v: &View) -> usize {
    v.data + v.offset * v.dtype.size()
}

/// A chunk buffer aligned for every element type (its bytes are `u64`s).
pub(super) fn buffer(bytes: usize) -> Vec<u64> {
    vec![0u64; bytes.div_ceil(8)]
}

/// `out = a`, converted to `out`'s type, chunk by chunk.
fn copy(a: &View, out: &View, mem: &dyn Memory) -> Result<(), AclError> {
    let (from, to) = (start(a), start(out));
    let (si, so) = (a.dtype.size(), out.dtype.size());
    in_bands(a.numel(), BAND, |band| {
        let n = band.len();
        let mut input = buffer(CHUNK.min(n) * si);
        let mut output = buffer(CHUNK.min(n) * so);
        let mut wide = vec![0f32; CHUNK.min(n)];
        let mut done = band.start;
        while done < band.end {
            let k = CHUNK.min(band.end - done);
            let input = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut input)[..k * si];
            mem.read(from + done * si, input)?;
            let output = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut output)[..k * so];
            convert(a.dtype, out.dtype, input, output, &mut wide[..k]);
            mem.write(to + done * so, output)?;
            done += k;
        }
        Ok(())
    })
}

/// Every element of `out` set to `value`: one chunk of the pattern,
/// written again and again.
fn fill(value: Num, out: &View, mem: &dyn Memory) -> Result<(), AclError> {
    let n = out.numel();
    let size = out.dtype.size();
    let one = out.dtype.bytes_of(value);
    let pattern: Vec<u8> = one
        .iter()
        .copied()
        .cycle()
        .take(CHUNK.min(n) * size)
        .collect();
    let to = start(out);
    in_bands(n, BAND, |band| {
        let mut done = band.start;
        while done < band.end {
            let k = CHUNK.min(band.end - done);
            mem.write(to + done * size, &pattern[..k * size])?;
            done += k;
        }
        Ok(())
    })
}

/// The elements of `bytes` (of a floating type) widened to `f32` into
/// `wide` (as many as there are); `false` for `f64`, which is not
/// narrowed.
pub(super) fn widen(dtype: DType, bytes: &[u8], wide: &mut [f32]) -> bool {
    match dtype {
        DType::F32 => wide.copy_from_slice(bytemuck::cast_slice(bytes)),
        DType::F16 => bytemuck::cast_slice::<u8, f16>(bytes).convert_to_f32_slice(wide),
        DType::Bf16 => bytemuck::cast_slice::<u8, bf16>(bytes).convert_to_f32_slice(wide),
        _ => return false,
    }
    true
}

/// `input`'s elements of type `from` converted to `to` into `output`:
/// between `f32` and the half types by the `half` crate's slice
/// conversions (a half type widened to `f32` exactly, rounded once from
/// it; `wide` is their scratch), the general conversion of
/// [`DType::get`] and [`DType::put`] otherwise.
pub(super) fn convert(from: DType, to: DType, input: &[u8], output: &mut [u8], wide: &mut [f32]) {
    let halves = |t| matches!(t, DType::F32 | DType::F16 | DType::Bf16);
    if from == to {
        output.copy_from_slice(input);
    } else if halves(from) && halves(to) && widen(from, input, wide) {
        narrow(to, wide, output);
    } else {
        for (i, o) in input
            .chunks_exact(from.size())
            .zip(output.chunks_exact_mut(to.size()))
        {
            to.put(from.get(i), o);
        }
    }
}

/// `wide`'s values rounded once to `to` into `output` (as many elements):
/// the `half` crate's slice conversions for the half types.
pub(super) fn narrow(to: DType, wide: &[f32], output: &mut [u8]) {
    match to {
        DType::F32 => output.copy_from_slice(bytemuck::cast_slice(wide)),
        DType::F16 => bytemuck::cast_slice_mut::<u8, f16>(output).convert_from_f32_slice(wide),
        DType::Bf16 => bytemuck::cast_slice_mut::<u8, bf16>(output).convert_from_f32_slice(wide),
        _ => {
            for (&w, o) in wide.iter().zip(output.chunks_exact_mut(to.size())) {
                to.put(Num::F(f64::from(w)), o);
            }
        }
    }
}

/// A reduction of every element.
#[derive(Clone, Copy)]
enum Reduce {
    Sum,
    Mean,
    Max,
    Min,
}

/// Lanes of a block's partial results: enough for the compiler to keep
/// them in vector registers, as several independent additions at once.
const LANES: usize = 32;

/// The reduction of `values` in `f32` lanes (a block of a chunk), as
/// `f64`; whether a NaN was among them.
fn block(op: Reduce, values: &[f32]) -> (f64, bool) {
    let mut lanes = [match op {
        Reduce::Sum | Reduce::Mean => 0.0f32,
        Reduce::Max => f32::NEG_INFINITY,
        Reduce::Min => f32::INFINITY,
    }; LANES];
    let mut nan = false;
    let mut rows = values.chunks_exact(LANES);
    if let Reduce::Sum | Reduce::Mean = op {
        // A NaN among the values makes the sum NaN by itself: no test per
        // element, so the loop stays vectorised.
        for row in rows.by_ref() {
            for (l, &v) in lanes.iter_mut().zip(row) {
                *l += v;
            }
        }
    }
    for row in rows.by_ref() {
        for (l, &v) in lanes.iter_mut().zip(row) {
            nan |= v.is_nan();
            *l = match op {
                Reduce::Sum | Reduce::Mean => *l + v,
                Reduce::Max => l.max(v),
                Reduce::Min => l.min(v),
            };
        }
    }
    for (l, &v) in lanes.iter_mut().zip(rows.remainder()) {
        nan |= v.is_nan();
        *l = match op {
            Reduce::Sum | Reduce::Mean => *l + v,
            Reduce::Max => l.max(v),
            Reduce::Min => l.min(v),
        };
    }
    let lanes = lanes.iter().map(|&l| f64::from(l));
    let value = match op {
        Reduce::Sum | Reduce::Mean => lanes.sum(),
        Reduce::Max => lanes.fold(f64::NEG_INFINITY, f64::max),
        Reduce::Min => lanes.fold(f64::INFINITY, f64::min),
    };
    (value, nan)
}

/// Elements a reduction reads at a time: 256 KiB of `f32`, so that the
/// values it adds are still in the core's own cache.
const READ: usize = 1 << 16;

/// Elements per block of a reduction: partial sums in `f32` lanes over a
/// block, the blocks added in `f64` (a cascade, as CPU torch sums).
const BLOCK: usize = 4096;

/// `out` (one element) = the reduction of every element of `a`, a chunk
/// at a time (NaN wins in max and min, as in PyTorch).
fn reduce(op: Reduce, a: &View, out: &View, mem: &dyn Memory) -> Result<(), AclError> {
    let n = a.numel();
    if out.numel() != 1 {
        return Err(AclError::INVALID_PARAM);
    }
    let identity = match op {
        Reduce::Sum | Reduce::Mean => 0.0,
        Reduce::Max => f64::NEG_INFINITY,
        Reduce::Min => f64::INFINITY,
    };
    let fold = |acc: f64, v: f64| match op {
        Reduce::Sum | Reduce::Mean => acc + v,
        Reduce::Max => acc.max(v),
        Reduce::Min => acc.min(v),
    };
    let size = a.dtype.size();
    let from = start(a);
    // Each band's partial result, and whether it met a NaN.
    let partials = parallel::bands(n, parallel::parts(n, BAND), |band| {
        let mut input = buffer(READ.min(band.len()) * size);
        let mut wide = vec![0f32; READ.min(band.len())];
        let (mut acc, mut nan) = (identity, false);
        let mut done = band.start;
        while done < band.end {
            let k = READ.min(band.end - done);
            let input = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut input)[..k * size];
            mem.read(from + done * size, input)?;
            let floats = if a.dtype == DType::F32 {
                Some(bytemuck::cast_slice::<u8, f32>(input))
            } else if widen(a.dtype, input, &mut wide[..k]) {
                Some(&wide[..k])
            } else {
                None
            };
            match floats {
                Some(values) => {
                    for b in values.chunks(BLOCK) {
                        let (v, n) = block(op, b);
                        acc = fold(acc, v);
                        nan |= n;
                    }
                }
                None => {
                    for c in input.chunks_exact(size) {
                        let v = a.dtype.get(c).f64();
                        acc = fold(acc, v);
                        nan |= v.is_nan();
                    }
                }
            }
            done += k;
        }
        Ok::<_, AclError>((acc, nan))
    });
    let (mut acc, mut nan) = (identity, false);
    for partial in partials {
        let (v, n) = partial?;
        acc = fold(acc, v);
        nan |= n;
    }
    let value = match op {
        _ if nan => f64::NAN,
        Reduce::Mean => acc / n as f64,
        // The max or min of nothing is refused by the frameworks before
        // it gets here; NaN rather than an infinity if it does.
        Reduce::Max | Reduce::Min if n == 0 => f64::NAN,
        _ => acc,
    };
    mem.write(start(out), &out.dtype.bytes_of(Num::F(value)))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::aclnn::testing::Flat;

    const N: usize = 2 * BAND + 3;
    const OUT: usize = N * 4;

    fn memory() -> Flat {
        let mut m = vec![0u8; OUT + N * 4 + 64];
        for (i, c) in m[..OUT].chunks_exact_mut(4).enumerate() {
            let v = (i % 1000) as f32 * 0.5 - 100.25;
            c.copy_from_slice(&v.to_ne_bytes());
        }
        Flat(Mutex::new(m))
    }

    fn at(dtype: DType, dims: &[usize], addr: usize) -> View {
        View::contiguous_at(dtype, dims.to_vec(), addr)
    }

    #[test]
    fn a_cast_across_a_chunk_boundary_rounds_each_element_once() {
        let mem = memory();
        let plan = Plan::new(
            "aclnnCast",
            Kind::Copy,
            vec![Arg::Tensor(at(DType::F32, &[N], 0))],
            at(DType::F16, &[N], OUT),
        )
        .unwrap();
        assert!(run(&plan, &mem).is_some(), "streamed");
        run(&plan, &mem).unwrap().unwrap();
        let m = mem.0.lock().unwrap();
        for i in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, N / 2, N / 2 + 1, N - 1] {
            let want = f16::from_f32((i % 1000) as f32 * 0.5 - 100.25);
            let got = f16::from_ne_bytes([m[OUT + 2 * i], m[OUT + 2 * i + 1]]);
            assert_eq!(got, want, "element {i}");
        }
    }

    #[test]
    fn reductions_of_every_element_cross_chunks_and_let_nan_win() {
        let mem = memory();
        let reduce = |kernel, out: DType| {
            let plan = Plan::new(
                "aclnnReduce",
                Kind::Reduce {
                    kernel,
                    axes: vec![0],
                    keep: false,
                },
                vec![Arg::Tensor(at(DType::F32, &[N], 0))],
                at(out, &[], OUT),
            )
            .unwrap();
            run(&plan, &mem).expect("streamed").unwrap();
            let m = mem.0.lock().unwrap();
            out.get(&m[OUT..OUT + out.size()]).f64()
        };
        let values = || (0..N).map(|i| (i % 1000) as f64 * 0.5 - 100.25);
        let sum: f64 = values().sum();
        assert_eq!(reduce("ReduceSum", DType::F64), sum);
        assert_eq!(reduce("ReduceMean", DType::F64), sum / N as f64);
        assert_eq!(reduce("ReduceMax", DType::F32), 399.25);
        assert_eq!(reduce("ReduceMin", DType::F32), -100.25);
        // A NaN past the first chunk wins max and min.
        mem.write(4 * (CHUNK + 1), &f32::NAN.to_ne_bytes()).unwrap();
        assert!(reduce("ReduceMax", DType::F32).is_nan());
        assert!(reduce("ReduceMin", DType::F32).is_nan());
    }

    #[test]
    fn a_fill_writes_every_element_and_nothing_past_them() {
        let mem = memory();
        let plan = Plan::new(
            "aclnnInplaceFillScalar",
            Kind::Fill(Num::F(2.5)),
            Vec::new(),
            at(DType::Bf16, &[N], OUT),
        )
        .unwrap();
        run(&plan, &mem).expect("streamed").unwrap();
        let m = mem.0.lock().unwrap();
        let two_and_a_half = bf16::from_f32(2.5).to_ne_bytes();
        assert!(
            m[OUT..OUT + 2 * N]
                .chunks_exact(2)
                .all(|c| c == two_and_a_half)
        );
        assert!(m[OUT + 2 * N..].iter().all(|&b| b == 0));
    }

    #[test]
    fn strided_views_and_integer_reductions_take_the_general_path() {
        let mem = memory();
        let mut strided = at(DType::F32, &[4, 2], 0);
        strided.strides = vec![1, 4];
        let copy = Plan::new(
            "aclnnInplaceCopy",
            Kind::Copy,
            vec![Arg::Tensor(strided)],
            at(DType::F32, &[4, 2], OUT),
        )
        .unwrap();
        assert!(run(&copy, &mem).is_none());
        let sum = Plan::new(
            "aclnnReduceSum",
            Kind::Reduce {
                kernel: "ReduceSum",
                axes: Vec::new(),
                keep: false,
            },
            vec![Arg::Tensor(at(DType::I32, &[8], 0))],
            at(DType::I64, &[], OUT),
        )
        .unwrap();
        assert!(run(&sum, &mem).is_none());
    }
}
