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
    cubic.insert("mode".into(), AttrValue::String("nearest".into()));
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

fn cubic_attrs(o: [usize; 2], corners: bool) -> OpAttr {
    attrs(&[
        ("sizes", AttrValue::ListInt(vec![o[0] as i64, o[1] as i64])),
        ("mode", AttrValue::String("cubic".into())),
        ("cubic_coeff_a", AttrValue::Float(-0.75)),
        ("data_format", AttrValue::String("HWNC".into())),
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

/// PyTorch's bicubic weights of one axis, from its definition (A −0.75).
fn bicubic_1d(input: usize, output: usize, corners: bool) -> Vec<Vec<f64>> {
    let a = -0.75;
    let k = |x: f64| {
        let x = x.abs();
        if x <= 1.0 {
            (a + 2.0) * x.powi(3) - (a + 3.0) * x * x + 1.0
        } else if x < 2.0 {
            a * x.powi(3) - 5.0 * a * x * x + 8.0 * a * x - 4.0 * a
        } else {
            0.0
        }
    };
    (0..output)
        .map(|d| {
            let src = if corners {
                if output > 1 {
                    d as f64 * (input - 1) as f64 / (output - 1) as f64
                } else {
                    0.0
                }
            } else {
                (d as f64 + 0.5) * input as f64 / output as f64 - 0.5
            };
            let f = src.floor();
            // Each input position's total weight (clamped taps add up).
            let mut w = vec![0.0; input];
            for j in -1..=2i64 {
                let at = (f as i64 + j).clamp(0, input as i64 - 1) as usize;
                w[at] += k(src - (f + j as f64));
            }
            w
        })
        .collect()
}

fn bicubic_reference(x: &[f64], i: [usize; 2], o: [usize; 2], corners: bool) -> Vec<f64> {
    let (wh, ww) = (
        bicubic_1d(i[0], o[0], corners),
        bicubic_1d(i[1], o[1], corners),
    );
    let mut y = Vec::new();
    for plane in x.chunks(i[0] * i[1]) {
        for row in &wh {
            for col in &ww {
                let mut acc = 0.0;
                for (a, &wa) in row.iter().enumerate() {
                    for (b, &wb) in col.iter().enumerate() {
                        acc += wa * wb * plane[a * i[1] + b];
                    }
                }
                y.push(acc);
            }
        }
    }
    y
}

/// `[N, C, H, W]` values as `[H, W, N, C]`.
fn to_hwnc(v: &[f64], [n, c, h, w]: [usize; 4]) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for p in 0..n * c {
        for y in 0..h {
            for x in 0..w {
                out[(y * w + x) * n * c + p] = v[(p * h + y) * w + x];
            }
        }
    }
    out
}

fn bicubic(dtype: DType, x: &[f64], i: [usize; 2], o: [usize; 2], corners: bool) -> Vec<f64> {
    run1(
        "ResizeD",
        vec![t(dtype, &[2, 3, i[0], i[1]], x)],
        spec(dtype, &[2, 3, o[0], o[1]]),
        cubic_attrs(o, corners),
    )
    .unwrap()
}

#[test]
fn bicubic_matches_pytorch_and_its_gradient_the_differences() {
    for (i, o) in [([4, 5], [8, 10]), ([4, 5], [7, 3]), ([3, 3], [1, 1])] {
        let x = wavy(6 * i[0] * i[1], 5);
        let dy = wavy(6 * o[0] * o[1], 6);
        for corners in [false, true] {
            close(
                &bicubic(F64, &x, i, o, corners),
                &bicubic_reference(&x, i, o, corners),
                1e-12,
            );
            close(
                &bicubic(DType::F32, &x, i, o, corners),
                &bicubic_reference(&x, i, o, corners),
                1e-5,
            );
            let numeric = numeric_grad(|x| bicubic(F64, x, i, o, corners), &x, &dy);
            for (dtype, tol) in [
                (F64, 1e-6),
                (DType::F32, 1e-5),
                (DType::F16, 2e-2),
                (DType::Bf16, 8e-2),
            ] {
                let mut a = cubic_attrs(o, corners);
                a.insert(
                    "original_size".into(),
                    AttrValue::ListInt(vec![2, 3, i[0] as i64, i[1] as i64]),
                );
                let grads = t(
                    dtype,
                    &[o[0], o[1], 2, 3],
                    &to_hwnc(&dy, [2, 3, o[0], o[1]]),
                );
                let dx = run1(
                    "ResizeGradD",
                    vec![grads],
                    spec(dtype, &[2, 3, i[0], i[1]]),
                    a,
                )
                .unwrap();
                close(&dx, &to_hwnc(&numeric, [2, 3, i[0], i[1]]), tol);
            }
        }
    }
    // The gradient in another layout: 100027.
    let mut a = cubic_attrs([8, 10], false);
    a.insert("data_format".into(), AttrValue::String("NCHW".into()));
    let g = t(DType::F32, &[8, 10, 2, 3], &[1.0; 480]);
    assert_eq!(
        run1("ResizeGradD", vec![g], spec(DType::F32, &[2, 3, 4, 5]), a),
        Err(AclError::FORMAT_NOT_MATCH)
    );
}
