//! The convolutions against their definition, the transposed one as the
//! convolution's adjoint, and their refusals.

use super::super::find;
use super::*;

fn t(dtype: DType, dims: &[usize], v: &[f64]) -> (Spec, Vec<u8>) {
    HostInputs::tensor(dtype, dims, v.iter().map(|&f| Num::F(f)))
}

fn ints32(v: &[usize]) -> (Spec, Vec<u8>) {
    let x = Tensor::from_nums(
        DType::I32,
        vec![v.len()],
        v.iter().map(|&i| Num::I(i as i64)),
    );
    (
        Spec {
            dtype: DType::I32,
            dims: vec![v.len()],
        },
        x.bytes,
    )
}

fn attrs(s: [i64; 2], p: [i64; 4], d: [i64; 2], groups: i64, op: Option<[i64; 2]>) -> OpAttr {
    let mut a = OpAttr::new();
    a.insert("strides".into(), AttrValue::ListInt(vec![1, 1, s[0], s[1]]));
    a.insert("pads".into(), AttrValue::ListInt(p.to_vec()));
    a.insert(
        "dilations".into(),
        AttrValue::ListInt(vec![1, 1, d[0], d[1]]),
    );
    a.insert("groups".into(), AttrValue::Int(groups));
    a.insert("data_format".into(), AttrValue::String("NCHW".into()));
    if let Some(o) = op {
        a.insert(
            "output_padding".into(),
            AttrValue::ListInt(vec![0, 0, o[0], o[1]]),
        );
    }
    a
}

fn run(
    op: &str,
    inputs: Vec<(Spec, Vec<u8>)>,
    dtype: DType,
    dims: &[usize],
    a: OpAttr,
) -> Result<Vec<f64>, AclError> {
    let host = HostInputs(inputs);
    let out = Spec {
        dtype,
        dims: dims.to_vec(),
    };
    let call = Call::new(&host, vec![out.clone()], a);
    let written = find(op).ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    Ok(Tensor {
        dtype,
        dims: out.dims,
        bytes: written[0].clone(),
    }
    .nums()
    .map(Num::f64)
    .collect())
}

/// A convolution by its definition.
#[allow(clippy::too_many_arguments)]
fn naive(
    x: &[f64],
    [n, c, h, w]: [usize; 4],
    f: &[f64],
    [co, cg, kh, kw]: [usize; 4],
    s: [usize; 2],
    p: [usize; 4],
    d: [usize; 2],
    groups: usize,
) -> (Vec<f64>, [usize; 4]) {
    let ho = (h + p[0] + p[1] - d[0] * (kh - 1) - 1) / s[0] + 1;
    let wo = (w + p[2] + p[3] - d[1] * (kw - 1) - 1) / s[1] + 1;
    let cog = co / groups;
    let mut y = vec![0.0; n * co * ho * wo];
    for b in 0..n {
        for o in 0..co {
            let grp = o / cog;
            for oy in 0..ho {
                for ox in 0..wo {
                    let mut acc = 0.0;
                    for ci in 0..cg {
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let iy = (oy * s[0] + ky * d[0]) as isize - p[0] as isize;
                                let ix = (ox * s[1] + kx * d[1]) as isize - p[2] as isize;
                                if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                                    continue;
                                }
                                let xc = grp * cg + ci;
                                acc += x[((b * c + xc) * h + iy as usize) * w + ix as usize]
                                    * f[((o * cg + ci) * kh + ky) * kw + kx];
                            }
                        }
                    }
                    y[((b * co + o) * ho + oy) * wo + ox] = acc;
                }
            }
        }
    }
    (y, [n, co, ho, wo])
}

/// Small integers, so every product and sum is exact in f32.
fn values(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as u64 * 2654435761 + seed) % 7) as f64 - 3.0)
        .collect()
}

#[test]
fn conv2d_matches_its_definition_with_strides_pads_dilations_and_groups() {
    for (xd, fd, s, p, d, groups) in [
        ([2, 4, 7, 6], [6, 2, 3, 2], [2, 1], [1, 0, 2, 1], [1, 2], 2),
        ([1, 3, 5, 5], [4, 3, 3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
        // nn.Conv1d(16, 8, 4, stride=4) as torch_npu launches it: height 1.
        (
            [1, 16, 1, 12],
            [8, 16, 1, 4],
            [1, 4],
            [0, 0, 0, 0],
            [1, 1],
            1,
        ),
    ] {
        let x = values(xd.iter().product(), 1);
        let f = values(fd.iter().product(), 2);
        let (want, yd) = naive(&x, xd, &f, fd, s, p, d, groups);
        for dtype in [DType::F32, DType::F64, DType::F16, DType::Bf16] {
            let a = attrs(
                [s[0] as i64, s[1] as i64],
                p.map(|v| v as i64),
                [d[0] as i64, d[1] as i64],
                groups as i64,
                None,
            );
            let got = run(
                "Conv2D",
                vec![t(dtype, &xd, &x), t(dtype, &fd, &f)],
                dtype,
                &yd,
                a,
            )
            .unwrap();
            if dtype == DType::Bf16 {
                // bf16 keeps 8 bits of mantissa: sums above 256 round.
                assert!(
                    got.iter()
                        .zip(&want)
                        .all(|(g, w)| (g - w).abs() <= w.abs() / 128.0),
                    "{dtype:?}"
                );
            } else {
                assert_eq!(got, want, "{dtype:?} {xd:?} {fd:?}");
            }
        }
    }
}

#[test]
fn the_transposed_convolution_is_the_adjoint_of_the_convolution() {
    // <conv(x), y> == <x, conv_transpose(y)> for the same filter.
    let (xd, fd, s, p, d, groups) = ([2, 4, 7, 6], [6, 2, 3, 2], [2, 1], [1, 1, 2, 2], [1, 2], 2);
    let x = values(xd.iter().product(), 3);
    let f = values(fd.iter().product(), 4);
    let (cx, yd) = naive(&x, xd, &f, fd, s, p, d, groups);
    let y = values(yd.iter().product(), 5);
    // The transposed op's filter is [ci, co / groups, kh, kw], its
    // input y's channels first: the convolution's filter as it is.
    let [_, _, kh, kw] = fd;
    // The input size the transposed convolution must give back (the
    // stride drops a remainder: output_padding restores it).
    let extra = [
        xd[2] + p[0] + p[1] - d[0] * (kh - 1) - 1 - (yd[2] - 1) * s[0],
        xd[3] + p[2] + p[3] - d[1] * (kw - 1) - 1 - (yd[3] - 1) * s[1],
    ];
    let a = attrs(
        [2, 1],
        [1, 1, 2, 2],
        [1, 2],
        2,
        Some([extra[0] as i64, extra[1] as i64]),
    );
    let back = run(
        "Conv2DTranspose",
        vec![ints32(&xd), t(DType::F64, &yd, &y), t(DType::F64, &fd, &f)],
        DType::F64,
        &xd,
        a,
    )
    .unwrap();
    let lhs: f64 = cx.iter().zip(&y).map(|(a, b)| a * b).sum();
    let rhs: f64 = x.iter().zip(&back).map(|(a, b)| a * b).sum();
    assert_eq!(lhs, rhs);
}

#[test]
fn convolutions_refuse_what_does_not_fit() {
    let x = t(DType::F32, &[1, 2, 4, 4], &[0.0; 32]);
    let f = t(DType::F32, &[3, 2, 2, 2], &[0.0; 24]);
    let a = || attrs([1, 1], [0; 4], [1, 1], 1, None);
    assert_eq!(
        run(
            "Conv2D",
            vec![x.clone(), f.clone()],
            DType::F32,
            &[1, 3, 4, 4],
            a()
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let mut nhwc = a();
    nhwc.insert("data_format".into(), AttrValue::String("NHWC".into()));
    assert_eq!(
        run(
            "Conv2D",
            vec![x.clone(), f.clone()],
            DType::F32,
            &[1, 3, 3, 3],
            nhwc
        ),
        Err(AclError::FORMAT_NOT_MATCH)
    );
    let f3 = t(DType::F32, &[3, 3, 2, 2], &[0.0; 36]);
    assert_eq!(
        run(
            "Conv2D",
            vec![x.clone(), f3],
            DType::F32,
            &[1, 3, 3, 3],
            a()
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let fi = t(DType::I32, &[3, 2, 2, 2], &[0.0; 24]);
    assert_eq!(
        run("Conv2D", vec![x, fi], DType::F32, &[1, 3, 3, 3], a()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
