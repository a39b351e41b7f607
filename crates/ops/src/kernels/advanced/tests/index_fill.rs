//! IndexFillD against a direct index fill, with the assist tensors built
//! as torch_npu builds them, in every type it takes; its gradient (torch's
//! backward fills the upstream gradient with 0 at the same positions)
//! against finite differences; the refusals.

use super::super::super::testing::*;
use super::*;

/// torch_npu's assists for filling `index` along `dim` of `dims` with
/// `value`: (0 at the filled positions else 1, `value` there else 0).
fn assists(dims: &[usize], dim: usize, index: &[usize], value: f64) -> (Vec<f64>, Vec<f64>) {
    let (outer, len, inner) = crate::kernels::index::split(dims, dim);
    let n = outer * len * inner;
    let (mut keep, mut fill) = (vec![1.0; n], vec![0.0; n]);
    for o in 0..outer {
        for &j in index {
            for i in 0..inner {
                keep[(o * len + j) * inner + i] = 0.0;
                fill[(o * len + j) * inner + i] = value;
            }
        }
    }
    (keep, fill)
}

/// `x` with `index` along `dim` set to `value`, directly.
fn reference(x: &[f64], dims: &[usize], dim: usize, index: &[usize], value: f64) -> Vec<f64> {
    let inner: usize = dims[dim + 1..].iter().product();
    x.iter()
        .enumerate()
        .map(|(k, &v)| {
            let j = (k / inner) % dims[dim];
            if index.contains(&j) { value } else { v }
        })
        .collect()
}

fn fill(
    dtype: DType,
    x: &[f64],
    dims: &[usize],
    dim: i64,
    a: &(Vec<f64>, Vec<f64>),
) -> Result<Vec<f64>, AclError> {
    run1(
        "IndexFillD",
        vec![
            t(dtype, dims, x),
            t(dtype, dims, &a.0),
            t(dtype, dims, &a.1),
        ],
        spec(dtype, dims),
        attrs(&[("dim", AttrValue::Int(dim))]),
    )
}

#[test]
fn index_fill_sets_the_indexed_slices_in_every_type() {
    let dims = [3, 4, 2];
    let x: Vec<f64> = (0..24).map(|i| (i % 7) as f64 - 3.0).collect();
    for dtype in TYPES {
        let value = if dtype == DType::Bool { 1.0 } else { 2.0 };
        let x: Vec<f64> = if dtype == DType::Bool {
            x.iter().map(|v| f64::from(*v > 0.0)).collect()
        } else if matches!(dtype, DType::U8) {
            x.iter().map(|v| v.abs()).collect()
        } else {
            x.clone()
        };
        for (dim, index) in [
            (0usize, vec![0, 2]),
            (1, vec![3]),
            (2, vec![1]),
            (1, vec![]),
        ] {
            let a = assists(&dims, dim, &index, value);
            let want = reference(&x, &dims, dim, &index, value);
            assert_eq!(
                fill(dtype, &x, &dims, dim as i64, &a).unwrap(),
                want,
                "{dtype:?} {dim}"
            );
        }
        // dim may count from the end.
        let a = assists(&dims, 2, &[0], value);
        let want = reference(&x, &dims, 2, &[0], value);
        assert_eq!(fill(dtype, &x, &dims, -1, &a).unwrap(), want, "{dtype:?}");
    }
    // A float fill replaces infinities and NaN too (a selection).
    let x = [f64::INFINITY, f64::NAN, 1.0];
    let a = assists(&[3], 0, &[0, 1], -0.5);
    for dtype in [DType::F32, DType::F16, DType::Bf16, DType::F64] {
        assert_eq!(fill(dtype, &x, &[3], 0, &a).unwrap(), [-0.5, -0.5, 1.0]);
    }
}

#[test]
fn index_fills_gradient_matches_finite_differences() {
    let dims = [4, 3];
    let (x, dy) = (wavy(12, 31), wavy(12, 32));
    let a = assists(&dims, 0, &[1, 3], 2.5);
    let forward = |x: &[f64]| fill(DType::F64, x, &dims, 0, &a).unwrap();
    let numeric = numeric_grad(forward, &x, &dy);
    // torch's backward: the upstream gradient filled with 0 at the same
    // positions, the same operator.
    let zero = assists(&dims, 0, &[1, 3], 0.0);
    close(
        &fill(DType::F64, &dy, &dims, 0, &zero).unwrap(),
        &numeric,
        1e-6,
    );
}

#[test]
fn index_fill_refusals() {
    let dims = [2, 3];
    let x = vec![1.0; 6];
    let a = assists(&dims, 1, &[0], 5.0);
    let ok = || {
        vec![
            t(DType::F32, &dims, &x),
            t(DType::F32, &dims, &a.0),
            t(DType::F32, &dims, &a.1),
        ]
    };
    let dim = |d: i64| attrs(&[("dim", AttrValue::Int(d))]);
    // dim outside the rank, missing or not an int.
    assert_eq!(
        run1("IndexFillD", ok(), spec(DType::F32, &dims), dim(2)),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        run1("IndexFillD", ok(), spec(DType::F32, &dims), OpAttr::new()),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let f = attrs(&[("dim", AttrValue::Float(1.0))]);
    assert_eq!(
        run1("IndexFillD", ok(), spec(DType::F32, &dims), f),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // An assist of another type or shape; a wrong count; a wrong output.
    let mut mixed = ok();
    mixed[2] = t(DType::F16, &dims, &a.1);
    assert_eq!(
        run1("IndexFillD", mixed, spec(DType::F32, &dims), dim(1)),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let mut short = ok();
    short[1] = t(DType::F32, &[6], &a.0);
    assert_eq!(
        run1("IndexFillD", short, spec(DType::F32, &dims), dim(1)),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "IndexFillD",
            ok()[..2].to_vec(),
            spec(DType::F32, &dims),
            dim(1)
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1("IndexFillD", ok(), spec(DType::F32, &[7]), dim(1)),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        run1("IndexFillD", ok(), spec(DType::I32, &dims), dim(1)),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
