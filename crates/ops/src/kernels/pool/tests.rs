//! Max pooling against torch's definition (written out here in loops),
//! the backward against finite differences of the forward, every float
//! type, the mask, refusals; and what the average pools' tests share.

use super::super::testing::*;
use super::*;

pub(super) const F32: DType = DType::F32;
pub(super) const F64: DType = DType::F64;
pub(super) const TYPES: [(DType, f64); 4] = [
    (F64, 1e-12),
    (F32, 1e-6),
    (DType::F16, 2e-3),
    (DType::Bf16, 1.6e-2),
];

/// A pool's parameters as torch takes them (symmetric padding).
#[derive(Debug, Clone, Copy)]
pub(super) struct P {
    pub(super) k: [usize; 2],
    pub(super) s: [usize; 2],
    pub(super) p: [usize; 2],
    pub(super) d: [usize; 2],
    pub(super) ceil: bool,
}

pub(super) fn p(k: usize, s: usize, pad: usize, d: usize, ceil: bool) -> P {
    P {
        k: [k, k],
        s: [s, s],
        p: [pad, pad],
        d: [d, d],
        ceil,
    }
}

/// torch's `pooling_output_shape`.
pub(super) fn torch_out(n: usize, k: usize, s: usize, pad: usize, d: usize, ceil: bool) -> usize {
    let num = (n + 2 * pad) as i64 - (d * (k - 1)) as i64 - 1 + if ceil { s as i64 - 1 } else { 0 };
    let mut o = num.div_euclid(s as i64) + 1;
    if ceil && (o - 1) * s as i64 >= (n + pad) as i64 {
        o -= 1;
    }
    o as usize
}

pub(super) fn outs(hw: [usize; 2], q: P) -> [usize; 2] {
    [0, 1].map(|a| torch_out(hw[a], q.k[a], q.s[a], q.p[a], q.d[a], q.ceil))
}

/// torch's max pool: per output, the maximum and its index in the plane
/// (the first of equal ones; a NaN wins).
fn max_ref(x: &[f64], hw: [usize; 2], q: P) -> (Vec<f64>, Vec<usize>) {
    let o = outs(hw, q);
    let plane = hw[0] * hw[1];
    let (mut y, mut at) = (vec![], vec![]);
    for pl in 0..x.len() / plane {
        for i in 0..o[0] {
            for j in 0..o[1] {
                let (mut best, mut idx) = (f64::NEG_INFINITY, usize::MAX);
                for a in 0..q.k[0] {
                    for b in 0..q.k[1] {
                        let h = (i * q.s[0] + a * q.d[0]) as i64 - q.p[0] as i64;
                        let w = (j * q.s[1] + b * q.d[1]) as i64 - q.p[1] as i64;
                        if h < 0 || w < 0 || h >= hw[0] as i64 || w >= hw[1] as i64 {
                            continue;
                        }
                        let e = h as usize * hw[1] + w as usize;
                        let v = x[pl * plane + e];
                        if idx == usize::MAX || v > best || v.is_nan() {
                            (best, idx) = (v, e);
                        }
                    }
                }
                y.push(best);
                at.push(idx);
            }
        }
    }
    (y, at)
}

fn max_attrs(q: P, dilation_name: &str) -> OpAttr {
    attrs(&[
        (
            "ksize",
            AttrValue::ListInt(vec![1, q.k[0] as i64, q.k[1] as i64, 1]),
        ),
        (
            "strides",
            AttrValue::ListInt(vec![1, q.s[0] as i64, q.s[1] as i64, 1]),
        ),
        (
            "pads",
            AttrValue::ListInt(vec![1, q.p[0] as i64, q.p[1] as i64, 1]),
        ),
        (
            dilation_name,
            AttrValue::ListInt(vec![1, q.d[0] as i64, q.d[1] as i64, 1]),
        ),
        ("ceil_mode", AttrValue::Bool(q.ceil)),
    ])
}

/// `MaxPoolWithArgmaxV1` of x `dims` (`[.., H, W]`): y and the mask.
fn max_pool(dtype: DType, dims: &[usize], x: &[f64], q: P) -> Result<Vec<Vec<f64>>, AclError> {
    let (planes, hw) = planes(dims).unwrap();
    let o = outs(hw, q);
    let mut ydims = dims.to_vec();
    let r = ydims.len();
    ydims[r - 2..].copy_from_slice(&o);
    let mask = [planes, q.k[0] * q.k[1], (o[0] * o[1]).div_ceil(16) + 1];
    run(
        "MaxPoolWithArgmaxV1",
        vec![t(dtype, dims, x)],
        &[spec(dtype, &ydims), spec(DType::U16, &mask)],
        max_attrs(q, "dilation"),
    )
}

fn max_grad(dtype: DType, dims: &[usize], x: &[f64], dy: &[f64], q: P) -> Vec<f64> {
    let (planes, hw) = planes(dims).unwrap();
    let o = outs(hw, q);
    let mask = [planes, q.k[0] * q.k[1], (o[0] * o[1]).div_ceil(16) + 1];
    run1(
        "MaxPoolGradWithArgmaxV1",
        vec![
            t(dtype, dims, x),
            t(dtype, &[planes, o[0], o[1]], dy),
            ints(DType::U16, &mask, &vec![0; mask.iter().product()]),
        ],
        spec(dtype, dims),
        max_attrs(q, "dilations"),
    )
    .unwrap()
}

/// The configurations every test runs: odd sizes, padding, strides,
/// dilation, ceil_mode.
pub(super) fn configs() -> Vec<(Vec<usize>, P)> {
    vec![
        (vec![2, 3, 7, 6], p(2, 2, 0, 1, false)),
        (vec![2, 3, 7, 6], p(3, 2, 1, 1, true)),
        (vec![1, 2, 5, 5], p(2, 2, 1, 1, true)),
        (vec![2, 5, 5], p(3, 1, 1, 1, false)),
        (vec![1, 2, 8, 7], p(3, 2, 1, 2, false)),
        (
            vec![1, 1, 6, 9],
            P {
                k: [2, 3],
                s: [1, 2],
                p: [1, 0],
                d: [1, 1],
                ceil: true,
            },
        ),
    ]
}

#[test]
fn max_pool_is_torchs_with_its_mask_in_every_type() {
    for (dims, q) in configs() {
        let n: usize = dims.iter().product();
        let x = wavy(n, 1);
        let (planes, hw) = planes(&dims).unwrap();
        for (dtype, tol) in TYPES {
            let xr = run1(
                "Identity",
                vec![t(dtype, &dims, &x)],
                spec(dtype, &dims),
                OpAttr::new(),
            )
            .unwrap();
            let (want, at) = max_ref(&xr, hw, q);
            let out = max_pool(dtype, &dims, &x, q).unwrap();
            close(&out[0], &want, tol);
            // The mask: one bit per output, at its maximum's window place.
            let o = outs(hw, q);
            let (window, per) = (q.k[0] * q.k[1], o[0] * o[1]);
            let width = per.div_ceil(16) + 1;
            for pl in 0..planes {
                for out_i in 0..per {
                    let e = at[pl * per + out_i];
                    let (h, w) = (e / hw[1], e % hw[1]);
                    let (i, j) = (out_i / o[1], out_i % o[1]);
                    let a = (h + q.p[0] - i * q.s[0]) / q.d[0];
                    let b = (w + q.p[1] - j * q.s[1]) / q.d[1];
                    for k in 0..window {
                        let word = out[1][(pl * window + k) * width + out_i / 16] as u16;
                        let bit = word >> (out_i % 16) & 1;
                        assert_eq!(
                            bit == 1,
                            k == a * q.k[1] + b,
                            "{dims:?} {q:?} output {out_i}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_first_maximum_wins_and_a_nan_wins() {
    let x = [1.0, 3.0, 3.0, 0.0, f64::NAN, 2.0, 5.0, 5.0];
    let q = P {
        k: [1, 4],
        s: [1, 4],
        p: [0, 0],
        d: [1, 1],
        ceil: false,
    };
    let out = max_pool(F32, &[1, 1, 2, 4], &x, q).unwrap();
    assert_eq!(out[0][0], 3.0);
    assert!(out[0][1].is_nan());
    // Window places 1 (the first 3) and 0 (the NaN): bits of outputs 0, 1.
    let width = 2;
    assert_eq!(out[1][width], 1.0);
    assert_eq!(out[1][0], 2.0);
    let dx = max_grad(F32, &[1, 1, 2, 4], &x, &[1.0, 1.0], q);
    assert_eq!(&dx[..3], &[0.0, 1.0, 0.0]);
    assert_eq!(dx[4], 1.0);
}

#[test]
fn max_pool_gradient_matches_finite_differences() {
    for (dims, q) in configs() {
        let n: usize = dims.iter().product();
        // Distinct values: no tie within a window.
        let x: Vec<f64> = (0..n).map(|i| ((i * 37) % n) as f64 * 0.1 - 1.0).collect();
        let (planes, hw) = planes(&dims).unwrap();
        let o = outs(hw, q);
        let dy = wavy(planes * o[0] * o[1], 2);
        let want = numeric_grad(|x| max_pool(F64, &dims, x, q).unwrap().remove(0), &x, &dy);
        for (dtype, tol) in TYPES {
            let dyr = run1(
                "Identity",
                vec![t(dtype, &[dy.len()], &dy)],
                spec(dtype, &[dy.len()]),
                OpAttr::new(),
            )
            .unwrap();
            let wr = numeric_grad(|x| max_pool(F64, &dims, x, q).unwrap().remove(0), &x, &dyr);
            let got = max_grad(dtype, &dims, &x, &dy, q);
            // Two outputs may share a maximum: their sum is rounded once.
            close(&got, &wr, tol.max(1e-6));
            if dtype == F64 {
                close(&got, &want, 1e-6);
            }
        }
    }
}

#[test]
fn refusals() {
    let dims = [1, 2, 5, 5];
    let x = wavy(50, 8);
    let q = p(3, 2, 1, 1, false);
    // Pads above half the window; no ksize; a window larger than the
    // padded input; an argmax of another type; y of the wrong size; x of
    // two dims or of integers.
    assert_eq!(
        max_pool(F32, &dims, &x, p(2, 2, 2, 1, false)),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let no_k = run(
        "MaxPoolWithArgmaxV1",
        vec![t(F32, &dims, &x)],
        &[spec(F32, &[1, 2, 2, 2]), spec(DType::U16, &[1, 2, 9, 2])],
        attrs(&[("ceil_mode", AttrValue::Bool(false))]),
    );
    assert_eq!(no_k, Err(AclError::OP_ATTR_NOT_MATCH));
    let large = run(
        "MaxPoolWithArgmaxV1",
        vec![t(F32, &[1, 1, 2, 2], &[0.0; 4])],
        &[spec(F32, &[1, 1, 1, 1]), spec(DType::U16, &[1, 1, 25, 2])],
        max_attrs(p(5, 1, 0, 1, false), "dilation"),
    );
    assert_eq!(large, Err(AclError::OP_ATTR_NOT_MATCH));
    let mask = |dtype| {
        run(
            "MaxPoolWithArgmaxV1",
            vec![t(F32, &dims, &x)],
            &[spec(F32, &[1, 2, 3, 3]), spec(dtype, &[1, 2, 9, 2])],
            max_attrs(q, "dilation"),
        )
    };
    assert_eq!(mask(DType::I32), Err(AclError::OP_TYPE_NOT_MATCH));
    assert!(mask(DType::U16).is_ok());
    let short = run(
        "MaxPoolWithArgmaxV1",
        vec![t(F32, &dims, &x)],
        &[spec(F32, &[1, 2, 3, 3]), spec(DType::U16, &[1, 2, 9, 1])],
        max_attrs(q, "dilation"),
    );
    assert_eq!(short, Err(AclError::OP_OUTPUT_NOT_MATCH));
    let y_wrong = run(
        "MaxPoolWithArgmaxV1",
        vec![t(F32, &dims, &x)],
        &[spec(F32, &[1, 2, 2, 3]), spec(DType::U16, &[1, 2, 9, 2])],
        max_attrs(q, "dilation"),
    );
    assert_eq!(y_wrong, Err(AclError::OP_OUTPUT_NOT_MATCH));
    let flat = run(
        "MaxPoolWithArgmaxV1",
        vec![t(F32, &[5, 5], &x[..25])],
        &[spec(F32, &[3, 3]), spec(DType::U16, &[9, 2])],
        max_attrs(q, "dilation"),
    );
    assert_eq!(flat, Err(AclError::OP_INPUT_NOT_MATCH));
    // No planes, and a plane whose size overflows.
    let big = 1usize << 40;
    let empty = run(
        "MaxPoolWithArgmaxV1",
        vec![t(F32, &[0, 1, big, big], &[])],
        &[spec(F32, &[0, 1, 1, 1]), spec(DType::U16, &[0, 1, 9, 2])],
        max_attrs(q, "dilation"),
    );
    assert_eq!(empty, Err(AclError::OP_INPUT_NOT_MATCH));
    let xi = run(
        "MaxPoolWithArgmaxV1",
        vec![ints(DType::I32, &dims, &[1; 50])],
        &[
            spec(DType::I32, &[1, 2, 3, 3]),
            spec(DType::U16, &[1, 2, 9, 2]),
        ],
        max_attrs(q, "dilation"),
    );
    assert_eq!(xi, Err(AclError::OP_TYPE_NOT_MATCH));
    // The gradient of the wrong shape.
    let grad = run(
        "MaxPoolGradWithArgmaxV1",
        vec![
            t(F32, &dims, &x),
            t(F32, &[1, 2, 3, 2], &[0.0; 12]),
            ints(DType::U16, &[1, 2, 9, 2], &[0; 36]),
        ],
        &[spec(F32, &dims)],
        max_attrs(q, "dilations"),
    );
    assert_eq!(grad, Err(AclError::OP_INPUT_NOT_MATCH));
}

#[test]
fn huge_attributes_are_refused_and_huge_windows_cost_what_they_cover() {
    let dims = [1, 1, 2, 2];
    // Beyond i32::MAX: refused before any arithmetic on them.
    let huge = P {
        k: [2, 2],
        s: [1, 1 << 40],
        p: [0, 0],
        d: [1, 1],
        ceil: false,
    };
    let out = run(
        "MaxPoolWithArgmaxV1",
        vec![t(F32, &dims, &[1.0; 4])],
        &[spec(F32, &[1, 1, 1, 1]), spec(DType::U16, &[1, 1, 4, 2])],
        max_attrs(huge, "dilation"),
    );
    assert_eq!(out, Err(AclError::OP_ATTR_NOT_MATCH));
    // A window of 2·10⁸ places over a 2×2 input, padded to fit: only the
    // four elements inside are visited.
    let wide = p(200_000_001, 1, 100_000_000, 1, false);
    let x = [1.0, 4.0, 3.0, 2.0];
    let out = run(
        "MaxPoolWithArgmaxV1",
        vec![t(F32, &dims, &x)],
        &[spec(F32, &[1, 1, 2, 2]), spec(DType::U16, &[1, 1, 1, 2])],
        max_attrs(wide, "dilation"),
    );
    // The mask cannot be that large: refused, not allocated.
    assert_eq!(out, Err(AclError::OP_OUTPUT_NOT_MATCH));
    // Average pooling over a window of 2·10⁸ rows: only the two inside
    // are visited (exclusive: each output the mean of its column).
    let a = attrs(&[
        ("ksize", AttrValue::ListInt(vec![1, 1, 200_000_001, 1])),
        ("strides", AttrValue::ListInt(vec![1, 1, 1, 1])),
        (
            "pads",
            AttrValue::ListInt(vec![100_000_000, 100_000_000, 0, 0]),
        ),
        ("exclusive", AttrValue::Bool(true)),
    ]);
    let got = run1(
        "AvgPoolV2",
        vec![t(F32, &dims, &x)],
        spec(F32, &[1, 1, 2, 2]),
        a,
    )
    .unwrap();
    assert_eq!(got, [2.0, 3.0, 2.0, 3.0]);
}
