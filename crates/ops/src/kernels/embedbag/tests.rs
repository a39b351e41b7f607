//! Embedding bags: each mode against the definition, padding, the last
//! offset, 2-D indices, per-sample weights, the index outputs, each float
//! type, refusals.

use super::super::testing::*;

use super::super::call::*;

const F64: DType = DType::F64;

fn eb_attrs(mode: &str, last: bool, padding: i64) -> OpAttr {
    attrs(&[
        ("mode", AttrValue::String(mode.into())),
        ("include_last_offset", AttrValue::Bool(last)),
        ("padding_idx", AttrValue::Int(padding)),
        ("scale_grad_by_freq", AttrValue::Bool(false)),
        ("sparse", AttrValue::Bool(false)),
    ])
}

/// The four outputs of bags of a `[6, 3]` weight.
#[allow(clippy::too_many_arguments)]
fn bag(
    dtype: DType,
    w: &[f64],
    idx: (Vec<usize>, Vec<i64>),
    offsets: &[i64],
    nb: usize,
    mode: &str,
    last: bool,
    padding: i64,
    psw: Option<&[f64]>,
) -> Result<Vec<Vec<f64>>, AclError> {
    let n = idx.1.len();
    let mut inputs = vec![
        t(dtype, &[6, 3], w),
        ints(DType::I32, &idx.0, &idx.1),
        ints(DType::I32, &[offsets.len()], offsets),
    ];
    if let Some(p) = psw {
        inputs.push(t(dtype, &idx.0, p));
    }
    let max_dims = if mode == "max" { vec![nb, 3] } else { vec![nb] };
    run(
        "EmbeddingBag",
        inputs,
        &[
            spec(dtype, &[nb, 3]),
            spec(DType::I32, &[n]),
            spec(DType::I32, &[nb]),
            spec(DType::I32, &max_dims),
        ],
        eb_attrs(mode, last, padding),
    )
}

/// The definition: bags of rows, reduced.
fn reference(w: &[f64], bags: &[Vec<usize>], mode: &str, padding: Option<usize>) -> Vec<f64> {
    let mut y = Vec::new();
    for b in bags {
        let rows: Vec<usize> = b.iter().copied().filter(|&r| Some(r) != padding).collect();
        for j in 0..3 {
            let col: Vec<f64> = rows.iter().map(|&r| w[r * 3 + j]).collect();
            y.push(match (mode, col.is_empty()) {
                (_, true) => 0.0,
                ("sum", _) => col.iter().sum(),
                ("mean", _) => col.iter().sum::<f64>() / col.len() as f64,
                _ => col.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            });
        }
    }
    y
}

const IDX: [i64; 8] = [1, 2, 4, 5, 4, 3, 2, 0];

fn flat() -> (Vec<usize>, Vec<i64>) {
    (vec![8], IDX.to_vec())
}

#[test]
fn each_mode_matches_the_definition() {
    let w = wavy(18, 3);
    let bags = vec![vec![1, 2], vec![], vec![4, 5, 4], vec![3, 2, 0]];
    for mode in ["sum", "mean", "max"] {
        let out = bag(F64, &w, flat(), &[0, 2, 2, 5], 4, mode, false, -1, None).unwrap();
        close(&out[0], &reference(&w, &bags, mode, None), 1e-12);
        assert_eq!(out[1], [0.0, 0.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0]);
        assert_eq!(out[2], [2.0, 0.0, 3.0, 3.0]);
        // Padding row 4 skipped, and not counted.
        let padded = bag(F64, &w, flat(), &[0, 2, 2, 5], 4, mode, false, 4, None).unwrap();
        close(&padded[0], &reference(&w, &bags, mode, Some(4)), 1e-12);
        assert_eq!(padded[2], [2.0, 0.0, 1.0, 3.0]);
        // The last offset ends the bags.
        let last = bag(F64, &w, flat(), &[0, 2, 2, 5, 8], 4, mode, true, -1, None).unwrap();
        close(&last[0], &reference(&w, &bags, mode, None), 1e-12);
        // 2-D indices: a bag per row.
        let rows = bag(
            F64,
            &w,
            (vec![2, 4], IDX.to_vec()),
            &[0, 4],
            2,
            mode,
            false,
            -1,
            None,
        )
        .unwrap();
        close(
            &rows[0],
            &reference(&w, &[vec![1, 2, 4, 5], vec![4, 3, 2, 0]], mode, None),
            1e-12,
        );
    }
}

#[test]
fn max_indices_name_the_rows() {
    let w = wavy(18, 5);
    let out = bag(F64, &w, flat(), &[0, 2, 2, 5], 4, "max", false, -1, None).unwrap();
    for (b, rows) in [(0, vec![1, 2]), (2, vec![4, 5]), (3, vec![3, 2, 0])] {
        for j in 0..3 {
            let r = out[3][b * 3 + j] as usize;
            assert!(rows.contains(&r));
            assert_eq!(w[r * 3 + j], out[0][b * 3 + j]);
        }
    }
    // The empty bag: 0.
    assert_eq!(out[3][3..6], [0.0, 0.0, 0.0]);
    // mean: the bag sizes again.
    let mean = bag(F64, &w, flat(), &[0, 2, 2, 5], 4, "mean", false, -1, None).unwrap();
    assert_eq!(mean[3], mean[2]);
}

#[test]
fn per_sample_weights_scale_the_rows() {
    let w = wavy(18, 7);
    let p = wavy(8, 8);
    let out = bag(F64, &w, flat(), &[0, 3], 2, "sum", false, -1, Some(&p)).unwrap();
    let mut want = vec![0.0; 6];
    for (k, &r) in IDX.iter().enumerate() {
        let b = usize::from(k >= 3);
        for j in 0..3 {
            want[b * 3 + j] += p[k] * w[r as usize * 3 + j];
        }
    }
    close(&out[0], &want, 1e-12);
    // Only for sums: 100023.
    assert_eq!(
        bag(F64, &w, flat(), &[0, 3], 2, "mean", false, -1, Some(&p)),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
}

#[test]
fn each_float_type() {
    let w = wavy(18, 9);
    let bags = vec![vec![1, 2], vec![], vec![4, 5, 4], vec![3, 2, 0]];
    for (dtype, tol) in [(DType::F32, 1e-6), (DType::F16, 5e-3), (DType::Bf16, 3e-2)] {
        for mode in ["sum", "mean", "max"] {
            let out = bag(dtype, &w, flat(), &[0, 2, 2, 5], 4, mode, false, -1, None).unwrap();
            close(&out[0], &reference(&w, &bags, mode, None), tol);
        }
    }
}

#[test]
fn bad_calls_are_refused() {
    let w = wavy(18, 1);
    let go = |idx: Vec<i64>, offsets: &[i64], nb, mode| {
        bag(
            DType::F32,
            &w,
            (vec![idx.len()], idx),
            offsets,
            nb,
            mode,
            false,
            -1,
            None,
        )
    };
    // An index outside the weight, offsets decreasing or past the end: 100000.
    assert_eq!(go(vec![1, 6], &[0], 1, "sum"), Err(AclError::INVALID_PARAM));
    assert_eq!(
        go(vec![1, -1], &[0], 1, "sum"),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        go(vec![1, 2, 3], &[0, 2, 1], 3, "sum"),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        go(vec![1, 2, 3], &[0, 4], 2, "sum"),
        Err(AclError::INVALID_PARAM)
    );
    // A mode it does not know: 100023; outputs of the wrong size: 100022.
    assert_eq!(
        go(vec![1, 2], &[0], 1, "min"),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        go(vec![1, 2], &[0, 1], 1, "sum"),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // Float indices, integer weight: 100020.
    let f = run(
        "EmbeddingBag",
        vec![
            t(DType::F32, &[6, 3], &w),
            t(DType::F32, &[2], &[1.0, 2.0]),
            ints(DType::I32, &[1], &[0]),
        ],
        &[
            spec(DType::F32, &[1, 3]),
            spec(DType::I32, &[2]),
            spec(DType::I32, &[1]),
            spec(DType::I32, &[1]),
        ],
        eb_attrs("sum", false, -1),
    );
    assert_eq!(f, Err(AclError::OP_TYPE_NOT_MATCH));
    // A 1-D weight: 100021.
    let one = run(
        "EmbeddingBag",
        vec![
            t(DType::F32, &[18], &w),
            ints(DType::I32, &[2], &[1, 2]),
            ints(DType::I32, &[1], &[0]),
        ],
        &[
            spec(DType::F32, &[1, 3]),
            spec(DType::I32, &[2]),
            spec(DType::I32, &[1]),
            spec(DType::I32, &[1]),
        ],
        eb_attrs("sum", false, -1),
    );
    assert_eq!(one, Err(AclError::OP_INPUT_NOT_MATCH));
}
