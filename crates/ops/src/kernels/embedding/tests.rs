//! GatherV2 and EmbeddingDenseGrad against hand-checked values, the
//! gradient as the adjoint of the gather, and the refusals.

use super::super::testing::*;
use super::*;

fn gather(
    x: (Spec, Vec<u8>),
    idx: (Spec, Vec<u8>),
    axis: i64,
    out: Spec,
) -> Result<Vec<f64>, AclError> {
    let a = attrs(&[("batch_dims", AttrValue::Int(0))]);
    run1(
        "GatherV2",
        vec![x, idx, ints(DType::I64, &[1], &[axis])],
        out,
        a,
    )
}

fn grad_attrs(weights: i64, padding: i64, scale: bool) -> OpAttr {
    attrs(&[
        ("num_weights", AttrValue::Int(weights)),
        ("padding_idx", AttrValue::Int(padding)),
        ("scale_grad_by_freq", AttrValue::Bool(scale)),
    ])
}

#[test]
fn gather_picks_rows_and_columns_of_any_type() {
    let w: Vec<i64> = (0..12).collect();
    // Rows of a [4, 3] table, indices [2, 2]: an embedding.
    let rows = gather(
        ints(DType::I32, &[4, 3], &w),
        ints(DType::I64, &[2, 2], &[3, 0, 1, 3]),
        0,
        spec(DType::I32, &[2, 2, 3]),
    )
    .unwrap();
    assert_eq!(
        rows,
        [
            9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 9.0, 10.0, 11.0
        ]
    );
    // Columns (index_select along 1, a negative axis), int32 indices, bf16.
    let x: Vec<f64> = w.iter().map(|&v| v as f64).collect();
    let cols = gather(
        t(DType::Bf16, &[4, 3], &x),
        ints(DType::I32, &[2], &[2, 0]),
        -1,
        spec(DType::Bf16, &[4, 2]),
    )
    .unwrap();
    assert_eq!(cols, [2.0, 0.0, 5.0, 3.0, 8.0, 6.0, 11.0, 9.0]);
}

#[test]
fn embedding_grad_sums_rows_skips_padding_and_scales() {
    let grad = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let idx = || ints(DType::I32, &[4], &[1, 3, 1, 0]);
    let go = |a| {
        run1(
            "EmbeddingDenseGrad",
            vec![t(DType::F32, &[4, 2], &grad), idx()],
            spec(DType::F32, &[4, 2]),
            a,
        )
    };
    assert_eq!(
        go(grad_attrs(4, -1, false)).unwrap(),
        [7.0, 8.0, 6.0, 8.0, 0.0, 0.0, 3.0, 4.0]
    );
    assert_eq!(
        go(grad_attrs(4, 1, false)).unwrap(),
        [7.0, 8.0, 0.0, 0.0, 0.0, 0.0, 3.0, 4.0]
    );
    assert_eq!(
        go(grad_attrs(4, -1, true)).unwrap(),
        [7.0, 8.0, 3.0, 4.0, 0.0, 0.0, 3.0, 4.0]
    );
}

#[test]
fn embedding_grad_is_the_gathers_adjoint() {
    // <gather(W), G> = <W, grad(G)> for any W and G.
    let (w, g) = (wavy(15, 50), wavy(12, 51));
    let idx = [4i64, 0, 2, 4];
    let y = gather(
        t(DType::F64, &[5, 3], &w),
        ints(DType::I64, &[4], &idx),
        0,
        spec(DType::F64, &[4, 3]),
    )
    .unwrap();
    let dw = run1(
        "EmbeddingDenseGrad",
        vec![t(DType::F64, &[4, 3], &g), ints(DType::I32, &[4], &idx)],
        spec(DType::F64, &[5, 3]),
        grad_attrs(5, -1, false),
    )
    .unwrap();
    let lhs: f64 = y.iter().zip(&g).map(|(a, b)| a * b).sum();
    let rhs: f64 = w.iter().zip(&dw).map(|(a, b)| a * b).sum();
    assert!((lhs - rhs).abs() < 1e-12, "{lhs} vs {rhs}");
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[4, 3], &[1.0; 12]);
    let out = spec(DType::F32, &[2, 3]);
    // An index past the axis, or negative: 100000.
    for bad in [4, -1] {
        assert_eq!(
            gather(x(), ints(DType::I64, &[2], &[0, bad]), 0, out.clone()),
            Err(AclError::INVALID_PARAM)
        );
    }
    assert_eq!(
        gather(x(), ints(DType::I64, &[2], &[0, 1]), 2, out.clone()),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        gather(x(), t(DType::F32, &[2], &[0.0, 1.0]), 0, out.clone()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        gather(
            x(),
            ints(DType::I64, &[2], &[0, 1]),
            0,
            spec(DType::F32, &[2, 4])
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        gather(
            x(),
            ints(DType::I64, &[2], &[0, 1]),
            0,
            spec(DType::F16, &[2, 3])
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let batch = attrs(&[("batch_dims", AttrValue::Int(1))]);
    assert_eq!(
        run1(
            "GatherV2",
            vec![
                x(),
                ints(DType::I64, &[2], &[0, 1]),
                ints(DType::I64, &[1], &[0])
            ],
            out.clone(),
            batch
        ),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let eg = |idx, out: Spec, a| {
        run1(
            "EmbeddingDenseGrad",
            vec![t(DType::F32, &[2, 3], &[1.0; 6]), idx],
            out,
            a,
        )
    };
    assert_eq!(
        eg(
            ints(DType::I32, &[2], &[0, 4]),
            spec(DType::F32, &[4, 3]),
            grad_attrs(4, -1, false)
        ),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        eg(
            ints(DType::I32, &[3], &[0, 1, 2]),
            spec(DType::F32, &[4, 3]),
            grad_attrs(4, -1, false)
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        eg(
            ints(DType::I32, &[2], &[0, 1]),
            spec(DType::F32, &[5, 3]),
            grad_attrs(4, -1, false)
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        eg(
            ints(DType::I32, &[2], &[0, 1]),
            spec(DType::F32, &[4, 3]),
            attrs(&[("num_weights", AttrValue::Float(4.0))])
        ),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
}
