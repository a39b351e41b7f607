//! Softmax and log-softmax: hand-checked values, rows summing to one
//! along any axis, gradients against finite differences, refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn axes(name: &str, a: i64) -> OpAttr {
    attrs(&[(name, AttrValue::ListInt(vec![a]))])
}

fn fwd(op: &'static str, dims: &'static [usize], a: i64) -> impl Fn(&[f64]) -> Vec<f64> {
    move |x: &[f64]| run1(op, vec![t(F64, dims, x)], spec(F64, dims), axes("axes", a)).unwrap()
}

#[test]
fn softmax_of_a_row_by_hand() {
    // [0, ln 2, ln 5]: e^x = 1, 2, 5 of 8.
    let x = [0.0, 2f64.ln(), 5f64.ln()];
    let y = run1(
        "SoftmaxV2",
        vec![t(F64, &[1, 3], &x)],
        spec(F64, &[1, 3]),
        axes("axes", -1),
    )
    .unwrap();
    close(&y, &[0.125, 0.25, 0.625], 1e-15);
    let l = run1(
        "LogSoftmaxV2",
        vec![t(F64, &[1, 3], &x)],
        spec(F64, &[1, 3]),
        axes("axes", 1),
    )
    .unwrap();
    close(&l, &[0.125f64.ln(), 0.25f64.ln(), 0.625f64.ln()], 1e-15);
    // Large values do not overflow (computed from x − max).
    let big = run1(
        "SoftmaxV2",
        vec![t(F64, &[2], &[1000.0, 1000.0])],
        spec(F64, &[2]),
        OpAttr::new(),
    )
    .unwrap();
    close(&big, &[0.5, 0.5], 0.0);
}

#[test]
fn rows_sum_to_one_along_every_axis() {
    let dims = [3, 4, 5];
    let x = wavy(60, 4).iter().map(|v| v * 3.0).collect::<Vec<_>>();
    for a in 0..3usize {
        for dtype in [DType::F32, DType::F16, DType::Bf16, F64] {
            let y = run1(
                "SoftmaxV2",
                vec![t(dtype, &dims, &x)],
                spec(dtype, &dims),
                axes("axes", a as i64 - 3),
            )
            .unwrap();
            let strides = [20, 5, 1];
            for o in 0..60 {
                let pos = [o / 20, o / 5 % 4, o % 5];
                if pos[a] != 0 {
                    continue;
                }
                let sum: f64 = (0..dims[a]).map(|k| y[o + k * strides[a]]).sum();
                let tol = if dtype == DType::Bf16 { 2e-2 } else { 2e-3 };
                assert!((sum - 1.0).abs() < tol, "{dtype:?} axis {a}: {sum}");
            }
        }
    }
}

#[test]
fn gradients_match_finite_differences() {
    static DIMS: [usize; 2] = [3, 4];
    let x = wavy(12, 5);
    let dy = wavy(12, 6);
    for a in [0i64, 1] {
        let y = fwd("SoftmaxV2", &DIMS, a)(&x);
        let got = run1(
            "SoftmaxGrad",
            vec![t(F64, &DIMS, &y), t(F64, &DIMS, &dy)],
            spec(F64, &DIMS),
            axes("axes", a),
        )
        .unwrap();
        close(
            &got,
            &numeric_grad(fwd("SoftmaxV2", &DIMS, a), &x, &dy),
            1e-6,
        );
        let ly = fwd("LogSoftmaxV2", &DIMS, a)(&x);
        let got = run1(
            "LogSoftmaxGrad",
            vec![t(F64, &DIMS, &dy), t(F64, &DIMS, &ly)],
            spec(F64, &DIMS),
            axes("axis", a),
        )
        .unwrap();
        close(
            &got,
            &numeric_grad(fwd("LogSoftmaxV2", &DIMS, a), &x, &dy),
            1e-6,
        );
    }
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    let out = spec(DType::F32, &[2, 3]);
    assert_eq!(
        run1("SoftmaxV2", vec![x()], out.clone(), axes("axes", 2)),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "SoftmaxV2",
            vec![x()],
            out.clone(),
            attrs(&[("axes", AttrValue::ListInt(vec![0, 1]))])
        ),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "SoftmaxV2",
            vec![x()],
            spec(DType::F16, &[2, 3]),
            OpAttr::new()
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "LogSoftmaxV2",
            vec![x()],
            spec(DType::F32, &[3, 2]),
            OpAttr::new()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "SoftmaxGrad",
            vec![x(), t(DType::F32, &[6], &[1.0; 6])],
            out.clone(),
            OpAttr::new()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1("LogSoftmaxGrad", vec![x()], out, OpAttr::new()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}
