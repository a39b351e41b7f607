//! The activations against hand-checked values, each gradient against
//! finite differences of its forward operator, the half types rounded
//! once, and the refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn th(name: &str, v: f32) -> (&str, AttrValue) {
    (name, AttrValue::Float(v))
}

/// A forward operator of one input on f64 values.
fn fwd(op: &'static str, a: &[(&str, AttrValue)]) -> impl Fn(&[f64]) -> Vec<f64> {
    let a = attrs(a);
    move |x: &[f64]| {
        run1(
            op,
            vec![t(F64, &[x.len()], x)],
            spec(F64, &[x.len()]),
            a.clone(),
        )
        .unwrap()
    }
}

#[test]
fn forward_values_match_their_definitions() {
    let x = [-3.0, -0.5, 0.0, 0.5, 2.0];
    let n = [x.len()];
    let one = |op: &str, a: OpAttr| run1(op, vec![t(F64, &n, &x)], spec(F64, &n), a).unwrap();
    close(&one("Relu", OpAttr::new()), &[0.0, 0.0, 0.0, 0.5, 2.0], 0.0);
    let sig: Vec<f64> = x.iter().map(|v| 1.0 / (1.0 + (-v).exp())).collect();
    close(&one("Sigmoid", OpAttr::new()), &sig, 1e-15);
    let tanh: Vec<f64> = x.iter().map(|v| v.tanh()).collect();
    close(&one("Tanh", OpAttr::new()), &tanh, 1e-15);
    // SiLU: x·σ(x); σ(2) = 0.8807970779778823.
    close(
        &one("Swish", attrs(&[th("scale", 1.0)]))[4..],
        &[2.0 * 0.880_797_077_977_882_3],
        1e-15,
    );
    // GELU's tanh form at 1: 0.5·(1 + tanh(√(2/π)·1.044715)) = 0.8411919906.
    let g = run1(
        "Gelu",
        vec![t(F64, &[1], &[1.0])],
        spec(F64, &[1]),
        OpAttr::new(),
    )
    .unwrap();
    close(&g, &[0.841_191_990_607_477_2], 1e-12);
    // Softplus with beta 2, threshold 3: ln(1 + e^(2x))/2, x where 2x > 3.
    let sp = one(
        "SoftplusV2",
        attrs(&[th("beta", 2.0), th("threshold", 3.0)]),
    );
    let want: Vec<f64> = x
        .iter()
        .map(|&v| {
            if 2.0 * v > 3.0 {
                v
            } else {
                (2.0 * v).exp().ln_1p() / 2.0
            }
        })
        .collect();
    close(&sp, &want, 1e-15);
    let thr = one(
        "ThresholdV2D",
        attrs(&[th("threshold", 0.25), th("value", -1.0)]),
    );
    close(&thr, &[-1.0, -1.0, -1.0, 0.5, 2.0], 0.0);
}

#[test]
fn gradients_match_finite_differences() {
    let x = wavy(9, 1);
    let dy = wavy(9, 2);
    let n = [x.len()];
    let grad = |op: &str, ins: Vec<Vec<f64>>, a: OpAttr| {
        let inputs = ins.iter().map(|v| t(F64, &n, v)).collect();
        run1(op, inputs, spec(F64, &n), a).unwrap()
    };
    let y = |op: &'static str, a: &[(&str, AttrValue)]| fwd(op, a)(&x);
    // Gelu, Swish, Softplus take x; Sigmoid and Tanh take their output.
    let gelu = numeric_grad(fwd("Gelu", &[]), &x, &dy);
    close(
        &grad(
            "GeluGrad",
            vec![dy.clone(), x.clone(), dy.clone()],
            OpAttr::new(),
        ),
        &gelu,
        1e-6,
    );
    let silu = numeric_grad(fwd("Swish", &[]), &x, &dy);
    close(
        &grad("SiluGrad", vec![dy.clone(), x.clone()], OpAttr::new()),
        &silu,
        1e-6,
    );
    let sp = [th("beta", 1.5), th("threshold", 1.0)];
    let soft = numeric_grad(fwd("SoftplusV2", &sp), &x, &dy);
    close(
        &grad("SoftplusV2Grad", vec![dy.clone(), x.clone()], attrs(&sp)),
        &soft,
        1e-6,
    );
    let sig = numeric_grad(fwd("Sigmoid", &[]), &x, &dy);
    close(
        &grad(
            "SigmoidGrad",
            vec![y("Sigmoid", &[]), dy.clone()],
            OpAttr::new(),
        ),
        &sig,
        1e-6,
    );
    let tanh = numeric_grad(fwd("Tanh", &[]), &x, &dy);
    close(
        &grad("TanhGrad", vec![y("Tanh", &[]), dy.clone()], OpAttr::new()),
        &tanh,
        1e-6,
    );
    // ReluGrad gets relu's output; ThresholdGradV2D the input.
    let relu = numeric_grad(fwd("Relu", &[]), &x, &dy);
    close(
        &grad("ReluGrad", vec![dy.clone(), y("Relu", &[])], OpAttr::new()),
        &relu,
        1e-6,
    );
    let tv = [th("threshold", 0.3), th("value", 0.0)];
    let thr = numeric_grad(fwd("ThresholdV2D", &tv), &x, &dy);
    let got = grad(
        "ThresholdGradV2D",
        vec![dy.clone(), x.clone()],
        attrs(&[th("threshold", 0.3)]),
    );
    close(&got, &thr, 1e-6);
}

#[test]
fn half_types_are_computed_in_fp32_and_rounded_once() {
    let x = wavy(16, 3);
    for dtype in [DType::F16, DType::Bf16, DType::F32] {
        let got = run1(
            "Gelu",
            vec![t(dtype, &[16], &x)],
            spec(dtype, &[16]),
            OpAttr::new(),
        )
        .unwrap();
        // The input as the type holds it, GELU in f32, rounded once.
        let held = Tensor::from_nums(dtype, vec![16], x.iter().map(|&v| Num::F(v)));
        let want: Vec<f64> = held
            .nums()
            .map(|v| gelu(v.f64() as f32))
            .map(|y| dtype.get(&dtype.bytes_of(Num::F(f64::from(y)))).f64())
            .collect();
        assert_eq!(got, want, "{dtype:?}");
    }
}

#[test]
fn relu_takes_integers_and_keeps_nan() {
    let got = run1(
        "Relu",
        vec![ints(DType::I32, &[4], &[-5, 0, 3, -1])],
        spec(DType::I32, &[4]),
        OpAttr::new(),
    )
    .unwrap();
    assert_eq!(got, [0.0, 0.0, 3.0, 0.0]);
    let nan = run1(
        "Relu",
        vec![t(F64, &[1], &[f64::NAN])],
        spec(F64, &[1]),
        OpAttr::new(),
    )
    .unwrap();
    assert!(nan[0].is_nan());
}

#[test]
fn gradients_broadcast_and_bad_calls_are_refused() {
    // A gradient of [2, 3] against features [3].
    let got = run1(
        "ReluGrad",
        vec![
            t(F64, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            t(F64, &[3], &[1.0, 0.0, 2.0]),
        ],
        spec(F64, &[2, 3]),
        OpAttr::new(),
    )
    .unwrap();
    assert_eq!(got, [1.0, 0.0, 3.0, 4.0, 0.0, 6.0]);
    let x = || t(DType::F32, &[3], &[1.0, 2.0, 3.0]);
    let out = spec(DType::F32, &[3]);
    // Wrong counts, a mixed type, a shape that does not fit, a bad attribute.
    assert_eq!(
        run1("SiluGrad", vec![x()], out.clone(), OpAttr::new()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run("Tanh", vec![x()], &[], OpAttr::new()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "TanhGrad",
            vec![x(), t(DType::F16, &[3], &[1.0; 3])],
            out.clone(),
            OpAttr::new()
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        run1("Sigmoid", vec![x()], spec(DType::F32, &[4]), OpAttr::new()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "Sigmoid",
            vec![ints(DType::I32, &[3], &[1, 2, 3])],
            spec(DType::I32, &[3]),
            OpAttr::new()
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "Swish",
            vec![x()],
            out,
            attrs(&[("scale", AttrValue::Int(1))])
        ),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
}

#[test]
fn leaky_elu_and_mish_with_their_gradients() {
    let x = [-2.0, -0.5, 0.5, 3.0];
    let n = [4];
    let one = |op: &str, a: OpAttr| run1(op, vec![t(F64, &n, &x)], spec(F64, &n), a).unwrap();
    let slope = [("negative_slope", AttrValue::Float(0.25))];
    close(
        &one("LeakyRelu", attrs(&slope)),
        &[-0.5, -0.125, 0.5, 3.0],
        0.0,
    );
    let elu = [th("alpha", 1.5), th("scale", 2.0), th("input_scale", 0.5)];
    let want: Vec<f64> = x
        .iter()
        .map(|&v| {
            if v > 0.0 {
                2.0 * v
            } else {
                3.0 * ((0.5 * v).exp() - 1.0)
            }
        })
        .collect();
    close(&one("Elu", attrs(&elu)), &want, 1e-7);
    // mish(1) = tanh(ln(1 + e)) = 0.8650983882673103.
    let m = run1(
        "Mish",
        vec![t(F64, &[1], &[1.0])],
        spec(F64, &[1]),
        OpAttr::new(),
    )
    .unwrap();
    close(&m, &[0.865_098_388_267_310_3], 1e-12);

    let (x, dy) = (wavy(9, 14), wavy(9, 15));
    let n = [9];
    let grad = |op: &str, a: &[f64], a2: OpAttr| {
        run1(op, vec![t(F64, &n, &dy), t(F64, &n, a)], spec(F64, &n), a2).unwrap()
    };
    let leaky = numeric_grad(fwd("LeakyRelu", &slope), &x, &dy);
    close(&grad("LeakyReluGrad", &x, attrs(&slope)), &leaky, 1e-6);
    let mish = numeric_grad(fwd("Mish", &[]), &x, &dy);
    close(&grad("MishGrad", &x, OpAttr::new()), &mish, 1e-6);
    let numeric = numeric_grad(fwd("Elu", &elu), &x, &dy);
    let mut from_x = elu.to_vec();
    from_x.push(("is_result", AttrValue::Bool(false)));
    close(&grad("EluGradV2", &x, attrs(&from_x)), &numeric, 1e-6);
    let y = fwd("Elu", &elu)(&x);
    let mut from_y = elu.to_vec();
    from_y.push(("is_result", AttrValue::Bool(true)));
    close(&grad("EluGradV2", &y, attrs(&from_y)), &numeric, 1e-6);
}

#[test]
fn log_sigmoid_and_its_gradient_in_every_float_type() {
    // ln σ(x) by its definition, and without overflow far out.
    let x = [-3.0, -0.5, 0.0, 0.5, 2.0];
    let n = [x.len()];
    let got = run1(
        "LogSigmoid",
        vec![t(F64, &n, &x)],
        spec(F64, &n),
        OpAttr::new(),
    )
    .unwrap();
    let want: Vec<f64> = x.iter().map(|v| (1.0 / (1.0 + (-v).exp())).ln()).collect();
    close(&got, &want, 1e-15);
    for dtype in [DType::F32, F64] {
        let far = run1(
            "LogSigmoid",
            vec![t(dtype, &[2], &[-200.0, 200.0])],
            spec(dtype, &[2]),
            OpAttr::new(),
        )
        .unwrap();
        assert_eq!(far[0], -200.0, "{dtype:?}");
        assert!(far[1] <= 0.0 && far[1] > -1e-30, "{dtype:?}: {far:?}");
    }
    // The half types: the input as the type holds it, in f32, rounded once.
    let xv = wavy(16, 21);
    for dtype in [DType::F16, DType::Bf16, DType::F32] {
        let held = Tensor::from_nums(dtype, vec![16], xv.iter().map(|&v| Num::F(v)));
        let round = |y: f32| dtype.get(&dtype.bytes_of(Num::F(f64::from(y)))).f64();
        let x: Vec<f64> = held.nums().map(Num::f64).collect();
        let y = run1(
            "LogSigmoid",
            vec![t(dtype, &[16], &x)],
            spec(dtype, &[16]),
            OpAttr::new(),
        )
        .unwrap();
        let want: Vec<f64> = x.iter().map(|&v| round(log_sigmoid(v as f32))).collect();
        assert_eq!(y, want, "{dtype:?}");
        let dy = wavy(16, 22);
        let dy = Tensor::from_nums(dtype, vec![16], dy.iter().map(|&v| Num::F(v)));
        let dy: Vec<f64> = dy.nums().map(Num::f64).collect();
        let g = run1(
            "LogSigmoidGrad",
            vec![t(dtype, &[16], &dy), t(dtype, &[16], &x)],
            spec(dtype, &[16]),
            OpAttr::new(),
        )
        .unwrap();
        let want: Vec<f64> = x
            .iter()
            .zip(&dy)
            .map(|(&v, &d)| round(d as f32 * sigmoid(-(v as f32))))
            .collect();
        assert_eq!(g, want, "{dtype:?}");
    }
    // The gradient against finite differences of the forward.
    let (x, dy) = (wavy(11, 23), wavy(11, 24));
    let n = [11];
    let numeric = numeric_grad(fwd("LogSigmoid", &[]), &x, &dy);
    let got = run1(
        "LogSigmoidGrad",
        vec![t(F64, &n, &dy), t(F64, &n, &x)],
        spec(F64, &n),
        OpAttr::new(),
    )
    .unwrap();
    close(&got, &numeric, 1e-6);
    // Refused: an integer input, mixed types, a wrong count or shape.
    assert_eq!(
        run1(
            "LogSigmoid",
            vec![ints(DType::I32, &[2], &[1, 2])],
            spec(DType::I32, &[2]),
            OpAttr::new()
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let f = |d: DType| t(d, &[2], &[0.5, 1.0]);
    assert_eq!(
        run1(
            "LogSigmoidGrad",
            vec![f(DType::F32), f(DType::F16)],
            spec(DType::F32, &[2]),
            OpAttr::new()
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "LogSigmoidGrad",
            vec![f(DType::F32)],
            spec(DType::F32, &[2]),
            OpAttr::new()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        run1(
            "LogSigmoid",
            vec![f(DType::F32)],
            spec(DType::F32, &[3]),
            OpAttr::new()
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
}

#[test]
fn a_large_input_split_into_bands_is_each_element_once() {
    // More than two bands of `POINTWISE_BAND` elements, broadcast against
    // a one-element bias so that the broadcast columns are banded too.
    let n = 3 * (1 << 15) + 7;
    let x: Vec<f64> = (0..n).map(|i| (i % 1001) as f64 / 100.0 - 5.0).collect();
    let got = run1(
        "GeluGrad",
        vec![t(F64, &[n], &x), t(F64, &[n], &x), t(F64, &[1], &[0.0])],
        spec(F64, &[n]),
        OpAttr::new(),
    )
    .unwrap();
    let want: Vec<f64> = x.iter().map(|&v| gelu_grad(v, v)).collect();
    close(&got, &want, 0.0);
}
