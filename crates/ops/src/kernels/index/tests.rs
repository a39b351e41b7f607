//! Select, MaskedFill, Triu/Tril, ArgMaxV2 and Cumsum against direct
//! computations, in every type they take; the gradients of the
//! differentiable ones (Select, MaskedFill, Cumsum: each its own operator
//! on the upstream gradient) against finite differences; the refusals.

use super::super::testing::*;
use super::*;

const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::Bf16, DType::F64];
const TYPES: [DType; 7] = [
    DType::F32,
    DType::F16,
    DType::Bf16,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::I8,
];

/// Small integers as a tensor of any type.
fn small(dtype: DType, dims: &[usize], v: &[i64]) -> (Spec, Vec<u8>) {
    HostInputs::tensor(dtype, dims, v.iter().map(|&i| Num::I(i)))
}

fn none() -> OpAttr {
    OpAttr::new()
}

#[test]
fn select_picks_broadcast_elements_of_every_type() {
    // condition [2, 1], x1 [2, 3], x2 [3]: y[i][j] = c[i] ? x1[i][j] : x2[j].
    let x1 = [1, 2, 3, 4, 5, 6];
    let x2 = [-1, -2, -3];
    for dtype in TYPES {
        for ctype in [DType::Bool, DType::U8] {
            let y = run1(
                "Select",
                vec![
                    small(ctype, &[2, 1], &[0, 1]),
                    small(dtype, &[2, 3], &x1),
                    small(dtype, &[3], &x2),
                ],
                spec(dtype, &[2, 3]),
                none(),
            )
            .unwrap();
            let want: Vec<f64> = (0..6)
                .map(|k| if k / 3 == 1 { x1[k] } else { x2[k % 3] } as f64)
                .collect();
            assert_eq!(y, want, "{dtype:?} {ctype:?}");
        }
    }
}

#[test]
fn select_gradient_is_select_of_the_upstream_gradient() {
    let cond: Vec<i64> = (0..12).map(|i| (i % 3 == 0) as i64).collect();
    let (x1, x2, dy) = (wavy(12, 1), wavy(12, 2), wavy(12, 3));
    let select = |a: &[f64], b: &[f64]| {
        run1(
            "Select",
            vec![
                small(DType::Bool, &[3, 4], &cond),
                t(DType::F64, &[3, 4], a),
                t(DType::F64, &[3, 4], b),
            ],
            spec(DType::F64, &[3, 4]),
            none(),
        )
        .unwrap()
    };
    let zeros = vec![0.0; 12];
    close(
        &select(&dy, &zeros),
        &numeric_grad(|a| select(a, &x2), &x1, &dy),
        1e-6,
    );
    close(
        &select(&zeros, &dy),
        &numeric_grad(|b| select(&x1, b), &x2, &dy),
        1e-6,
    );
}

#[test]
fn select_refusals() {
    let go = |c, a, b, out| run1("Select", vec![c, a, b], out, none());
    let c = || small(DType::Bool, &[2], &[1, 0]);
    let f = |dims: &[usize]| t(DType::F32, dims, &vec![1.0; dims.iter().product()]);
    assert!(go(c(), f(&[2]), f(&[2]), spec(DType::F32, &[2])).is_ok());
    let half = t(DType::F16, &[2], &[1.0, 2.0]);
    assert_eq!(
        go(c(), f(&[2]), half, spec(DType::F32, &[2])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        go(c(), f(&[3]), f(&[2]), spec(DType::F32, &[3])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        go(c(), f(&[2]), f(&[2]), spec(DType::F32, &[4])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        run1("Select", vec![c(), f(&[2])], spec(DType::F32, &[2]), none()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

fn masked_fill(
    x: (Spec, Vec<u8>),
    mask: &[i64],
    mdims: &[usize],
    value: (Spec, Vec<u8>),
) -> Result<Vec<f64>, AclError> {
    let out = spec(x.0.dtype, &x.0.dims);
    run1(
        "MaskedFill",
        vec![x, small(DType::Bool, mdims, mask), value],
        out,
        none(),
    )
}

#[test]
fn masked_fill_sets_the_masked_elements_of_every_type() {
    // A mask of one row broadcast to [2, 3]; the value given in fp32 is
    // converted to x's type.
    let x = [1, 2, 3, 4, 5, 6];
    for dtype in TYPES {
        let y = masked_fill(
            small(dtype, &[2, 3], &x),
            &[1, 0, 1],
            &[1, 3],
            t(DType::F32, &[], &[-7.0]),
        )
        .unwrap();
        assert_eq!(y, [-7.0, 2.0, -7.0, -7.0, 5.0, -7.0], "{dtype:?}");
    }
    // -inf, as a causal attention mask is made.
    for dtype in FLOATS {
        let y = masked_fill(
            t(dtype, &[2, 2], &[0.0; 4]),
            &[0, 1, 0, 0],
            &[2, 2],
            t(dtype, &[1], &[f64::NEG_INFINITY]),
        );
        assert_eq!(y.unwrap(), [0.0, f64::NEG_INFINITY, 0.0, 0.0], "{dtype:?}");
    }
}

#[test]
fn masked_fill_gradient_is_the_upstream_gradient_masked_with_zero() {
    let mask: Vec<i64> = (0..10).map(|i| (i % 4 == 1) as i64).collect();
    let (x, dy) = (wavy(10, 4), wavy(10, 5));
    let f = |v: &[f64], fill: f64| {
        masked_fill(
            t(DType::F64, &[10], v),
            &mask,
            &[10],
            t(DType::F64, &[], &[fill]),
        )
        .unwrap()
    };
    close(&f(&dy, 0.0), &numeric_grad(|v| f(v, 3.5), &x, &dy), 1e-6);
}

#[test]
fn masked_fill_refusals() {
    let x = || t(DType::F32, &[3], &[1.0, 2.0, 3.0]);
    let v = || t(DType::F32, &[], &[0.0]);
    assert_eq!(
        masked_fill(x(), &[1; 6], &[2, 3], v()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let float_mask = t(DType::F32, &[3], &[1.0, 0.0, 1.0]);
    let go = |inputs, out| run1("MaskedFill", inputs, out, none());
    assert_eq!(
        go(vec![x(), float_mask, v()], spec(DType::F32, &[3])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let mask = || small(DType::Bool, &[3], &[1, 0, 1]);
    assert_eq!(
        go(vec![x(), mask(), v()], spec(DType::F16, &[3])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        go(vec![x(), mask(), v()], spec(DType::F32, &[4])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let empty = t(DType::F32, &[0], &[]);
    assert_eq!(
        go(vec![x(), mask(), empty], spec(DType::F32, &[3])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

#[test]
fn triu_and_tril_keep_each_matrixs_triangle_in_every_type() {
    let dims = [2, 3, 4];
    let x: Vec<i64> = (1..=24).collect();
    for dtype in TYPES.into_iter().chain([DType::Bool]) {
        for d in [-1i64, 0, 1, 2] {
            for (op, upper) in [("Triu", true), ("Tril", false)] {
                let a = attrs(&[("diagonal", AttrValue::Int(d))]);
                let y = run1(op, vec![small(dtype, &dims, &x)], spec(dtype, &dims), a).unwrap();
                let want: Vec<f64> = (0..24)
                    .map(|i| {
                        let (r, c) = ((i / 4 % 3) as i64, (i % 4) as i64);
                        let keep = if upper { c - r >= d } else { c - r <= d };
                        let v = if dtype == DType::Bool { 1 } else { x[i] };
                        if keep { v as f64 } else { 0.0 }
                    })
                    .collect();
                assert_eq!(y, want, "{op} {d} {dtype:?}");
            }
        }
    }
}

#[test]
fn triangle_refusals() {
    let v = t(DType::F32, &[3], &[1.0; 3]);
    assert_eq!(
        run1("Triu", vec![v], spec(DType::F32, &[3]), none()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let m = || t(DType::F32, &[2, 2], &[1.0; 4]);
    assert_eq!(
        run1("Tril", vec![m()], spec(DType::F16, &[2, 2]), none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        run1("Tril", vec![m()], spec(DType::F32, &[3, 2]), none()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let bad = attrs(&[("diagonal", AttrValue::Float(1.0))]);
    assert_eq!(
        run1("Triu", vec![m()], spec(DType::F32, &[2, 2]), bad),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
}

fn argmax(x: (Spec, Vec<u8>), dim: i64, keep: bool, out: Spec) -> Result<Vec<f64>, AclError> {
    let a = attrs(&[("keep_dims", AttrValue::Bool(keep))]);
    run1("ArgMaxV2", vec![x, ints(DType::I32, &[], &[dim])], out, a)
}

#[test]
fn argmax_finds_the_first_largest_along_an_axis_in_every_type() {
    // [2, 3]: rows 3 1 3 / 0 5 2, ties to the first.
    let x = [3, 1, 3, 0, 5, 2];
    for dtype in TYPES {
        for out in [DType::I32, DType::I64] {
            let rows = argmax(small(dtype, &[2, 3], &x), 1, false, spec(out, &[2])).unwrap();
            assert_eq!(rows, [0.0, 1.0], "{dtype:?}");
            let cols = argmax(small(dtype, &[2, 3], &x), -2, true, spec(out, &[1, 3])).unwrap();
            assert_eq!(cols, [0.0, 1.0, 0.0], "{dtype:?}");
        }
    }
    // NaN is the largest; a flattened tensor's one axis.
    let nan = t(DType::F32, &[4], &[1.0, f64::NAN, 9.0, f64::NAN]);
    assert_eq!(argmax(nan, 0, false, spec(DType::I32, &[])).unwrap(), [1.0]);
}

#[test]
fn argmax_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    assert_eq!(
        argmax(x(), 2, false, spec(DType::I32, &[2])),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        argmax(x(), 1, false, spec(DType::F32, &[2])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        argmax(x(), 1, false, spec(DType::I32, &[3])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let b = small(DType::Bool, &[2], &[1, 0]);
    assert_eq!(
        argmax(b, 0, false, spec(DType::I32, &[])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let empty = t(DType::F32, &[0], &[]);
    assert_eq!(
        argmax(empty, 0, false, spec(DType::I32, &[])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

fn cumsum(
    x: (Spec, Vec<u8>),
    axis: i64,
    exclusive: bool,
    reverse: bool,
) -> Result<Vec<f64>, AclError> {
    let out = spec(x.0.dtype, &x.0.dims);
    let a = attrs(&[
        ("exclusive", AttrValue::Bool(exclusive)),
        ("reverse", AttrValue::Bool(reverse)),
    ]);
    run1("Cumsum", vec![x, ints(DType::I64, &[], &[axis])], out, a)
}

/// The running sums of a [rows, cols] table along `axis` (0 or 1).
fn running(
    x: &[f64],
    rows: usize,
    cols: usize,
    axis: usize,
    exclusive: bool,
    reverse: bool,
) -> Vec<f64> {
    let (outer, len, inner) = if axis == 0 {
        (1, rows, cols)
    } else {
        (rows, cols, 1)
    };
    let mut y = vec![0.0; x.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut s = 0.0;
            for step in 0..len {
                let k = if reverse { len - 1 - step } else { step };
                let at = (o * len + k) * inner + i;
                y[at] = if exclusive { s } else { s + x[at] };
                s += x[at];
            }
        }
    }
    y
}

#[test]
fn cumsum_sums_along_an_axis_in_every_type_and_direction() {
    let x: Vec<i64> = vec![1, -2, 3, 4, 0, 5, -6, 7, 8, 2, 1, -1];
    let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    for dtype in TYPES {
        for (axis, a) in [(0i64, 0usize), (1, 1), (-1, 1)] {
            for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)]
            {
                let y = cumsum(small(dtype, &[3, 4], &x), axis, exclusive, reverse).unwrap();
                assert_eq!(
                    y,
                    running(&xf, 3, 4, a, exclusive, reverse),
                    "{dtype:?} {axis} {exclusive} {reverse}"
                );
            }
        }
    }
    // Halves are summed in fp32: fp16 partial sums of ones would stop at
    // 2048 (2048 + 1 rounds back to it); 4097 in fp32 rounds to 4096.
    let ones = t(DType::F16, &[4097], &[1.0; 4097]);
    assert_eq!(cumsum(ones, 0, false, false).unwrap()[4096], 4096.0);
    let y = cumsum(t(DType::F32, &[3], &[0.1, 0.2, 0.3]), 0, false, false).unwrap();
    close(&y, &[0.1, 0.3, 0.6], 1e-7);
}

#[test]
fn cumsums_gradient_is_the_reverse_cumsum_of_the_upstream_gradient() {
    let (x, dy) = (wavy(12, 6), wavy(12, 7));
    for axis in [0i64, 1] {
        let f =
            |v: &[f64], reverse| cumsum(t(DType::F64, &[3, 4], v), axis, false, reverse).unwrap();
        close(&f(&dy, true), &numeric_grad(|v| f(v, false), &x, &dy), 1e-6);
    }
}

#[test]
fn cumsum_refusals() {
    let x = || t(DType::F32, &[2, 2], &[1.0; 4]);
    assert_eq!(
        cumsum(x(), 2, false, false),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let b = small(DType::Bool, &[2], &[1, 0]);
    assert_eq!(cumsum(b, 0, false, false), Err(AclError::OP_TYPE_NOT_MATCH));
    let axis = || ints(DType::I64, &[], &[0]);
    let go = |out| run1("Cumsum", vec![x(), axis()], out, none());
    assert_eq!(
        go(spec(DType::F16, &[2, 2])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        go(spec(DType::F32, &[5])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let float_axis = vec![x(), t(DType::F32, &[], &[0.0])];
    assert_eq!(
        run1("Cumsum", float_axis, spec(DType::F32, &[2, 2]), none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

mod scatter;
