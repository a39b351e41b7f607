//! The data operators on contiguous tensors, streamed through device
//! memory a chunk at a time: a copy or cast, a fill, and a reduction of
//! every element read and written in chunks of [`CHUNK`] elements, with
//! loops typed for the floating types, so an operator on N bytes costs
//! O(N) time and O(chunk) host memory rather than host copies of its
//! tensors. Anything else (strided views, broadcasts, integer reductions)
//! takes the general path of [`Plan::run`](super::Plan::run), which gives
//! the same values.

use aclmem_core::AclError;
use half::{bf16, f16};

use super::View;
use super::plan::{Arg, Kind, Memory, Plan};
use crate::tensor::{DType, Num};

/// Elements per chunk: 4 MiB of `f32`.
const CHUNK: usize = 1 << 20;

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
fn start(v: &View) -> usize {
    v.data + v.offset * v.dtype.size()
}

/// `out = a`, converted to `out`'s type, chunk by chunk.
fn copy(a: &View, out: &View, mem: &dyn Memory) -> Result<(), AclError> {
    let n = a.numel();
    let (from, to) = (start(a), start(out));
    let (si, so) = (a.dtype.size(), out.dtype.size());
    let mut input = vec![0u8; CHUNK.min(n) * si];
    let mut output = Vec::with_capacity(CHUNK.min(n) * so);
    let mut done = 0;
    while done < n {
        let k = CHUNK.min(n - done);
        let input = &mut input[..k * si];
        mem.read(from + done * si, input)?;
        output.clear();
        convert(a.dtype, out.dtype, input, &mut output);
        mem.write(to + done * so, &output)?;
        done += k;
    }
    Ok(())
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
    let mut done = 0;
    while done < n {
        let k = CHUNK.min(n - done);
        mem.write(to + done * size, &pattern[..k * size])?;
        done += k;
    }
    Ok(())
}

/// The floating types' elements of `bytes`, as `f64`s appended to `out`.
fn floats(dtype: DType, bytes: &[u8], out: &mut Vec<f64>) {
    match dtype {
        DType::F32 => out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))),
        ),
        DType::F16 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|c| f16::from_ne_bytes([c[0], c[1]]).to_f64()),
        ),
        DType::Bf16 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|c| bf16::from_ne_bytes([c[0], c[1]]).to_f64()),
        ),
        _ => out.extend(bytes.chunks_exact(dtype.size()).map(|c| dtype.get(c).f64())),
    }
}

/// `input`'s elements of type `from` converted to `to`, appended to
/// `out`: typed loops between the floating types (a half type widened to
/// `f32` exactly, and rounded once from it), the general conversion of
/// [`DType::get`] and [`DType::bytes_of`] otherwise.
fn convert(from: DType, to: DType, input: &[u8], out: &mut Vec<u8>) {
    let f32s = |input: &[u8]| -> Vec<f32> {
        match from {
            DType::F32 => input
                .chunks_exact(4)
                .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            DType::F16 => input
                .chunks_exact(2)
                .map(|c| f16::from_ne_bytes([c[0], c[1]]).to_f32())
                .collect(),
            _ => input
                .chunks_exact(2)
                .map(|c| bf16::from_ne_bytes([c[0], c[1]]).to_f32())
                .collect(),
        }
    };
    let narrow = matches!(from, DType::F32 | DType::F16 | DType::Bf16);
    match to {
        _ if from == to => out.extend_from_slice(input),
        DType::F32 if narrow => out.extend(f32s(input).iter().flat_map(|v| v.to_ne_bytes())),
        DType::F16 if narrow => out.extend(
            f32s(input)
                .iter()
                .flat_map(|&v| f16::from_f32(v).to_ne_bytes()),
        ),
        DType::Bf16 if narrow => out.extend(
            f32s(input)
                .iter()
                .flat_map(|&v| bf16::from_f32(v).to_ne_bytes()),
        ),
        _ => {
            for c in input.chunks_exact(from.size()) {
                out.extend(to.bytes_of(from.get(c)));
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

/// `out` (one element) = the reduction of every element of `a`, a chunk
/// at a time, in `f64` (NaN wins in max and min, as in PyTorch).
fn reduce(op: Reduce, a: &View, out: &View, mem: &dyn Memory) -> Result<(), AclError> {
    let n = a.numel();
    if out.numel() != 1 {
        return Err(AclError::INVALID_PARAM);
    }
    let size = a.dtype.size();
    let from = start(a);
    let mut input = vec![0u8; CHUNK.min(n) * size];
    let mut values = Vec::with_capacity(CHUNK.min(n));
    let mut acc = match op {
        Reduce::Sum | Reduce::Mean => 0.0,
        Reduce::Max => f64::NEG_INFINITY,
        Reduce::Min => f64::INFINITY,
    };
    let mut nan = false;
    let mut done = 0;
    while done < n {
        let k = CHUNK.min(n - done);
        let input = &mut input[..k * size];
        mem.read(from + done * size, input)?;
        values.clear();
        floats(a.dtype, input, &mut values);
        match op {
            Reduce::Sum | Reduce::Mean => acc += values.iter().sum::<f64>(),
            Reduce::Max => {
                nan |= values.iter().any(|v| v.is_nan());
                acc = values.iter().copied().fold(acc, f64::max);
            }
            Reduce::Min => {
                nan |= values.iter().any(|v| v.is_nan());
                acc = values.iter().copied().fold(acc, f64::min);
            }
        }
        done += k;
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
    use std::cell::RefCell;

    use super::*;

    /// Flat memory from address 0 (what a chunk boundary needs: more
    /// than [`CHUNK`] elements).
    struct Flat(RefCell<Vec<u8>>);

    impl Memory for Flat {
        fn read(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError> {
            let m = self.0.borrow();
            let src = m
                .get(addr..addr + buf.len())
                .ok_or(AclError::INVALID_PARAM)?;
            buf.copy_from_slice(src);
            Ok(())
        }

        fn write(&self, addr: usize, data: &[u8]) -> Result<(), AclError> {
            let mut m = self.0.borrow_mut();
            let dst = m
                .get_mut(addr..addr + data.len())
                .ok_or(AclError::INVALID_PARAM)?;
            dst.copy_from_slice(data);
            Ok(())
        }
    }

    const N: usize = CHUNK + 3;
    const OUT: usize = N * 4;

    fn memory() -> Flat {
        let mut m = vec![0u8; OUT + N * 4 + 64];
        for (i, c) in m[..OUT].chunks_exact_mut(4).enumerate() {
            let v = (i % 1000) as f32 * 0.5 - 100.25;
            c.copy_from_slice(&v.to_ne_bytes());
        }
        Flat(RefCell::new(m))
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
        let m = mem.0.borrow();
        for i in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, N - 1] {
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
            let m = mem.0.borrow();
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
        let m = mem.0.borrow();
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
