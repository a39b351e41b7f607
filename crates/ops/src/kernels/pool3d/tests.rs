//! MaxPool3D, AvgPool3D and their gradients against direct loops of
//! torch's definitions in every float type (strides, pads, dilation,
//! ceil_mode, count_include_pad, divisor_override), the gradients against
//! finite differences of the forward, the refusals.

use super::super::testing::*;
use super::*;

const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::Bf16, DType::F64];

/// One pooling case: kernel, stride, pad, dilation per axis, ceil_mode.
#[derive(Clone, Copy)]
struct Case {
    k: [usize; 3],
    s: [usize; 3],
    p: [usize; 3],
    d: [usize; 3],
    ceil: bool,
}

impl Case {
    /// torch's output extent along axis `a` of an input of `n`.
    fn out(&self, a: usize, n: usize) -> usize {
        let span = self.d[a] * (self.k[a] - 1) + 1;
        let room = n + 2 * self.p[a] - span;
        let mut o = if self.ceil {
            room.div_ceil(self.s[a])
        } else {
            room / self.s[a]
        } + 1;
        if self.ceil && (o - 1) * self.s[a] >= n + self.p[a] {
            o -= 1;
        }
        o
    }

    fn outs(&self, dhw: [usize; 3]) -> [usize; 3] {
        [0, 1, 2].map(|a| self.out(a, dhw[a]))
    }

    /// The max pool's attributes as torch_npu gives them (the back pads
    /// completed under ceil_mode).
    fn max_attrs(&self, dhw: [usize; 3]) -> OpAttr {
        let five =
            |v: [usize; 3]| AttrValue::ListInt(vec![1, 1, v[0] as i64, v[1] as i64, v[2] as i64]);
        let mut pads = Vec::new();
        for (a, &n) in dhw.iter().enumerate() {
            let mut back = self.p[a];
            if self.ceil {
                let left = n + 2 * self.p[a] - self.k[a];
                let r = left % self.s[a];
                if r != 0 {
                    back += self.s[a] - r;
                }
            }
            pads.extend([self.p[a] as i64, back as i64]);
        }
        attrs(&[
            ("ksize", five(self.k)),
            ("strides", five(self.s)),
            ("padding", AttrValue::String("CALCULATED".into())),
            ("pads", AttrValue::ListInt(pads)),
            ("dilation", five(self.d)),
            ("ceil_mode", AttrValue::Int(i64::from(self.ceil))),
            ("data_format", AttrValue::String("NCDHW".into())),
        ])
    }

    /// The average pool's attributes as torch_npu gives them.
    fn avg_attrs(&self, include_pad: bool, divisor: Option<i64>) -> OpAttr {
        let three = |v: [usize; 3]| AttrValue::ListInt(v.iter().map(|&x| x as i64).collect());
        let pads = self.p.iter().flat_map(|&p| [p as i64, p as i64]).collect();
        let mut a = attrs(&[
            ("ksize", three(self.k)),
            ("strides", three(self.s)),
            ("pads", AttrValue::ListInt(pads)),
            ("ceil_mode", AttrValue::Bool(self.ceil)),
            ("count_include_pad", AttrValue::Bool(include_pad)),
            ("data_format", AttrValue::String("NCDHW".into())),
        ]);
        if let Some(d) = divisor {
            a.insert("divisor_override".into(), AttrValue::Int(d));
        }
        a
    }

    /// The input indices of output `o`'s window along axis `a`, and the
    /// window's extent to the end of the padding.
    fn window(&self, a: usize, o: usize, n: usize) -> (Vec<usize>, usize) {
        let start = (o * self.s[a]) as i64 - self.p[a] as i64;
        let taps = (0..self.k[a])
            .map(|i| start + (i * self.d[a]) as i64)
            .filter(|&i| i >= 0 && i < n as i64)
            .map(|i| i as usize)
            .collect();
        let end = (start + self.k[a] as i64).min((n + self.p[a]) as i64);
        (taps, (end - start) as usize)
    }
}

/// torch's max pool of one volume (the first maximum, NaN wins).
fn max_ref(x: &[f64], dhw: [usize; 3], c: &Case) -> Vec<f64> {
    let o = c.outs(dhw);
    let mut y = Vec::new();
    for i in 0..o[0] {
        for j in 0..o[1] {
            for l in 0..o[2] {
                let mut best: Option<f64> = None;
                for z in c.window(0, i, dhw[0]).0 {
                    for h in c.window(1, j, dhw[1]).0 {
                        for w in c.window(2, l, dhw[2]).0 {
                            let v = x[(z * dhw[1] + h) * dhw[2] + w];
                            if best.is_none_or(|b| v > b || v.is_nan()) {
                                best = Some(v);
                            }
                        }
                    }
                }
                y.push(best.unwrap_or(f64::NEG_INFINITY));
            }
        }
    }
    y
}

/// torch's average pool of one volume.
fn avg_ref(
    x: &[f64],
    dhw: [usize; 3],
    c: &Case,
    include_pad: bool,
    divisor: Option<f64>,
) -> Vec<f64> {
    let o = c.outs(dhw);
    let mut y = Vec::new();
    for i in 0..o[0] {
        for j in 0..o[1] {
            for l in 0..o[2] {
                let (zs, ez) = c.window(0, i, dhw[0]);
                let (hs, eh) = c.window(1, j, dhw[1]);
                let (ws, ew) = c.window(2, l, dhw[2]);
                let mut sum = 0.0;
                for &z in &zs {
                    for &h in &hs {
                        for &w in &ws {
                            sum += x[(z * dhw[1] + h) * dhw[2] + w];
                        }
                    }
                }
                let count = if include_pad {
                    ez * eh * ew
                } else {
                    zs.len() * hs.len() * ws.len()
                };
                y.push(sum / divisor.unwrap_or(count as f64));
            }
        }
    }
    y
}

/// `v` as `dtype` holds it.
fn held(dtype: DType, v: &[f64]) -> Vec<f64> {
    Tensor::from_nums(dtype, vec![v.len()], v.iter().map(|&f| Num::F(f)))
        .nums()
        .map(Num::f64)
        .collect()
}

const DHW: [usize; 3] = [4, 5, 6];

fn cases() -> Vec<Case> {
    vec![
        Case {
            k: [2; 3],
            s: [2; 3],
            p: [0; 3],
            d: [1; 3],
            ceil: false,
        },
        Case {
            k: [3, 2, 3],
            s: [2, 1, 2],
            p: [1, 1, 1],
            d: [1; 3],
            ceil: true,
        },
        Case {
            k: [2, 3, 2],
            s: [1, 2, 3],
            p: [0, 1, 1],
            d: [1; 3],
            ceil: false,
        },
    ]
}

fn pool(
    op: &str,
    dtype: DType,
    x: &[f64],
    vols: usize,
    o: [usize; 3],
    a: OpAttr,
) -> Result<Vec<f64>, AclError> {
    let dims = [vols, 1, DHW[0], DHW[1], DHW[2]];
    run1(
        op,
        vec![t(dtype, &dims, x)],
        spec(dtype, &[vols, 1, o[0], o[1], o[2]]),
        a,
    )
}

#[test]
fn max_pool3d_matches_torchs_definition_in_every_float_type() {
    let vol: usize = DHW.iter().product();
    let x = wavy(2 * vol, 41);
    let mut all = cases();
    all.push(Case {
        k: [2; 3],
        s: [1; 3],
        p: [0, 1, 0],
        d: [2, 1, 2],
        ceil: false,
    });
    for c in all {
        let o = c.outs(DHW);
        for dtype in FLOATS {
            let xv = held(dtype, &x);
            let got = pool("MaxPool3D", dtype, &xv, 2, o, c.max_attrs(DHW)).unwrap();
            let want: Vec<f64> = xv.chunks(vol).flat_map(|v| max_ref(v, DHW, &c)).collect();
            assert_eq!(got, want, "{dtype:?}");
        }
    }
    // A NaN wins its windows.
    let mut xn = x[..vol].to_vec();
    xn[0] = f64::NAN;
    let c = cases()[0];
    let got = pool(
        "MaxPool3D",
        DType::F32,
        &xn,
        1,
        c.outs(DHW),
        c.max_attrs(DHW),
    )
    .unwrap();
    assert!(got[0].is_nan() && !got[1].is_nan());
}

#[test]
fn avg_pool3d_matches_torchs_definition_in_every_float_type() {
    let vol: usize = DHW.iter().product();
    let x = wavy(2 * vol, 42);
    for c in cases() {
        let o = c.outs(DHW);
        for (include_pad, divisor) in [(true, None), (false, None), (true, Some(5))] {
            for dtype in FLOATS {
                let xv = held(dtype, &x);
                let a = c.avg_attrs(include_pad, divisor);
                let got = pool("AvgPool3D", dtype, &xv, 2, o, a).unwrap();
                let want: Vec<f64> = xv
                    .chunks(vol)
                    .flat_map(|v| avg_ref(v, DHW, &c, include_pad, divisor.map(|d| d as f64)))
                    .collect();
                // Summed in f32 for the half types, rounded once.
                let tol = match dtype {
                    DType::F64 => 1e-14,
                    DType::F32 => 1e-6,
                    DType::F16 => 1e-3,
                    _ => 8e-3,
                };
                close(&got, &held(dtype, &want), tol);
            }
        }
    }
}

#[test]
fn the_gradients_match_finite_differences() {
    let vol: usize = DHW.iter().product();
    let x = wavy(vol, 43);
    let dims = [1, 1, DHW[0], DHW[1], DHW[2]];
    for c in cases() {
        let o = c.outs(DHW);
        let dy = wavy(o.iter().product(), 44);
        let odims = [1, 1, o[0], o[1], o[2]];
        // Max: orig_x, orig_y, grads (no dilation, no ceil_mode).
        let forward = |x: &[f64]| pool("MaxPool3D", DType::F64, x, 1, o, c.max_attrs(DHW)).unwrap();
        let y = forward(&x);
        let mut a = c.max_attrs(DHW);
        a.remove("dilation");
        a.remove("ceil_mode");
        let got = run1(
            "MaxPool3DGrad",
            vec![
                t(DType::F64, &dims, &x),
                t(DType::F64, &odims, &y),
                t(DType::F64, &odims, &dy),
            ],
            spec(DType::F64, &dims),
            a,
        )
        .unwrap();
        close(&got, &numeric_grad(forward, &x, &dy), 1e-6);
        // Average: orig_input_shape, grads.
        for (include_pad, divisor) in [(true, None), (false, None), (false, Some(7))] {
            let a = c.avg_attrs(include_pad, divisor);
            let forward = |x: &[f64]| pool("AvgPool3D", DType::F64, x, 1, o, a.clone()).unwrap();
            let shape = ints(DType::I64, &[5], &dims.map(|d| d as i64));
            let got = run1(
                "AvgPool3DGrad",
                vec![shape, t(DType::F64, &odims, &dy)],
                spec(DType::F64, &dims),
                a.clone(),
            )
            .unwrap();
            close(&got, &numeric_grad(forward, &x, &dy), 1e-6);
        }
    }
    // A 4-D input: one volume per channel, the gradients in every type.
    for dtype in FLOATS {
        let c = cases()[0];
        let o = c.outs(DHW);
        let d4 = [2, DHW[0], DHW[1], DHW[2]];
        let x = held(dtype, &wavy(2 * vol, 45));
        let y = run1(
            "MaxPool3D",
            vec![t(dtype, &d4, &x)],
            spec(dtype, &[1, 2, o[0], o[1], o[2]]),
            c.max_attrs(DHW),
        )
        .unwrap();
        let want: Vec<f64> = x.chunks(vol).flat_map(|v| max_ref(v, DHW, &c)).collect();
        assert_eq!(y, want, "{dtype:?}");
        let dy = held(dtype, &vec![1.0; y.len()]);
        let odims = [2, o[0], o[1], o[2]];
        let dx = run1(
            "MaxPool3DGrad",
            vec![
                t(dtype, &d4, &x),
                t(dtype, &odims, &y),
                t(dtype, &odims, &dy),
            ],
            spec(dtype, &d4),
            c.max_attrs(DHW),
        )
        .unwrap();
        // Each non-overlapping window sends its 1 to one element.
        assert_eq!(dx.iter().sum::<f64>(), y.len() as f64, "{dtype:?}");
        let shape = ints(DType::I64, &[4], &d4.map(|d| d as i64));
        let dx = run1(
            "AvgPool3DGrad",
            vec![shape, t(dtype, &odims, &dy)],
            spec(dtype, &d4),
            c.avg_attrs(true, None),
        )
        .unwrap();
        // Windows of 8 tile the input but its last row of H.
        assert!(dx.iter().all(|&g| g == 0.125 || g == 0.0), "{dtype:?}");
    }
}

#[test]
fn pool3d_refusals() {
    let vol: usize = DHW.iter().product();
    let x = wavy(vol, 46);
    let c = cases()[0];
    let o = c.outs(DHW);
    let max = |a: OpAttr, o: [usize; 3]| pool("MaxPool3D", DType::F32, &x, 1, o, a);
    let with = |mut a: OpAttr, k: &str, v: AttrValue| {
        a.insert(k.into(), v);
        a
    };
    assert!(max(c.max_attrs(DHW), o).is_ok());
    let mut no_k = c.max_attrs(DHW);
    no_k.remove("ksize");
    assert_eq!(max(no_k, o), Err(AclError::OP_ATTR_NOT_MATCH));
    let fmt = with(
        c.max_attrs(DHW),
        "data_format",
        AttrValue::String("NDHWC".into()),
    );
    assert_eq!(max(fmt, o), Err(AclError::FORMAT_NOT_MATCH));
    let four = with(c.max_attrs(DHW), "ksize", AttrValue::ListInt(vec![2; 4]));
    assert_eq!(max(four, o), Err(AclError::OP_ATTR_NOT_MATCH));
    let big_pad = with(
        c.max_attrs(DHW),
        "pads",
        AttrValue::ListInt(vec![2, 2, 0, 0, 0, 0]),
    );
    assert_eq!(max(big_pad, o), Err(AclError::OP_ATTR_NOT_MATCH));
    let same = with(
        c.max_attrs(DHW),
        "padding",
        AttrValue::String("SAME".into()),
    );
    assert_eq!(max(same, o), Err(AclError::OP_ATTR_NOT_MATCH));
    assert_eq!(
        max(c.max_attrs(DHW), [o[0], o[1], o[2] + 1]),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // A 3-D input; an output of another type.
    let flat = run1(
        "MaxPool3D",
        vec![t(DType::F32, &DHW, &x)],
        spec(DType::F32, &o),
        c.max_attrs(DHW),
    );
    assert_eq!(flat, Err(AclError::OP_INPUT_NOT_MATCH));
    let dims = [1, 1, DHW[0], DHW[1], DHW[2]];
    let odims = [1, 1, o[0], o[1], o[2]];
    let typed = run1(
        "AvgPool3D",
        vec![t(DType::F32, &dims, &x)],
        spec(DType::F16, &odims),
        c.avg_attrs(true, None),
    );
    assert_eq!(typed, Err(AclError::OP_TYPE_NOT_MATCH));
    let negative = run1(
        "AvgPool3D",
        vec![t(DType::F32, &dims, &x)],
        spec(DType::F32, &odims),
        c.avg_attrs(true, Some(-1)),
    );
    assert_eq!(negative, Err(AclError::OP_ATTR_NOT_MATCH));
    // Gradients of an extent neither ceil_mode gives; a shape the output
    // does not hold; mixed types.
    let n: usize = o.iter().product();
    let wrong = [1, 1, o[0] + 1, o[1], o[2]];
    let grads = |d: &[usize], dt: DType| t(dt, d, &vec![1.0; d.iter().product()]);
    let mg = run1(
        "MaxPool3DGrad",
        vec![
            t(DType::F32, &dims, &x),
            grads(&wrong, DType::F32),
            grads(&wrong, DType::F32),
        ],
        spec(DType::F32, &dims),
        c.max_attrs(DHW),
    );
    assert_eq!(mg, Err(AclError::OP_INPUT_NOT_MATCH));
    let mixed = run1(
        "MaxPool3DGrad",
        vec![
            t(DType::F32, &dims, &x),
            grads(&odims, DType::F32),
            grads(&odims, DType::F16),
        ],
        spec(DType::F32, &dims),
        c.max_attrs(DHW),
    );
    assert_eq!(mixed, Err(AclError::OP_TYPE_NOT_MATCH));
    let shape = ints(DType::I64, &[5], &dims.map(|d| d as i64));
    let ag = run1(
        "AvgPool3DGrad",
        vec![shape.clone(), grads(&wrong, DType::F32)],
        spec(DType::F32, &dims),
        c.avg_attrs(true, None),
    );
    assert_eq!(ag, Err(AclError::OP_INPUT_NOT_MATCH));
    let small = run1(
        "AvgPool3DGrad",
        vec![shape, grads(&odims, DType::F32)],
        spec(DType::F32, &[n]),
        c.avg_attrs(true, None),
    );
    assert_eq!(small, Err(AclError::OP_OUTPUT_NOT_MATCH));
}
