//! The convolution's gradients against finite differences of `Conv2D`
//! (the emulated forward, itself checked against its definition), with
//! strides, asymmetric pads, dilations and groups; the half types; the
//! refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn conv_attrs(s: [i64; 2], p: [i64; 4], d: [i64; 2], groups: i64) -> OpAttr {
    attrs(&[
        ("strides", AttrValue::ListInt(vec![1, 1, s[0], s[1]])),
        ("pads", AttrValue::ListInt(p.to_vec())),
        ("dilations", AttrValue::ListInt(vec![1, 1, d[0], d[1]])),
        ("groups", AttrValue::Int(groups)),
        ("data_format", AttrValue::String("NCHW".into())),
    ])
}

fn i32s(v: &[usize]) -> (Spec, Vec<u8>) {
    let v: Vec<i64> = v.iter().map(|&d| d as i64).collect();
    ints(DType::I32, &[4], &v)
}

struct Case {
    x: [usize; 4],
    f: [usize; 4],
    y: [usize; 4],
    a: OpAttr,
}

fn forward(c: &Case, x: &[f64], f: &[f64]) -> Vec<f64> {
    run1(
        "Conv2D",
        vec![t(F64, &c.x, x), t(F64, &c.f, f)],
        spec(F64, &c.y),
        c.a.clone(),
    )
    .unwrap()
}

#[test]
fn gradients_match_finite_differences_of_the_convolution() {
    let cases = [
        // Plain 3 × 3, pad 1.
        Case {
            x: [2, 2, 5, 4],
            f: [3, 2, 3, 3],
            y: [2, 3, 5, 4],
            a: conv_attrs([1, 1], [1, 1, 1, 1], [1, 1], 1),
        },
        // Stride 2, asymmetric pads, dilation 2 across, two groups.
        Case {
            x: [1, 4, 7, 6],
            f: [6, 2, 2, 3],
            y: [1, 6, 4, 2],
            a: conv_attrs([2, 2], [1, 0, 0, 1], [1, 2], 2),
        },
        // A 1-D convolution as torch_npu launches it: height 1.
        Case {
            x: [2, 3, 1, 9],
            f: [2, 3, 1, 4],
            y: [2, 2, 1, 2],
            a: conv_attrs([1, 4], [0, 0, 0, 0], [1, 1], 1),
        },
    ];
    for (k, c) in cases.iter().enumerate() {
        let (nx, nf, ny) = (
            c.x.iter().product(),
            c.f.iter().product(),
            c.y.iter().product(),
        );
        let (x, f, dy) = (
            wavy(nx, 20 + k as u64),
            wavy(nf, 30 + k as u64),
            wavy(ny, 40 + k as u64),
        );
        assert_eq!(
            forward(c, &x, &f).len(),
            ny,
            "case {k}: the forward's shape"
        );
        let dx = run1(
            "Conv2DBackpropInput",
            vec![i32s(&c.x), t(F64, &c.f, &f), t(F64, &c.y, &dy)],
            spec(F64, &c.x),
            c.a.clone(),
        )
        .unwrap();
        close(&dx, &numeric_grad(|x| forward(c, x, &f), &x, &dy), 1e-6);
        let df = run1(
            "Conv2DBackpropFilter",
            vec![t(F64, &c.x, &x), i32s(&c.f), t(F64, &c.y, &dy)],
            spec(F64, &c.f),
            c.a.clone(),
        )
        .unwrap();
        close(&df, &numeric_grad(|f| forward(c, &x, f), &f, &dy), 1e-6);
    }
}

#[test]
fn half_inputs_give_a_float32_filter_gradient() {
    // x all ones, dy all ones: each filter element's gradient counts the
    // output positions (2 × 2 per image, 2 images) = 8.
    let a = conv_attrs([1, 1], [0, 0, 0, 0], [1, 1], 1);
    for dtype in [DType::F16, DType::Bf16] {
        let df = run1(
            "Conv2DBackpropFilter",
            vec![
                t(dtype, &[2, 1, 3, 3], &[1.0; 18]),
                i32s(&[1, 1, 2, 2]),
                t(dtype, &[2, 1, 2, 2], &[1.0; 8]),
            ],
            spec(DType::F32, &[1, 1, 2, 2]),
            a.clone(),
        )
        .unwrap();
        assert_eq!(df, [8.0; 4], "{dtype:?}");
        let dx = run1(
            "Conv2DBackpropInput",
            vec![
                i32s(&[1, 1, 3, 3]),
                t(dtype, &[1, 1, 2, 2], &[1.0; 4]),
                t(dtype, &[1, 1, 2, 2], &[1.0; 4]),
            ],
            spec(dtype, &[1, 1, 3, 3]),
            a.clone(),
        )
        .unwrap();
        assert_eq!(
            dx,
            [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0],
            "{dtype:?}"
        );
    }
}

#[test]
fn bad_calls_are_refused() {
    let a = conv_attrs([1, 1], [0, 0, 0, 0], [1, 1], 1);
    let f = || t(DType::F32, &[1, 1, 2, 2], &[1.0; 4]);
    let dy = || t(DType::F32, &[1, 1, 2, 2], &[1.0; 4]);
    let x = || t(DType::F32, &[1, 1, 3, 3], &[1.0; 9]);
    let dx_out = spec(DType::F32, &[1, 1, 3, 3]);
    let df_out = spec(DType::F32, &[1, 1, 2, 2]);
    let bi = |ins, out: &Spec, a: &OpAttr| run1("Conv2DBackpropInput", ins, out.clone(), a.clone());
    let bf =
        |ins, out: &Spec, a: &OpAttr| run1("Conv2DBackpropFilter", ins, out.clone(), a.clone());
    assert!(bi(vec![i32s(&[1, 1, 3, 3]), f(), dy()], &dx_out, &a).is_ok());
    // Counts; a size that is not 4 dims; dy of the wrong extent.
    assert_eq!(
        bi(vec![f(), dy()], &dx_out, &a),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        bi(
            vec![ints(DType::I32, &[3], &[1, 3, 3]), f(), dy()],
            &dx_out,
            &a
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        bi(
            vec![i32s(&[1, 1, 4, 3]), f(), dy()],
            &spec(DType::F32, &[1, 1, 4, 3]),
            &a
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // The output not the input's size; mixed types; a float size.
    assert_eq!(
        bi(vec![i32s(&[1, 1, 3, 3]), f(), dy()], &df_out, &a),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        bi(
            vec![
                i32s(&[1, 1, 3, 3]),
                f(),
                t(DType::F16, &[1, 1, 2, 2], &[1.0; 4])
            ],
            &dx_out,
            &a
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        bf(
            vec![x(), t(DType::F32, &[4], &[1.0, 1.0, 2.0, 2.0]), dy()],
            &df_out,
            &a
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    // Groups that do not divide the channels; another data format.
    let g2 = conv_attrs([1, 1], [0, 0, 0, 0], [1, 1], 2);
    assert_eq!(
        bf(vec![x(), i32s(&[1, 1, 2, 2]), dy()], &df_out, &g2),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let mut nhwc = a.clone();
    nhwc.insert("data_format".into(), AttrValue::String("NHWC".into()));
    assert_eq!(
        bf(vec![x(), i32s(&[1, 1, 2, 2]), dy()], &df_out, &nhwc),
        Err(AclError::FORMAT_NOT_MATCH)
    );
    assert!(bf(vec![x(), i32s(&[1, 1, 2, 2]), dy()], &df_out, &a).is_ok());
}
