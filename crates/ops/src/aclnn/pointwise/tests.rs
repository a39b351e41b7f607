//! The streamed arithmetic against its definition (each element computed
//! in f64 and rounded once to the output's type), across chunks and bands.

use std::sync::Mutex;

use super::*;
use crate::aclnn::Scalar;
use crate::aclnn::testing::Flat;

/// More than a chunk of elements.
const N: usize = CHUNK + 5;

/// More than two bands of elements, so that two cores split them.
const BIG: usize = 2 * BAND + 5;

fn value_a(i: usize) -> f64 {
    (i % 997) as f64 * 0.37 - 150.0
}

fn value_b(i: usize) -> f64 {
    (i % 89) as f64 * 1.3 + 0.5
}

/// `a` at 0, `b` after it, the output after both (each `N` elements of
/// `dtype`), and a one-element tensor of 2.5 at the end.
fn memory(dtype: DType, n: usize) -> (Flat, [View; 4]) {
    let size = dtype.size();
    let mut m = vec![0u8; 3 * n * size + 64];
    for i in 0..n {
        dtype.put(Num::F(value_a(i)), &mut m[i * size..]);
        dtype.put(Num::F(value_b(i)), &mut m[(n + i) * size..]);
    }
    dtype.put(Num::F(2.5), &mut m[3 * n * size..]);
    let at = |k: usize| View::contiguous_at(dtype, vec![n], k * n * size);
    let one = View::contiguous_at(dtype, vec![1], 3 * n * size);
    (Flat(Mutex::new(m)), [at(0), at(1), at(2), one])
}

fn get(mem: &Flat, v: &View, i: usize) -> f64 {
    let m = mem.0.lock().unwrap();
    let size = v.dtype.size();
    v.dtype.get(&m[v.data + i * size..]).f64()
}

#[test]
fn streamed_arithmetic_is_each_element_rounded_once() {
    for dtype in [DType::F32, DType::F16, DType::Bf16] {
        for (kernel, f) in [
            ("Add", (|a, b| a + b) as fn(f64, f64) -> f64),
            ("Sub", |a, b| a - b),
            ("Mul", |a, b| a * b),
            ("RealDiv", |a, b| a / b),
        ] {
            let (mem, [a, b, out, one]) = memory(dtype, N);
            let scalar = Arg::Scalar(Scalar {
                dtype: DType::F64,
                value: Num::F(0.3),
                imag: None,
            });
            for (second, what) in [
                (Arg::Tensor(b.clone()), "tensor"),
                (scalar, "scalar"),
                (Arg::Tensor(one.clone()), "one element"),
            ] {
                let kind = Kind::Binary {
                    kernel,
                    alpha: None,
                };
                let plan = Plan::new(
                    "aclnnX",
                    kind,
                    vec![Arg::Tensor(a.clone()), second],
                    out.clone(),
                )
                .unwrap();
                run(&plan, &mem).expect("streamed").unwrap();
                let round = |v: f64| dtype.get(&dtype.bytes_of(Num::F(v))).f64();
                for i in [0, 1, CHUNK - 1, CHUNK, N / 2, N / 2 + 1, N - 1] {
                    let y = match what {
                        "tensor" => get(&mem, &b, i),
                        "scalar" => round(0.3),
                        _ => 2.5,
                    };
                    let want = round(f(get(&mem, &a, i), y));
                    let got = get(&mem, &out, i);
                    assert!(
                        got == want || got.is_nan() && want.is_nan(),
                        "{kernel} {what} {dtype:?} at {i}: {got} against {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_large_sum_split_into_bands_matches() {
    let (mem, [a, b, out, _]) = memory(DType::F32, BIG);
    let kind = Kind::Binary {
        kernel: "Add",
        alpha: None,
    };
    let plan = Plan::new(
        "aclnnAdd",
        kind,
        vec![Arg::Tensor(a.clone()), Arg::Tensor(b.clone())],
        out.clone(),
    )
    .unwrap();
    run(&plan, &mem).expect("streamed").unwrap();
    for i in [0, CHUNK, BAND - 1, BAND, BIG / 2, BIG / 2 + 1, BIG - 1] {
        let want = (get(&mem, &a, i) as f32 + get(&mem, &b, i) as f32) as f64;
        assert_eq!(get(&mem, &out, i), want, "at {i}");
    }
}

#[test]
fn other_forms_take_the_general_path() {
    let (mem, [a, b, out, _]) = memory(DType::F32, N);
    let plan = |kind, args: Vec<Arg>, out: View| Plan::new("aclnnX", kind, args, out).unwrap();
    let add = |alpha| Kind::Binary {
        kernel: "Add",
        alpha,
    };
    // An alpha other than 1.
    let p = plan(
        add(Some(Num::F(2.0))),
        vec![Arg::Tensor(a.clone()), Arg::Tensor(b.clone())],
        out.clone(),
    );
    assert!(run(&p, &mem).is_none());
    // Another type among the operands.
    let mut half = b.clone();
    half.dtype = DType::F16;
    let p = plan(
        add(None),
        vec![Arg::Tensor(a.clone()), Arg::Tensor(half)],
        out.clone(),
    );
    assert!(run(&p, &mem).is_none());
    // A broadcast of more than one element that is not a repeated row: a
    // column.
    let rows = View::contiguous_at(DType::F32, vec![2, N / 2], 0);
    let column = View::contiguous_at(DType::F32, vec![2, 1], 0);
    let wide = View::contiguous_at(DType::F32, vec![2, N / 2], 2 * N * 4);
    let p = plan(
        add(None),
        vec![Arg::Tensor(rows), Arg::Tensor(column)],
        wide,
    );
    assert!(run(&p, &mem).is_none());
    // Not a streamed kernel.
    let p = plan(
        Kind::Binary {
            kernel: "Maximum",
            alpha: None,
        },
        vec![Arg::Tensor(a), Arg::Tensor(b)],
        out,
    );
    assert!(run(&p, &mem).is_none());
}

#[test]
fn a_repeated_row_is_read_once_and_each_element_rounded_once() {
    // A bias of `R` elements over rows of more than a chunk in all,
    // on either side, with a leading 1 on the right.
    const R: usize = 1000;
    let total = 2 * CHUNK;
    let n = total / R * R;
    for dtype in [DType::F32, DType::F16, DType::Bf16] {
        let (mem, [a, b, out, _]) = memory(dtype, total);
        let (a, out) = (
            View {
                dims: vec![n / R, R],
                strides: vec![R, 1],
                ..a
            },
            View {
                dims: vec![n / R, R],
                strides: vec![R, 1],
                ..out
            },
        );
        for (kernel, f) in [
            ("Add", (|a, b| a + b) as fn(f64, f64) -> f64),
            ("RealDiv", |a, b| a / b),
        ] {
            for (row, row_first) in [
                (View::contiguous_at(dtype, vec![R], b.data), false),
                (View::contiguous_at(dtype, vec![1, R], b.data), true),
            ] {
                let args = if row_first {
                    vec![Arg::Tensor(row.clone()), Arg::Tensor(a.clone())]
                } else {
                    vec![Arg::Tensor(a.clone()), Arg::Tensor(row.clone())]
                };
                let kind = Kind::Binary {
                    kernel,
                    alpha: None,
                };
                let plan = Plan::new("aclnnX", kind, args, out.clone()).unwrap();
                run(&plan, &mem).expect("streamed").unwrap();
                let round = |v: f64| dtype.get(&dtype.bytes_of(Num::F(v))).f64();
                for i in [0, 1, R - 1, R, CHUNK - 1, CHUNK, n / 2 + 7, n - 1] {
                    let (x, y) = (get(&mem, &a, i), get(&mem, &row, i % R));
                    let want = round(if row_first { f(y, x) } else { f(x, y) });
                    let got = get(&mem, &out, i);
                    assert_eq!(
                        got, want,
                        "{kernel} {dtype:?} (row first: {row_first}) at {i}"
                    );
                }
            }
        }
    }
}
