//! The NLL loss and its gradient: hand-checked values for each
//! reduction, ignored targets and weights, the gradient against finite
//! differences, refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn nll_attrs(reduction: &str, ignore: i64) -> OpAttr {
    attrs(&[
        ("reduction", AttrValue::String(reduction.into())),
        ("ignore_index", AttrValue::Int(ignore)),
    ])
}

/// The loss of x `[3, 4]` against targets, with weights.
fn loss(x: &[f64], target: &[i64], weight: &[f64], reduction: &str, ignore: i64) -> Vec<Vec<f64>> {
    let y = if reduction == "none" { vec![3] } else { vec![] };
    run(
        "NLLLoss",
        vec![
            t(F64, &[3, 4], x),
            ints(DType::I32, &[3], target),
            t(F64, &[4], weight),
        ],
        &[spec(F64, &y), spec(F64, &[])],
        nll_attrs(reduction, ignore),
    )
    .unwrap()
}

#[test]
fn each_reduction_by_hand() {
    let x: Vec<f64> = (0..12).map(f64::from).collect();
    let w = [1.0, 2.0, 0.5, 1.0];
    // Targets 1, 2, 0: −w·x = −2·1, −0.5·6, −1·8.
    let none = loss(&x, &[1, 2, 0], &w, "none", -100);
    assert_eq!(none[0], [-2.0, -3.0, -8.0]);
    assert_eq!(none[1], [3.5]);
    assert_eq!(loss(&x, &[1, 2, 0], &w, "sum", -100)[0], [-13.0]);
    assert_eq!(loss(&x, &[1, 2, 0], &w, "mean", -100)[0], [-13.0 / 3.5]);
    // Target 2 ignored: neither its loss nor its weight counts.
    let ignored = loss(&x, &[1, 2, 0], &w, "mean", 2);
    assert_eq!(ignored, [vec![-10.0 / 3.0], vec![3.0]]);
    // Every target ignored: 0/0.
    assert!(loss(&x, &[2, 2, 2], &w, "mean", 2)[0][0].is_nan());
}

#[test]
fn gradients_match_finite_differences() {
    let x = wavy(12, 60);
    let w = [0.5, 1.5, 1.0, 2.0];
    let target = [3, 0, 1];
    for (reduction, ignore) in [("none", -100), ("sum", -100), ("mean", -100), ("mean", 0)] {
        let out = loss(&x, &target, &w, reduction, ignore);
        let dy = if reduction == "none" {
            wavy(3, 61)
        } else {
            vec![0.7]
        };
        let dx = run1(
            "NLLLossGrad",
            vec![
                t(F64, &[3, 4], &x),
                t(F64, &[dy.len()], &dy),
                ints(DType::I32, &[3], &target),
                t(F64, &[4], &w),
                t(F64, &[], &out[1]),
            ],
            spec(F64, &[3, 4]),
            nll_attrs(reduction, ignore),
        )
        .unwrap();
        let numeric = numeric_grad(
            |x| loss(x, &target, &w, reduction, ignore).remove(0),
            &x,
            &dy,
        );
        close(&dx, &numeric, 1e-6);
    }
}

#[test]
fn half_logits_and_int64_targets() {
    let x = [0.5, -1.0, 2.0, 0.25];
    let out = run(
        "NLLLoss",
        vec![
            t(DType::F16, &[2, 2], &x),
            ints(DType::I64, &[2], &[1, 0]),
            t(DType::F16, &[2], &[1.0, 1.0]),
        ],
        &[spec(DType::F16, &[]), spec(DType::F16, &[])],
        nll_attrs("mean", -100),
    )
    .unwrap();
    // −(−1) − 2 over a total weight of 2.
    assert_eq!(out, [vec![-0.5], vec![2.0]]);
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    let w = || t(DType::F32, &[3], &[1.0; 3]);
    let outs = [spec(DType::F32, &[]), spec(DType::F32, &[])];
    let go = |target, w, outs: &[Spec], a| run("NLLLoss", vec![x(), target, w], outs, a);
    // A target outside the classes that is not ignored: 100000.
    assert_eq!(
        go(
            ints(DType::I32, &[2], &[0, 3]),
            w(),
            &outs,
            nll_attrs("mean", -100)
        ),
        Err(AclError::INVALID_PARAM)
    );
    assert!(
        go(
            ints(DType::I32, &[2], &[0, -1]),
            w(),
            &outs,
            nll_attrs("mean", -1)
        )
        .is_ok()
    );
    assert_eq!(
        go(
            ints(DType::I32, &[2], &[0, 1]),
            w(),
            &outs,
            nll_attrs("max", -100)
        ),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        go(
            ints(DType::I32, &[3], &[0, 1, 1]),
            w(),
            &outs,
            nll_attrs("sum", -100)
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        go(
            ints(DType::I32, &[2], &[0, 1]),
            t(DType::F32, &[2], &[1.0; 2]),
            &outs,
            nll_attrs("sum", -100)
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        go(
            t(DType::F32, &[2], &[0.0, 1.0]),
            w(),
            &outs,
            nll_attrs("sum", -100)
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        go(
            ints(DType::I32, &[2], &[0, 1]),
            w(),
            &[spec(DType::F32, &[2]), spec(DType::F32, &[])],
            nll_attrs("sum", -100)
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        go(
            ints(DType::I32, &[2], &[0, 1]),
            w(),
            &outs[..1],
            nll_attrs("sum", -100)
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // The gradient of "none" needs one upstream value per row.
    assert_eq!(
        run1(
            "NLLLossGrad",
            vec![
                x(),
                t(DType::F32, &[], &[1.0]),
                ints(DType::I32, &[2], &[0, 1]),
                w(),
                t(DType::F32, &[], &[2.0])
            ],
            spec(DType::F32, &[2, 3]),
            nll_attrs("none", -100)
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}
