//! The optimizer's operators against their definitions in every float
//! type, broadcasting, the Lp norms' special orders, refusals.

use super::super::testing::*;
use super::*;

const TYPES: [(DType, f64); 4] = [
    (DType::F32, 1e-6),
    (DType::F16, 2e-3),
    (DType::Bf16, 1e-2),
    (DType::F64, 1e-12),
];

#[test]
fn lerp_addcmul_addcdiv_in_every_float_type() {
    let a = wavy(6, 1);
    let b = wavy(6, 2);
    let c = wavy(6, 3);
    for (dtype, tol) in TYPES {
        let lerp = run1(
            "Lerp",
            vec![
                t(dtype, &[2, 3], &a),
                t(dtype, &[2, 3], &b),
                t(dtype, &[], &[0.25]),
            ],
            spec(dtype, &[2, 3]),
            OpAttr::new(),
        )
        .unwrap();
        let want: Vec<f64> = a.iter().zip(&b).map(|(s, e)| s + 0.25 * (e - s)).collect();
        close(&lerp, &want, tol);
        // A weight of 1 (and above 0.5) is computed from `end`: exactly `end`.
        let one = run1(
            "Lerp",
            vec![
                t(dtype, &[6], &a),
                t(dtype, &[6], &b),
                t(dtype, &[1], &[1.0]),
            ],
            spec(dtype, &[6]),
            OpAttr::new(),
        )
        .unwrap();
        let end = run1(
            "Identity",
            vec![t(dtype, &[6], &b)],
            spec(dtype, &[6]),
            OpAttr::new(),
        );
        assert_eq!(one, end.unwrap(), "{dtype:?}");
        for (op, f) in [
            (
                "Addcmul",
                (|x: f64, y: f64, z: f64| x + 0.5 * y * z) as fn(f64, f64, f64) -> f64,
            ),
            ("Addcdiv", |x, y, z| x + 0.5 * y / z),
        ] {
            let got = run1(
                op,
                vec![
                    t(dtype, &[2, 3], &a),
                    t(dtype, &[2, 3], &b),
                    t(dtype, &[3], &c[..3]),
                    t(dtype, &[], &[0.5]),
                ],
                spec(dtype, &[2, 3]),
                OpAttr::new(),
            )
            .unwrap();
            let want: Vec<f64> = (0..6).map(|i| f(a[i], b[i], c[i % 3])).collect();
            close(&got, &want, tol * 4.0);
        }
    }
}

#[test]
fn clip_by_value_clamps_and_keeps_nan() {
    for (dtype, _) in TYPES {
        let got = run1(
            "ClipByValueV2",
            vec![
                t(dtype, &[4], &[-3.0, 0.5, 7.0, f64::NAN]),
                t(dtype, &[], &[-1.0]),
                t(dtype, &[], &[1.0]),
            ],
            spec(dtype, &[4]),
            OpAttr::new(),
        )
        .unwrap();
        assert_eq!(&got[..3], &[-1.0, 0.5, 1.0]);
        assert!(got[3].is_nan());
    }
}

fn norm_attrs(p: f32, axes: &[i64], keep: bool) -> OpAttr {
    attrs(&[
        ("p", AttrValue::Float(p)),
        ("axes", AttrValue::ListInt(axes.to_vec())),
        ("keepdim", AttrValue::Bool(keep)),
        ("epsilon", AttrValue::Float(0.0)),
    ])
}

/// `LpNormReduceV2` then `LpNormUpdateV2`, as torch_npu launches them.
fn norm(dtype: DType, x: &[f64], dims: &[usize], p: f32, axes: &[i64], out: &[usize]) -> Vec<f64> {
    let a = norm_attrs(p, axes, false);
    let sums = run1(
        "LpNormReduceV2",
        vec![t(dtype, dims, x)],
        spec(dtype, out),
        a,
    )
    .unwrap();
    let update = attrs(&[
        ("p", AttrValue::Float(p)),
        ("epsilon", AttrValue::Float(0.0)),
    ]);
    run1(
        "LpNormUpdateV2",
        vec![t(dtype, out, &sums)],
        spec(dtype, out),
        update,
    )
    .unwrap()
}

#[test]
fn lp_norms_of_every_order_over_all_axes_or_some() {
    let x = [3.0, -4.0, 0.0, 12.0, -5.0, 1.0];
    for (dtype, tol) in TYPES {
        let all = |p| norm(dtype, &x, &[2, 3], p, &[], &[])[0];
        close(&[all(2.0)], &[195f64.sqrt()], tol);
        close(&[all(1.0)], &[25.0], tol);
        close(
            &[all(3.0)],
            &[(27.0 + 64.0 + 1728.0 + 125.0 + 1.0f64).cbrt()],
            tol * 4.0,
        );
        close(&[all(0.0)], &[5.0], tol);
        close(&[all(i32::MAX as f32)], &[12.0], tol);
        close(&[all(i32::MIN as f32)], &[0.0], tol);
        // Rows, and columns counted from the end.
        close(
            &norm(dtype, &x, &[2, 3], 2.0, &[1], &[2]),
            &[5.0, 170f64.sqrt()],
            tol,
        );
        close(
            &norm(dtype, &x, &[2, 3], 1.0, &[-2], &[3]),
            &[15.0, 9.0, 1.0],
            tol,
        );
    }
    // keepdim: the kept 1s are the output's shape.
    let kept = run1(
        "LpNormReduceV2",
        vec![t(DType::F32, &[2, 3], &x)],
        spec(DType::F32, &[2, 1]),
        norm_attrs(2.0, &[1], true),
    )
    .unwrap();
    assert_eq!(kept, [25.0, 170.0]);
    // NaN propagates.
    let nan = norm(DType::F32, &[1.0, f64::NAN], &[2], 2.0, &[], &[]);
    assert!(nan[0].is_nan());
}

#[test]
fn update_clamps_to_epsilon() {
    let a = attrs(&[
        ("p", AttrValue::Float(2.0)),
        ("epsilon", AttrValue::Float(0.5)),
    ]);
    let got = run1(
        "LpNormUpdateV2",
        vec![t(DType::F32, &[2], &[0.0, 16.0])],
        spec(DType::F32, &[2]),
        a,
    )
    .unwrap();
    assert_eq!(got, [0.5, 4.0]);
}

#[test]
fn refusals() {
    let f = |d: &[usize]| t(DType::F32, d, &vec![1.0; d.iter().product()]);
    // Counts.
    let two = vec![f(&[2]), f(&[2])];
    assert_eq!(
        run1("Lerp", two.clone(), spec(DType::F32, &[2]), OpAttr::new()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run(
            "Addcmul",
            vec![f(&[2]), f(&[2]), f(&[2]), f(&[])],
            &[],
            OpAttr::new()
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // Types: mixed, and integers.
    let mixed = vec![f(&[2]), f(&[2]), t(DType::F16, &[], &[0.5])];
    assert_eq!(
        run1("Lerp", mixed, spec(DType::F32, &[2]), OpAttr::new()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let int = |d: &[usize]| ints(DType::I32, d, &vec![1; d.iter().product()]);
    assert_eq!(
        run1(
            "Addcdiv",
            vec![int(&[2]), int(&[2]), int(&[2]), int(&[])],
            spec(DType::I32, &[2]),
            OpAttr::new()
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    // Shapes that do not broadcast, or another output shape.
    assert_eq!(
        run1(
            "ClipByValueV2",
            vec![f(&[2]), f(&[3]), f(&[])],
            spec(DType::F32, &[2]),
            OpAttr::new()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "Lerp",
            vec![f(&[2]), f(&[2]), f(&[])],
            spec(DType::F32, &[3]),
            OpAttr::new()
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // The norm: an axis outside the rank, an attribute of another kind,
    // an output of another size or type.
    let reduce = |a: OpAttr, out: Spec| run1("LpNormReduceV2", vec![f(&[2, 3])], out, a);
    assert_eq!(
        reduce(norm_attrs(2.0, &[2], false), spec(DType::F32, &[2])),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        reduce(attrs(&[("p", AttrValue::Int(2))]), spec(DType::F32, &[])),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        reduce(norm_attrs(2.0, &[1], false), spec(DType::F32, &[3])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        reduce(norm_attrs(2.0, &[], false), spec(DType::F16, &[])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
