//! Volume resizing: against PyTorch's `nearest` and `trilinear` (both
//! corner conventions) written out axis by axis, each float type, the
//! gradients against finite differences, refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn up_attrs(out: [usize; 3], align: Option<bool>, input: Option<[usize; 5]>) -> OpAttr {
    let mut a = attrs(&[(
        "output_size",
        AttrValue::ListInt(out.iter().map(|&v| v as i64).collect()),
    )]);
    if let Some(al) = align {
        a.insert("align_corners".into(), AttrValue::Bool(al));
    }
    if let Some(i) = input {
        a.insert(
            "input_size".into(),
            AttrValue::ListInt(i.iter().map(|&v| v as i64).collect()),
        );
    }
    a
}

/// PyTorch's source positions and weights on one axis.
fn torch_taps(linear: bool, align: bool, input: usize, output: usize) -> Vec<Vec<(usize, f64)>> {
    (0..output)
        .map(|d| {
            if !linear {
                return vec![((d * input / output).min(input - 1), 1.0)];
            }
            let src = if align {
                if output > 1 {
                    d as f64 * (input - 1) as f64 / (output - 1) as f64
                } else {
                    0.0
                }
            } else {
                ((d as f64 + 0.5) * input as f64 / output as f64 - 0.5).max(0.0)
            };
            let h0 = src.floor() as usize;
            let h1 = if h0 < input - 1 { h0 + 1 } else { h0 };
            vec![(h0, 1.0 - (src - h0 as f64)), (h1, src - h0 as f64)]
        })
        .collect()
}

fn reference(
    linear: bool,
    align: bool,
    x: &[f64],
    planes: usize,
    i: [usize; 3],
    o: [usize; 3],
) -> Vec<f64> {
    let t: Vec<_> = (0..3)
        .map(|a| torch_taps(linear, align, i[a], o[a]))
        .collect();
    let mut y = vec![0.0; planes * o[0] * o[1] * o[2]];
    for p in 0..planes {
        for z in 0..o[0] {
            for r in 0..o[1] {
                for c in 0..o[2] {
                    let mut acc = 0.0;
                    for &(k, wk) in &t[0][z] {
                        for &(a, wa) in &t[1][r] {
                            for &(b, wb) in &t[2][c] {
                                acc += wk * wa * wb * x[((p * i[0] + k) * i[1] + a) * i[2] + b];
                            }
                        }
                    }
                    y[((p * o[0] + z) * o[1] + r) * o[2] + c] = acc;
                }
            }
        }
    }
    y
}

fn fwd(
    op: &str,
    dtype: DType,
    x: &[f64],
    i: [usize; 3],
    o: [usize; 3],
    align: Option<bool>,
) -> Vec<f64> {
    run1(
        op,
        vec![t(dtype, &[1, 2, i[0], i[1], i[2]], x)],
        spec(dtype, &[1, 2, o[0], o[1], o[2]]),
        up_attrs(o, align, None),
    )
    .unwrap()
}

const SHAPES: [([usize; 3], [usize; 3]); 3] = [
    ([2, 3, 3], [4, 6, 6]),
    ([3, 4, 2], [5, 3, 7]),
    ([2, 2, 2], [1, 1, 1]),
];

#[test]
fn matches_pytorch() {
    for (i, o) in SHAPES {
        let x = wavy(2 * i.iter().product::<usize>(), 3);
        close(
            &fwd("UpsampleNearest3d", F64, &x, i, o, None),
            &reference(false, false, &x, 2, i, o),
            1e-12,
        );
        for align in [false, true] {
            close(
                &fwd("UpsampleTrilinear3d", F64, &x, i, o, Some(align)),
                &reference(true, align, &x, 2, i, o),
                1e-12,
            );
        }
    }
    let x = wavy(36, 4);
    let want = reference(true, false, &x, 2, [2, 3, 3], [4, 6, 6]);
    for (dtype, tol) in [(DType::F32, 1e-6), (DType::F16, 5e-3), (DType::Bf16, 3e-2)] {
        close(
            &fwd(
                "UpsampleTrilinear3d",
                dtype,
                &x,
                [2, 3, 3],
                [4, 6, 6],
                Some(false),
            ),
            &want,
            tol,
        );
    }
}

#[test]
fn gradients_match_finite_differences() {
    for (i, o) in SHAPES {
        let x = wavy(2 * i.iter().product::<usize>(), 5);
        let dy = wavy(2 * o.iter().product::<usize>(), 6);
        let input = [1, 2, i[0], i[1], i[2]];
        for (op, grad, align) in [
            ("UpsampleNearest3d", "UpsampleNearest3dGrad", None),
            (
                "UpsampleTrilinear3d",
                "UpsampleTrilinear3dGrad",
                Some(false),
            ),
            ("UpsampleTrilinear3d", "UpsampleTrilinear3dGrad", Some(true)),
        ] {
            let numeric = numeric_grad(|x| fwd(op, F64, x, i, o, align), &x, &dy);
            for (dtype, tol) in [
                (F64, 1e-6),
                (DType::F32, 1e-5),
                (DType::F16, 1e-2),
                (DType::Bf16, 5e-2),
            ] {
                let dx = run1(
                    grad,
                    vec![t(dtype, &[1, 2, o[0], o[1], o[2]], &dy)],
                    spec(dtype, &input),
                    up_attrs(o, align, Some(input)),
                )
                .unwrap();
                close(&dx, &numeric, tol);
            }
        }
    }
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[1, 2, 2, 2, 2], &[1.0; 16]);
    let out = spec(DType::F32, &[1, 2, 4, 4, 4]);
    // No output_size, two sizes, a zero size: 100023.
    assert_eq!(
        run1("UpsampleNearest3d", vec![x()], out.clone(), OpAttr::new()),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let two = attrs(&[("output_size", AttrValue::ListInt(vec![4, 4]))]);
    assert_eq!(
        run1("UpsampleNearest3d", vec![x()], out.clone(), two),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "UpsampleNearest3d",
            vec![x()],
            out.clone(),
            up_attrs([0, 4, 4], None, None)
        ),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // A 4-D x: 100021; an output of another shape: 100022.
    let flat = t(DType::F32, &[1, 2, 2, 4], &[1.0; 16]);
    assert_eq!(
        run1(
            "UpsampleNearest3d",
            vec![flat],
            out.clone(),
            up_attrs([4, 4, 4], None, None)
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "UpsampleNearest3d",
            vec![x()],
            out.clone(),
            up_attrs([4, 4, 3], None, None)
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // A gradient whose shape is not output_size, or of another batch: 100021.
    let g = || t(DType::F32, &[1, 2, 4, 4, 4], &[1.0; 128]);
    let small = spec(DType::F32, &[1, 2, 2, 2, 2]);
    assert_eq!(
        run1(
            "UpsampleTrilinear3dGrad",
            vec![g()],
            small.clone(),
            up_attrs([4, 4, 5], Some(false), Some([1, 2, 2, 2, 2]))
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "UpsampleTrilinear3dGrad",
            vec![g()],
            small,
            up_attrs([4, 4, 4], Some(false), Some([2, 2, 2, 2, 2]))
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // Integers: 100020.
    let i = ints(DType::I32, &[1, 2, 2, 2, 2], &[1; 16]);
    assert_eq!(
        run1(
            "UpsampleNearest3d",
            vec![i],
            spec(DType::I32, &[1, 2, 4, 4, 4]),
            up_attrs([4, 4, 4], None, None)
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
