//! The elementwise functions against `f64` references in every float type
//! (and integers where they take them); the derivatives torch's backward
//! formulas use against finite differences of the operators themselves;
//! FloorDiv/FloorMod and the bitwise ones against integer definitions;
//! the refusals.

use super::super::testing::*;
use super::*;

const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::Bf16, DType::F64];

fn none() -> OpAttr {
    OpAttr::new()
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

fn unary_op(op: &str, dtype: DType, x: &[f64]) -> Result<Vec<f64>, AclError> {
    run1(
        op,
        vec![t(dtype, &[x.len()], x)],
        spec(dtype, &[x.len()]),
        none(),
    )
}

/// Each function, its reference, its derivative and a domain scale.
#[allow(clippy::type_complexity)]
fn functions() -> Vec<(&'static str, fn(f64) -> f64, fn(f64) -> f64, f64)> {
    vec![
        (
            "Erf",
            libm::erf,
            |x| 2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp(),
            1.0,
        ),
        (
            "Erfc",
            libm::erfc,
            |x| -2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp(),
            1.0,
        ),
        ("Atan", f64::atan, |x| 1.0 / (1.0 + x * x), 1.0),
        ("Asin", f64::asin, |x| 1.0 / (1.0 - x * x).sqrt(), 0.45),
        ("Acos", f64::acos, |x| -1.0 / (1.0 - x * x).sqrt(), 0.45),
        ("Tan", f64::tan, |x| 1.0 / (x.cos() * x.cos()), 0.6),
        ("Atanh", f64::atanh, |x| 1.0 / (1.0 - x * x), 0.45),
        ("Sinh", f64::sinh, f64::cosh, 1.0),
        ("Cosh", f64::cosh, f64::sinh, 1.0),
        ("Expm1", f64::exp_m1, f64::exp, 1.0),
        ("Log1p", |x| x.ln_1p(), |x| 1.0 / (1.0 + x), 0.45),
    ]
}

#[test]
fn the_functions_match_their_definitions_in_every_float_type() {
    for (op, f, _, scale) in functions() {
        let xv: Vec<f64> = wavy(40, 1).iter().map(|v| v * scale).collect();
        for dtype in FLOATS {
            let x = stored(dtype, &xv);
            let want = stored(dtype, &x.iter().map(|&v| f(v)).collect::<Vec<_>>());
            let got = unary_op(op, dtype, &x).unwrap();
            assert_eq!(got, want, "{op} {dtype:?}: rounded once");
        }
        // Integers are read as floats into a float output.
        let got = run1(
            op,
            vec![ints(DType::I32, &[2], &[0, 0])],
            spec(DType::F32, &[2]),
            none(),
        )
        .unwrap();
        assert_eq!(got, stored(DType::F32, &[f(0.0), f(0.0)]), "{op}");
    }
    // Near 0, Expm1 and Log1p keep what exp - 1 and ln(1 + x) lose.
    assert_eq!(
        unary_op("Expm1", DType::F64, &[1e-12]).unwrap(),
        [1e-12f64.exp_m1()]
    );
    assert_eq!(
        unary_op("Log1p", DType::F64, &[1e-12]).unwrap(),
        [1e-12f64.ln_1p()]
    );
    assert!(unary_op("Asin", DType::F32, &[2.0]).unwrap()[0].is_nan());
}

#[test]
fn the_derivatives_torch_uses_match_finite_differences() {
    for (op, _, d, scale) in functions() {
        let xv: Vec<f64> = wavy(12, 2).iter().map(|v| v * scale).collect();
        let dy = wavy(12, 3);
        let f = |x: &[f64]| unary_op(op, DType::F64, x).unwrap();
        let want = numeric_grad(f, &xv, &dy);
        let got: Vec<f64> = xv.iter().zip(&dy).map(|(&x, &g)| g * d(x)).collect();
        close(&got, &want, 1e-6);
    }
}

#[test]
fn atan2_is_the_angle_broadcast_and_its_gradient() {
    let (a, b) = (wavy(6, 4), wavy(3, 5));
    for dtype in FLOATS {
        let (a, b) = (stored(dtype, &a), stored(dtype, &b));
        let inputs = vec![t(dtype, &[2, 3], &a), t(dtype, &[3], &b)];
        let got = run1("Atan2", inputs, spec(dtype, &[2, 3]), none()).unwrap();
        let want: Vec<f64> = (0..6).map(|i| a[i].atan2(b[i % 3])).collect();
        assert_eq!(got, stored(dtype, &want), "{dtype:?}");
    }
    // d/da = b / (a² + b²), d/db = -a / (a² + b²).
    let dy = wavy(6, 6);
    let run_with = |a: &[f64], b: &[f64]| {
        run1(
            "Atan2",
            vec![t(DType::F64, &[6], a), t(DType::F64, &[6], b)],
            spec(DType::F64, &[6]),
            none(),
        )
        .unwrap()
    };
    let b6: Vec<f64> = (0..6).map(|i| b[i % 3]).collect();
    let da: Vec<f64> = (0..6)
        .map(|i| dy[i] * b6[i] / (a[i] * a[i] + b6[i] * b6[i]))
        .collect();
    let db: Vec<f64> = (0..6)
        .map(|i| -dy[i] * a[i] / (a[i] * a[i] + b6[i] * b6[i]))
        .collect();
    close(&da, &numeric_grad(|x| run_with(x, &b6), &a, &dy), 1e-6);
    close(&db, &numeric_grad(|x| run_with(&a, x), &b6, &dy), 1e-6);
}

#[test]
fn sign_of_floats_and_integers() {
    for dtype in FLOATS {
        let got = unary_op("Sign", dtype, &[-2.5, 0.0, -0.0, 3.0, f64::NAN]).unwrap();
        assert_eq!(got[..4], [-1.0, 0.0, 0.0, 1.0]);
        assert!(got[4].is_nan());
    }
    for dtype in [DType::I32, DType::I64, DType::I8] {
        let got = run1(
            "Sign",
            vec![ints(dtype, &[3], &[-7, 0, 9])],
            spec(dtype, &[3]),
            none(),
        )
        .unwrap();
        assert_eq!(got, [-1.0, 0.0, 1.0]);
    }
}

fn clip(
    x: (Spec, Vec<u8>),
    lo: (Spec, Vec<u8>),
    hi: (Spec, Vec<u8>),
    out: Spec,
) -> Result<Vec<f64>, AclError> {
    run1("ClipByValue", vec![x, lo, hi], out, none())
}

#[test]
fn clip_by_value_clamps_in_every_type_and_its_gradient_is_hardtanh_grad() {
    let xv = [-3.0, -0.5, 0.25, 1.0, 6.5, f64::NAN];
    for dtype in FLOATS {
        let got = clip(
            t(dtype, &[6], &xv),
            t(dtype, &[], &[-1.0]),
            t(dtype, &[], &[1.0]),
            spec(dtype, &[6]),
        )
        .unwrap();
        assert_eq!(got[..5], [-1.0, -0.5, 0.25, 1.0, 1.0], "{dtype:?}");
        assert!(got[5].is_nan());
    }
    for dtype in [DType::I32, DType::I64, DType::I8, DType::U8] {
        let x = ints(dtype, &[4], &[0, 3, 6, 9]);
        let got = clip(
            x,
            ints(dtype, &[], &[2]),
            ints(dtype, &[], &[6]),
            spec(dtype, &[4]),
        )
        .unwrap();
        assert_eq!(got, [2.0, 3.0, 6.0, 6.0]);
    }
    // Per-element bounds broadcast.
    let got = clip(
        t(DType::F32, &[2, 2], &[0.0; 4]),
        t(DType::F32, &[2], &[1.0, -1.0]),
        t(DType::F32, &[2, 1], &[0.5, 2.0]),
        spec(DType::F32, &[2, 2]),
    );
    assert_eq!(got.unwrap(), [0.5, -0.0, 1.0, 0.0]);
    // HardtanhGrad against finite differences of ClipByValue (points off the edges).
    let (xs, dy) = (wavy(16, 7), wavy(16, 8));
    let f = |x: &[f64]| {
        clip(
            t(DType::F64, &[16], x),
            t(DType::F64, &[], &[-0.5]),
            t(DType::F64, &[], &[1.0]),
            spec(DType::F64, &[16]),
        )
        .unwrap()
    };
    let want = numeric_grad(f, &xs, &dy);
    let a = attrs(&[
        ("min_val", AttrValue::Float(-0.5)),
        ("max_val", AttrValue::Float(1.0)),
    ]);
    for dtype in FLOATS {
        let got = run1(
            "HardtanhGrad",
            vec![t(dtype, &[16], &xs), t(dtype, &[16], &dy)],
            spec(dtype, &[16]),
            a.clone(),
        )
        .unwrap();
        close(&got, &stored(dtype, &want), 1e-6);
    }
}

#[test]
fn clip_refusals() {
    let x = || t(DType::F32, &[2], &[0.0; 2]);
    let s = |v: f64| t(DType::F32, &[], &[v]);
    assert_eq!(
        clip(
            x(),
            t(DType::F16, &[], &[0.0]),
            s(1.0),
            spec(DType::F32, &[2])
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        clip(
            x(),
            t(DType::F32, &[3], &[0.0; 3]),
            s(1.0),
            spec(DType::F32, &[2])
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        clip(
            x(),
            s(0.0),
            t(DType::F32, &[2, 2], &[1.0; 4]),
            spec(DType::F32, &[2])
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        clip(x(), s(0.0), s(1.0), spec(DType::F32, &[3])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let b = || ints(DType::Bool, &[], &[1]);
    assert_eq!(
        clip(b(), b(), b(), spec(DType::Bool, &[])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let bad = attrs(&[("min_val", AttrValue::Int(0))]);
    assert_eq!(
        run1("HardtanhGrad", vec![x(), x()], spec(DType::F32, &[2]), bad),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let ints2 = || ints(DType::I32, &[2], &[0, 1]);
    assert_eq!(
        run1(
            "HardtanhGrad",
            vec![ints2(), ints2()],
            spec(DType::I32, &[2]),
            none()
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

fn binary_op(
    op: &str,
    a: (Spec, Vec<u8>),
    b: (Spec, Vec<u8>),
    out: Spec,
) -> Result<Vec<f64>, AclError> {
    run1(op, vec![a, b], out, none())
}

#[test]
fn floor_div_and_floor_mod_round_toward_minus_infinity() {
    let (a, b) = ([7i64, -7, 7, -7, 0, 5], [2i64, 2, -2, -2, 3, 0]);
    for dtype in [DType::I32, DType::I64, DType::I8, DType::I16] {
        let div = binary_op(
            "FloorDiv",
            ints(dtype, &[6], &a),
            ints(dtype, &[6], &b),
            spec(dtype, &[6]),
        )
        .unwrap();
        assert_eq!(div, [3.0, -4.0, -4.0, 3.0, 0.0, 0.0], "{dtype:?}");
        let rem = binary_op(
            "FloorMod",
            ints(dtype, &[6], &a),
            ints(dtype, &[6], &b),
            spec(dtype, &[6]),
        )
        .unwrap();
        assert_eq!(rem, [1.0, 1.0, -1.0, -1.0, 0.0, 0.0], "{dtype:?}");
    }
    let (fa, fb) = (
        wavy(20, 9).iter().map(|v| v * 7.0).collect::<Vec<_>>(),
        wavy(20, 10),
    );
    for dtype in FLOATS {
        let (fa, fb) = (stored(dtype, &fa), stored(dtype, &fb));
        let div = binary_op(
            "FloorDiv",
            t(dtype, &[20], &fa),
            t(dtype, &[20], &fb),
            spec(dtype, &[20]),
        )
        .unwrap();
        let rem = binary_op(
            "FloorMod",
            t(dtype, &[20], &fa),
            t(dtype, &[20], &fb),
            spec(dtype, &[20]),
        )
        .unwrap();
        for i in 0..20 {
            assert_eq!(
                div[i],
                stored(dtype, &[(fa[i] / fb[i]).floor()])[0],
                "{dtype:?} {} / {}",
                fa[i],
                fb[i]
            );
            let r = fa[i] - fb[i] * (fa[i] / fb[i]).floor();
            assert!(
                (rem[i] - r).abs() <= 1e-2 * fb[i].abs(),
                "{dtype:?} {} % {}",
                fa[i],
                fb[i]
            );
            assert!(rem[i] == 0.0 || (rem[i] < 0.0) == (fb[i] < 0.0));
        }
    }
    // A float divided by 0: infinities and NaN, as IEEE gives them.
    let z = binary_op(
        "FloorDiv",
        t(DType::F32, &[3], &[1.0, -1.0, 0.0]),
        t(DType::F32, &[3], &[0.0; 3]),
        spec(DType::F32, &[3]),
    )
    .unwrap();
    assert_eq!(z[..2], [f64::INFINITY, f64::NEG_INFINITY]);
    assert!(z[2].is_nan());
}

#[test]
fn bitwise_operators_of_integers_and_bool() {
    let (a, b) = ([12i64, -3, 5, 0], [10i64, 6, -1, 7]);
    for dtype in [DType::I32, DType::I64, DType::I8, DType::I16] {
        let run_op = |op: &str| {
            binary_op(
                op,
                ints(dtype, &[4], &a),
                ints(dtype, &[4], &b),
                spec(dtype, &[4]),
            )
            .unwrap()
        };
        let want = |f: fn(i64, i64) -> i64| {
            a.iter()
                .zip(&b)
                .map(|(&x, &y)| f(x, y) as f64)
                .collect::<Vec<_>>()
        };
        assert_eq!(run_op("BitwiseAnd"), want(|x, y| x & y));
        assert_eq!(run_op("BitwiseOr"), want(|x, y| x | y));
        assert_eq!(run_op("BitwiseXor"), want(|x, y| x ^ y));
        let not = run1(
            "Invert",
            vec![ints(dtype, &[4], &a)],
            spec(dtype, &[4]),
            none(),
        )
        .unwrap();
        assert_eq!(not, a.iter().map(|&x| !x as f64).collect::<Vec<_>>());
    }
    let u = binary_op(
        "BitwiseXor",
        ints(DType::U8, &[2], &[0xf0, 3]),
        ints(DType::U8, &[2], &[0xff, 1]),
        spec(DType::U8, &[2]),
    );
    assert_eq!(u.unwrap(), [15.0, 2.0]);
    let bools = || ints(DType::Bool, &[4], &[1, 0, 1, 0]);
    let other = ints(DType::Bool, &[4], &[1, 1, 0, 0]);
    assert_eq!(
        binary_op("BitwiseAnd", bools(), other, spec(DType::Bool, &[4])).unwrap(),
        [1.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(
        run1("Invert", vec![bools()], spec(DType::Bool, &[4]), none()).unwrap(),
        [0.0, 1.0, 0.0, 1.0]
    );
    // Floats are refused.
    let f = || t(DType::F32, &[1], &[1.0]);
    assert_eq!(
        binary_op("BitwiseOr", f(), f(), spec(DType::F32, &[1])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        run1("Invert", vec![f()], spec(DType::F32, &[1]), none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let i = || ints(DType::I32, &[2], &[1, 2]);
    assert_eq!(
        binary_op(
            "BitwiseAnd",
            i(),
            ints(DType::I32, &[3], &[1, 2, 3]),
            spec(DType::I32, &[2])
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

#[test]
fn unary_refusals() {
    for op in ["Erf", "Atan", "Sign", "Expm1", "Log1p"] {
        let two = vec![t(DType::F32, &[1], &[0.0]), t(DType::F32, &[1], &[0.0])];
        assert_eq!(
            run1(op, two, spec(DType::F32, &[1]), none()),
            Err(AclError::OP_INPUT_NOT_MATCH)
        );
        let x = vec![t(DType::F32, &[2], &[0.0; 2])];
        assert_eq!(
            run1(op, x, spec(DType::F32, &[3]), none()),
            Err(AclError::OP_OUTPUT_NOT_MATCH)
        );
    }
    let mismatched = vec![
        t(DType::F32, &[2], &[0.0; 2]),
        t(DType::F32, &[3], &[0.0; 3]),
    ];
    assert_eq!(
        run1("Atan2", mismatched, spec(DType::F32, &[2]), none()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

mod more;
