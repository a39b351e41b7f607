//! Layer and RMS normalisation: hand-checked values, gradients against
//! finite differences of the forward operators, the backward's own
//! epsilon, mixed types, refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn ln_attrs(axis: i64, eps: f32) -> OpAttr {
    attrs(&[
        ("begin_norm_axis", AttrValue::Int(axis)),
        ("begin_params_axis", AttrValue::Int(axis)),
        ("epsilon", AttrValue::Float(eps)),
    ])
}

/// LayerNorm of x `[2, 3]` over its last axis, all three outputs.
fn layer_norm(x: &[f64], gamma: &[f64], beta: &[f64], eps: f32) -> Vec<Vec<f64>> {
    run(
        "LayerNorm",
        vec![t(F64, &[2, 3], x), t(F64, &[3], gamma), t(F64, &[3], beta)],
        &[spec(F64, &[2, 3]), spec(F64, &[2, 1]), spec(F64, &[2, 1])],
        ln_attrs(-1, eps),
    )
    .unwrap()
}

#[test]
fn layer_norm_by_hand() {
    // Row [1, 2, 3]: mean 2, variance 2/3; row [4, 4, 4]: variance 0.
    let out = layer_norm(
        &[1.0, 2.0, 3.0, 4.0, 4.0, 4.0],
        &[1.0, 2.0, 1.0],
        &[0.0, 0.0, 1.0],
        0.0,
    );
    let s = (1.5f64).sqrt();
    close(&out[0][..3], &[-s, 0.0, s + 1.0], 1e-7);
    assert!(out[0][3..].iter().all(|v| v.is_nan()), "0/0 with epsilon 0");
    close(&out[1], &[2.0, 4.0], 0.0);
    close(&out[2], &[2.0 / 3.0, 0.0], 1e-15);
}

#[test]
fn layer_norm_gradients_match_finite_differences() {
    let (x, gamma, beta, dy) = (wavy(6, 7), wavy(3, 8), wavy(3, 9), wavy(6, 10));
    // LayerNormGrad adds 1e-5 for a float64 x: the forward uses the same.
    let eps = 1e-5;
    let out = layer_norm(&x, &gamma, &beta, eps);
    let grads = run(
        "LayerNormGrad",
        vec![
            t(F64, &[2, 3], &dy),
            t(F64, &[2, 3], &x),
            t(F64, &[2, 1], &out[2]),
            t(F64, &[2, 1], &out[1]),
            t(F64, &[3], &gamma),
        ],
        &[spec(F64, &[2, 3]), spec(F64, &[3]), spec(F64, &[3])],
        OpAttr::new(),
    )
    .unwrap();
    let dx = numeric_grad(|x| layer_norm(x, &gamma, &beta, eps).remove(0), &x, &dy);
    let dg = numeric_grad(|g| layer_norm(&x, g, &beta, eps).remove(0), &gamma, &dy);
    let db = numeric_grad(|b| layer_norm(&x, &gamma, b, eps).remove(0), &beta, &dy);
    close(&grads[0], &dx, 1e-5);
    close(&grads[1], &dg, 1e-5);
    close(&grads[2], &db, 1e-5);
}

#[test]
fn layer_norm_grad_uses_its_own_epsilon_for_float32() {
    // A row of variance 1e-8: xh = x/√(1e-8 + 1e-12) is ±1 to 5 parts in
    // 1e5 (with 1e-5 it would be ±0.03), and dgamma = Σ dy·xh.
    let x = [1e-4, -1e-4];
    let dy = [1.0, 0.0];
    let dx = run(
        "LayerNormGrad",
        vec![
            t(DType::F32, &[1, 2], &dy),
            t(DType::F32, &[1, 2], &x),
            t(DType::F32, &[1, 1], &[1e-8]),
            t(DType::F32, &[1, 1], &[0.0]),
            t(DType::F32, &[2], &[1.0, 1.0]),
        ],
        &[
            spec(DType::F32, &[1, 2]),
            spec(DType::F32, &[2]),
            spec(DType::F32, &[2]),
        ],
        OpAttr::new(),
    )
    .unwrap();
    close(&dx[1], &[1.0, 0.0], 1e-4);
    close(&dx[2], &[1.0, 0.0], 0.0);
}

#[test]
fn half_inputs_with_float_parameters() {
    // fp16 x, fp32 gamma/beta and statistics: each output in its own type.
    let x = [0.5, 1.5, -1.0, 2.0];
    let out = run(
        "LayerNorm",
        vec![
            t(DType::F16, &[1, 4], &x),
            t(DType::F32, &[4], &[1.0; 4]),
            t(DType::F32, &[4], &[0.0; 4]),
        ],
        &[
            spec(DType::F16, &[1, 4]),
            spec(DType::F32, &[1, 1]),
            spec(DType::F32, &[1, 1]),
        ],
        ln_attrs(1, 1e-5),
    )
    .unwrap();
    close(&out[1], &[0.75], 0.0);
    let var = (0.0625 + 0.5625 + 3.0625 + 1.5625) / 4.0;
    close(&out[2], &[var], 1e-7);
    let want: Vec<f64> = x
        .iter()
        .map(|v| (v - 0.75) / (var + 1e-5f64).sqrt())
        .collect();
    close(&out[0], &want, 1e-3);
}

fn rms(x: &[f64], gamma: &[f64]) -> Vec<Vec<f64>> {
    run(
        "RmsNorm",
        vec![t(F64, &[2, 3], x), t(F64, &[3], gamma)],
        &[spec(F64, &[2, 3]), spec(F64, &[2, 1])],
        attrs(&[("epsilon", AttrValue::Float(1e-6))]),
    )
    .unwrap()
}

#[test]
fn rms_norm_by_hand_and_its_gradients() {
    // Row [1, 2, 2]: mean square 3, rstd 1/√3.
    let out = rms(&[1.0, 2.0, 2.0, 3.0, 0.0, 4.0], &[1.0, 1.0, 2.0]);
    let r = 1.0 / (3.0f64 + 1e-6).sqrt();
    close(&out[0][..3], &[r, 2.0 * r, 4.0 * r], 1e-7);
    close(&out[1][..1], &[r], 1e-7);
    let (x, gamma, dy) = (wavy(6, 11), wavy(3, 12), wavy(6, 13));
    let rstd = rms(&x, &gamma).remove(1);
    let grads = run(
        "RmsNormGrad",
        vec![
            t(F64, &[2, 3], &dy),
            t(F64, &[2, 3], &x),
            t(F64, &[2, 1], &rstd),
            t(F64, &[3], &gamma),
        ],
        &[spec(F64, &[2, 3]), spec(DType::F32, &[3])],
        OpAttr::new(),
    )
    .unwrap();
    close(
        &grads[0],
        &numeric_grad(|x| rms(x, &gamma).remove(0), &x, &dy),
        1e-5,
    );
    close(
        &grads[1],
        &numeric_grad(|g| rms(&x, g).remove(0), &gamma, &dy),
        1e-5,
    );
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    let p = || t(DType::F32, &[3], &[1.0; 3]);
    let outs = [
        spec(DType::F32, &[2, 3]),
        spec(DType::F32, &[2, 1]),
        spec(DType::F32, &[2, 1]),
    ];
    let ln = |ins, outs: &[Spec], a| run("LayerNorm", ins, outs, a);
    assert_eq!(
        ln(vec![x(), p()], &outs, ln_attrs(1, 1e-5)),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        ln(vec![x(), p(), p()], &outs[..2], ln_attrs(1, 1e-5)),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        ln(vec![x(), p(), p()], &outs, ln_attrs(2, 1e-5)),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        ln(
            vec![x(), t(DType::F32, &[2], &[1.0; 2]), p()],
            &outs,
            ln_attrs(1, 1e-5)
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        ln(
            vec![x(), p(), p()],
            &outs,
            attrs(&[("epsilon", AttrValue::Int(1))])
        ),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        ln(
            vec![ints(DType::I32, &[2, 3], &[1; 6]), p(), p()],
            &outs,
            ln_attrs(1, 1e-5)
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    // RmsNorm: gamma not x's last dims; RmsNormGrad: gamma and rstd swapped.
    let rms_outs = [spec(DType::F32, &[2, 3]), spec(DType::F32, &[2, 1])];
    assert_eq!(
        run(
            "RmsNorm",
            vec![x(), t(DType::F32, &[2], &[1.0; 2])],
            &rms_outs,
            OpAttr::new()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run(
            "RmsNormGrad",
            vec![x(), x(), p(), t(DType::F32, &[2, 1], &[1.0; 2])],
            &[spec(DType::F32, &[2, 3]), spec(DType::F32, &[2, 1])],
            OpAttr::new()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}
