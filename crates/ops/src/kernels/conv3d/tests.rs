//! The 3-D convolutions: against their definition (strides, pads,
//! dilations, groups, bias), each float type, the gradients against
//! finite differences, the transposed one as the convolution's input
//! gradient, refusals.

use super::super::testing::*;

const F64: DType = DType::F64;
use super::super::call::*;

fn c3(s: [i64; 3], p: [i64; 6], d: [i64; 3], groups: i64) -> OpAttr {
    attrs(&[
        ("strides", AttrValue::ListInt(vec![1, 1, s[0], s[1], s[2]])),
        ("pads", AttrValue::ListInt(p.to_vec())),
        (
            "dilations",
            AttrValue::ListInt(vec![1, 1, d[0], d[1], d[2]]),
        ),
        ("groups", AttrValue::Int(groups)),
        ("data_format", AttrValue::String("NCDHW".into())),
    ])
}

fn sizes(v: &[usize]) -> (Spec, Vec<u8>) {
    let v: Vec<i64> = v.iter().map(|&i| i as i64).collect();
    ints(DType::I32, &[v.len()], &v)
}

/// A convolution's shapes and attributes.
struct Case {
    x: [usize; 5],
    f: [usize; 5],
    y: [usize; 5],
    s: [usize; 3],
    p: [usize; 6],
    d: [usize; 3],
    groups: usize,
}

impl Case {
    fn attrs(&self) -> OpAttr {
        let i = |v: &[usize]| v.iter().map(|&k| k as i64).collect::<Vec<_>>();
        let (s, p, d) = (i(&self.s), i(&self.p), i(&self.d));
        c3(
            [s[0], s[1], s[2]],
            [p[0], p[1], p[2], p[3], p[4], p[5]],
            [d[0], d[1], d[2]],
            self.groups as i64,
        )
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            x: [2, 2, 4, 5, 5],
            f: [3, 2, 3, 3, 3],
            y: [2, 3, 4, 5, 5],
            s: [1, 1, 1],
            p: [1; 6],
            d: [1; 3],
            groups: 1,
        },
        // Strides, asymmetric pads, a dilation, two groups.
        Case {
            x: [1, 4, 5, 4, 6],
            f: [2, 2, 2, 3, 2],
            y: [1, 2, 3, 2, 5],
            s: [2, 1, 1],
            p: [0, 1, 0, 0, 1, 0],
            d: [1, 1, 2],
            groups: 2,
        },
    ]
}

/// The definition, one output element at a time.
fn reference(c: &Case, x: &[f64], f: &[f64], bias: Option<&[f64]>) -> Vec<f64> {
    let [n, ci, d, h, w] = c.x;
    let [co, cg, kd, kh, kw] = c.f;
    let [_, _, od, oh, ow] = c.y;
    let cog = co / c.groups;
    let mut y = vec![0.0; n * co * od * oh * ow];
    let at = |o: usize, k: usize, a: usize, len: usize| -> Option<usize> {
        let v = (o * c.s[a] + k * c.d[a]) as i64 - c.p[2 * a] as i64;
        (0..len as i64).contains(&v).then_some(v as usize)
    };
    for img in 0..n {
        for oc in 0..co {
            let grp = oc / cog;
            for z in 0..od {
                for r in 0..oh {
                    for q in 0..ow {
                        let mut acc = bias.map_or(0.0, |b| b[oc]);
                        for ic in 0..cg {
                            for a in 0..kd {
                                for b in 0..kh {
                                    for e in 0..kw {
                                        if let (Some(iz), Some(iy), Some(ix)) =
                                            (at(z, a, 0, d), at(r, b, 1, h), at(q, e, 2, w))
                                        {
                                            let xi = (((img * ci + grp * cg + ic) * d + iz) * h
                                                + iy)
                                                * w
                                                + ix;
                                            let fi = (((oc * cg + ic) * kd + a) * kh + b) * kw + e;
                                            acc += x[xi] * f[fi];
                                        }
                                    }
                                }
                            }
                        }
                        y[(((img * co + oc) * od + z) * oh + r) * ow + q] = acc;
                    }
                }
            }
        }
    }
    y
}

fn conv(c: &Case, dtype: DType, x: &[f64], f: &[f64], bias: Option<&[f64]>) -> Vec<f64> {
    let mut inputs = vec![t(dtype, &c.x, x), t(dtype, &c.f, f)];
    if let Some(b) = bias {
        inputs.push(t(dtype, &[b.len()], b));
    }
    run1("Conv3D", inputs, spec(dtype, &c.y), c.attrs()).unwrap()
}

fn numel(d: &[usize]) -> usize {
    d.iter().product()
}

#[test]
fn matches_the_definition() {
    for c in cases() {
        let (x, f) = (wavy(numel(&c.x), 1), wavy(numel(&c.f), 2));
        let b = wavy(c.f[0], 3);
        close(
            &conv(&c, F64, &x, &f, None),
            &reference(&c, &x, &f, None),
            1e-12,
        );
        close(
            &conv(&c, F64, &x, &f, Some(&b)),
            &reference(&c, &x, &f, Some(&b)),
            1e-12,
        );
        for (dtype, tol) in [(DType::F32, 1e-5), (DType::F16, 1e-2), (DType::Bf16, 4e-2)] {
            close(
                &conv(&c, dtype, &x, &f, Some(&b)),
                &reference(&c, &x, &f, Some(&b)),
                tol,
            );
        }
    }
}

#[test]
fn gradients_match_finite_differences() {
    for c in cases() {
        let (x, f) = (wavy(numel(&c.x), 4), wavy(numel(&c.f), 5));
        let dy = wavy(numel(&c.y), 6);
        for dtype in [F64, DType::F32, DType::F16, DType::Bf16] {
            let tol = match dtype {
                F64 => 1e-6,
                DType::F32 => 1e-4,
                _ => 5e-2,
            };
            let dx = run1(
                "Conv3DBackpropInput",
                vec![sizes(&c.x), t(dtype, &c.f, &f), t(dtype, &c.y, &dy)],
                spec(dtype, &c.x),
                c.attrs(),
            )
            .unwrap();
            let numeric = numeric_grad(|x| reference(&c, x, &f, None), &x, &dy);
            close(&dx, &numeric, tol);
            let dw = run1(
                "Conv3DBackpropFilter",
                vec![t(dtype, &c.x, &x), sizes(&c.f), t(dtype, &c.y, &dy)],
                spec(DType::F32, &c.f),
                c.attrs(),
            )
            .unwrap();
            let numeric = numeric_grad(|f| reference(&c, &x, f, None), &f, &dy);
            close(&dw, &numeric, tol);
        }
    }
}

#[test]
fn the_transposed_convolution_is_the_input_gradient() {
    // ConvTranspose3d of dy with the filter is Conv3D's x gradient, plus
    // the bias on every output channel.
    for c in cases() {
        let (f, dy) = (wavy(numel(&c.f), 7), wavy(numel(&c.y), 8));
        let numeric = numeric_grad(|x| reference(&c, x, &f, None), &wavy(numel(&c.x), 9), &dy);
        let bias = wavy(c.x[1], 10);
        let got = run1(
            "Conv3DTranspose",
            vec![
                sizes(&c.x),
                t(F64, &c.y, &dy),
                t(F64, &c.f, &f),
                t(F64, &[c.x[1]], &bias),
            ],
            spec(F64, &c.x),
            c.attrs(),
        )
        .unwrap();
        let plane = numel(&c.x[2..]);
        let want: Vec<f64> = numeric
            .iter()
            .enumerate()
            .map(|(i, v)| v + bias[i / plane % c.x[1]])
            .collect();
        close(&got, &want, 1e-6);
    }
    // output_padding adds a plane at the end of the depth.
    let c = &cases()[1];
    let mut a = c.attrs();
    a.insert(
        "output_padding".into(),
        AttrValue::ListInt(vec![0, 0, 1, 0, 0]),
    );
    let mut grown = c.x;
    grown[2] += 1;
    let ok = run1(
        "Conv3DTranspose",
        vec![
            sizes(&grown),
            t(F64, &c.y, &wavy(numel(&c.y), 1)),
            t(F64, &c.f, &wavy(numel(&c.f), 2)),
        ],
        spec(F64, &grown),
        a,
    );
    assert_eq!(ok.unwrap().len(), numel(&grown));
    // torch_npu leaves output_padding 0 and sizes the output itself: the
    // extra plane (under the depth's stride 2) holds what no input reaches.
    let (dy, f) = (wavy(numel(&c.y), 3), wavy(numel(&c.f), 4));
    let go = |size: &[usize]| {
        run1(
            "Conv3DTranspose",
            vec![sizes(size), t(F64, &c.y, &dy), t(F64, &c.f, &f)],
            spec(F64, size),
            c.attrs(),
        )
    };
    let (plain, big) = (go(&c.x).unwrap(), go(&grown).unwrap());
    let (plane, depth) = (numel(&c.x[3..]), c.x[2]);
    for ch in 0..c.x[0] * c.x[1] {
        let base = ch * depth * plane;
        let grown_base = ch * (depth + 1) * plane;
        assert_eq!(
            big[grown_base..grown_base + depth * plane],
            plain[base..base + depth * plane]
        );
    }
    // As many planes more as the stride: 100021.
    let mut too_big = c.x;
    too_big[2] += 2;
    assert_eq!(go(&too_big), Err(AclError::OP_INPUT_NOT_MATCH));
}

#[test]
fn bad_calls_are_refused() {
    let c = &cases()[0];
    let x = || t(DType::F32, &c.x, &vec![1.0; numel(&c.x)]);
    let f = || t(DType::F32, &c.f, &vec![1.0; numel(&c.f)]);
    let y = || spec(DType::F32, &c.y);
    // A 2-D format or 2-D attributes: 100027 / 100023.
    let mut nchw = c.attrs();
    nchw.insert("data_format".into(), AttrValue::String("NCHW".into()));
    assert_eq!(
        run1("Conv3D", vec![x(), f()], y(), nchw),
        Err(AclError::FORMAT_NOT_MATCH)
    );
    let mut short = c.attrs();
    short.insert("strides".into(), AttrValue::ListInt(vec![1, 1, 1, 1]));
    assert_eq!(
        run1("Conv3D", vec![x(), f()], y(), short),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let mut zero = c.attrs();
    zero.insert("dilations".into(), AttrValue::ListInt(vec![1, 1, 0, 1, 1]));
    assert_eq!(
        run1("Conv3D", vec![x(), f()], y(), zero),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // A 4-D x, filter channels not matching, a filter larger than the
    // padded input: 100021.
    let x4 = t(DType::F32, &[2, 2, 5, 5], &[1.0; 100]);
    assert_eq!(
        run1("Conv3D", vec![x4, f()], y(), c.attrs()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let f3 = t(DType::F32, &[3, 3, 3, 3, 3], &[1.0; 243]);
    assert_eq!(
        run1("Conv3D", vec![x(), f3], y(), c.attrs()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let big = t(DType::F32, &[3, 2, 7, 3, 3], &[1.0; 378]);
    assert_eq!(
        run1("Conv3D", vec![x(), big], y(), c.attrs()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // The wrong output shape: 100022; mixed types: 100020.
    assert_eq!(
        run1(
            "Conv3D",
            vec![x(), f()],
            spec(DType::F32, &[2, 3, 4, 5, 4]),
            c.attrs()
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let fh = t(DType::F16, &c.f, &vec![1.0; numel(&c.f)]);
    assert_eq!(
        run1("Conv3D", vec![x(), fh], y(), c.attrs()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    // A gradient of the wrong shape, sizes of four dims: 100021.
    let dy = t(DType::F32, &[2, 3, 4, 5, 4], &[1.0; 480]);
    assert_eq!(
        run1(
            "Conv3DBackpropInput",
            vec![sizes(&c.x), f(), dy],
            spec(DType::F32, &c.x),
            c.attrs()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let dy = || t(DType::F32, &c.y, &vec![1.0; numel(&c.y)]);
    assert_eq!(
        run1(
            "Conv3DBackpropFilter",
            vec![x(), sizes(&c.f[..4]), dy()],
            spec(DType::F32, &c.f),
            c.attrs()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // A transposed convolution whose input_size is not its output: 100021.
    assert_eq!(
        run1(
            "Conv3DTranspose",
            vec![sizes(&[2, 2, 4, 5, 6]), dy(), f()],
            spec(DType::F32, &[2, 2, 4, 5, 6]),
            c.attrs()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}
