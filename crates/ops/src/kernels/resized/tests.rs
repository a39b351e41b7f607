//! Linear resizing along the last axis: against PyTorch's `linear`, each
//! float type, the gradient against finite differences, refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn rd_attrs(ow: usize, corners: bool) -> OpAttr {
    attrs(&[
        ("sizes", AttrValue::ListInt(vec![ow as i64])),
        ("mode", AttrValue::String("linear".into())),
        (
            "coordinate_transformation_mode",
            AttrValue::String(
                if corners {
                    "align_corners"
                } else {
                    "half_pixel"
                }
                .into(),
            ),
        ),
    ])
}

/// PyTorch's `linear` of rows of `w` to `ow`.
fn reference(x: &[f64], w: usize, ow: usize, corners: bool) -> Vec<f64> {
    let mut y = Vec::new();
    for row in x.chunks(w) {
        for d in 0..ow {
            let src = if corners {
                if ow > 1 {
                    d as f64 * (w - 1) as f64 / (ow - 1) as f64
                } else {
                    0.0
                }
            } else {
                ((d as f64 + 0.5) * w as f64 / ow as f64 - 0.5).max(0.0)
            };
            let i0 = src.floor() as usize;
            let i1 = (i0 + 1).min(w - 1);
            let l = src - i0 as f64;
            y.push(row[i0] * (1.0 - l) + row[i1] * l);
        }
    }
    y
}

fn fwd(dtype: DType, x: &[f64], w: usize, ow: usize, corners: bool) -> Vec<f64> {
    run1(
        "ResizeD",
        vec![t(dtype, &[2, 3, 1, w], x)],
        spec(dtype, &[2, 3, 1, ow]),
        rd_attrs(ow, corners),
    )
    .unwrap()
}

#[test]
fn matches_pytorchs_linear() {
    for (w, ow) in [(5, 10), (5, 7), (6, 4), (3, 1)] {
        let x = wavy(6 * w, 2);
        for corners in [false, true] {
            close(
                &fwd(F64, &x, w, ow, corners),
                &reference(&x, w, ow, corners),
                1e-12,
            );
            for (dtype, tol) in [(DType::F32, 1e-6), (DType::F16, 5e-3), (DType::Bf16, 3e-2)] {
                close(
                    &fwd(dtype, &x, w, ow, corners),
                    &reference(&x, w, ow, corners),
                    tol,
                );
            }
        }
    }
}

#[test]
fn the_gradient_matches_finite_differences() {
    for (w, ow) in [(5, 10), (5, 7), (6, 4)] {
        let x = wavy(6 * w, 3);
        let dy = wavy(6 * ow, 4);
        for corners in [false, true] {
            let numeric = numeric_grad(|x| fwd(F64, x, w, ow, corners), &x, &dy);
            for (dtype, tol) in [
                (F64, 1e-6),
                (DType::F32, 1e-5),
                (DType::F16, 1e-2),
                (DType::Bf16, 5e-2),
            ] {
                let mut a = rd_attrs(ow, corners);
                a.insert(
                    "original_size".into(),
                    AttrValue::ListInt(vec![2, 3, w as i64]),
                );
                let dx = run1(
                    "ResizeGradD",
                    vec![t(dtype, &[2, 3, 1, ow], &dy)],
                    spec(dtype, &[2, 3, 1, w]),
                    a,
                )
                .unwrap();
                close(&dx, &numeric, tol);
            }
        }
    }
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[2, 3, 1, 5], &[1.0; 30]);
    let out = || spec(DType::F32, &[2, 3, 1, 10]);
    let mut cubic = rd_attrs(10, false);
    cubic.insert("mode".into(), AttrValue::String("cubic".into()));
    assert_eq!(
        run1("ResizeD", vec![x()], out(), cubic),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let mut asym = rd_attrs(10, false);
    asym.insert(
        "coordinate_transformation_mode".into(),
        AttrValue::String("asymmetric".into()),
    );
    assert_eq!(
        run1("ResizeD", vec![x()], out(), asym),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // sizes not the output's width: 100023; rows not matching: 100022.
    assert_eq!(
        run1("ResizeD", vec![x()], out(), rd_attrs(9, false)),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "ResizeD",
            vec![x()],
            spec(DType::F32, &[2, 2, 1, 10]),
            rd_attrs(10, false)
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // Another output type: 100020.
    assert_eq!(
        run1(
            "ResizeD",
            vec![x()],
            spec(DType::F16, &[2, 3, 1, 10]),
            rd_attrs(10, false)
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
