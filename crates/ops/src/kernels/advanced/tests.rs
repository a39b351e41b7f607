//! Index, GatherElements, InplaceIndexAdd, OneHot, Tile and Roll against
//! direct computations, in every type they take; the gradients torch
//! forms for them (IndexPutV2 accumulating for Index, ScatterElements
//! adding for GatherElements, a sum for Tile, Roll back for Roll) against
//! finite differences of the forward; the refusals.

use super::super::testing::*;
use super::*;

const TYPES: [DType; 9] = [
    DType::F32,
    DType::F16,
    DType::Bf16,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::I8,
    DType::U8,
    DType::Bool,
];
const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::Bf16, DType::F64];

fn none() -> OpAttr {
    OpAttr::new()
}

/// Small integers (0 and 1 for bool) as a tensor of any type.
fn small(dtype: DType, dims: &[usize], v: &[i64]) -> (Spec, Vec<u8>) {
    let v: Vec<i64> = if dtype == DType::Bool {
        v.iter().map(|x| x.rem_euclid(2)).collect()
    } else {
        v.to_vec()
    };
    ints(dtype, dims, &v)
}

fn count(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// `Index` of `x` with `marks` and index tensors, into `out`.
fn index(
    x: (Spec, Vec<u8>),
    marks: &[i64],
    idx: Vec<(Spec, Vec<u8>)>,
    out: Spec,
) -> Result<Vec<f64>, AclError> {
    let mut inputs = vec![
        x,
        ints(DType::I64, &[marks.len()], marks),
        ints(DType::I64, &[out.dims.len()], &vec![0; out.dims.len()]),
    ];
    inputs.extend(idx);
    run1("Index", inputs, out, none())
}

#[test]
fn index_picks_rows_columns_and_pairs_as_pytorch_orders_them_in_every_type() {
    // x [3, 4, 2] holding 0..24; x[i], x[:, j], x[i, :, k], x[i, j].
    let v: Vec<i64> = (0..24).collect();
    let at = |a: usize, b: usize, c: usize| (a * 8 + b * 2 + c) as f64;
    for dtype in TYPES {
        let x = || small(dtype, &[3, 4, 2], &v);
        let want = |w: Vec<f64>| -> Vec<f64> {
            if dtype == DType::Bool {
                w.iter().map(|x| (x % 2.0 != 0.0) as i64 as f64).collect()
            } else {
                w
            }
        };
        // x[[2, -3]] -> [2, 4, 2].
        let i = ints(DType::I64, &[2], &[2, -3]);
        let rows = index(x(), &[1], vec![i], spec(dtype, &[2, 4, 2])).unwrap();
        let w: Vec<f64> = [2, 0]
            .iter()
            .flat_map(|&a| (0..8).map(move |r| at(a, r / 2, r % 2)))
            .collect();
        assert_eq!(rows, want(w), "{dtype:?}");
        // x[:, [[3], [1]]] -> [3, 2, 1, 2] (the picked shape in place).
        let j = ints(DType::I32, &[2, 1], &[3, 1]);
        let cols = index(x(), &[0, 1], vec![j], spec(dtype, &[3, 2, 1, 2])).unwrap();
        let w: Vec<f64> = (0..3)
            .flat_map(|a| {
                [3, 1]
                    .into_iter()
                    .flat_map(move |b| (0..2).map(move |c| at(a, b, c)))
            })
            .collect();
        assert_eq!(cols, want(w), "{dtype:?}");
        // x[[0, 2], :, [1, 0]]: not adjacent, the picked shape first -> [2, 4].
        let (i, k) = (
            ints(DType::I64, &[2], &[0, 2]),
            ints(DType::I64, &[2], &[1, 0]),
        );
        let pair = index(x(), &[1, 0, 1], vec![i, k], spec(dtype, &[2, 4])).unwrap();
        let w: Vec<f64> = [(0, 1), (2, 0)]
            .iter()
            .flat_map(|&(a, c)| (0..4).map(move |b| at(a, b, c)))
            .collect();
        assert_eq!(pair, want(w), "{dtype:?}");
        // x[i, j] with broadcast index tensors [2, 1] and [3] -> [2, 3, 2].
        let (i, j) = (
            ints(DType::I64, &[2, 1], &[1, 2]),
            ints(DType::I64, &[3], &[0, 3, 2]),
        );
        let both = index(x(), &[1, 1], vec![i, j], spec(dtype, &[2, 3, 2])).unwrap();
        let w: Vec<f64> = [1, 2]
            .iter()
            .flat_map(|&a| {
                [0, 3, 2]
                    .into_iter()
                    .flat_map(move |b| (0..2).map(move |c| at(a, b, c)))
            })
            .collect();
        assert_eq!(both, want(w), "{dtype:?}");
    }
}

#[test]
fn index_gradient_is_index_put_accumulating_the_upstream_gradient() {
    // d/dx of sum(dy * x[i, :, k]) with a repeated pick.
    let dims = [3, 4, 2];
    let (iv, kv) = ([0i64, 2, 0], [1i64, 0, 1]);
    let xv = wavy(24, 1);
    let dy = wavy(12, 2);
    for dtype in FLOATS {
        let f = |x: &[f64]| {
            let idx = vec![ints(DType::I64, &[3], &iv), ints(DType::I64, &[3], &kv)];
            index(
                t(DType::F64, &dims, x),
                &[1, 0, 1],
                idx,
                spec(DType::F64, &[3, 4]),
            )
            .unwrap()
        };
        let want = numeric_grad(f, &xv, &dy);
        let inputs = vec![
            t(dtype, &dims, &[0.0; 24]),
            t(dtype, &[3, 4], &dy),
            ints(DType::I64, &[3], &[1, 0, 1]),
            ints(DType::I64, &[2], &[3, 4]),
            ints(DType::I64, &[3], &iv),
            ints(DType::I64, &[3], &kv),
        ];
        let a = attrs(&[("accumulate", AttrValue::Bool(true))]);
        let got = run1("IndexPutV2", inputs, spec(dtype, &dims), a).unwrap();
        let tol = if dtype == DType::F64 { 1e-6 } else { 2e-2 };
        close(&got, &want, tol);
    }
}

#[test]
fn index_refusals() {
    let x = || t(DType::F32, &[3, 2], &[1.0; 6]);
    let i = |v: &[i64]| ints(DType::I64, &[v.len()], v);
    let out = || spec(DType::F32, &[2, 2]);
    assert_eq!(
        index(x(), &[1], vec![i(&[0, 3])], out()),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        index(x(), &[1], vec![i(&[0, -4])], out()),
        Err(AclError::INVALID_PARAM)
    );
    let fi = t(DType::F32, &[2], &[0.0, 1.0]);
    assert_eq!(
        index(x(), &[1], vec![fi], out()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // Two marks, one index tensor; more marks than axes.
    assert_eq!(
        index(x(), &[1, 1], vec![i(&[0, 1])], out()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        index(x(), &[0, 0, 1], vec![i(&[0, 1])], out()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        index(x(), &[1], vec![i(&[0, 1])], spec(DType::F16, &[2, 2])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        index(x(), &[1], vec![i(&[0, 1])], spec(DType::F32, &[3, 2])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let three = vec![x(), i(&[1]), i(&[2])];
    assert_eq!(
        run1("Index", three, out(), none()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

fn gather(
    x: (Spec, Vec<u8>),
    idx: (Spec, Vec<u8>),
    dim: i64,
    out: Spec,
) -> Result<Vec<f64>, AclError> {
    run1(
        "GatherElements",
        vec![x, idx],
        out,
        attrs(&[("dim", AttrValue::Int(dim))]),
    )
}

/// torch.gather by its definition, on a [3, 4] x.
fn gather_ref(x: &[f64], idx: &[i64], idims: [usize; 2], dim: usize) -> Vec<f64> {
    (0..count(&idims))
        .map(|p| {
            let (r, c) = (p / idims[1], p % idims[1]);
            let i = idx[p] as usize;
            if dim == 0 { x[i * 4 + c] } else { x[r * 4 + i] }
        })
        .collect()
}

#[test]
fn gather_elements_picks_along_either_axis_in_every_type() {
    let v: Vec<i64> = (0..12).map(|i| (i * 5) % 7).collect();
    let xs: Vec<f64> = v.iter().map(|&i| i as f64).collect();
    for dtype in TYPES {
        for itype in [DType::I32, DType::I64] {
            // Along 1: idx [3, 2]; along 0 (as -2): idx [2, 3] (smaller than x).
            let i1 = [3, 0, 1, 1, 2, 3];
            let got = gather(
                small(dtype, &[3, 4], &v),
                ints(itype, &[3, 2], &i1),
                1,
                spec(dtype, &[3, 2]),
            );
            let want = gather_ref(&xs, &i1, [3, 2], 1);
            let r = small(
                dtype,
                &[6],
                &want.iter().map(|&f| f as i64).collect::<Vec<_>>(),
            );
            let want = Tensor {
                dtype,
                dims: vec![6],
                bytes: r.1,
            }
            .nums()
            .map(Num::f64)
            .collect::<Vec<_>>();
            assert_eq!(got.unwrap(), want, "{dtype:?}");
            let i0 = [2, 0, 1, 0, 0, 2];
            let got = gather(
                small(dtype, &[3, 4], &v),
                ints(itype, &[2, 3], &i0),
                -2,
                spec(dtype, &[2, 3]),
            );
            let want = gather_ref(&xs, &i0, [2, 3], 0);
            let r = small(
                dtype,
                &[6],
                &want.iter().map(|&f| f as i64).collect::<Vec<_>>(),
            );
            let want = Tensor {
                dtype,
                dims: vec![6],
                bytes: r.1,
            }
            .nums()
            .map(Num::f64)
            .collect::<Vec<_>>();
            assert_eq!(got.unwrap(), want, "{dtype:?}");
        }
    }
}

#[test]
fn gather_gradient_is_a_scatter_add_of_the_upstream_gradient() {
    let i1 = [3i64, 0, 1, 1, 2, 3, 3, 3];
    let (xv, dy) = (wavy(12, 3), wavy(8, 4));
    let f = |x: &[f64]| {
        gather(
            t(DType::F64, &[3, 4], x),
            ints(DType::I64, &[2, 4], &i1),
            1,
            spec(DType::F64, &[2, 4]),
        )
        .unwrap()
    };
    let want = numeric_grad(f, &xv, &dy);
    for dtype in FLOATS {
        let inputs = vec![
            t(dtype, &[3, 4], &[0.0; 12]),
            ints(DType::I64, &[2, 4], &i1),
            t(dtype, &[2, 4], &dy),
        ];
        let a = attrs(&[
            ("axis", AttrValue::Int(1)),
            ("reduction", AttrValue::String("add".into())),
        ]);
        let got = run1("ScatterElements", inputs, spec(dtype, &[3, 4]), a).unwrap();
        close(&got, &want, if dtype == DType::F64 { 1e-6 } else { 2e-2 });
    }
}

#[test]
fn gather_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    let i = |d: &[usize], v: &[i64]| ints(DType::I64, d, v);
    let out = spec(DType::F32, &[2, 1]);
    assert_eq!(
        gather(x(), i(&[2, 1], &[0, 3]), 1, out.clone()),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        gather(x(), i(&[2, 1], &[0, -1]), 1, out.clone()),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        gather(x(), i(&[2, 1], &[0, 1]), 2, out.clone()),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        gather(x(), i(&[2], &[0, 1]), 1, out.clone()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        gather(x(), i(&[3, 1], &[0, 1, 0]), 1, spec(DType::F32, &[3, 1])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let fi = t(DType::F32, &[2, 1], &[0.0, 1.0]);
    assert_eq!(
        gather(x(), fi, 1, out.clone()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        gather(x(), i(&[2, 1], &[0, 1]), 1, spec(DType::F16, &[2, 1])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        gather(x(), i(&[2, 1], &[0, 1]), 1, spec(DType::F32, &[2, 2])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}

mod more;

mod scatter_nd;

mod index_fill;
