//! Round, Trunc, Mod and LogAddExp against their definitions in every
//! type they take, LogAddExp's gradient against finite differences,
//! Atanh's edges, the refusals.

use super::super::super::testing::*;
use super::*;

fn round(dtype: DType, x: &[f64], decimals: i64) -> Result<Vec<f64>, AclError> {
    let a = attrs(&[("decimals", AttrValue::Int(decimals))]);
    run1(
        "Round",
        vec![t(dtype, &[x.len()], x)],
        spec(dtype, &[x.len()]),
        a,
    )
}

#[test]
fn round_takes_halves_to_even_and_trunc_goes_toward_zero() {
    let x = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.25, -7.75];
    for dtype in FLOATS {
        assert_eq!(
            round(dtype, &x, 0).unwrap(),
            [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 1.0, -8.0],
            "{dtype:?}"
        );
        let tr = run1("Trunc", vec![t(dtype, &[8], &x)], spec(dtype, &[8]), none()).unwrap();
        assert_eq!(
            tr,
            [-2.0, -1.0, -0.0, 0.0, 1.0, 2.0, 1.0, -7.0],
            "{dtype:?}"
        );
    }
    // Decimals: 1.25 at one decimal is 1.2 (to even), 1234 at -2 is 1200.
    assert_eq!(round(DType::F64, &[1.25, -0.375], 1).unwrap(), [1.2, -0.4]);
    assert_eq!(
        round(DType::F64, &[1234.0, 1250.0], -2).unwrap(),
        [1200.0, 1200.0]
    );
    // Integers stay.
    for dtype in [DType::I32, DType::I64] {
        let r = run1(
            "Round",
            vec![ints(dtype, &[2], &[-3, 7])],
            spec(dtype, &[2]),
            none(),
        )
        .unwrap();
        assert_eq!(r, [-3.0, 7.0]);
        let r = run1(
            "Trunc",
            vec![ints(dtype, &[2], &[-3, 7])],
            spec(dtype, &[2]),
            none(),
        )
        .unwrap();
        assert_eq!(r, [-3.0, 7.0]);
    }
    let bad = attrs(&[("decimals", AttrValue::Float(1.0))]);
    assert_eq!(
        run1(
            "Round",
            vec![t(DType::F32, &[1], &[1.0])],
            spec(DType::F32, &[1]),
            bad
        ),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "Trunc",
            vec![t(DType::F32, &[2], &[1.0; 2])],
            spec(DType::F32, &[3]),
            none()
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}

#[test]
fn mod_keeps_the_dividends_sign() {
    let (a, b) = ([7i64, -7, 7, -7, 5], [2i64, 2, -2, -2, 0]);
    for dtype in [DType::I32, DType::I64, DType::I8] {
        let r = binary_op(
            "Mod",
            ints(dtype, &[5], &a),
            ints(dtype, &[5], &b),
            spec(dtype, &[5]),
        )
        .unwrap();
        assert_eq!(r, [1.0, -1.0, 1.0, -1.0, 0.0], "{dtype:?}");
    }
    let (fa, fb) = (
        wavy(20, 30).iter().map(|v| v * 7.0).collect::<Vec<_>>(),
        wavy(20, 31),
    );
    for dtype in FLOATS {
        let (fa, fb) = (stored(dtype, &fa), stored(dtype, &fb));
        let r = binary_op(
            "Mod",
            t(dtype, &[20], &fa),
            t(dtype, &[20], &fb),
            spec(dtype, &[20]),
        )
        .unwrap();
        let want: Vec<f64> = fa.iter().zip(&fb).map(|(x, y)| x % y).collect();
        assert_eq!(r, stored(dtype, &want), "{dtype:?}");
    }
}

fn logaddexp(dtype: DType, a: &[f64], b: &[f64], base: f32) -> Result<Vec<f64>, AclError> {
    let at = attrs(&[("base", AttrValue::Float(base))]);
    let inputs = vec![t(dtype, &[a.len()], a), t(dtype, &[b.len()], b)];
    run1("LogAddExp", inputs, spec(dtype, &[a.len()]), at)
}

#[test]
fn log_add_exp_in_base_e_and_2_and_its_gradient() {
    let a: Vec<f64> = wavy(12, 32).iter().map(|v| v * 30.0).collect();
    let b: Vec<f64> = wavy(12, 33).iter().map(|v| v * 30.0).collect();
    for dtype in FLOATS {
        let (a, b) = (stored(dtype, &a), stored(dtype, &b));
        let e: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| x.max(*y) + (-(x - y).abs()).exp().ln_1p())
            .collect();
        let tol = if dtype == DType::F64 { 1e-12 } else { 1e-2 };
        close(&logaddexp(dtype, &a, &b, -1.0).unwrap(), &e, tol);
        let two: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x.exp2() + y.exp2()).log2())
            .collect();
        close(&logaddexp(dtype, &a, &b, 2.0).unwrap(), &two, tol);
    }
    let inf = logaddexp(
        DType::F32,
        &[f64::INFINITY, f64::NEG_INFINITY, f64::NAN],
        &[1.0, f64::NEG_INFINITY, 0.0],
        -1.0,
    )
    .unwrap();
    assert_eq!(inf[..2], [f64::INFINITY, f64::NEG_INFINITY]);
    assert!(inf[2].is_nan());
    // d/da = 1 / (1 + e^(b - a)).
    let (a, b, dy) = (wavy(8, 34), wavy(8, 35), wavy(8, 36));
    let want = numeric_grad(|x| logaddexp(DType::F64, x, &b, -1.0).unwrap(), &a, &dy);
    let got: Vec<f64> = (0..8)
        .map(|i| dy[i] / (1.0 + (b[i] - a[i]).exp()))
        .collect();
    close(&got, &want, 1e-6);
    assert_eq!(
        logaddexp(DType::F32, &[0.0], &[0.0], 1.0),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let i = || ints(DType::I32, &[1], &[1]);
    assert_eq!(
        run1("LogAddExp", vec![i(), i()], spec(DType::I32, &[1]), none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

#[test]
fn erfinv_inverts_erf_and_its_derivative() {
    let ys: Vec<f64> = (-99..=99)
        .map(|i| i as f64 / 100.0)
        .chain([-0.999_999, 0.999_999, 1e-12])
        .collect();
    for &y in &ys {
        let x = erfinv(y);
        assert!(
            (libm::erf(x) - y).abs() <= 1e-15,
            "erf(erfinv({y})) = {}",
            libm::erf(x)
        );
    }
    for dtype in FLOATS {
        let y = stored(dtype, &ys[..20]);
        let got = run1(
            "Erfinv",
            vec![t(dtype, &[20], &y)],
            spec(dtype, &[20]),
            none(),
        )
        .unwrap();
        assert_eq!(
            got,
            stored(dtype, &y.iter().map(|&v| erfinv(v)).collect::<Vec<_>>()),
            "{dtype:?}"
        );
    }
    let edges = run1(
        "Erfinv",
        vec![t(DType::F32, &[4], &[1.0, -1.0, 1.5, f64::NAN])],
        spec(DType::F32, &[4]),
        none(),
    )
    .unwrap();
    assert_eq!(edges[..2], [f64::INFINITY, f64::NEG_INFINITY]);
    assert!(edges[2].is_nan() && edges[3].is_nan());
    // torch's derivative: sqrt(pi)/2 * exp(erfinv(y)^2).
    let (yv, dy): (Vec<f64>, Vec<f64>) = (
        wavy(10, 44).iter().map(|v| v * 0.45).collect(),
        wavy(10, 45),
    );
    let f = |y: &[f64]| {
        run1(
            "Erfinv",
            vec![t(DType::F64, &[10], y)],
            spec(DType::F64, &[10]),
            none(),
        )
        .unwrap()
    };
    let got: Vec<f64> = yv
        .iter()
        .zip(&dy)
        .map(|(&y, &g)| g * std::f64::consts::PI.sqrt() / 2.0 * erfinv(y).powi(2).exp())
        .collect();
    close(&got, &numeric_grad(f, &yv, &dy), 1e-6);
}

#[test]
fn log_takes_its_base_scale_and_shift() {
    let xv: Vec<f64> = wavy(12, 46).iter().map(|v| v.abs() * 3.0 + 0.01).collect();
    let log = |dtype: DType, x: &[f64], base: f32, scale: f32, shift: f32| {
        let a = attrs(&[
            ("base", AttrValue::Float(base)),
            ("scale", AttrValue::Float(scale)),
            ("shift", AttrValue::Float(shift)),
        ]);
        run1(
            "Log",
            vec![t(dtype, &[x.len()], x)],
            spec(dtype, &[x.len()]),
            a,
        )
    };
    for dtype in FLOATS {
        let x = stored(dtype, &xv);
        let want = |f: fn(f64) -> f64| stored(dtype, &x.iter().map(|&v| f(v)).collect::<Vec<_>>());
        assert_eq!(
            log(dtype, &x, -1.0, 1.0, 0.0).unwrap(),
            want(f64::ln),
            "{dtype:?}"
        );
        assert_eq!(
            log(dtype, &x, 2.0, 1.0, 0.0).unwrap(),
            want(f64::log2),
            "{dtype:?}"
        );
        assert_eq!(
            log(dtype, &x, 10.0, 1.0, 0.0).unwrap(),
            want(f64::log10),
            "{dtype:?}"
        );
        let got = log(dtype, &x, 3.0, 2.0, 1.0).unwrap();
        close(&got, &want(|v| (2.0 * v + 1.0).ln() / 3f64.ln()), 1e-2);
    }
    // The defaults are the natural logarithm; a base of 1 or 0 is refused.
    let plain = run1(
        "Log",
        vec![t(DType::F64, &[1], &[2.0])],
        spec(DType::F64, &[1]),
        none(),
    )
    .unwrap();
    assert_eq!(plain, [2f64.ln()]);
    assert_eq!(
        log(DType::F32, &[1.0], 1.0, 1.0, 0.0),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        log(DType::F32, &[1.0], 0.0, 1.0, 0.0),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
}

#[test]
fn atanh_is_infinite_at_its_edges_and_refuses_bad_calls() {
    for dtype in FLOATS {
        let x = [1.0, -1.0, 2.0, -0.0];
        let got = run1("Atanh", vec![t(dtype, &[4], &x)], spec(dtype, &[4]), none()).unwrap();
        assert_eq!(got[..2], [f64::INFINITY, f64::NEG_INFINITY], "{dtype:?}");
        assert!(got[2].is_nan(), "{dtype:?}");
        assert!(got[3] == 0.0 && got[3].is_sign_negative(), "{dtype:?}");
    }
    let x = || t(DType::F32, &[3], &[0.1, 0.2, 0.3]);
    assert_eq!(
        run1("Atanh", vec![x(), x()], spec(DType::F32, &[3]), none()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1("Atanh", vec![x()], spec(DType::F32, &[4]), none()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        run("Atanh", vec![x()], &[], none()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}
