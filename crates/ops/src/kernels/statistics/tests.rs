//! ArgMaxWithValue/ArgMinWithValue, ReduceProd, ReduceLogSumExp,
//! ReduceMeanD, ReduceStdWithMean, ReduceStdV2Update and Cumprod against
//! direct computations in every type they take; their gradients (as torch
//! forms them from other operators) against finite differences; the
//! refusals.

use super::super::testing::*;
use super::*;

const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::Bf16, DType::F64];
const NUMBERS: [DType; 7] = [
    DType::F32,
    DType::F16,
    DType::Bf16,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::I8,
];

fn none() -> OpAttr {
    OpAttr::new()
}

fn tol(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => 1e-9,
        DType::F32 => 1e-5,
        DType::F16 => 2e-3,
        _ => 1.6e-2,
    }
}

/// `v` as `dtype` stores it.
fn stored(dtype: DType, v: &[f64]) -> Vec<f64> {
    let x = t(dtype, &[v.len()], v);
    Tensor {
        dtype,
        dims: vec![v.len()],
        bytes: x.1,
    }
    .nums()
    .map(Num::f64)
    .collect()
}

fn arg(
    op: &str,
    x: (Spec, Vec<u8>),
    dim: i64,
    keep: bool,
    outs: [Spec; 2],
) -> Result<Vec<Vec<f64>>, AclError> {
    let a = attrs(&[
        ("dimension", AttrValue::Int(dim)),
        ("keep_dims", AttrValue::Bool(keep)),
    ]);
    run(op, vec![x], &outs, a)
}

#[test]
fn arg_max_and_min_with_value_pick_the_first_extreme_in_every_type() {
    // [2, 3]: 3 1 3 / 0 5 0.
    let v = [3, 1, 3, 0, 5, 0];
    for dtype in NUMBERS {
        for itype in [DType::I32, DType::I64] {
            let x = || ints(dtype, &[2, 3], &v);
            let outs = || [spec(itype, &[2]), spec(dtype, &[2])];
            let max = arg("ArgMaxWithValue", x(), 1, false, outs()).unwrap();
            assert_eq!(max, [vec![0.0, 1.0], vec![3.0, 5.0]], "{dtype:?}");
            let min = arg("ArgMinWithValue", x(), -1, false, outs()).unwrap();
            assert_eq!(min, [vec![1.0, 0.0], vec![1.0, 0.0]], "{dtype:?}");
            let keep = [spec(itype, &[1, 3]), spec(dtype, &[1, 3])];
            let cols = arg("ArgMaxWithValue", x(), 0, true, keep).unwrap();
            assert_eq!(
                cols,
                [vec![0.0, 1.0, 0.0], vec![3.0, 5.0, 3.0]],
                "{dtype:?}"
            );
        }
    }
    // NaN wins both, the first of them.
    let nan = || t(DType::F32, &[4], &[1.0, f64::NAN, -9.0, f64::NAN]);
    let outs = || [spec(DType::I64, &[]), spec(DType::F32, &[])];
    for op in ["ArgMaxWithValue", "ArgMinWithValue"] {
        let r = arg(op, nan(), 0, false, outs()).unwrap();
        assert_eq!(r[0], [1.0]);
        assert!(r[1][0].is_nan());
    }
}

#[test]
fn max_gradient_goes_to_the_picked_element() {
    let (xv, dy) = (wavy(12, 1), wavy(3, 2));
    let values = |x: &[f64]| {
        arg(
            "ArgMaxWithValue",
            t(DType::F64, &[3, 4], x),
            1,
            false,
            [spec(DType::I64, &[3]), spec(DType::F64, &[3])],
        )
        .unwrap()
        .remove(1)
    };
    let want = numeric_grad(values, &xv, &dy);
    // torch: dy scattered into zeros at the indices along the dim.
    let idx = arg(
        "ArgMaxWithValue",
        t(DType::F64, &[3, 4], &xv),
        1,
        true,
        [spec(DType::I64, &[3, 1]), spec(DType::F64, &[3, 1])],
    )
    .unwrap()
    .remove(0);
    for dtype in FLOATS {
        let inputs = vec![
            t(dtype, &[3, 4], &[0.0; 12]),
            ints(
                DType::I64,
                &[3, 1],
                &idx.iter().map(|&i| i as i64).collect::<Vec<_>>(),
            ),
            t(dtype, &[3, 1], &dy),
        ];
        let a = attrs(&[("axis", AttrValue::Int(1))]);
        let got = run1("ScatterElements", inputs, spec(dtype, &[3, 4]), a).unwrap();
        close(&got, &stored(dtype, &want), 1e-6);
    }
}

#[test]
fn arg_with_value_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    let good = || [spec(DType::I32, &[2]), spec(DType::F32, &[2])];
    assert_eq!(
        arg("ArgMaxWithValue", x(), 2, false, good()),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let bad_index = [spec(DType::F32, &[2]), spec(DType::F32, &[2])];
    assert_eq!(
        arg("ArgMaxWithValue", x(), 1, false, bad_index),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let bad_value = [spec(DType::I32, &[2]), spec(DType::F16, &[2])];
    assert_eq!(
        arg("ArgMinWithValue", x(), 1, false, bad_value),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let bad_shape = [spec(DType::I32, &[3]), spec(DType::F32, &[3])];
    assert_eq!(
        arg("ArgMinWithValue", x(), 1, false, bad_shape),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let empty = t(DType::F32, &[0, 2], &[]);
    let outs = [spec(DType::I32, &[0]), spec(DType::F32, &[0])];
    assert_eq!(
        arg("ArgMaxWithValue", empty, 1, false, outs),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let b = ints(DType::Bool, &[2], &[0, 1]);
    let outs = [spec(DType::I32, &[]), spec(DType::Bool, &[])];
    assert_eq!(
        arg("ArgMaxWithValue", b, 0, false, outs),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let one = vec![x()];
    assert_eq!(
        run("ArgMaxWithValue", one, &[spec(DType::F32, &[2])], none()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}

fn reduce(
    op: &str,
    x: (Spec, Vec<u8>),
    axes: &[i64],
    keep: bool,
    out: Spec,
) -> Result<Vec<f64>, AclError> {
    let a = attrs(&[("keep_dims", AttrValue::Bool(keep))]);
    run1(op, vec![x, ints(DType::I64, &[axes.len()], axes)], out, a)
}

/// Rows and columns of a [2, 3] tensor reduced by `f`.
fn by_rows(x: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    x.chunks(3).map(f).collect()
}

fn by_cols(x: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    (0..3).map(|c| f(&[x[c], x[3 + c]])).collect()
}

#[test]
fn reduce_prod_multiplies_over_axes_in_every_type() {
    let v = [2, -3, 1, 4, 2, -1];
    for dtype in NUMBERS {
        let x = || ints(dtype, &[2, 3], &v);
        let vf: Vec<f64> = v.iter().map(|&i| i as f64).collect();
        let p = |s: &[f64]| s.iter().product::<f64>();
        assert_eq!(
            reduce("ReduceProd", x(), &[1], false, spec(dtype, &[2])).unwrap(),
            by_rows(&vf, p)
        );
        assert_eq!(
            reduce("ReduceProd", x(), &[-2], true, spec(dtype, &[1, 3])).unwrap(),
            by_cols(&vf, p)
        );
        assert_eq!(
            reduce("ReduceProd", x(), &[], false, spec(dtype, &[])).unwrap(),
            [48.0]
        );
    }
    // Integers wrap.
    let big = ints(DType::I32, &[2], &[1 << 20, 1 << 12]);
    assert_eq!(
        reduce("ReduceProd", big, &[0], false, spec(DType::I32, &[])).unwrap(),
        [0.0]
    );
}

#[test]
fn reduce_prod_gradient_is_the_product_of_the_others() {
    let (xv, dy) = (wavy(6, 3), wavy(2, 4));
    let f = |x: &[f64]| {
        reduce(
            "ReduceProd",
            t(DType::F64, &[2, 3], x),
            &[1],
            false,
            spec(DType::F64, &[2]),
        )
        .unwrap()
    };
    let want = numeric_grad(f, &xv, &dy);
    for dtype in FLOATS {
        let x = stored(dtype, &xv);
        let prods = reduce(
            "ReduceProd",
            t(dtype, &[2, 3], &x),
            &[1],
            true,
            spec(dtype, &[2, 1]),
        )
        .unwrap();
        // torch: dy * prod / x (no zero in x).
        let got: Vec<f64> = (0..6).map(|i| dy[i / 3] * prods[i / 3] / x[i]).collect();
        close(&got, &want, tol(dtype) * 8.0);
    }
}

#[test]
fn reduce_log_sum_exp_and_its_gradient() {
    let xv: Vec<f64> = wavy(6, 5).iter().map(|v| v * 20.0).collect();
    for dtype in FLOATS {
        let x = stored(dtype, &xv);
        let lse = |s: &[f64]| {
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            m + s.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
        };
        let got = reduce(
            "ReduceLogSumExp",
            t(dtype, &[2, 3], &x),
            &[1],
            false,
            spec(dtype, &[2]),
        )
        .unwrap();
        close(&got, &stored(dtype, &by_rows(&x, lse)), tol(dtype));
        let got = reduce(
            "ReduceLogSumExp",
            t(dtype, &[2, 3], &x),
            &[0],
            true,
            spec(dtype, &[1, 3]),
        )
        .unwrap();
        close(&got, &stored(dtype, &by_cols(&x, lse)), tol(dtype));
    }
    // Infinities and NaN.
    let special = t(
        DType::F32,
        &[3, 2],
        &[
            f64::INFINITY,
            1.0,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.0,
        ],
    );
    let got = reduce(
        "ReduceLogSumExp",
        special,
        &[1],
        false,
        spec(DType::F32, &[3]),
    )
    .unwrap();
    assert_eq!(got[..2], [f64::INFINITY, f64::NEG_INFINITY]);
    assert!(got[2].is_nan());
    // The gradient: dy * exp(x - lse), the softmax.
    let (xs, dy) = (wavy(6, 6), wavy(2, 7));
    let f = |x: &[f64]| {
        reduce(
            "ReduceLogSumExp",
            t(DType::F64, &[2, 3], x),
            &[1],
            false,
            spec(DType::F64, &[2]),
        )
        .unwrap()
    };
    let want = numeric_grad(f, &xs, &dy);
    let l = f(&xs);
    let got: Vec<f64> = (0..6)
        .map(|i| dy[i / 3] * (xs[i] - l[i / 3]).exp())
        .collect();
    close(&got, &want, 1e-6);
}

fn mean_d(x: (Spec, Vec<u8>), axes: &[i64], keep: bool, out: Spec) -> Result<Vec<f64>, AclError> {
    let a = attrs(&[
        ("axes", AttrValue::ListInt(axes.to_vec())),
        ("keep_dims", AttrValue::Bool(keep)),
    ]);
    run1("ReduceMeanD", vec![x], out, a)
}

#[test]
fn reduce_mean_d_averages_over_its_axes_attribute() {
    let xv = wavy(6, 8);
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    for dtype in FLOATS {
        let x = stored(dtype, &xv);
        let got = mean_d(t(dtype, &[2, 3], &x), &[1], false, spec(dtype, &[2])).unwrap();
        close(&got, &stored(dtype, &by_rows(&x, mean)), tol(dtype));
        let got = mean_d(t(dtype, &[2, 3], &x), &[0, 1], true, spec(dtype, &[1, 1])).unwrap();
        close(&got, &stored(dtype, &[mean(&x)]), tol(dtype));
        let got = mean_d(t(dtype, &[2, 3], &x), &[], false, spec(dtype, &[])).unwrap();
        close(&got, &stored(dtype, &[mean(&x)]), tol(dtype));
    }
    // The gradient: dy / n to each element.
    let dy = wavy(2, 9);
    let f = |x: &[f64]| {
        mean_d(
            t(DType::F64, &[2, 3], x),
            &[-1],
            false,
            spec(DType::F64, &[2]),
        )
        .unwrap()
    };
    let got: Vec<f64> = (0..6).map(|i| dy[i / 3] / 3.0).collect();
    close(&got, &numeric_grad(f, &xv, &dy), 1e-6);
}

fn spread(
    op: &str,
    x: &[f64],
    dtype: DType,
    dim: &[i64],
    unbiased: bool,
    correction: i64,
    out: &[usize],
) -> Result<Vec<f64>, AclError> {
    // The mean over dim, broadcast back to x's shape [2, 3].
    let rows = dim == [1];
    let mean: Vec<f64> = (0..6)
        .map(|i| {
            if rows {
                (x[i / 3 * 3] + x[i / 3 * 3 + 1] + x[i / 3 * 3 + 2]) / 3.0
            } else {
                (x[i % 3] + x[3 + i % 3]) / 2.0
            }
        })
        .collect();
    let a = attrs(&[
        ("dim", AttrValue::ListInt(dim.to_vec())),
        ("unbiased", AttrValue::Bool(unbiased)),
        ("keepdim", AttrValue::Bool(false)),
        ("correction", AttrValue::Int(correction)),
    ]);
    run1(
        op,
        vec![t(dtype, &[2, 3], x), t(dtype, &[2, 3], &mean)],
        spec(dtype, out),
        a,
    )
}

#[test]
fn std_and_var_about_a_mean_follow_the_correction() {
    let xv = wavy(6, 10);
    for dtype in FLOATS {
        let x = stored(dtype, &xv);
        let var = |s: &[f64], c: f64| {
            let m = s.iter().sum::<f64>() / s.len() as f64;
            s.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (s.len() as f64 - c)
        };
        let want = by_rows(&x, |s| var(s, 1.0).sqrt());
        let got = spread("ReduceStdWithMean", &x, dtype, &[1], true, 1, &[2]).unwrap();
        close(&got, &stored(dtype, &want), tol(dtype));
        let want = by_cols(&x, |s| var(s, 0.0));
        let got = spread("ReduceStdV2Update", &x, dtype, &[0], false, 1, &[3]).unwrap();
        close(&got, &stored(dtype, &want), tol(dtype));
        let want = by_rows(&x, |s| var(s, 2.0));
        let got = spread("ReduceStdV2Update", &x, dtype, &[1], true, 2, &[2]).unwrap();
        close(&got, &stored(dtype, &want), tol(dtype));
    }
}

#[test]
fn std_gradient_is_the_centred_input_over_n_minus_c_times_std() {
    let (xv, dy) = (wavy(6, 11), wavy(2, 12));
    let f = |x: &[f64]| spread("ReduceStdWithMean", x, DType::F64, &[1], true, 1, &[2]).unwrap();
    let want = numeric_grad(f, &xv, &dy);
    let s = f(&xv);
    let got: Vec<f64> = (0..6)
        .map(|i| {
            let r = i / 3;
            let m = (xv[r * 3] + xv[r * 3 + 1] + xv[r * 3 + 2]) / 3.0;
            dy[r] * (xv[i] - m) / (2.0 * s[r])
        })
        .collect();
    close(&got, &want, 1e-6);
}

#[test]
fn reduction_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    assert_eq!(
        reduce("ReduceProd", x(), &[2], false, spec(DType::F32, &[2])),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        reduce("ReduceProd", x(), &[1], false, spec(DType::F32, &[3])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        reduce("ReduceProd", x(), &[1], false, spec(DType::F16, &[2])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let b = ints(DType::Bool, &[2], &[1, 0]);
    assert_eq!(
        reduce("ReduceProd", b, &[0], false, spec(DType::Bool, &[])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let i = ints(DType::I32, &[2], &[1, 0]);
    assert_eq!(
        reduce("ReduceLogSumExp", i, &[0], false, spec(DType::I32, &[])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let fa = vec![x(), t(DType::F32, &[1], &[1.0])];
    assert_eq!(
        run1("ReduceLogSumExp", fa, spec(DType::F32, &[2]), none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        mean_d(x(), &[3], false, spec(DType::F32, &[2])),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let i = ints(DType::I64, &[2], &[1, 0]);
    assert_eq!(
        mean_d(i, &[0], false, spec(DType::I64, &[])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let wrong_mean = vec![x(), t(DType::F32, &[4], &[0.0; 4])];
    assert_eq!(
        run1(
            "ReduceStdWithMean",
            wrong_mean,
            spec(DType::F32, &[]),
            none()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let half_mean = vec![x(), t(DType::F16, &[2, 3], &[0.0; 6])];
    assert_eq!(
        run1(
            "ReduceStdV2Update",
            half_mean,
            spec(DType::F32, &[]),
            none()
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let bad_attr = attrs(&[("unbiased", AttrValue::Int(1))]);
    let inputs = vec![x(), t(DType::F32, &[2, 3], &[0.0; 6])];
    assert_eq!(
        run1("ReduceStdV2Update", inputs, spec(DType::F32, &[]), bad_attr),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
}

fn cumprod(
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
    run1("Cumprod", vec![x, ints(DType::I64, &[], &[axis])], out, a)
}

#[test]
fn cumprod_multiplies_along_an_axis_in_every_type_and_direction() {
    let v = [2, -1, 3, 1, 2, -2];
    let vf: Vec<f64> = v.iter().map(|&i| i as f64).collect();
    for dtype in NUMBERS {
        let x = || ints(dtype, &[2, 3], &v);
        for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)] {
            let want: Vec<f64> = (0..6)
                .map(|i| {
                    let (r, c) = (i / 3, i % 3);
                    let range: Vec<usize> = if reverse {
                        (c..3).collect()
                    } else {
                        (0..=c).collect()
                    };
                    range
                        .iter()
                        .filter(|&&k| !(exclusive && k == c))
                        .map(|&k| vf[r * 3 + k])
                        .product()
                })
                .collect();
            assert_eq!(
                cumprod(x(), 1, exclusive, reverse).unwrap(),
                want,
                "{dtype:?} {exclusive} {reverse}"
            );
        }
        // Along axis 0 (as -2).
        let want: Vec<f64> = (0..6)
            .map(|i| if i < 3 { vf[i] } else { vf[i] * vf[i - 3] })
            .collect();
        assert_eq!(cumprod(x(), -2, false, false).unwrap(), want);
    }
}

#[test]
fn cumprod_gradient_and_refusals() {
    let (xv, dy) = (wavy(5, 13), wavy(5, 14));
    let f = |x: &[f64]| cumprod(t(DType::F64, &[5], x), 0, false, false).unwrap();
    let y = f(&xv);
    // sum over j >= i of dy_j * y_j / x_i (no zero in x).
    let got: Vec<f64> = (0..5)
        .map(|i| (i..5).map(|j| dy[j] * y[j]).sum::<f64>() / xv[i])
        .collect();
    close(&got, &numeric_grad(f, &xv, &dy), 1e-6);
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    assert_eq!(
        cumprod(x(), 2, false, false),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        cumprod(ints(DType::Bool, &[2], &[1, 1]), 0, false, false),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let fa = vec![x(), t(DType::F32, &[], &[1.0])];
    assert_eq!(
        run1("Cumprod", fa, spec(DType::F32, &[2, 3]), none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let a = vec![x(), ints(DType::I64, &[], &[1])];
    assert_eq!(
        run1("Cumprod", a, spec(DType::F32, &[2, 2]), none()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}

mod more;
