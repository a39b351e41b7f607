//! Fused attention against its definition (computed here in f64), its
//! gradients against finite differences of its forward, and its refusals.

use std::sync::Mutex;

use super::*;
use crate::aclnn::plan::{Kind, Plan};
use crate::aclnn::testing::Flat;

/// Flat memory from address 0; tensors placed one after another.
#[derive(Default)]
struct Arena(Vec<u8>);

impl Arena {
    fn put(&mut self, dtype: DType, dims: &[usize], values: &[f64]) -> View {
        let t = Tensor::from_nums(dtype, dims.to_vec(), values.iter().map(|&v| Num::F(v)));
        let at = self.0.len().next_multiple_of(64);
        self.0.resize(at, 0);
        self.0.extend_from_slice(&t.bytes);
        View::contiguous_at(dtype, dims.to_vec(), at)
    }

    fn zeros(&mut self, dtype: DType, dims: &[usize]) -> View {
        let n: usize = dims.iter().product();
        self.put(dtype, dims, &vec![0.0; n])
    }
}

fn values(mem: &Flat, v: &View) -> Vec<f64> {
    v.gather(mem).unwrap().nums().map(Num::f64).collect()
}

/// Deterministic values in [-1, 1).
fn noise(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// A problem in BNSD: `B = 2`, `N = 2` query heads over one key head,
/// `S0 = 3`, `S1 = 4`, `D = 5`, `D2 = 3`.
#[derive(Clone)]
struct Problem {
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    spec: Spec,
    mask: Option<(Vec<usize>, Vec<f64>)>,
    drop: Option<Vec<u8>>,
}

const B: usize = 2;
const N: usize = 2;
const NK: usize = 1;
const S0: usize = 3;
const S1: usize = 4;
const D: usize = 5;
const D2: usize = 3;

fn problem() -> Problem {
    Problem {
        q: noise(B * N * S0 * D, 1),
        k: noise(B * NK * S1 * D, 2),
        v: noise(B * NK * S1 * D2, 3),
        spec: Spec {
            layout: Layout::Bnsd,
            heads: N,
            scale: 0.7,
            keep_prob: 1.0,
            pre_tokens: 2_147_483_647,
            next_tokens: 2_147_483_647,
            sparse_mode: 0,
        },
        mask: None,
        drop: None,
    }
}

/// The attention by its definition, in f64 (BNSD).
fn reference(p: &Problem) -> Vec<f64> {
    let mut out = vec![0.0; B * N * S0 * D2];
    for b in 0..B {
        for n in 0..N {
            let kv = n / (N / NK);
            for i in 0..S0 {
                let masked = |j: usize| {
                    let (i, j) = (i as i64, j as i64);
                    match p.spec.sparse_mode {
                        2 => j > i,
                        3 => j > i + (S1 - S0) as i64,
                        _ => {
                            let by_mask = p.mask.as_ref().is_some_and(|(dims, m)| {
                                // [S0, S1] or [B, N, S0, S1] masks only.
                                let at = if dims.len() == 2 {
                                    i as usize * S1 + j as usize
                                } else {
                                    ((b * N + n) * S0 + i as usize) * S1 + j as usize
                                };
                                m[at] != 0.0
                            });
                            by_mask
                                || p.spec.sparse_mode == 0
                                    && (j - i > p.spec.next_tokens || i - j > p.spec.pre_tokens)
                        }
                    }
                };
                let s: Vec<f64> = (0..S1)
                    .map(|j| {
                        p.spec.scale
                            * (0..D)
                                .map(|d| {
                                    p.q[((b * N + n) * S0 + i) * D + d]
                                        * p.k[((b * NK + kv) * S1 + j) * D + d]
                                })
                                .sum::<f64>()
                    })
                    .collect();
                let max = (0..S1)
                    .filter(|&j| !masked(j))
                    .map(|j| s[j])
                    .fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = (0..S1)
                    .map(|j| if masked(j) { 0.0 } else { (s[j] - max).exp() })
                    .collect();
                let sum: f64 = e.iter().sum();
                for (j, &ej) in e.iter().enumerate() {
                    let idx = ((b * N + n) * S0 + i) * S1 + j;
                    let z = match &p.drop {
                        Some(bits) if bits[idx / 8] >> (idx % 8) & 1 == 0 => 0.0,
                        Some(_) => 1.0 / p.spec.keep_prob,
                        None => 1.0,
                    };
                    for c in 0..D2 {
                        let w = if sum > 0.0 { ej / sum * z } else { 0.0 };
                        out[((b * N + n) * S0 + i) * D2 + c] +=
                            w * p.v[((b * NK + kv) * S1 + j) * D2 + c];
                    }
                }
            }
        }
    }
    out
}

/// Runs the forward of `p` (in `dtype`); the attention and the two
/// statistics.
fn forward(p: &Problem, dtype: DType) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut a = Arena::default();
    let q = a.put(dtype, &[B, N, S0, D], &p.q);
    let k = a.put(dtype, &[B, NK, S1, D], &p.k);
    let v = a.put(dtype, &[B, NK, S1, D2], &p.v);
    let mask = p.mask.as_ref().map(|(dims, m)| a.put(DType::Bool, dims, m));
    let drop = p.drop.as_ref().map(|bits| {
        let n = bits.len();
        a.put(
            DType::U8,
            &[n],
            &bits.iter().map(|&x| f64::from(x)).collect::<Vec<_>>(),
        )
    });
    let out = a.zeros(dtype, &[B, N, S0, D2]);
    let max = a.zeros(DType::F32, &[B, N, S0, 8]);
    let sum = a.zeros(DType::F32, &[B, N, S0, 8]);
    let att = Attention {
        spec: p.spec,
        query: q,
        key: k,
        value: v,
        atten_mask: mask,
        drop_mask: drop,
        pass: Pass::Forward {
            softmax_max: max.clone(),
            softmax_sum: sum.clone(),
        },
    };
    let plan = Plan::new(
        "aclnnFlashAttentionScore",
        Kind::Attention(Box::new(att)),
        vec![],
        out.clone(),
    )
    .unwrap();
    let mem = Flat(Mutex::new(a.0));
    plan.run(&mem).unwrap();
    (values(&mem, &out), values(&mem, &max), values(&mem, &sum))
}

fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: {g} against {w}"
        );
    }
}

#[test]
fn the_forward_is_the_definition_in_every_type_and_mode() {
    for (dtype, tol) in [(DType::F32, 1e-5), (DType::F16, 4e-3), (DType::Bf16, 3e-2)] {
        for mode in [0, 2, 3] {
            let mut p = problem();
            p.spec.sparse_mode = mode;
            let (out, max, sum) = forward(&p, dtype);
            close(&out, &reference(&p), tol);
            // The statistics repeat each row's value 8 times.
            assert!(max.chunks(8).all(|c| c.iter().all(|&x| x == c[0])));
            assert!(sum.chunks(8).all(|c| c[0] >= 1.0 - 1e-6));
        }
    }
}

#[test]
fn masks_bands_and_dropout_follow_the_npus_conventions() {
    // A mask of [S0, S1] (not zero masks), and one of [B, N, S0, S1].
    let mut p = problem();
    let m: Vec<f64> = (0..S0 * S1)
        .map(|x| f64::from(u8::from(x % 3 == 1)))
        .collect();
    p.mask = Some((vec![S0, S1], m));
    close(&forward(&p, DType::F32).0, &reference(&p), 1e-5);
    let m: Vec<f64> = (0..B * N * S0 * S1)
        .map(|x| f64::from(u8::from(x % 5 == 2)))
        .collect();
    p.mask = Some((vec![B, N, S0, S1], m));
    close(&forward(&p, DType::F32).0, &reference(&p), 1e-5);
    // A band: one token back, none ahead.
    let mut p = problem();
    (p.spec.pre_tokens, p.spec.next_tokens) = (1, 0);
    close(&forward(&p, DType::F32).0, &reference(&p), 1e-5);
    // Dropout with a bit mask.
    let mut p = problem();
    p.spec.keep_prob = 0.6;
    p.drop = Some(
        (0..(B * N * S0 * S1).div_ceil(8))
            .map(|x| (x as u8).wrapping_mul(0x5B) ^ 0xA6)
            .collect(),
    );
    close(&forward(&p, DType::F32).0, &reference(&p), 1e-5);
}

#[test]
fn a_row_with_every_column_masked_is_zero() {
    let mut p = problem();
    let m: Vec<f64> = (0..S0 * S1).map(|x| f64::from(u8::from(x < S1))).collect();
    p.mask = Some((vec![S0, S1], m));
    let (out, _, sum) = forward(&p, DType::F32);
    assert!(out[..D2].iter().all(|&x| x == 0.0));
    assert_eq!(sum[0], 0.0);
    close(&out, &reference(&p), 1e-5);
}

/// The gradients of `loss = Σ attention ∘ g` by the backward.
fn backward(p: &Problem, g: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (o, max, sum) = forward(p, DType::F32);
    let mut a = Arena::default();
    let q = a.put(DType::F32, &[B, N, S0, D], &p.q);
    let k = a.put(DType::F32, &[B, NK, S1, D], &p.k);
    let v = a.put(DType::F32, &[B, NK, S1, D2], &p.v);
    let dy = a.put(DType::F32, &[B, N, S0, D2], g);
    let att_in = a.put(DType::F32, &[B, N, S0, D2], &o);
    let max = a.put(DType::F32, &[B, N, S0, 8], &max);
    let sum = a.put(DType::F32, &[B, N, S0, 8], &sum);
    let (dq, dk, dv) = (
        a.zeros(DType::F32, &[B, N, S0, D]),
        a.zeros(DType::F32, &[B, NK, S1, D]),
        a.zeros(DType::F32, &[B, NK, S1, D2]),
    );
    let att = Attention {
        spec: p.spec,
        query: q,
        key: k,
        value: v,
        atten_mask: None,
        drop_mask: None,
        pass: Pass::Backward {
            dy,
            softmax_max: max,
            softmax_sum: sum,
            attention: att_in,
            dk: dk.clone(),
            dv: dv.clone(),
        },
    };
    let plan = Plan::new(
        "aclnnFlashAttentionScoreGrad",
        Kind::Attention(Box::new(att)),
        vec![],
        dq.clone(),
    )
    .unwrap();
    let mem = Flat(Mutex::new(a.0));
    plan.run(&mem).unwrap();
    (values(&mem, &dq), values(&mem, &dk), values(&mem, &dv))
}

#[test]
fn gradients_match_finite_differences_of_the_forward() {
    for mode in [0, 2] {
        let mut p = problem();
        p.spec.sparse_mode = mode;
        let g = noise(B * N * S0 * D2, 9);
        let loss = |p: &Problem| -> f64 {
            forward(p, DType::F32)
                .0
                .iter()
                .zip(&g)
                .map(|(o, g)| o * g)
                .sum()
        };
        let (dq, dk, dv) = backward(&p, &g);
        let eps = 1e-2;
        let check = |grads: &[f64], pick: &dyn Fn(&mut Problem) -> &mut Vec<f64>| {
            for (i, &got) in grads.iter().enumerate() {
                let (mut up, mut down) = (p.clone(), p.clone());
                pick(&mut up)[i] += eps;
                pick(&mut down)[i] -= eps;
                let want = (loss(&up) - loss(&down)) / (2.0 * eps);
                assert!(
                    (got - want).abs() < 2e-3,
                    "mode {mode}, element {i}: {got} against {want}"
                );
            }
        };
        check(&dq, &|p| &mut p.q);
        check(&dk, &|p| &mut p.k);
        check(&dv, &|p| &mut p.v);
    }
}

#[test]
fn layouts_hold_the_same_heads() {
    // The problem in BSH and BSND: the same attention, laid out so.
    let p = problem();
    let want = reference(&p);
    let to = |src: &[f64], from: Shape, layout: Layout| -> Vec<f64> {
        let mut out = vec![0.0; src.len()];
        for b in 0..from.b {
            for n in 0..from.n {
                for i in 0..from.s {
                    for d in 0..from.d {
                        out[layout.at(from, b, n, i, d)] = src[Layout::Bnsd.at(from, b, n, i, d)];
                    }
                }
            }
        }
        out
    };
    let (qs, ks, vs) = (
        Shape {
            b: B,
            n: N,
            s: S0,
            d: D,
        },
        Shape {
            b: B,
            n: NK,
            s: S1,
            d: D,
        },
        Shape {
            b: B,
            n: NK,
            s: S1,
            d: D2,
        },
    );
    for layout in [Layout::Bsh, Layout::Sbh, Layout::Bsnd] {
        let mut a = Arena::default();
        let q = a.put(DType::F32, &layout.dims(qs), &to(&p.q, qs, layout));
        let k = a.put(DType::F32, &layout.dims(ks), &to(&p.k, ks, layout));
        let v = a.put(DType::F32, &layout.dims(vs), &to(&p.v, vs, layout));
        let os = Shape { d: D2, ..qs };
        let out = a.zeros(DType::F32, &layout.dims(os));
        let stats = [B, N, S0, 8];
        let (max, sum) = (a.zeros(DType::F32, &stats), a.zeros(DType::F32, &stats));
        let att = Attention {
            spec: Spec { layout, ..p.spec },
            query: q,
            key: k,
            value: v,
            atten_mask: None,
            drop_mask: None,
            pass: Pass::Forward {
                softmax_max: max,
                softmax_sum: sum,
            },
        };
        let plan = Plan::new(
            "aclnnFlashAttentionScore",
            Kind::Attention(Box::new(att)),
            vec![],
            out.clone(),
        )
        .unwrap();
        let mem = Flat(Mutex::new(a.0));
        plan.run(&mem).unwrap();
        close(&values(&mem, &out), &to(&want, os, layout), 1e-5);
    }
}

#[test]
fn what_is_not_emulated_or_does_not_fit_is_refused() {
    let p = problem();
    let mut a = Arena::default();
    let q = a.put(DType::F32, &[B, N, S0, D], &p.q);
    let k = a.put(DType::F32, &[B, NK, S1, D], &p.k);
    let v = a.put(DType::F32, &[B, NK, S1, D2], &p.v);
    let out = a.zeros(DType::F32, &[B, N, S0, D2]);
    let stats = a.zeros(DType::F32, &[B, N, S0, 8]);
    let base = Attention {
        spec: p.spec,
        query: q.clone(),
        key: k,
        value: v,
        atten_mask: None,
        drop_mask: None,
        pass: Pass::Forward {
            softmax_max: stats.clone(),
            softmax_sum: stats.clone(),
        },
    };
    let plan = |a: Attention, out: &View| {
        Plan::new(
            "aclnnFlashAttentionScore",
            Kind::Attention(Box::new(a)),
            vec![],
            out.clone(),
        )
    };
    assert!(plan(base.clone(), &out).is_ok());
    let bad = [
        Attention {
            spec: Spec { heads: 3, ..p.spec },
            ..base.clone()
        },
        Attention {
            spec: Spec {
                sparse_mode: 4,
                ..p.spec
            },
            ..base.clone()
        },
        Attention {
            spec: Spec {
                keep_prob: 0.9,
                ..p.spec
            },
            ..base.clone()
        },
        Attention {
            spec: Spec {
                keep_prob: 1.5,
                ..p.spec
            },
            ..base.clone()
        },
        Attention {
            query: View::contiguous_at(DType::F64, q.dims.clone(), 0),
            ..base.clone()
        },
        Attention {
            query: View::contiguous_at(DType::F32, vec![B, N, S0], 0),
            ..base.clone()
        },
        Attention {
            atten_mask: Some(View::contiguous_at(DType::Bool, vec![S0, S1 + 1], 0)),
            ..base.clone()
        },
        Attention {
            atten_mask: Some(View::contiguous_at(DType::F32, vec![S0, S1], 0)),
            ..base.clone()
        },
        Attention {
            pass: Pass::Forward {
                softmax_max: View::contiguous_at(DType::F32, vec![B, N, S0], 0),
                softmax_sum: stats.clone(),
            },
            ..base.clone()
        },
    ];
    for (i, a) in bad.into_iter().enumerate() {
        assert_eq!(
            plan(a, &out).err(),
            Some(AclError::INVALID_PARAM),
            "case {i}"
        );
    }
    // An output of another shape.
    let wrong = View::contiguous_at(DType::F32, vec![B, N, S0, D], 0);
    assert_eq!(plan(base, &wrong).err(), Some(AclError::INVALID_PARAM));
    assert_eq!(Layout::parse("TND"), None);
    assert_eq!(Layout::parse("BSND"), Some(Layout::Bsnd));
}
