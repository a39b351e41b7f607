//! The element-wise losses: values by hand and against PyTorch's
//! formulas, every reduction, each float type, gradients against finite
//! differences of the forward operators, refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn red(r: &str) -> OpAttr {
    attrs(&[("reduction", AttrValue::String(r.into()))])
}

fn with(mut a: OpAttr, k: &str, v: AttrValue) -> OpAttr {
    a.insert(k.into(), v);
    a
}

/// One loss: its operator names, the extra inputs after x and target
/// (weights, by shape), its attributes, and where its gradient takes
/// dy, x, target and the extras.
struct Case {
    fwd: &'static str,
    grad: &'static str,
    extras: Vec<(Vec<usize>, Vec<f64>)>,
    attrs: OpAttr,
    /// The gradient's inputs as indices into [x, target, dy, extras...].
    grad_order: Vec<usize>,
    /// x's values: in (0, 1) for binary cross-entropy.
    unit_x: bool,
}

fn cases(reduction: &str) -> Vec<Case> {
    let r = || red(reduction);
    let kl_r = if reduction == "mean" {
        "batchmean"
    } else {
        reduction
    };
    vec![
        Case {
            fwd: "MseLoss",
            grad: "MseLossGrad",
            extras: vec![],
            attrs: r(),
            grad_order: vec![0, 1, 2],
            unit_x: false,
        },
        Case {
            fwd: "SigmoidCrossEntropyWithLogitsV2",
            grad: "SigmoidCrossEntropyWithLogitsGradV2",
            extras: vec![
                (vec![4], vec![0.5, 1.5, 1.0, 2.0]),
                (vec![4], vec![2.0, 0.5, 1.0, 3.0]),
            ],
            attrs: r(),
            grad_order: vec![0, 1, 2, 3, 4],
            unit_x: false,
        },
        Case {
            fwd: "BinaryCrossEntropy",
            grad: "BinaryCrossEntropyGrad",
            extras: vec![(vec![3, 4], wavy(12, 5).iter().map(|v| v.abs()).collect())],
            attrs: r(),
            grad_order: vec![0, 1, 2, 3],
            unit_x: true,
        },
        Case {
            fwd: "LpLoss",
            grad: "L1LossGrad",
            extras: vec![],
            attrs: with(r(), "p", AttrValue::Int(1)),
            grad_order: vec![2, 0, 1],
            unit_x: false,
        },
        Case {
            fwd: "SmoothL1LossV2",
            grad: "SmoothL1LossGradV2",
            extras: vec![],
            attrs: with(r(), "sigma", AttrValue::Float(0.7)),
            grad_order: vec![0, 1, 2],
            unit_x: false,
        },
        Case {
            fwd: "SoftMarginLoss",
            grad: "SoftMarginLossGrad",
            extras: vec![],
            attrs: r(),
            grad_order: vec![0, 1, 2],
            unit_x: false,
        },
        Case {
            fwd: "KLDiv",
            grad: "KlDivLossGrad",
            extras: vec![],
            attrs: with(red(kl_r), "log_target", AttrValue::Bool(false)),
            grad_order: vec![2, 0, 1],
            unit_x: false,
        },
        Case {
            fwd: "KLDiv",
            grad: "KlDivLossGrad",
            extras: vec![],
            attrs: with(red(kl_r), "log_target", AttrValue::Bool(true)),
            grad_order: vec![2, 0, 1],
            unit_x: false,
        },
    ]
}

fn x_of(c: &Case) -> Vec<f64> {
    if c.unit_x {
        wavy(12, 1)
            .iter()
            .map(|v| 0.05 + 0.9 * (v + 2.0) / 4.0)
            .collect()
    } else {
        wavy(12, 1)
    }
}

fn target_of(_: &Case) -> Vec<f64> {
    // In (0, 1): a probability for the cross-entropies and KL.
    wavy(12, 2).iter().map(|v| (v + 2.0) / 4.0).collect()
}

fn out_dims(c: &Case) -> Vec<usize> {
    match c.attrs.get("reduction") {
        Some(AttrValue::String(r)) if r == "none" => vec![3, 4],
        _ => vec![],
    }
}

fn forward(c: &Case, dtype: DType, x: &[f64]) -> Result<Vec<f64>, AclError> {
    let mut inputs = vec![t(dtype, &[3, 4], x), t(dtype, &[3, 4], &target_of(c))];
    for (d, v) in &c.extras {
        inputs.push(t(dtype, d, v));
    }
    run1(c.fwd, inputs, spec(dtype, &out_dims(c)), c.attrs.clone())
}

fn gradient(c: &Case, dtype: DType, x: &[f64], dy: &[f64]) -> Result<Vec<f64>, AclError> {
    let mut all = vec![
        t(dtype, &[3, 4], x),
        t(dtype, &[3, 4], &target_of(c)),
        t(dtype, &out_dims(c), dy),
    ];
    for (d, v) in &c.extras {
        all.push(t(dtype, d, v));
    }
    let inputs = c.grad_order.iter().map(|&i| all[i].clone()).collect();
    run1(c.grad, inputs, spec(dtype, &[3, 4]), c.attrs.clone())
}

#[test]
fn gradients_match_finite_differences() {
    for reduction in ["none", "mean", "sum"] {
        for c in cases(reduction) {
            let x = x_of(&c);
            let dy = if reduction == "none" {
                wavy(12, 3)
            } else {
                vec![0.8]
            };
            let dx = gradient(&c, F64, &x, &dy).unwrap();
            let numeric = numeric_grad(|x| forward(&c, F64, x).unwrap(), &x, &dy);
            close(&dx, &numeric, 1e-5);
        }
    }
}

#[test]
fn half_types_follow_float64() {
    for reduction in ["none", "sum"] {
        for c in cases(reduction) {
            let x = x_of(&c);
            let want = forward(&c, F64, &x).unwrap();
            let dy = vec![1.0; out_dims(&c).iter().product()];
            let want_dx = gradient(&c, F64, &x, &dy).unwrap();
            for (dtype, tol) in [(DType::F32, 1e-5), (DType::F16, 1e-2), (DType::Bf16, 3e-2)] {
                let got = forward(&c, dtype, &x).unwrap();
                close(&got, &want, tol * 4.0);
                let dx = gradient(&c, dtype, &x, &dy).unwrap();
                close(&dx, &want_dx, tol * 8.0);
            }
        }
    }
}

#[test]
fn values_by_hand() {
    let go = |op: &str, x: &[f64], tg: &[f64], r: &str, a: OpAttr| {
        let dims = if r == "none" { vec![x.len()] } else { vec![] };
        run1(
            op,
            vec![t(F64, &[x.len()], x), t(F64, &[tg.len()], tg)],
            spec(F64, &dims),
            with(a, "reduction", AttrValue::String(r.into())),
        )
        .unwrap()
    };
    let none = OpAttr::new;
    assert_eq!(
        go("MseLoss", &[1.0, 3.0], &[0.0, 1.0], "none", none()),
        [1.0, 4.0]
    );
    assert_eq!(
        go("MseLoss", &[1.0, 3.0], &[0.0, 1.0], "mean", none()),
        [2.5]
    );
    assert_eq!(
        go("LpLoss", &[1.0, -3.0], &[0.0, 1.0], "sum", none()),
        [5.0]
    );
    // β 2: 0.5² / 4 inside, 3 − 1 outside.
    let beta = || attrs(&[("sigma", AttrValue::Float(2.0))]);
    assert_eq!(
        go("SmoothL1LossV2", &[0.5, 3.0], &[0.0, 0.0], "none", beta()),
        [0.0625, 2.0]
    );
    // β 0 is the L1 loss.
    let zero = || attrs(&[("sigma", AttrValue::Float(0.0))]);
    assert_eq!(
        go("SmoothL1LossV2", &[0.5, -3.0], &[0.0, 0.0], "none", zero()),
        [0.5, 3.0]
    );
    // KL: a zero target adds 0; batchmean divides by the first dim.
    let kl = go("KLDiv", &[-1.0, 0.5], &[0.0, 0.5], "batchmean", none());
    close(&kl, &[0.5 * (0.5f64.ln() - 0.5) / 2.0], 1e-12);
    // Logits far out do not overflow: x = 100, t = 0 costs 100.
    let w = || t(F64, &[1], &[1.0]);
    let bce = run1(
        "SigmoidCrossEntropyWithLogitsV2",
        vec![t(F64, &[1], &[100.0]), t(F64, &[1], &[0.0]), w(), w()],
        spec(F64, &[]),
        red("sum"),
    )
    .unwrap();
    close(&bce, &[100.0], 1e-12);
    // A probability of 0 for a target of 1: the logarithm clamped at −100.
    let clamp = run1(
        "BinaryCrossEntropy",
        vec![t(F64, &[1], &[0.0]), t(F64, &[1], &[1.0]), w()],
        spec(F64, &[]),
        red("mean"),
    )
    .unwrap();
    assert_eq!(clamp, [100.0]);
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[2, 3], &[0.5; 6]);
    let go =
        |op: &str, inputs: Vec<(Spec, Vec<u8>)>, out: Spec, a: OpAttr| run1(op, inputs, out, a);
    let scalar = || spec(DType::F32, &[]);
    // A reduction it does not know, or batchmean outside KLDiv: 100023.
    assert_eq!(
        go("MseLoss", vec![x(), x()], scalar(), red("max")),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        go("MseLoss", vec![x(), x()], scalar(), red("batchmean")),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // p other than 1, a negative β.
    let p2 = with(red("mean"), "p", AttrValue::Int(2));
    assert_eq!(
        go("LpLoss", vec![x(), x()], scalar(), p2),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let neg = with(red("mean"), "sigma", AttrValue::Float(-1.0));
    assert_eq!(
        go("SmoothL1LossV2", vec![x(), x()], scalar(), neg),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // A target that does not broadcast to x: 100021.
    let bad = t(DType::F32, &[4], &[0.0; 4]);
    assert_eq!(
        go("MseLoss", vec![x(), bad], scalar(), red("mean")),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // Mixed types, integer x: 100020.
    let half = t(DType::F16, &[2, 3], &[0.0; 6]);
    assert_eq!(
        go("MseLoss", vec![x(), half], scalar(), red("mean")),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let int = ints(DType::I32, &[2, 3], &[0; 6]);
    assert_eq!(
        go(
            "MseLoss",
            vec![int.clone(), int],
            spec(DType::I32, &[]),
            red("mean")
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    // An output of the wrong size: 100022; the wrong count of inputs: 100021.
    assert_eq!(
        go(
            "MseLoss",
            vec![x(), x()],
            spec(DType::F32, &[6]),
            red("mean")
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        go("MseLoss", vec![x()], scalar(), red("mean")),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // A gradient of x's shape for a reduction is fine, one of another is not.
    let dy = t(DType::F32, &[2], &[1.0; 2]);
    assert_eq!(
        go(
            "MseLossGrad",
            vec![x(), x(), dy],
            spec(DType::F32, &[2, 3]),
            red("none")
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert!(
        go(
            "MseLossGrad",
            vec![x(), x(), x()],
            spec(DType::F32, &[2, 3]),
            red("mean")
        )
        .is_ok()
    );
}
