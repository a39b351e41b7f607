//! ReverseV2 and ScatterElements (the backward of cumsum, and of topk
//! and sort) in every type, scatter as gather's adjoint, the refusals.

use super::*;

#[test]
fn reverse_flips_the_listed_axes_in_every_type() {
    // [2, 3]: 1 2 3 / 4 5 6.
    let x = [1, 2, 3, 4, 5, 6];
    for dtype in TYPES.into_iter().chain([DType::U8]) {
        let flip = |axes: &[i64]| {
            let axes = ints(DType::I64, &[axes.len()], axes);
            run1(
                "ReverseV2",
                vec![small(dtype, &[2, 3], &x), axes],
                spec(dtype, &[2, 3]),
                none(),
            )
            .unwrap()
        };
        assert_eq!(flip(&[1]), [3.0, 2.0, 1.0, 6.0, 5.0, 4.0], "{dtype:?}");
        assert_eq!(flip(&[-2]), [4.0, 5.0, 6.0, 1.0, 2.0, 3.0], "{dtype:?}");
        assert_eq!(flip(&[0, 1]), [6.0, 5.0, 4.0, 3.0, 2.0, 1.0], "{dtype:?}");
        assert_eq!(flip(&[]), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "{dtype:?}");
    }
}

#[test]
fn reverse_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    let go = |axes: &[i64], out| {
        run1(
            "ReverseV2",
            vec![x(), ints(DType::I64, &[axes.len()], axes)],
            out,
            none(),
        )
    };
    assert_eq!(
        go(&[2], spec(DType::F32, &[2, 3])),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        go(&[0], spec(DType::F16, &[2, 3])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        go(&[0], spec(DType::F32, &[7])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let float_axes = vec![x(), t(DType::F32, &[1], &[0.0])];
    assert_eq!(
        run1("ReverseV2", float_axes, spec(DType::F32, &[2, 3]), none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

fn scatter(
    data: (Spec, Vec<u8>),
    idx: (Spec, Vec<u8>),
    src: (Spec, Vec<u8>),
    axis: i64,
    reduction: &str,
) -> Result<Vec<f64>, AclError> {
    let out = spec(data.0.dtype, &data.0.dims);
    let a = attrs(&[
        ("axis", AttrValue::Int(axis)),
        ("reduction", AttrValue::String(reduction.into())),
    ]);
    run1("ScatterElements", vec![data, idx, src], out, a)
}

/// PyTorch's scatter on a [rows, cols] table along `axis`, indices and
/// updates [irows, icols] (updates of `ucols` columns).
#[allow(clippy::too_many_arguments)]
fn scatter_ref(
    data: &[f64],
    cols: usize,
    idx: &[i64],
    icols: usize,
    src: &[f64],
    ucols: usize,
    axis: usize,
    reduction: &str,
) -> Vec<f64> {
    let mut y = data.to_vec();
    for (p, &i) in idx.iter().enumerate() {
        let (r, c) = (p / icols, p % icols);
        let to = if axis == 0 {
            i as usize * cols + c
        } else {
            r * cols + i as usize
        };
        let v = src[r * ucols + c];
        y[to] = match reduction {
            "add" => y[to] + v,
            "mul" => y[to] * v,
            _ => v,
        };
    }
    y
}

#[test]
fn scatter_elements_writes_along_an_axis_in_every_type() {
    let data = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]; // [3, 4]
    let src = [-1, -2, -3, -4, -5, -6]; // [2, 3]
    let df: Vec<f64> = data.iter().map(|&v| v as f64).collect();
    let sf: Vec<f64> = src.iter().map(|&v| v as f64).collect();
    // Indices [2, 2] along 1 (a permutation-like pick per row), and along
    // 0 (two hits on one element: the later wins, or they combine).
    for dtype in TYPES {
        for itype in [DType::I32, DType::I64] {
            for reduction in ["none", "add", "mul"] {
                let along1 = [3, 0, 1, 1];
                let y = scatter(
                    small(dtype, &[3, 4], &data),
                    small(itype, &[2, 2], &along1),
                    small(dtype, &[2, 3], &src),
                    1,
                    reduction,
                )
                .unwrap();
                assert_eq!(
                    y,
                    scatter_ref(&df, 4, &along1, 2, &sf, 3, 1, reduction),
                    "{dtype:?}"
                );
                let along0 = [2, 0, 2, 1];
                let y = scatter(
                    small(dtype, &[3, 4], &data),
                    small(itype, &[2, 2], &along0),
                    small(dtype, &[2, 3], &src),
                    -2,
                    reduction,
                )
                .unwrap();
                assert_eq!(
                    y,
                    scatter_ref(&df, 4, &along0, 2, &sf, 3, 0, reduction),
                    "{dtype:?}"
                );
            }
        }
    }
}

#[test]
fn scatter_is_the_adjoint_of_gather_along_an_axis() {
    // sum(dy * gather(x)) = sum(scatter_add(0, idx, dy) * x): the
    // gradient of topk's values is a scatter of theirs.
    let x = wavy(12, 9);
    let idx = [2i64, 0, 3, 1, 1, 2];
    let dy = wavy(6, 10);
    let gather =
        |x: &[f64]| -> Vec<f64> { (0..6).map(|p| x[(p / 2) * 4 + idx[p] as usize]).collect() };
    let grad = scatter(
        t(DType::F64, &[3, 4], &[0.0; 12]),
        ints(DType::I64, &[3, 2], &idx),
        t(DType::F64, &[3, 2], &dy),
        1,
        "add",
    )
    .unwrap();
    close(&grad, &numeric_grad(gather, &x, &dy), 1e-6);
}

#[test]
fn scatter_refusals() {
    let data = || t(DType::F32, &[2, 3], &[0.0; 6]);
    let src = || t(DType::F32, &[2, 3], &[1.0; 6]);
    let idx = |v: &[i64]| ints(DType::I64, &[1, v.len()], v);
    assert!(scatter(data(), idx(&[0, 2]), src(), 1, "none").is_ok());
    assert_eq!(
        scatter(data(), idx(&[0, 3]), src(), 1, "none"),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        scatter(data(), idx(&[-1, 0]), src(), 1, "none"),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        scatter(data(), idx(&[0, 1]), src(), 2, "none"),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        scatter(data(), idx(&[0, 1]), src(), 1, "max"),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let wide = ints(DType::I64, &[1, 4], &[0, 0, 0, 0]);
    assert_eq!(
        scatter(data(), wide, src(), 0, "none"),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let flat = ints(DType::I64, &[2], &[0, 0]);
    assert_eq!(
        scatter(data(), flat, src(), 1, "none"),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let float_idx = t(DType::F32, &[1, 2], &[0.0, 1.0]);
    assert_eq!(
        scatter(data(), float_idx, src(), 1, "none"),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let half = t(DType::F16, &[2, 3], &[1.0; 6]);
    assert_eq!(
        scatter(data(), idx(&[0, 1]), half, 1, "none"),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
