//! The matrix products against their definition, every float type, fp32
//! accumulation of half types, broadcasting and refusals.

use super::super::find;
use super::*;

fn t(dtype: DType, dims: &[usize], v: &[f64]) -> (Spec, Vec<u8>) {
    HostInputs::tensor(dtype, dims, v.iter().map(|&f| Num::F(f)))
}

fn run_op(
    op: &str,
    inputs: Vec<(Spec, Vec<u8>)>,
    dtype: DType,
    dims: &[usize],
    attrs: &[(&str, bool)],
) -> Result<Vec<f64>, AclError> {
    let host = HostInputs(inputs);
    let mut a = OpAttr::new();
    for (k, v) in attrs {
        a.insert((*k).into(), AttrValue::Bool(*v));
    }
    let out = Spec {
        dtype,
        dims: dims.to_vec(),
    };
    let call = Call::new(&host, vec![out.clone()], a);
    let written = find(op).ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    let y = Tensor {
        dtype,
        dims: out.dims,
        bytes: written[0].clone(),
    };
    Ok(y.nums().map(Num::f64).collect())
}

/// `a` (r × c) transposed, row-major.
fn transposed(a: &[f64], r: usize, c: usize) -> Vec<f64> {
    (0..c)
        .flat_map(|j| (0..r).map(move |i| a[i * c + j]))
        .collect()
}

#[test]
fn matmul_transposes_and_adds_a_bias() {
    // [[1,2,3],[4,5,6]] · [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let want = [4.0, 5.0, 10.0, 11.0];
    for dtype in [DType::F32, DType::F16, DType::Bf16, DType::F64] {
        let got = run_op(
            "MatMul",
            vec![t(dtype, &[2, 3], &a), t(dtype, &[3, 2], &b)],
            dtype,
            &[2, 2],
            &[],
        )
        .unwrap();
        assert_eq!(got, want, "{dtype:?}");
        // The same product from transposed storage.
        let got = run_op(
            "MatMul",
            vec![
                t(dtype, &[3, 2], &transposed(&a, 2, 3)),
                t(dtype, &[2, 3], &transposed(&b, 3, 2)),
            ],
            dtype,
            &[2, 2],
            &[("transpose_x1", true), ("transpose_x2", true)],
        )
        .unwrap();
        assert_eq!(got, want, "{dtype:?} transposed");
    }
    let got = run_op(
        "MatMul",
        vec![
            t(DType::F32, &[2, 3], &a),
            t(DType::F32, &[3, 2], &b),
            t(DType::F32, &[2], &[100.0, 200.0]),
        ],
        DType::F32,
        &[2, 2],
        &[],
    )
    .unwrap();
    assert_eq!(got, [104.0, 205.0, 110.0, 211.0]);
}

#[test]
fn half_precision_accumulates_in_fp32_and_rounds_once() {
    // 4096 products of 1 × 1/1024: 4.0 exactly in fp32; an fp16
    // accumulator stalls at 2.0 + ... (its spacing above 2 is 1/512).
    let k = 4096;
    let a = vec![1.0; k];
    let b = vec![1.0 / 1024.0; k];
    let got = run_op(
        "MatMul",
        vec![t(DType::F16, &[1, k], &a), t(DType::F16, &[k, 1], &b)],
        DType::F16,
        &[1, 1],
        &[],
    )
    .unwrap();
    assert_eq!(got, [4.0]);
}

#[test]
fn batch_matmul_broadcasts_batches_and_dot_is_a_scalar() {
    // x1: 2 batches of 1 × 2; x2: one 2 × 1 matrix, broadcast.
    let got = run_op(
        "BatchMatMul",
        vec![
            t(DType::F32, &[2, 1, 2], &[1.0, 2.0, 3.0, 4.0]),
            t(DType::F32, &[1, 2, 1], &[10.0, 1.0]),
        ],
        DType::F32,
        &[2, 1, 1],
        &[],
    )
    .unwrap();
    assert_eq!(got, [12.0, 34.0]);
    let got = run_op(
        "BatchMatMul",
        vec![
            t(DType::F32, &[2, 2, 1], &[1.0, 2.0, 3.0, 4.0]),
            t(DType::F32, &[2, 2, 1], &[10.0, 1.0, 100.0, 1.0]),
        ],
        DType::F32,
        &[2, 1, 1],
        &[("adj_x1", true)],
    )
    .unwrap();
    // Each x1 matrix (2 × 1) transposed is 1 × 2: [1, 2] and [3, 4].
    assert_eq!(got, [12.0, 304.0]);
    let got = run_op(
        "Dot",
        vec![
            t(DType::F32, &[3], &[1.0, 2.0, 3.0]),
            t(DType::F32, &[3], &[4.0, 5.0, 6.0]),
        ],
        DType::F32,
        &[],
        &[],
    )
    .unwrap();
    assert_eq!(got, [32.0]);
}

#[test]
fn products_refuse_what_does_not_fit() {
    let x = t(DType::F32, &[2, 3], &[0.0; 6]);
    let y = t(DType::F32, &[2, 2], &[0.0; 4]);
    assert_eq!(
        run_op(
            "MatMul",
            vec![x.clone(), y.clone()],
            DType::F32,
            &[2, 2],
            &[]
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let w = t(DType::F32, &[3, 2], &[0.0; 6]);
    assert_eq!(
        run_op(
            "MatMul",
            vec![x.clone(), w.clone()],
            DType::F32,
            &[3, 3],
            &[]
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let ints = t(DType::I32, &[2, 3], &[0.0; 6]);
    let wi = t(DType::I32, &[3, 2], &[0.0; 6]);
    assert_eq!(
        run_op("MatMul", vec![ints, wi], DType::I32, &[2, 2], &[]),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let h = t(DType::F16, &[3, 2], &[0.0; 6]);
    assert_eq!(
        run_op("MatMul", vec![x.clone(), h], DType::F32, &[2, 2], &[]),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        run_op("MatMul", vec![x], DType::F32, &[2, 2], &[]),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}
