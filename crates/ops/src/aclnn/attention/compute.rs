//! The computation of a fused attention call on host copies of its
//! tensors, in float32: per batch and head, the scores, the masked softmax
//! and its row statistics, the dropout, and the products through
//! [`crate::linalg`]; the backward from the forward's statistics.

use aclmem_core::AclError;

use super::{Shape, Shapes, Spec};
use crate::linalg::{self, View as Mat};

/// Three tensors of float32 values: the attention and two statistics, or
/// three gradients.
pub(super) type Three = (Vec<f32>, Vec<f32>, Vec<f32>);

/// What one call computes on: its inputs on the host, as float32.
pub(super) struct Context<'a> {
    pub(super) spec: Spec,
    pub(super) sh: &'a Shapes,
    pub(super) q: &'a [f32],
    pub(super) k: &'a [f32],
    pub(super) v: &'a [f32],
    pub(super) mask: Option<(&'a [u8], [usize; 4])>,
    pub(super) drop: Option<&'a [u8]>,
}

/// One head's matrices.
struct Head {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
}

impl Context<'_> {
    /// Head `n` of batch `b`'s matrices (`S × D`, row-major).
    fn head(&self, b: usize, n: usize) -> Head {
        let (qs, ks, vs) = (self.sh.q, self.sh.k, self.sh.v);
        let kv = n / (qs.n / ks.n);
        let layout = self.spec.layout;
        let take = |src: &[f32], s: Shape, n: usize| -> Vec<f32> {
            (0..s.s)
                .flat_map(|i| (0..s.d).map(move |d| (i, d)))
                .map(|(i, d)| src[layout.at(s, b, n, i, d)])
                .collect()
        };
        Head {
            q: take(self.q, qs, n),
            k: take(self.k, ks, kv),
            v: take(self.v, vs, kv),
        }
    }

    /// Whether row `i`, column `j` of head `(b, n)` is masked.
    fn masked(&self, b: usize, n: usize, i: usize, j: usize) -> bool {
        let (s0, s1) = (self.sh.q.s as i64, self.sh.k.s as i64);
        let (i64_, j64) = (i as i64, j as i64);
        match self.spec.sparse_mode {
            2 => return j64 > i64_,
            3 => return j64 > i64_ + (s1 - s0),
            _ => {}
        }
        if let Some((bytes, st)) = self.mask {
            let at = b * st[0] + n * st[1] + i * st[2] + j * st[3];
            if bytes.get(at).is_none_or(|&x| x != 0) {
                return true;
            }
        }
        self.spec.sparse_mode == 0
            && (j64 - i64_ > self.spec.next_tokens || i64_ - j64 > self.spec.pre_tokens)
    }

    /// The factor dropout gives element `(i, j)` of head `(b, n)`.
    fn kept(&self, b: usize, n: usize, i: usize, j: usize) -> f32 {
        let keep = self.spec.keep_prob;
        if keep >= 1.0 {
            return 1.0;
        }
        let Some(bits) = self.drop else {
            return 0.0;
        };
        let e = ((b * self.sh.q.n + n) * self.sh.q.s + i) * self.sh.k.s + j;
        if bits.get(e / 8).is_some_and(|&x| x >> (e % 8) & 1 == 1) {
            (1.0 / keep) as f32
        } else {
            0.0
        }
    }

    /// Head `(b, n)`'s scores `scale · Q·Kᵀ`, `S0 × S1`.
    fn scores(&self, h: &Head) -> Result<Vec<f32>, AclError> {
        let (s0, s1, d) = (self.sh.q.s, self.sh.k.s, self.sh.q.d);
        let mut s = vec![0f32; s0 * s1];
        let kt = Mat::dense(s1, d, 0).t();
        linalg::gemm(
            &mut s,
            Mat::dense(s0, s1, 0),
            &h.q,
            Mat::dense(s0, d, 0),
            &h.k,
            kt,
            false,
        )?;
        let scale = self.spec.scale as f32;
        s.iter_mut().for_each(|x| *x *= scale);
        Ok(s)
    }

    /// The attention (`[.., D2]` in the query's layout), and each row's
    /// maximum and sum of exponentials (`[B, N, S0]`).
    pub(super) fn forward(&self) -> Result<Three, AclError> {
        let (qs, s1, d2) = (self.sh.q, self.sh.k.s, self.sh.v.d);
        let os = Shape { d: d2, ..qs };
        let mut out = vec![0f32; qs.b * qs.n * qs.s * d2];
        let mut maxes = vec![0f32; qs.b * qs.n * qs.s];
        let mut sums = vec![0f32; qs.b * qs.n * qs.s];
        for b in 0..qs.b {
            for n in 0..qs.n {
                let h = self.head(b, n);
                let mut p = self.scores(&h)?;
                for i in 0..qs.s {
                    let row = &mut p[i * s1..(i + 1) * s1];
                    let live = |j: usize| !self.masked(b, n, i, j);
                    let max = (0..s1)
                        .filter(|&j| live(j))
                        .map(|j| row[j])
                        .fold(f32::NEG_INFINITY, f32::max);
                    let mut sum = 0f32;
                    for (j, x) in row.iter_mut().enumerate() {
                        *x = if live(j) { (*x - max).exp() } else { 0.0 };
                        sum += *x;
                    }
                    let r = (b * qs.n + n) * qs.s + i;
                    if sum > 0.0 {
                        (maxes[r], sums[r]) = (max, sum);
                        for (j, x) in row.iter_mut().enumerate() {
                            *x = *x / sum * self.kept(b, n, i, j);
                        }
                    }
                }
                let mut o = vec![0f32; qs.s * d2];
                let (pm, vm) = (Mat::dense(qs.s, s1, 0), Mat::dense(s1, d2, 0));
                linalg::gemm(&mut o, Mat::dense(qs.s, d2, 0), &p, pm, &h.v, vm, false)?;
                for i in 0..qs.s {
                    for d in 0..d2 {
                        out[self.spec.layout.at(os, b, n, i, d)] = o[i * d2 + d];
                    }
                }
            }
        }
        Ok((out, maxes, sums))
    }

    /// The gradients of the query, the key and the value (each in its own
    /// layout) from the attention's gradient `dy`, the attention `o` and
    /// the forward's row statistics.
    pub(super) fn backward(
        &self,
        dy: &[f32],
        o: &[f32],
        maxes: &[f32],
        sums: &[f32],
    ) -> Result<Three, AclError> {
        let Shapes {
            q: qs,
            k: ks,
            v: vs,
        } = *self.sh;
        let (s0, s1, d, d2) = (qs.s, ks.s, qs.d, vs.d);
        let layout = self.spec.layout;
        let os = Shape { d: d2, ..qs };
        let scale = self.spec.scale as f32;
        let mut dq = vec![0f32; self.q.len()];
        let mut dk = vec![0f32; self.k.len()];
        let mut dv = vec![0f32; self.v.len()];
        let group = qs.n / ks.n;
        for b in 0..qs.b {
            for kv in 0..ks.n {
                let mut dk_h = vec![0f32; s1 * d];
                let mut dv_h = vec![0f32; s1 * d2];
                for n in kv * group..(kv + 1) * group {
                    let h = self.head(b, n);
                    let take = |src: &[f32]| -> Vec<f32> {
                        (0..s0 * d2)
                            .map(|x| src[layout.at(os, b, n, x / d2, x % d2)])
                            .collect()
                    };
                    let (dy_h, o_h) = (take(dy), take(o));
                    // The probabilities, from the forward's statistics.
                    let mut p = self.scores(&h)?;
                    for i in 0..s0 {
                        let r = (b * qs.n + n) * s0 + i;
                        for j in 0..s1 {
                            let x = &mut p[i * s1 + j];
                            *x = if self.masked(b, n, i, j) || sums[r] <= 0.0 {
                                0.0
                            } else {
                                (*x - maxes[r]).exp() / sums[r]
                            };
                        }
                    }
                    // dP = dY·Vᵀ, through the dropout; dV += (P∘Z)ᵀ·dY.
                    let mut dp = vec![0f32; s0 * s1];
                    let vt = Mat::dense(s1, d2, 0).t();
                    linalg::gemm(
                        &mut dp,
                        Mat::dense(s0, s1, 0),
                        &dy_h,
                        Mat::dense(s0, d2, 0),
                        &h.v,
                        vt,
                        false,
                    )?;
                    let mut pz = p.clone();
                    for i in 0..s0 {
                        for j in 0..s1 {
                            let z = self.kept(b, n, i, j);
                            pz[i * s1 + j] *= z;
                            dp[i * s1 + j] *= z;
                        }
                    }
                    let pzt = Mat::dense(s0, s1, 0).t();
                    linalg::gemm(
                        &mut dv_h,
                        Mat::dense(s1, d2, 0),
                        &pz,
                        pzt,
                        &dy_h,
                        Mat::dense(s0, d2, 0),
                        true,
                    )?;
                    // dS = P ∘ (dP − rowsum(dY ∘ O)), scaled.
                    for i in 0..s0 {
                        let di: f32 = (0..d2).map(|c| dy_h[i * d2 + c] * o_h[i * d2 + c]).sum();
                        for j in 0..s1 {
                            let x = i * s1 + j;
                            dp[x] = p[x] * (dp[x] - di) * scale;
                        }
                    }
                    let mut dq_h = vec![0f32; s0 * d];
                    let ds = Mat::dense(s0, s1, 0);
                    linalg::gemm(
                        &mut dq_h,
                        Mat::dense(s0, d, 0),
                        &dp,
                        ds,
                        &h.k,
                        Mat::dense(s1, d, 0),
                        false,
                    )?;
                    linalg::gemm(
                        &mut dk_h,
                        Mat::dense(s1, d, 0),
                        &dp,
                        ds.t(),
                        &h.q,
                        Mat::dense(s0, d, 0),
                        true,
                    )?;
                    for i in 0..s0 {
                        for c in 0..d {
                            dq[layout.at(qs, b, n, i, c)] = dq_h[i * d + c];
                        }
                    }
                }
                for j in 0..s1 {
                    for c in 0..d {
                        dk[layout.at(ks, b, kv, j, c)] = dk_h[j * d + c];
                    }
                    for c in 0..d2 {
                        dv[layout.at(vs, b, kv, j, c)] = dv_h[j * d2 + c];
                    }
                }
            }
        }
        Ok((dq, dk, dv))
    }
}
