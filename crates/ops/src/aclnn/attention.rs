//! Fused attention (`aclnnFlashAttentionScore` and its gradient), what
//! torch_npu's `scaled_dot_product_attention` and `npu_fusion_attention`
//! launch: per batch and head, `softmax(scale · Q·Kᵀ + mask)`, dropped out
//! with a bit mask, times `V`; the forward also hands back each row's
//! maximum and sum of exponentials (`softmax_max`, `softmax_sum`, as
//! float32 `[B, N, S0, 8]`, the value repeated in the 8), from which the
//! backward recomputes the probabilities, as the NPU's kernel does.
//!
//! Computed in float32 for float32, float16 and bfloat16 inputs (the
//! products through [`crate::linalg`]), each output rounded once to its
//! type. The layouts `BSH`, `SBH`, `BNSD` and `BSND` are taken, with
//! grouped key and value heads (`N` a multiple of the key's heads); the
//! sparse modes 0 (the mask as given, and the band `preTokens` /
//! `nextTokens`), 1 (the mask as given), 2 (causal from the top left) and
//! 3 (causal from the bottom right). A mask element that is not zero
//! masks (the NPU's convention, the opposite of torch's boolean masks,
//! which torch_npu inverts). What is not emulated is refused with
//! `ACLNN_ERR_PARAM_INVALID`: the varlen layout `TND`, a positional bias
//! (`pse`), a padding mask, the sparse modes from 4. A row every element
//! of which is masked gives zeros (its maximum and sum are written 0);
//! UNCONFIRMED against an NPU, where such rows are outside the
//! operator's contract.

use aclmem_core::AclError;

use self::compute::Context;
use super::View;
use super::memory::Memory;
use crate::tensor::{DType, Num, Tensor};

/// How a tensor's dimensions hold batch, heads, sequence and head size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `[B, S, N·D]`.
    Bsh,
    /// `[S, B, N·D]`.
    Sbh,
    /// `[B, N, S, D]`.
    Bnsd,
    /// `[B, S, N, D]`.
    Bsnd,
}

/// Batch, heads, sequence length and head size of one tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    b: usize,
    n: usize,
    s: usize,
    d: usize,
}

impl Layout {
    /// From `inputLayout` (`None`: another, `TND` included).
    pub fn parse(text: &str) -> Option<Layout> {
        Some(match text {
            "BSH" => Layout::Bsh,
            "SBH" => Layout::Sbh,
            "BNSD" => Layout::Bnsd,
            "BSND" => Layout::Bsnd,
            _ => return None,
        })
    }

    /// The shape of `dims`; `d` is the head size for the fused layouts
    /// (`BSH`, `SBH`), which cannot tell heads from head size.
    fn shape(self, dims: &[usize], d: Option<usize>) -> Option<Shape> {
        match (self, dims) {
            (Layout::Bnsd, &[b, n, s, d]) => Some(Shape { b, n, s, d }),
            (Layout::Bsnd, &[b, s, n, d]) => Some(Shape { b, n, s, d }),
            (Layout::Bsh | Layout::Sbh, &[x, y, h]) => {
                let d = d.filter(|&d| d > 0 && h % d == 0)?;
                let (b, s) = if self == Layout::Bsh { (x, y) } else { (y, x) };
                Some(Shape { b, n: h / d, s, d })
            }
            _ => None,
        }
    }

    /// The dimensions of a tensor of `shape`.
    fn dims(self, s: Shape) -> Vec<usize> {
        match self {
            Layout::Bnsd => vec![s.b, s.n, s.s, s.d],
            Layout::Bsnd => vec![s.b, s.s, s.n, s.d],
            Layout::Bsh => vec![s.b, s.s, s.n * s.d],
            Layout::Sbh => vec![s.s, s.b, s.n * s.d],
        }
    }

    /// Where element `(b, n, i, d)` of a contiguous tensor of `s` is.
    fn at(self, s: Shape, b: usize, n: usize, i: usize, d: usize) -> usize {
        match self {
            Layout::Bnsd => ((b * s.n + n) * s.s + i) * s.d + d,
            Layout::Bsnd => ((b * s.s + i) * s.n + n) * s.d + d,
            Layout::Bsh => (b * s.s + i) * s.n * s.d + n * s.d + d,
            Layout::Sbh => (i * s.b + b) * s.n * s.d + n * s.d + d,
        }
    }
}

/// The attributes of a fused attention call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    /// `inputLayout`.
    pub layout: Layout,
    /// `headNum`: the query's heads.
    pub heads: usize,
    /// `scaleValue`.
    pub scale: f64,
    /// `keepProb`: the probability of keeping an element of the softmax.
    pub keep_prob: f64,
    /// `preTokens`: how far back of the diagonal a row sees (sparse mode 0).
    pub pre_tokens: i64,
    /// `nextTokens`: how far past the diagonal a row sees (sparse mode 0).
    pub next_tokens: i64,
    /// `sparseMode`.
    pub sparse_mode: i64,
}

/// The pass and its own tensors.
#[derive(Debug, Clone, PartialEq)]
// The backward holds more views than the forward; a pass lives boxed in
// its plan, so the difference costs nothing worth an indirection.
#[allow(clippy::large_enum_variant)]
pub enum Pass {
    /// The forward: the attention is the plan's output; each row's maximum
    /// and sum of exponentials go here.
    Forward {
        /// `softmaxMaxOut`, float32 `[B, N, S0, 8]`.
        softmax_max: View,
        /// `softmaxSumOut`, float32 `[B, N, S0, 8]`.
        softmax_sum: View,
    },
    /// The backward: the query's gradient is the plan's output.
    Backward {
        /// `dy`: the attention's gradient.
        dy: View,
        /// The forward's `softmax_max`.
        softmax_max: View,
        /// The forward's `softmax_sum`.
        softmax_sum: View,
        /// The forward's attention.
        attention: View,
        /// `dkOut`.
        dk: View,
        /// `dvOut`.
        dv: View,
    },
}

/// One fused attention call.
#[derive(Debug, Clone, PartialEq)]
pub struct Attention {
    /// Its attributes.
    pub spec: Spec,
    /// `query`.
    pub query: View,
    /// `key`.
    pub key: View,
    /// `value`.
    pub value: View,
    /// `attenMaskOptional` (bool or uint8; not zero masks).
    pub atten_mask: Option<View>,
    /// `dropMaskOptional`: a bit per element of `[B, N, S0, S1]` (element
    /// `e` in bit `e % 8` of byte `e / 8`, 1 kept).
    pub drop_mask: Option<View>,
    /// Forward or backward.
    pub pass: Pass,
}

/// The shapes of a call: the query's, the key's and the value's.
struct Shapes {
    q: Shape,
    k: Shape,
    v: Shape,
}

fn refuse<T>() -> Result<T, AclError> {
    Err(AclError::INVALID_PARAM)
}

impl Attention {
    /// Every view the call reads or writes (for the stream's records).
    pub fn views(&self) -> Vec<View> {
        let mut all = vec![self.query.clone(), self.key.clone(), self.value.clone()];
        all.extend(self.atten_mask.iter().cloned());
        all.extend(self.drop_mask.iter().cloned());
        match &self.pass {
            Pass::Forward {
                softmax_max,
                softmax_sum,
            } => all.extend([softmax_max.clone(), softmax_sum.clone()]),
            Pass::Backward {
                dy,
                softmax_max,
                softmax_sum,
                attention,
                dk,
                dv,
            } => all.extend(
                [dy, softmax_max, softmax_sum, attention, dk, dv]
                    .into_iter()
                    .cloned(),
            ),
        }
        all
    }

    /// Checks the call against `out` (the attention, or the query's
    /// gradient): `ACLNN_ERR_PARAM_INVALID` for what does not fit.
    pub fn check(&self, out: &View) -> Result<(), AclError> {
        let sh = self.shapes()?;
        let dtype = self.query.dtype;
        let layout = self.spec.layout;
        if !matches!(dtype, DType::F32 | DType::F16 | DType::Bf16)
            || self.key.dtype != dtype
            || self.value.dtype != dtype
            || out.dtype != dtype
        {
            return refuse();
        }
        if !(0.0..=1.0).contains(&self.spec.keep_prob) || !(0..=3).contains(&self.spec.sparse_mode)
        {
            return refuse();
        }
        let out_shape = Shape { d: sh.v.d, ..sh.q };
        let stats = vec![sh.q.b, sh.q.n, sh.q.s, 8];
        let is_stats = |v: &View| v.dtype == DType::F32 && v.dims == stats;
        match &self.pass {
            Pass::Forward {
                softmax_max,
                softmax_sum,
            } => {
                if out.dims != layout.dims(out_shape)
                    || !is_stats(softmax_max)
                    || !is_stats(softmax_sum)
                {
                    return refuse();
                }
            }
            Pass::Backward {
                dy,
                softmax_max,
                softmax_sum,
                attention,
                dk,
                dv,
            } => {
                let same = |v: &View, like: &View| v.dtype == dtype && v.dims == like.dims;
                let dy_dims = layout.dims(out_shape);
                if dy.dims != dy_dims
                    || attention.dims != dy_dims
                    || dy.dtype != dtype
                    || attention.dtype != dtype
                    || !same(out, &self.query)
                    || !same(dk, &self.key)
                    || !same(dv, &self.value)
                    || !is_stats(softmax_max)
                    || !is_stats(softmax_sum)
                {
                    return refuse();
                }
            }
        }
        if let Some(m) = &self.atten_mask {
            let masks = matches!(m.dtype, DType::Bool | DType::U8);
            // The causal modes take the NPU's compressed mask, which they
            // do not read; the others, one that broadcasts.
            if !masks || self.spec.sparse_mode < 2 && mask_strides(m, &sh).is_none() {
                return refuse();
            }
        }
        if self.spec.keep_prob < 1.0 {
            let bits = sh.q.b * sh.q.n * sh.q.s * sh.k.s;
            match &self.drop_mask {
                Some(m) if m.dtype.size() == 1 && m.numel() >= bits.div_ceil(8) => {}
                _ if self.spec.keep_prob == 0.0 => {}
                _ => return refuse(),
            }
        }
        Ok(())
    }

    fn shapes(&self) -> Result<Shapes, AclError> {
        let layout = self.spec.layout;
        let heads = self.spec.heads;
        // The fused layouts: the head size from the query and its heads.
        let d = match self.query.dims.as_slice() {
            &[_, _, h] if heads > 0 && h % heads == 0 => Some(h / heads),
            _ => None,
        };
        let q = layout
            .shape(&self.query.dims, d)
            .ok_or(AclError::INVALID_PARAM)?;
        let k = layout
            .shape(&self.key.dims, d)
            .ok_or(AclError::INVALID_PARAM)?;
        // The value's head size may differ: its heads are the key's.
        let dv = match self.value.dims.as_slice() {
            &[_, _, h] if k.n > 0 && h % k.n == 0 => Some(h / k.n),
            _ => None,
        };
        let v = layout
            .shape(&self.value.dims, dv)
            .ok_or(AclError::INVALID_PARAM)?;
        let fits = q.n == heads
            && k.n > 0
            && q.n % k.n == 0
            && k.b == q.b
            && k.d == q.d
            && (v.b, v.n, v.s) == (k.b, k.n, k.s);
        if !fits {
            return refuse();
        }
        Ok(Shapes { q, k, v })
    }

    /// Runs the call, `out` being the attention or the query's gradient.
    pub fn run(&self, out: &View, mem: &dyn Memory) -> Result<(), AclError> {
        let sh = self.shapes()?;
        let floats = |v: &View| -> Result<Vec<f32>, AclError> {
            Ok(v.gather(mem)?.nums().map(|n| n.f64() as f32).collect())
        };
        let (q, k, v) = (
            floats(&self.query)?,
            floats(&self.key)?,
            floats(&self.value)?,
        );
        let mask = match &self.atten_mask {
            Some(m) if self.spec.sparse_mode < 2 => {
                Some((m.gather(mem)?.bytes, mask_strides(m, &sh)))
            }
            _ => None,
        };
        let drop = match &self.drop_mask {
            Some(m) if self.spec.keep_prob < 1.0 => Some(m.gather(mem)?.bytes),
            _ => None,
        };
        let ctx = Context {
            spec: self.spec,
            sh: &sh,
            q: &q,
            k: &k,
            v: &v,
            mask: mask
                .as_ref()
                .map(|(b, s)| (b.as_slice(), s.unwrap_or([0; 4]))),
            drop: drop.as_deref(),
        };
        match &self.pass {
            Pass::Forward {
                softmax_max,
                softmax_sum,
            } => {
                let (o, maxes, sums) = ctx.forward()?;
                write(out, mem, &o)?;
                write(softmax_max, mem, &spread(&maxes))?;
                write(softmax_sum, mem, &spread(&sums))
            }
            Pass::Backward {
                dy,
                softmax_max,
                softmax_sum,
                attention,
                dk,
                dv,
            } => {
                let first = |v: &View| -> Result<Vec<f32>, AclError> {
                    Ok(floats(v)?.chunks(8).map(|c| c[0]).collect())
                };
                let (dq_, dk_, dv_) = ctx.backward(
                    &floats(dy)?,
                    &floats(attention)?,
                    &first(softmax_max)?,
                    &first(softmax_sum)?,
                )?;
                write(out, mem, &dq_)?;
                write(dk, mem, &dk_)?;
                write(dv, mem, &dv_)
            }
        }
    }
}

/// Each value 8 times (the statistics' last dimension).
fn spread(values: &[f32]) -> Vec<f32> {
    values.iter().flat_map(|&v| [v; 8]).collect()
}

/// `values` (contiguous, in `view`'s order) written into `view`, rounded
/// once to its type.
fn write(view: &View, mem: &dyn Memory, values: &[f32]) -> Result<(), AclError> {
    let t = Tensor::from_nums(
        view.dtype,
        view.dims.clone(),
        values.iter().map(|&v| Num::F(f64::from(v))),
    );
    view.scatter(mem, &t.bytes)
}

/// The strides (in elements, 0 where it broadcasts) of a mask of 2 to 4
/// dimensions over `[B, N, S0, S1]`; `None` when it does not broadcast.
fn mask_strides(m: &View, sh: &Shapes) -> Option<[usize; 4]> {
    let target = [sh.q.b, sh.q.n, sh.q.s, sh.k.s];
    let r = m.dims.len();
    if !(2..=4).contains(&r) {
        return None;
    }
    let mut strides = [0usize; 4];
    let mut step = 1;
    for i in (0..r).rev() {
        let t = target[4 - r + i];
        match m.dims[i] {
            d if d == t => strides[4 - r + i] = step,
            1 => {}
            _ => return None,
        }
        step *= m.dims[i];
    }
    Some(strides)
}

mod compute;
#[cfg(test)]
mod tests;
