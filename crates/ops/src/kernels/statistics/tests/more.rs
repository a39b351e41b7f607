//! ArgMin and Cummax: against direct computations in every type they
//! take, Cummax's gradient (the upstream gradient added at the indices)
//! against finite differences, the refusals.

use super::super::super::testing::*;
use super::*;

fn argmin(x: (Spec, Vec<u8>), dim: i64, keep: bool, out: Spec) -> Result<Vec<f64>, AclError> {
    let a = attrs(&[("keep_dims", AttrValue::Bool(keep))]);
    run1("ArgMin", vec![x, ints(DType::I32, &[], &[dim])], out, a)
}

#[test]
fn argmin_finds_the_first_smallest_in_every_type() {
    // [2, 3]: 3 1 1 / 0 5 0.
    let v = [3, 1, 1, 0, 5, 0];
    for dtype in NUMBERS {
        for out in [DType::I32, DType::I64] {
            let rows = argmin(ints(dtype, &[2, 3], &v), 1, false, spec(out, &[2]));
            assert_eq!(rows.unwrap(), [1.0, 0.0], "{dtype:?}");
            let cols = argmin(ints(dtype, &[2, 3], &v), -2, true, spec(out, &[1, 3]));
            assert_eq!(cols.unwrap(), [1.0, 0.0, 1.0], "{dtype:?}");
        }
    }
    let nan = t(DType::F32, &[4], &[1.0, -5.0, f64::NAN, f64::NAN]);
    assert_eq!(argmin(nan, 0, false, spec(DType::I32, &[])).unwrap(), [2.0]);
}

#[test]
fn argmin_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    assert_eq!(
        argmin(x(), 2, false, spec(DType::I32, &[2])),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        argmin(x(), 1, false, spec(DType::F32, &[2])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        argmin(x(), 1, false, spec(DType::I32, &[3])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let b = ints(DType::Bool, &[2], &[1, 0]);
    assert_eq!(
        argmin(b, 0, false, spec(DType::I32, &[])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let empty = t(DType::F32, &[0], &[]);
    assert_eq!(
        argmin(empty, 0, false, spec(DType::I32, &[])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let fdim = vec![x(), t(DType::F32, &[], &[1.0])];
    let a = attrs(&[]);
    assert_eq!(
        run1("ArgMin", fdim, spec(DType::I32, &[2]), a),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

fn cummax(x: (Spec, Vec<u8>), dim: i64, itype: DType) -> Result<Vec<Vec<f64>>, AclError> {
    let dims = x.0.dims.clone();
    let outs = [spec(x.0.dtype, &dims), spec(itype, &dims)];
    run(
        "Cummax",
        vec![x],
        &outs,
        attrs(&[("dim", AttrValue::Int(dim))]),
    )
}

#[test]
fn cummax_keeps_the_running_maximum_and_the_later_index_in_every_type() {
    // Along 1 of [2, 4]: 1 3 3 2 / 0 -1 4 4.
    let v = [1, 3, 3, 2, 0, -1, 4, 4];
    for dtype in NUMBERS {
        for itype in [DType::I32, DType::I64] {
            let r = cummax(ints(dtype, &[2, 4], &v), -1, itype).unwrap();
            assert_eq!(r[0], [1.0, 3.0, 3.0, 3.0, 0.0, 0.0, 4.0, 4.0], "{dtype:?}");
            assert_eq!(r[1], [0.0, 1.0, 2.0, 2.0, 0.0, 0.0, 2.0, 3.0], "{dtype:?}");
            let r = cummax(ints(dtype, &[2, 4], &v), 0, itype).unwrap();
            assert_eq!(r[0], [1.0, 3.0, 3.0, 2.0, 1.0, 3.0, 4.0, 4.0], "{dtype:?}");
            assert_eq!(r[1], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0], "{dtype:?}");
        }
    }
    // A NaN stays from where it appears, at its own index.
    let r = cummax(
        t(DType::F32, &[4], &[1.0, f64::NAN, 5.0, f64::NAN]),
        0,
        DType::I64,
    )
    .unwrap();
    assert_eq!(r[0][0], 1.0);
    assert!(r[0][1..].iter().all(|v| v.is_nan()));
    assert_eq!(r[1], [0.0, 1.0, 1.0, 3.0]);
}

#[test]
fn cummax_gradient_goes_to_the_picked_elements() {
    let (xv, dy) = (wavy(10, 21), wavy(10, 22));
    let f = |x: &[f64]| {
        cummax(t(DType::F64, &[2, 5], x), 1, DType::I64)
            .unwrap()
            .remove(0)
    };
    let want = numeric_grad(f, &xv, &dy);
    // torch: dy scatter-added into zeros at the indices.
    let idx = cummax(t(DType::F64, &[2, 5], &xv), 1, DType::I64)
        .unwrap()
        .remove(1);
    let mut got = vec![0.0; 10];
    for (p, &i) in idx.iter().enumerate() {
        got[p / 5 * 5 + i as usize] += dy[p];
    }
    close(&got, &want, 1e-6);
}

#[test]
fn cummax_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    assert_eq!(cummax(x(), 2, DType::I64), Err(AclError::OP_ATTR_NOT_MATCH));
    assert_eq!(cummax(x(), 0, DType::F32), Err(AclError::OP_TYPE_NOT_MATCH));
    assert_eq!(
        cummax(ints(DType::Bool, &[2], &[1, 0]), 0, DType::I64),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let outs = [spec(DType::F32, &[2, 2]), spec(DType::I64, &[2, 3])];
    assert_eq!(
        run("Cummax", vec![x()], &outs, attrs(&[])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let one = [spec(DType::F32, &[2, 3])];
    assert_eq!(
        run("Cummax", vec![x()], &one, attrs(&[])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}
