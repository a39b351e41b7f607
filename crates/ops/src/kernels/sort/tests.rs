//! Sort and TopKV2 against a reference order, in every type they take:
//! both directions, along the last and another axis, stable ties, NaN the
//! largest, the indices pointing at the values; the refusals. (Their
//! backward is a scatter by the indices, not an operator of theirs.)

use super::super::testing::*;
use super::*;
use crate::kernels::find;

const TYPES: [DType; 7] = [
    DType::F32,
    DType::F16,
    DType::Bf16,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::I8,
];

fn small(dtype: DType, dims: &[usize], v: &[i64]) -> (Spec, Vec<u8>) {
    HostInputs::tensor(dtype, dims, v.iter().map(|&i| Num::I(i)))
}

fn sort(
    x: (Spec, Vec<u8>),
    axis: i64,
    descending: bool,
    index: DType,
) -> Result<Vec<Vec<f64>>, AclError> {
    let dims = x.0.dims.clone();
    let outs = [spec(x.0.dtype, &dims), spec(index, &dims)];
    let a = attrs(&[
        ("axis", AttrValue::Int(axis)),
        ("descending", AttrValue::Bool(descending)),
    ]);
    run("Sort", vec![x], &outs, a)
}

fn topk(
    x: (Spec, Vec<u8>),
    k: i64,
    dim: i64,
    largest: bool,
    out: &[usize],
) -> Result<Vec<Vec<f64>>, AclError> {
    let outs = [spec(x.0.dtype, out), spec(DType::I32, out)];
    let a = attrs(&[
        ("dim", AttrValue::Int(dim)),
        ("largest", AttrValue::Bool(largest)),
        ("sorted", AttrValue::Bool(true)),
    ]);
    run("TopKV2", vec![x, ints(DType::I32, &[1], &[k])], &outs, a)
}

/// Each row's positions in stable order (descending: larger first,
/// equal ones in order).
fn reference(row: &[i64], descending: bool) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..row.len()).collect();
    idx.sort_by_key(|&i| if descending { -row[i] } else { row[i] });
    idx
}

#[test]
fn sort_orders_each_row_stably_in_every_type() {
    // Two rows of 6 with ties.
    let x = [3, 1, 2, 3, -4, 1, 0, 5, 5, -1, 2, 0];
    for dtype in TYPES {
        for descending in [false, true] {
            for index in [DType::I32, DType::I64] {
                let [values, indices] =
                    &sort(small(dtype, &[2, 6], &x), -1, descending, index).unwrap()[..]
                else {
                    panic!("two outputs")
                };
                for r in 0..2 {
                    let row = &x[r * 6..r * 6 + 6];
                    let want = reference(row, descending);
                    let got: Vec<usize> = indices[r * 6..r * 6 + 6]
                        .iter()
                        .map(|&i| i as usize)
                        .collect();
                    assert_eq!(got, want, "{dtype:?} {descending}");
                    let v: Vec<f64> = want.iter().map(|&i| row[i] as f64).collect();
                    assert_eq!(values[r * 6..r * 6 + 6], v[..], "{dtype:?}");
                }
            }
        }
    }
}

#[test]
fn sort_along_the_first_axis_and_nan_last() {
    // [3, 2] along axis 0: columns 5 1 3 / 0 2 -1.
    let x = [5, 0, 1, 2, 3, -1];
    let out = sort(small(DType::F32, &[3, 2], &x), 0, false, DType::I32).unwrap();
    assert_eq!(out[0], [1.0, -1.0, 3.0, 0.0, 5.0, 2.0]);
    assert_eq!(out[1], [1.0, 2.0, 2.0, 0.0, 0.0, 1.0]);
    let nan = t(DType::F32, &[4], &[2.0, f64::NAN, -1.0, 0.5]);
    let up = sort(nan.clone(), 0, false, DType::I32).unwrap();
    assert_eq!(up[1], [2.0, 3.0, 0.0, 1.0]);
    let down = sort(nan, 0, true, DType::I32).unwrap();
    assert_eq!(down[1], [1.0, 0.0, 3.0, 2.0]);
}

#[test]
fn topk_takes_the_k_largest_or_smallest_in_order_in_every_type() {
    let x = [4, -2, 7, 7, 0, 1, 9, 3, -5, 2];
    for dtype in TYPES {
        for largest in [true, false] {
            for k in [0usize, 1, 3, 5] {
                let out = topk(small(dtype, &[2, 5], &x), k as i64, -1, largest, &[2, k]).unwrap();
                for r in 0..2 {
                    let row = &x[r * 5..r * 5 + 5];
                    let want: Vec<usize> = reference(row, largest).into_iter().take(k).collect();
                    let got: Vec<usize> = out[1][r * k..r * k + k]
                        .iter()
                        .map(|&i| i as usize)
                        .collect();
                    assert_eq!(got, want, "{dtype:?} {largest} {k}");
                    let v: Vec<f64> = want.iter().map(|&i| row[i] as f64).collect();
                    assert_eq!(out[0][r * k..r * k + k], v[..]);
                }
            }
        }
    }
    // Along the first axis: [3, 2], the top 2 of each column.
    let out = topk(
        small(DType::F32, &[3, 2], &[5, 0, 1, 2, 3, -1]),
        2,
        0,
        true,
        &[2, 2],
    )
    .unwrap();
    assert_eq!(out[0], [5.0, 2.0, 3.0, 0.0]);
    assert_eq!(out[1], [0.0, 1.0, 2.0, 0.0]);
}

#[test]
fn sort_and_topk_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    assert_eq!(
        topk(x(), 4, -1, true, &[2, 4]),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        topk(x(), -1, -1, true, &[2, 0]),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        topk(x(), 2, -1, true, &[2, 3]),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        topk(x(), 2, 2, true, &[2, 2]),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        sort(x(), 3, false, DType::I32),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        sort(x(), -1, false, DType::F32),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let b = small(DType::Bool, &[2], &[1, 0]);
    assert_eq!(
        sort(b, -1, false, DType::I32),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let outs = [spec(DType::F16, &[2, 3]), spec(DType::I32, &[2, 3])];
    assert_eq!(
        run("Sort", vec![x()], &outs, OpAttr::new()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let one = [spec(DType::F32, &[2, 3])];
    assert_eq!(
        run("Sort", vec![x()], &one, OpAttr::new()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}

/// Runs UniqueWithCountsAndSorting as torch_npu allocates its outputs:
/// (values, inverse, counts) as far as written, and the reshaped outputs.
#[allow(clippy::type_complexity)]
fn unique(
    x: (Spec, Vec<u8>),
    index: DType,
    inverse: bool,
    counts: bool,
) -> Result<([Vec<f64>; 3], Vec<(usize, Vec<usize>)>), AclError> {
    let (dtype, dims) = (x.0.dtype, x.0.dims.clone());
    let n = x.0.numel();
    let outs = vec![
        spec(dtype, &[n]),
        spec(index, if inverse || counts { &dims } else { &[1] }),
        spec(index, &[if counts { n } else { 1 }]),
    ];
    let a = attrs(&[
        ("sorted", AttrValue::Bool(true)),
        ("return_inverse", AttrValue::Bool(inverse)),
        ("return_counts", AttrValue::Bool(counts)),
    ]);
    let host = HostInputs(vec![x]);
    let call = Call::new(&host, outs.clone(), a);
    let written = find("UniqueWithCountsAndSorting").ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    let read = |o: usize| {
        let s = &outs[o];
        let bytes = written[o].clone();
        let len = bytes.len() / s.dtype.size();
        Tensor {
            dtype: s.dtype,
            dims: vec![len],
            bytes,
        }
        .nums()
        .map(Num::f64)
        .collect::<Vec<f64>>()
    };
    Ok(([read(0), read(1), read(2)], call.reshaped.take()))
}

#[test]
fn unique_gives_sorted_values_inverse_and_counts_in_every_type() {
    let x = [3, -1, 3, 0, 7, -1, 3, 2];
    // The reference: sorted distinct values, positions, counts.
    let mut distinct: Vec<i64> = x.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let inverse: Vec<f64> = x
        .iter()
        .map(|v| distinct.iter().position(|d| d == v).unwrap() as f64)
        .collect();
    let counts: Vec<f64> = distinct
        .iter()
        .map(|d| x.iter().filter(|v| *v == d).count() as f64)
        .collect();
    let values: Vec<f64> = distinct.iter().map(|&d| d as f64).collect();
    let k = distinct.len();
    for dtype in TYPES {
        for index in [DType::I64, DType::I32] {
            // Flattened: a [2, 4] input gives 1-D values, inverse of [2, 4].
            let (got, shapes) = unique(small(dtype, &[2, 4], &x), index, true, true).unwrap();
            assert_eq!(
                got,
                [values.clone(), inverse.clone(), counts.clone()],
                "{dtype:?}"
            );
            assert_eq!(shapes, [(0, vec![k]), (2, vec![k])], "{dtype:?}");
            // Values only: the counts not written nor reshaped.
            let (got, shapes) = unique(small(dtype, &[8], &x), index, false, false).unwrap();
            assert_eq!(got[0], values, "{dtype:?}");
            assert!(got[1].is_empty() && got[2].is_empty());
            assert_eq!(shapes, [(0, vec![k])]);
            let (got, shapes) = unique(small(dtype, &[8], &x), index, true, false).unwrap();
            assert_eq!(got[1], inverse, "{dtype:?}");
            assert_eq!(shapes, [(0, vec![k])]);
        }
    }
    // Bool: false, true.
    let (got, _) = unique(small(DType::Bool, &[3], &[1, 0, 1]), DType::I64, true, true).unwrap();
    assert_eq!(got, [vec![0.0, 1.0], vec![1.0, 0.0, 1.0], vec![1.0, 2.0]]);
}

#[test]
fn unique_keeps_each_nan_apart_and_last_and_zeros_together() {
    let x = t(DType::F32, &[5], &[f64::NAN, 1.0, f64::NAN, -0.0, 0.0]);
    let (got, shapes) = unique(x, DType::I64, true, true).unwrap();
    assert_eq!(got[0][..2], [0.0, 1.0]);
    assert!(got[0][0].is_sign_negative(), "the first zero in order: -0");
    assert!(got[0][2].is_nan() && got[0][3].is_nan());
    assert_eq!(got[1], [2.0, 1.0, 3.0, 0.0, 0.0]);
    assert_eq!(got[2], [2.0, 1.0, 1.0, 1.0]);
    assert_eq!(shapes, [(0, vec![4]), (2, vec![4])]);
}

#[test]
fn unique_refusals() {
    let x = || small(DType::F32, &[4], &[1, 2, 2, 3]);
    let run_with = |outs: Vec<Spec>, a: OpAttr| {
        let host = HostInputs(vec![x()]);
        let call = Call::new(&host, outs, a);
        let r = find("UniqueWithCountsAndSorting").unwrap()(&call).map(drop);
        (r, call.reshaped.take())
    };
    let yes = |names: &[&str]| {
        attrs(
            &names
                .iter()
                .map(|n| (*n, AttrValue::Bool(true)))
                .collect::<Vec<_>>(),
        )
    };
    let good = || {
        vec![
            spec(DType::F32, &[4]),
            spec(DType::I64, &[4]),
            spec(DType::I64, &[4]),
        ]
    };
    assert_eq!(
        run_with(good(), yes(&["return_inverse", "return_counts"])).0,
        Ok(())
    );
    // Values of another type; float indices; a missing output.
    let mut bad = good();
    bad[0].dtype = DType::F16;
    assert_eq!(
        run_with(bad, OpAttr::new()),
        (Err(AclError::OP_TYPE_NOT_MATCH), vec![])
    );
    let mut bad = good();
    bad[2].dtype = DType::F32;
    assert_eq!(
        run_with(bad, OpAttr::new()).0,
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        run_with(good()[..2].to_vec(), OpAttr::new()).0,
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // Buffers too small for what was asked: nothing reshaped.
    let small_y = vec![
        spec(DType::F32, &[2]),
        spec(DType::I64, &[4]),
        spec(DType::I64, &[4]),
    ];
    assert_eq!(
        run_with(small_y, OpAttr::new()),
        (Err(AclError::OP_OUTPUT_NOT_MATCH), vec![])
    );
    let no_inverse = vec![
        spec(DType::F32, &[4]),
        spec(DType::I64, &[1]),
        spec(DType::I64, &[4]),
    ];
    assert_eq!(
        run_with(no_inverse, yes(&["return_inverse"])).0,
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let few_counts = vec![
        spec(DType::F32, &[4]),
        spec(DType::I64, &[4]),
        spec(DType::I64, &[1]),
    ];
    assert_eq!(
        run_with(few_counts, yes(&["return_counts"])).0,
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let int_attr = attrs(&[("sorted", AttrValue::Int(1))]);
    assert_eq!(
        run_with(good(), int_attr).0,
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
}

/// Runs UniqueConsecutive as torch_npu allocates its outputs (`axis`
/// none: flattened), giving what was written and the reshaped outputs.
#[allow(clippy::type_complexity)]
fn consecutive(
    x: (Spec, Vec<u8>),
    axis: Option<i64>,
    index: DType,
) -> Result<([Vec<f64>; 3], Vec<(usize, Vec<usize>)>), AclError> {
    let (dtype, dims) = (x.0.dtype, x.0.dims.clone());
    let n = x.0.numel();
    let outs = match axis {
        None => vec![spec(dtype, &[n]), spec(index, &dims), spec(index, &[n])],
        Some(a) => {
            let rank = dims.len().max(1) as i64;
            let len = dims.get(a.rem_euclid(rank) as usize).copied().unwrap_or(1);
            vec![spec(dtype, &dims), spec(index, &[len]), spec(index, &[len])]
        }
    };
    let mut a = attrs(&[
        ("return_idx", AttrValue::Bool(true)),
        ("return_counts", AttrValue::Bool(true)),
    ]);
    if let Some(v) = axis {
        a.insert("axis".into(), AttrValue::Int(v));
    }
    let host = HostInputs(vec![x]);
    let call = Call::new(&host, outs.clone(), a);
    let written = find("UniqueConsecutive").ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    let read = |o: usize| {
        let bytes = written[o].clone();
        let len = bytes.len() / outs[o].dtype.size();
        Tensor {
            dtype: outs[o].dtype,
            dims: vec![len],
            bytes,
        }
        .nums()
        .map(Num::f64)
        .collect::<Vec<f64>>()
    };
    Ok(([read(0), read(1), read(2)], call.reshaped.take()))
}

#[test]
fn unique_consecutive_keeps_each_run_once_in_every_type() {
    // Flattened [2, 4]: runs 3 3 | 1 | 2 2 2 | 3 | -1.
    let x = [3, 3, 1, 2, 2, 2, 3, -1];
    for dtype in TYPES {
        for index in [DType::I64, DType::I32] {
            let (got, shapes) = consecutive(small(dtype, &[2, 4], &x), None, index).unwrap();
            assert_eq!(got[0], [3.0, 1.0, 2.0, 3.0, -1.0], "{dtype:?}");
            assert_eq!(
                got[1],
                [0.0, 0.0, 1.0, 2.0, 2.0, 2.0, 3.0, 4.0],
                "{dtype:?}"
            );
            assert_eq!(got[2], [2.0, 1.0, 3.0, 1.0, 1.0], "{dtype:?}");
            assert_eq!(shapes, [(0, vec![5]), (2, vec![5])]);
        }
    }
    // Along axis 1 of [2, 4]: columns (1,5) (1,5) (2,5) (1,5).
    let x = [1, 1, 2, 1, 5, 5, 5, 5];
    for axis in [1, -1] {
        let (got, shapes) =
            consecutive(small(DType::F32, &[2, 4], &x), Some(axis), DType::I64).unwrap();
        assert_eq!(got[0], [1.0, 2.0, 1.0, 5.0, 5.0, 5.0]);
        assert_eq!(got[1], [0.0, 0.0, 1.0, 2.0]);
        assert_eq!(got[2], [2.0, 1.0, 1.0]);
        assert_eq!(shapes, [(0, vec![2, 3]), (2, vec![3])]);
    }
    // Along axis 0 of [3, 2]: rows (1,2) (1,2) (1,3).
    let (got, shapes) = consecutive(
        small(DType::I32, &[3, 2], &[1, 2, 1, 2, 1, 3]),
        Some(0),
        DType::I64,
    )
    .unwrap();
    assert_eq!(got[0], [1.0, 2.0, 1.0, 3.0]);
    assert_eq!(
        (got[1].clone(), got[2].clone()),
        (vec![0.0, 0.0, 1.0], vec![2.0, 1.0])
    );
    assert_eq!(shapes, [(0, vec![2, 2]), (2, vec![2])]);
    // A 0-dim input along its one axis: one run.
    let (got, shapes) = consecutive(small(DType::I64, &[], &[7]), Some(0), DType::I64).unwrap();
    assert_eq!(got[0], [7.0]);
    assert_eq!(shapes, [(0, vec![]), (2, vec![1])]);
    // NaNs are each their own run.
    let nan = t(DType::F32, &[3], &[f64::NAN, f64::NAN, 1.0]);
    let (got, _) = consecutive(nan, None, DType::I64).unwrap();
    assert_eq!(got[2], [1.0, 1.0, 1.0]);
}

#[test]
fn unique_consecutive_refusals() {
    let x = || small(DType::F32, &[2, 2], &[1, 1, 2, 2]);
    assert_eq!(
        consecutive(x(), Some(2), DType::I64).map(drop),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        consecutive(x(), None, DType::F32).map(drop),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let run_with = |outs: Vec<Spec>| {
        let host = HostInputs(vec![x()]);
        let a = attrs(&[
            ("return_idx", AttrValue::Bool(true)),
            ("return_counts", AttrValue::Bool(true)),
        ]);
        let call = Call::new(&host, outs, a);
        let r = find("UniqueConsecutive").unwrap()(&call).map(drop);
        (r, call.reshaped.take())
    };
    let i64s = |d: &[usize]| spec(DType::I64, d);
    // Too small for the runs, the indices or the counts: nothing reshaped.
    for outs in [
        vec![spec(DType::F32, &[1]), i64s(&[2, 2]), i64s(&[4])],
        vec![spec(DType::F32, &[4]), i64s(&[3]), i64s(&[4])],
        vec![spec(DType::F32, &[4]), i64s(&[2, 2]), i64s(&[1])],
    ] {
        assert_eq!(run_with(outs), (Err(AclError::OP_OUTPUT_NOT_MATCH), vec![]));
    }
    assert_eq!(
        run_with(vec![spec(DType::F32, &[4]), i64s(&[4])]).0,
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}

/// Runs UniqueWithCountsExt2 along `axis` as torch_npu allocates its
/// outputs: the four outputs as written and the reshaped ones.
#[allow(clippy::type_complexity)]
fn unique_dim(
    x: (Spec, Vec<u8>),
    axis: i64,
) -> Result<([Vec<f64>; 4], Vec<(usize, Vec<usize>)>), AclError> {
    let (dtype, dims) = (x.0.dtype, x.0.dims.clone());
    let len = dims[axis.rem_euclid(dims.len() as i64) as usize];
    let outs = vec![
        spec(dtype, &dims),
        spec(DType::I64, &[len]),
        spec(DType::I64, &[len]),
        spec(DType::I64, &[len]),
    ];
    let a = attrs(&[
        ("sorted", AttrValue::Bool(true)),
        ("return_inverse", AttrValue::Bool(true)),
    ]);
    let host = HostInputs(vec![x, ints(DType::I64, &[], &[axis])]);
    let call = Call::new(&host, outs.clone(), a);
    let written = find("UniqueWithCountsExt2").ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    let read = |o: usize| {
        let bytes = written[o].clone();
        let n = bytes.len() / outs[o].dtype.size();
        Tensor {
            dtype: outs[o].dtype,
            dims: vec![n],
            bytes,
        }
        .nums()
        .map(Num::f64)
        .collect::<Vec<f64>>()
    };
    Ok(([read(0), read(1), read(2), read(3)], call.reshaped.take()))
}

#[test]
fn unique_along_a_dim_sorts_the_distinct_slices_in_every_type() {
    // Rows of [4, 3]: (2,0,1) (1,5,0) (2,0,1) (1,4,9).
    let x = [2, 0, 1, 1, 5, 0, 2, 0, 1, 1, 4, 9];
    for dtype in TYPES {
        let (got, shapes) = unique_dim(small(dtype, &[4, 3], &x), 0).unwrap();
        assert_eq!(
            got[0],
            [1.0, 4.0, 9.0, 1.0, 5.0, 0.0, 2.0, 0.0, 1.0],
            "{dtype:?}"
        );
        assert_eq!(got[1], [3.0, 1.0, 0.0], "{dtype:?}: the first of each");
        assert_eq!(got[2], [1.0, 1.0, 2.0], "{dtype:?}");
        assert_eq!(got[3], [2.0, 1.0, 2.0, 0.0], "{dtype:?}");
        assert_eq!(shapes, [(0, vec![3, 3]), (2, vec![3]), (3, vec![4])]);
    }
    // Columns of [2, 3] (axis -1): (1,4) (0,4) (1,4).
    let (got, shapes) = unique_dim(small(DType::F32, &[2, 3], &[1, 0, 1, 4, 4, 4]), -1).unwrap();
    assert_eq!(got[0], [0.0, 1.0, 4.0, 4.0]);
    assert_eq!(
        (got[2].clone(), got[3].clone()),
        (vec![1.0, 2.0], vec![1.0, 0.0, 1.0])
    );
    assert_eq!(shapes, [(0, vec![2, 2]), (2, vec![2]), (3, vec![3])]);
}

#[test]
fn unique_along_a_dim_refusals() {
    let x = || small(DType::F32, &[2, 2], &[1, 2, 1, 2]);
    assert_eq!(
        unique_dim(x(), 2).map(drop),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let run_with = |outs: Vec<Spec>| {
        let host = HostInputs(vec![x(), ints(DType::I64, &[], &[0])]);
        let call = Call::new(&host, outs, OpAttr::new());
        let r = find("UniqueWithCountsExt2").unwrap()(&call).map(drop);
        (r, call.reshaped.take())
    };
    let i64s = |n: usize| spec(DType::I64, &[n]);
    let f = |d: &[usize]| spec(DType::F32, d);
    assert_eq!(
        run_with(vec![f(&[2, 2]), i64s(2), i64s(2), i64s(2)]).0,
        Ok(())
    );
    assert_eq!(
        run_with(vec![f(&[2, 2]), i64s(2), i64s(2), spec(DType::F32, &[2])]),
        (Err(AclError::OP_TYPE_NOT_MATCH), vec![])
    );
    assert_eq!(
        run_with(vec![f(&[2, 2]), i64s(2), i64s(2), i64s(1)]),
        (Err(AclError::OP_OUTPUT_NOT_MATCH), vec![])
    );
    assert_eq!(
        run_with(vec![f(&[1]), i64s(2), i64s(2), i64s(2)]).0,
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        run_with(vec![f(&[2, 2]), i64s(2), i64s(2)]).0,
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}
