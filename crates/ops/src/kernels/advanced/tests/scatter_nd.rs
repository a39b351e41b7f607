//! Gather (`take`), MaskedScatter and ScatterNdAdd/ScatterNdUpdate
//! (`put_`) against direct computations in every type; their gradients
//! (ScatterNdAdd for Gather, MaskedSelect for MaskedScatter's updates)
//! against finite differences; the refusals.

use super::super::super::testing::*;
use super::*;

#[test]
fn gather_takes_first_axis_slices_in_every_type() {
    let v: Vec<i64> = (0..12).collect();
    for dtype in TYPES {
        let x = || small(dtype, &[4, 3], &v);
        let xs: Vec<f64> = Tensor {
            dtype,
            dims: vec![12],
            bytes: x().1,
        }
        .nums()
        .map(Num::f64)
        .collect();
        for itype in [DType::I32, DType::I64] {
            let idx = ints(itype, &[2, 2], &[3, 0, -1, 1]);
            let got = run1("Gather", vec![x(), idx], spec(dtype, &[2, 2, 3]), none()).unwrap();
            let want: Vec<f64> = [3, 0, 3, 1]
                .iter()
                .flat_map(|&r| xs[r * 3..r * 3 + 3].to_vec())
                .collect();
            assert_eq!(got, want, "{dtype:?}");
        }
    }
    let x = || t(DType::F32, &[4], &[1.0; 4]);
    let bad = |i: &[i64], out: Spec| {
        run1(
            "Gather",
            vec![x(), ints(DType::I64, &[i.len()], i)],
            out,
            none(),
        )
    };
    assert_eq!(
        bad(&[4], spec(DType::F32, &[1])),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        bad(&[-5], spec(DType::F32, &[1])),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        bad(&[0, 1], spec(DType::F32, &[3])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        bad(&[0], spec(DType::F16, &[1])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let scalar = vec![t(DType::F32, &[], &[1.0]), ints(DType::I64, &[1], &[0])];
    assert_eq!(
        run1("Gather", scalar, spec(DType::F32, &[1]), none()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

fn scatter_nd(
    op: &str,
    var: (Spec, Vec<u8>),
    idx: (Spec, Vec<u8>),
    upd: (Spec, Vec<u8>),
) -> Result<Vec<f64>, AclError> {
    let out = spec(var.0.dtype, &var.0.dims);
    run1(op, vec![var, idx, upd], out, none())
}

#[test]
fn scatter_nd_adds_or_writes_slices_in_every_type() {
    // var [3, 2], indices [3, 1] (rows 2, 0, 2 again): updates [3, 2].
    let var = [1, 2, 3, 4, 5, 6];
    let upd = [1, 1, 2, 3, 4, 5];
    for dtype in TYPES.into_iter().filter(|&d| d != DType::Bool) {
        let run_op = |op: &str| {
            scatter_nd(
                op,
                small(dtype, &[3, 2], &var),
                ints(DType::I64, &[3, 1], &[2, 0, -1]),
                small(dtype, &[3, 2], &upd),
            )
            .unwrap()
        };
        assert_eq!(
            run_op("ScatterNdAdd"),
            [3.0, 5.0, 3.0, 4.0, 10.0, 12.0],
            "{dtype:?}"
        );
        assert_eq!(
            run_op("ScatterNdUpdate"),
            [2.0, 3.0, 3.0, 4.0, 4.0, 5.0],
            "{dtype:?}"
        );
    }
    // Full coordinates: indices [2, 2] into a [2, 2] var, one element each.
    let got = scatter_nd(
        "ScatterNdAdd",
        t(DType::F32, &[2, 2], &[0.0; 4]),
        ints(DType::I32, &[2, 2], &[1, 0, 1, 0]),
        t(DType::F32, &[2], &[0.5, 0.25]),
    );
    assert_eq!(got.unwrap(), [0.0, 0.0, 0.75, 0.0]);
}

#[test]
fn gathers_gradient_is_scatter_nd_add_of_the_upstream_gradient() {
    let (xv, dy) = (wavy(6, 40), wavy(4, 41));
    let idx = [5i64, 0, 5, -2];
    let f = |x: &[f64]| {
        run1(
            "Gather",
            vec![t(DType::F64, &[6], x), ints(DType::I64, &[4], &idx)],
            spec(DType::F64, &[4]),
            none(),
        )
        .unwrap()
    };
    let want = numeric_grad(f, &xv, &dy);
    for dtype in FLOATS {
        let got = scatter_nd(
            "ScatterNdAdd",
            t(dtype, &[6], &[0.0; 6]),
            ints(DType::I64, &[4, 1], &idx),
            t(dtype, &[4], &dy),
        )
        .unwrap();
        close(&got, &want, if dtype == DType::F64 { 1e-6 } else { 2e-2 });
    }
}

#[test]
fn scatter_nd_refusals() {
    let var = || t(DType::F32, &[3, 2], &[0.0; 6]);
    let upd = || t(DType::F32, &[2, 2], &[1.0; 4]);
    let i = |d: &[usize], v: &[i64]| ints(DType::I64, d, v);
    assert_eq!(
        scatter_nd("ScatterNdAdd", var(), i(&[2, 1], &[0, 3]), upd()),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        scatter_nd("ScatterNdAdd", var(), i(&[2, 3], &[0; 6]), upd()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        scatter_nd("ScatterNdAdd", var(), i(&[3, 1], &[0; 3]), upd()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let fi = t(DType::F32, &[2, 1], &[0.0, 1.0]);
    assert_eq!(
        scatter_nd("ScatterNdUpdate", var(), fi, upd()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let half = t(DType::F16, &[2, 2], &[1.0; 4]);
    assert_eq!(
        scatter_nd("ScatterNdUpdate", var(), i(&[2, 1], &[0, 1]), half),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

fn masked_scatter(
    x: (Spec, Vec<u8>),
    mask: (Spec, Vec<u8>),
    upd: (Spec, Vec<u8>),
) -> Result<Vec<f64>, AclError> {
    let out = spec(x.0.dtype, &x.0.dims);
    run1("MaskedScatter", vec![x, mask, upd], out, none())
}

#[test]
fn masked_scatter_fills_the_masked_places_in_order_in_every_type() {
    // x [2, 3] of 0..6, mask [3] broadcast over the rows: columns 0 and 2.
    let x: Vec<i64> = (0..6).collect();
    for dtype in TYPES {
        let m = ints(DType::Bool, &[3], &[1, 0, 1]);
        let got = masked_scatter(
            small(dtype, &[2, 3], &x),
            m,
            small(dtype, &[5], &[10, 11, 12, 13, 14]),
        )
        .unwrap();
        let want: Vec<i64> = vec![10, 1, 11, 12, 4, 13];
        let w = small(dtype, &[6], &want);
        let w: Vec<f64> = Tensor {
            dtype,
            dims: vec![6],
            bytes: w.1,
        }
        .nums()
        .map(Num::f64)
        .collect();
        assert_eq!(got, w, "{dtype:?}");
    }
    // The updates' gradient: the upstream gradient where the mask is true.
    let (uv, dy) = (wavy(4, 42), wavy(6, 43));
    let mask = [1i64, 0, 1, 1, 0, 0];
    let f = |u: &[f64]| {
        masked_scatter(
            t(DType::F64, &[6], &[0.0; 6]),
            ints(DType::Bool, &[6], &mask),
            t(DType::F64, &[4], u),
        )
        .unwrap()
    };
    let want = numeric_grad(f, &uv, &dy);
    let picked: Vec<f64> = dy
        .iter()
        .zip(&mask)
        .filter(|(_, m)| **m != 0)
        .map(|(d, _)| *d)
        .chain([0.0])
        .collect();
    close(&picked, &want, 1e-6);
    // Too few updates; a mask that does not broadcast; a float mask.
    let x = || t(DType::F32, &[3], &[0.0; 3]);
    let all = || ints(DType::Bool, &[3], &[1, 1, 1]);
    assert_eq!(
        masked_scatter(x(), all(), t(DType::F32, &[2], &[1.0; 2])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        masked_scatter(x(), ints(DType::Bool, &[2], &[1, 1]), x()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        masked_scatter(x(), t(DType::F32, &[3], &[1.0; 3]), x()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
