//! Average and adaptive average pooling against torch's definitions
//! (written out here in loops), the backward against finite differences of
//! the forward (with torch_npu's forward and backward pads), every float
//! type, the padding modes, refusals.

use super::super::super::testing::*;
use super::super::planes;
use super::super::tests::{F32, F64, P, TYPES, configs, outs, p};
use super::*;

/// torch's avg_pool2d (`count_include_pad`, `divisor_override`).
fn avg_ref(x: &[f64], hw: [usize; 2], q: P, include: bool, divisor: usize) -> Vec<f64> {
    let o = outs(hw, q);
    let plane = hw[0] * hw[1];
    let mut y = vec![];
    for pl in 0..x.len() / plane {
        for i in 0..o[0] {
            for j in 0..o[1] {
                let (h0, w0) = (
                    (i * q.s[0]) as i64 - q.p[0] as i64,
                    (j * q.s[1]) as i64 - q.p[1] as i64,
                );
                let h1 = (h0 + q.k[0] as i64).min((hw[0] + q.p[0]) as i64);
                let w1 = (w0 + q.k[1] as i64).min((hw[1] + q.p[1]) as i64);
                let size = (h1 - h0) * (w1 - w0);
                let (h0, w0, h1, w1) = (
                    h0.max(0),
                    w0.max(0),
                    h1.min(hw[0] as i64),
                    w1.min(hw[1] as i64),
                );
                let mut sum = 0.0;
                for h in h0..h1 {
                    for w in w0..w1 {
                        sum += x[pl * plane + h as usize * hw[1] + w as usize];
                    }
                }
                let div = if divisor > 0 {
                    divisor as i64
                } else if include {
                    size
                } else {
                    (h1 - h0) * (w1 - w0)
                };
                y.push(sum / div as f64);
            }
        }
    }
    y
}

/// torch_npu's forward pads: the bottom/right one ending the last window
/// under ceil_mode (its `get_paddings`).
fn npu_pads(hw: [usize; 2], q: P) -> Vec<i64> {
    let mut pads = vec![];
    for (a, &n) in hw.iter().enumerate() {
        let (n, k, s, pad) = (n as i64, q.k[a] as i64, q.s[a] as i64, q.p[a] as i64);
        let mut after = pad;
        let mut o = (n + 2 * pad - k + s - 1).div_euclid(s) + 1;
        if q.ceil && (o - 1) * s >= n + pad {
            o -= 1;
            after = (o - 1) * s + k - n - pad;
        }
        pads.extend([pad, after]);
    }
    pads
}

fn avg_attrs(q: P, pads: Vec<i64>, exclusive: bool, divisor: Option<i64>) -> OpAttr {
    let mut a = attrs(&[
        (
            "ksize",
            AttrValue::ListInt(vec![1, 1, q.k[0] as i64, q.k[1] as i64]),
        ),
        (
            "strides",
            AttrValue::ListInt(vec![1, 1, q.s[0] as i64, q.s[1] as i64]),
        ),
        ("padding_mode", AttrValue::String("CALCULATED".into())),
        ("pads", AttrValue::ListInt(pads)),
        ("data_format", AttrValue::String("NCHW".into())),
        ("global_pooling", AttrValue::Bool(false)),
        ("ceil_mode", AttrValue::Bool(q.ceil)),
        ("exclusive", AttrValue::Bool(exclusive)),
    ]);
    if let Some(d) = divisor {
        a.insert("divisor_override".into(), AttrValue::Int(d));
    }
    a
}

fn avg_pool(
    dtype: DType,
    dims: &[usize],
    x: &[f64],
    o: [usize; 2],
    a: OpAttr,
) -> Result<Vec<f64>, AclError> {
    let mut ydims = dims.to_vec();
    let r = ydims.len();
    ydims[r - 2..].copy_from_slice(&o);
    run1("AvgPoolV2", vec![t(dtype, dims, x)], spec(dtype, &ydims), a)
}

fn avg_grad(
    dtype: DType,
    dims: &[usize],
    dy: &[f64],
    o: [usize; 2],
    a: OpAttr,
) -> Result<Vec<f64>, AclError> {
    let mut gdims = dims.to_vec();
    let r = gdims.len();
    gdims[r - 2..].copy_from_slice(&o);
    let shape: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    run1(
        "AvgPoolV2Grad",
        vec![
            ints(DType::I64, &[dims.len()], &shape),
            t(dtype, &gdims, dy),
        ],
        spec(dtype, dims),
        a,
    )
}

#[test]
fn avg_pool_is_torchs_and_its_gradient_the_adjoint() {
    let modes = [(true, None), (false, None), (true, Some(5))];
    for (dims, mut q) in configs() {
        q.d = [1, 1];
        let n: usize = dims.iter().product();
        let x = wavy(n, 3);
        let (planes, hw) = planes(&dims).unwrap();
        let o = outs(hw, q);
        let dy = wavy(planes * o[0] * o[1], 4);
        for (include, divisor) in modes {
            let want = avg_ref(&x, hw, q, include, divisor.unwrap_or(0) as usize);
            // The forward with torch_npu's pads, the backward with torch's.
            let fwd = avg_attrs(q, npu_pads(hw, q), !include, divisor);
            let bwd = avg_attrs(
                q,
                vec![q.p[0] as i64, q.p[0] as i64, q.p[1] as i64, q.p[1] as i64],
                !include,
                divisor,
            );
            for (dtype, tol) in TYPES {
                let xr = run1(
                    "Identity",
                    vec![t(dtype, &dims, &x)],
                    spec(dtype, &dims),
                    OpAttr::new(),
                )
                .unwrap();
                let want_r = avg_ref(&xr, hw, q, include, divisor.unwrap_or(0) as usize);
                close(
                    &avg_pool(dtype, &dims, &x, o, fwd.clone()).unwrap(),
                    &want_r,
                    tol,
                );
                let got = avg_grad(dtype, &dims, &dy, o, bwd.clone()).unwrap();
                let numeric = numeric_grad(
                    |x| avg_pool(F64, &dims, x, o, fwd.clone()).unwrap(),
                    &x,
                    &dy,
                );
                close(&got, &numeric, tol.max(1e-7));
            }
            close(&avg_pool(F64, &dims, &x, o, fwd).unwrap(), &want, 1e-12);
        }
    }
}

#[test]
fn avg_pool_padding_modes_and_global_pooling() {
    let dims = [1, 2, 5, 7];
    let x = wavy(70, 5);
    let base = |mode: &str| {
        attrs(&[
            ("ksize", AttrValue::ListInt(vec![1, 1, 3, 3])),
            ("strides", AttrValue::ListInt(vec![1, 1, 2, 2])),
            ("padding_mode", AttrValue::String(mode.into())),
            ("pads", AttrValue::ListInt(vec![1, 1, 1, 1])),
            ("exclusive", AttrValue::Bool(true)),
        ])
    };
    // VALID: no pads whatever `pads` says.
    let q = p(3, 2, 0, 1, false);
    let want = avg_ref(&x, [5, 7], q, true, 0);
    close(
        &avg_pool(F64, &dims, &x, [2, 3], base("VALID")).unwrap(),
        &want,
        1e-12,
    );
    // SAME: ⌈5/2⌉ × ⌈7/2⌉, pads 1 on each side (2 in all), exclusive.
    let q = p(3, 2, 1, 1, false);
    let want = avg_ref(&x, [5, 7], q, false, 0);
    close(
        &avg_pool(F64, &dims, &x, [3, 4], base("SAME")).unwrap(),
        &want,
        1e-12,
    );
    // Global pooling: each plane's mean.
    let mut a = base("CALCULATED");
    a.insert("global_pooling".into(), AttrValue::Bool(true));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    close(
        &avg_pool(F64, &dims, &x, [1, 1], a).unwrap(),
        &[mean(&x[..35]), mean(&x[35..])],
        1e-12,
    );
    assert_eq!(
        avg_pool(F64, &dims, &x, [2, 3], base("FULL")),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
}

/// torch's adaptive average pool.
fn adaptive_ref(x: &[f64], hw: [usize; 2], o: [usize; 2]) -> Vec<f64> {
    let plane = hw[0] * hw[1];
    let mut y = vec![];
    for pl in 0..x.len() / plane {
        for i in 0..o[0] {
            for j in 0..o[1] {
                let (h0, h1) = (i * hw[0] / o[0], ((i + 1) * hw[0]).div_ceil(o[0]));
                let (w0, w1) = (j * hw[1] / o[1], ((j + 1) * hw[1]).div_ceil(o[1]));
                let mut sum = 0.0;
                for h in h0..h1 {
                    for w in w0..w1 {
                        sum += x[pl * plane + h * hw[1] + w];
                    }
                }
                y.push(sum / ((h1 - h0) * (w1 - w0)) as f64);
            }
        }
    }
    y
}

fn adaptive(dtype: DType, dims: &[usize], x: &[f64], o: [usize; 2]) -> Result<Vec<f64>, AclError> {
    let mut ydims = dims.to_vec();
    let r = ydims.len();
    ydims[r - 2..].copy_from_slice(&o);
    let a = attrs(&[(
        "output_size",
        AttrValue::ListInt(vec![o[0] as i64, o[1] as i64]),
    )]);
    run1(
        "AdaptiveAvgPool2d",
        vec![t(dtype, dims, x)],
        spec(dtype, &ydims),
        a,
    )
}

fn adaptive_grad(
    dtype: DType,
    dims: &[usize],
    dy: &[f64],
    o: [usize; 2],
) -> Result<Vec<f64>, AclError> {
    let mut gdims = dims.to_vec();
    let r = gdims.len();
    gdims[r - 2..].copy_from_slice(&o);
    let shape = dims.iter().map(|&d| d as i64).collect();
    let a = attrs(&[("orig_input_shape", AttrValue::ListInt(shape))]);
    run1(
        "AdaptiveAvgPool2dGrad",
        vec![t(dtype, &gdims, dy)],
        spec(dtype, dims),
        a,
    )
}

#[test]
fn adaptive_avg_pool_is_torchs_and_its_gradient_the_adjoint() {
    for (dims, o) in [
        (vec![2, 3, 7, 6], [2, 3]),
        (vec![3, 5, 5], [3, 3]),
        (vec![1, 2, 4, 4], [4, 4]),
        (vec![1, 1, 3, 5], [5, 2]),
    ] {
        let n: usize = dims.iter().product();
        let x = wavy(n, 6);
        let (planes, hw) = planes(&dims).unwrap();
        let dy = wavy(planes * o[0] * o[1], 7);
        for (dtype, tol) in TYPES {
            let xr = run1(
                "Identity",
                vec![t(dtype, &dims, &x)],
                spec(dtype, &dims),
                OpAttr::new(),
            )
            .unwrap();
            close(
                &adaptive(dtype, &dims, &x, o).unwrap(),
                &adaptive_ref(&xr, hw, o),
                tol,
            );
            let numeric = numeric_grad(|x| adaptive(F64, &dims, x, o).unwrap(), &x, &dy);
            close(
                &adaptive_grad(dtype, &dims, &dy, o).unwrap(),
                &numeric,
                tol.max(1e-7),
            );
        }
    }
}

#[test]
fn refusals() {
    let dims = [1, 2, 5, 5];
    let x = wavy(50, 8);
    let q = p(3, 2, 1, 1, false);
    // Average pooling: another data format; a negative divisor; the
    // gradient into a shape that is not orig_input_shape.
    let mut nhwc = avg_attrs(q, vec![1; 4], true, None);
    nhwc.insert("data_format".into(), AttrValue::String("NHWC".into()));
    assert_eq!(
        avg_pool(F32, &dims, &x, [3, 3], nhwc),
        Err(AclError::FORMAT_NOT_MATCH)
    );
    let negative = avg_attrs(q, vec![1; 4], true, Some(-1));
    assert_eq!(
        avg_pool(F32, &dims, &x, [3, 3], negative),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        avg_pool(F32, &dims, &x, [3, 2], avg_attrs(q, vec![1; 4], true, None)),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let into = run(
        "AvgPoolV2Grad",
        vec![
            ints(DType::I64, &[4], &[1, 2, 5, 5]),
            t(F32, &[1, 2, 3, 3], &[0.0; 18]),
        ],
        &[spec(F32, &[1, 2, 5, 4])],
        avg_attrs(q, vec![1; 4], true, None),
    );
    assert_eq!(into, Err(AclError::OP_OUTPUT_NOT_MATCH));
    // Adaptive: an output size of 0, of one value; a gradient whose planes
    // are not the input's.
    let bad = |size: Vec<i64>| {
        run1(
            "AdaptiveAvgPool2d",
            vec![t(F32, &dims, &x)],
            spec(F32, &[1, 2, 1, 1]),
            attrs(&[("output_size", AttrValue::ListInt(size))]),
        )
    };
    assert_eq!(bad(vec![0, 1]), Err(AclError::OP_ATTR_NOT_MATCH));
    assert_eq!(bad(vec![1]), Err(AclError::OP_ATTR_NOT_MATCH));
    assert!(bad(vec![1, 1]).is_ok());
    let planes_wrong = run1(
        "AdaptiveAvgPool2dGrad",
        vec![t(F32, &[1, 3, 2, 2], &[0.0; 12])],
        spec(F32, &dims),
        attrs(&[("orig_input_shape", AttrValue::ListInt(vec![1, 2, 5, 5]))]),
    );
    assert_eq!(planes_wrong, Err(AclError::OP_INPUT_NOT_MATCH));
    // Input shapes whose size overflows (an attribute: 100023), or that
    // are not the output's.
    let big = 1i64 << 40;
    let overflow = run1(
        "AvgPoolV2Grad",
        vec![
            ints(DType::I64, &[4], &[big, big, big, 1]),
            t(F32, &[1, 2, 3, 3], &[0.0; 18]),
        ],
        spec(F32, &dims),
        avg_attrs(q, vec![1; 4], true, None),
    );
    assert_eq!(overflow, Err(AclError::OP_INPUT_NOT_MATCH));
    let unbounded = run1(
        "AdaptiveAvgPool2dGrad",
        vec![t(F32, &[1, 2, 1, 1], &[0.0; 2])],
        spec(F32, &dims),
        attrs(&[("orig_input_shape", AttrValue::ListInt(vec![1, 2, big, big]))]),
    );
    assert_eq!(unbounded, Err(AclError::OP_ATTR_NOT_MATCH));
    let larger = run1(
        "AdaptiveAvgPool2dGrad",
        vec![t(F32, &[1, 2, 1, 1], &[0.0; 2])],
        spec(F32, &dims),
        attrs(&[("orig_input_shape", AttrValue::ListInt(vec![1, 2, big, 1]))]),
    );
    assert_eq!(larger, Err(AclError::OP_OUTPUT_NOT_MATCH));
}
