//! The operator API's fused attention: `aclnnFlashAttentionScore` and
//! `aclnnFlashAttentionScoreGrad`, what torch_npu's
//! `scaled_dot_product_attention` (on an Atlas A2/A3 SoC, with no mask, a
//! causal one or a boolean one) and `npu_fusion_attention` launch; there is
//! no `aclop` form of them. The computation is
//! `aclmem_ops::aclnn::attention`'s (docs/operators.md); here the C
//! arguments are read and checked.

use std::ffi::c_char;

use aclmem_ops::aclnn::attention::{Attention, Layout, Pass, Spec};
use aclmem_ops::aclnn::plan::{Kind, Plan};
use aclmem_ops::aclnn::{ERR_PARAM_INVALID, View};

use super::marshal::tensor;
use super::ops::{Exec, Out, T, checked, plan, runners};
use crate::cptr;

runners!(aclnnFlashAttentionScore, aclnnFlashAttentionScoreGrad);

/// An optional tensor: NULL is none.
fn optional(p: T) -> Result<Option<View>, i32> {
    if p.is_null() {
        Ok(None)
    } else {
        tensor(p).map(Some)
    }
}

/// An optional tensor the emulator does not take: NULL or empty.
fn absent(p: T) -> Result<(), i32> {
    match optional(p)? {
        Some(v) if v.numel() > 0 => Err(ERR_PARAM_INVALID),
        _ => Ok(()),
    }
}

/// What both directions take: the operands and the attributes, as the C
/// caller passed them.
struct Call {
    query: T,
    key: T,
    value: T,
    drop_mask: T,
    atten_mask: T,
    scale: f64,
    keep_prob: f64,
    pre_tokens: i64,
    next_tokens: i64,
    heads: i64,
    layout: *const c_char,
    sparse_mode: i64,
}

impl Call {
    /// The attributes, checked: a layout this library computes, a head
    /// count.
    fn spec(&self) -> Result<Spec, i32> {
        let layout =
            cptr::read_cstr(self.layout, 16).map_err(|_| aclmem_ops::aclnn::ERR_PARAM_NULLPTR)?;
        Ok(Spec {
            layout: Layout::parse(&layout).ok_or(ERR_PARAM_INVALID)?,
            heads: usize::try_from(self.heads).map_err(|_| ERR_PARAM_INVALID)?,
            scale: self.scale,
            keep_prob: self.keep_prob,
            pre_tokens: self.pre_tokens,
            next_tokens: self.next_tokens,
            sparse_mode: self.sparse_mode,
        })
    }

    /// The plan of operator `name` computing `pass` into `out`.
    fn plan(&self, name: &'static str, pass: Pass, out: T) -> Result<Plan, i32> {
        let a = Attention {
            spec: self.spec()?,
            query: tensor(self.query)?,
            key: tensor(self.key)?,
            value: tensor(self.value)?,
            atten_mask: optional(self.atten_mask)?,
            drop_mask: optional(self.drop_mask)?,
            pass,
        };
        checked(Plan::new(
            name,
            Kind::Attention(Box::new(a)),
            Vec::new(),
            tensor(out)?,
        ))
    }
}

/// `aclnnStatus aclnnFlashAttentionScoreGetWorkspaceSize(query, key,
/// value, realShiftOptional, dropMaskOptional, paddingMaskOptional,
/// attenMaskOptional, prefixOptional, double scaleValue, double keepProb,
/// int64_t preTokens, int64_t nextTokens, int64_t headNum, char
/// *inputLayout, int64_t innerPrecise, int64_t sparseMode, softmaxMaxOut,
/// softmaxSumOut, softmaxOutOut, attentionOutOut, ...)`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn aclnnFlashAttentionScoreGetWorkspaceSize(
    query: T,
    key: T,
    value: T,
    real_shift: T,
    drop_mask: T,
    padding_mask: T,
    atten_mask: T,
    _prefix: T,
    scale: f64,
    keep_prob: f64,
    pre_tokens: i64,
    next_tokens: i64,
    heads: i64,
    layout: *const c_char,
    _inner_precise: i64,
    sparse_mode: i64,
    softmax_max: T,
    softmax_sum: T,
    _softmax_out: T,
    attention: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnFlashAttentionScoreGetWorkspaceSize",
        workspace,
        executor,
        || {
            absent(real_shift)?;
            absent(padding_mask)?;
            let call = Call {
                query,
                key,
                value,
                drop_mask,
                atten_mask,
                scale,
                keep_prob,
                pre_tokens,
                next_tokens,
                heads,
                layout,
                sparse_mode,
            };
            let pass = Pass::Forward {
                softmax_max: tensor(softmax_max)?,
                softmax_sum: tensor(softmax_sum)?,
            };
            call.plan("aclnnFlashAttentionScore", pass, attention)
        },
    )
}

/// `aclnnStatus aclnnFlashAttentionScoreGradGetWorkspaceSize(query, key,
/// value, dy, pseShiftOptional, dropMaskOptional, paddingMaskOptional,
/// attenMaskOptional, softmaxMaxOptional, softmaxSumOptional,
/// softmaxInOptional, attentionInOptional, prefixOptional, double
/// scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens,
/// int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t
/// sparseMode, dqOut, dkOut, dvOut, dpseOut, ...)`. The forward's
/// statistics and attention are required here (the NPU's kernel
/// recomputes the probabilities from them).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn aclnnFlashAttentionScoreGradGetWorkspaceSize(
    query: T,
    key: T,
    value: T,
    dy: T,
    pse_shift: T,
    drop_mask: T,
    padding_mask: T,
    atten_mask: T,
    softmax_max: T,
    softmax_sum: T,
    _softmax_in: T,
    attention_in: T,
    _prefix: T,
    scale: f64,
    keep_prob: f64,
    pre_tokens: i64,
    next_tokens: i64,
    heads: i64,
    layout: *const c_char,
    _inner_precise: i64,
    sparse_mode: i64,
    dq: T,
    dk: T,
    dv: T,
    _dpse: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnFlashAttentionScoreGradGetWorkspaceSize",
        workspace,
        executor,
        || {
            absent(pse_shift)?;
            absent(padding_mask)?;
            let call = Call {
                query,
                key,
                value,
                drop_mask,
                atten_mask,
                scale,
                keep_prob,
                pre_tokens,
                next_tokens,
                heads,
                layout,
                sparse_mode,
            };
            let pass = Pass::Backward {
                dy: tensor(dy)?,
                softmax_max: tensor(softmax_max)?,
                softmax_sum: tensor(softmax_sum)?,
                attention: tensor(attention_in)?,
                dk: tensor(dk)?,
                dv: tensor(dv)?,
            };
            call.plan("aclnnFlashAttentionScoreGrad", pass, dq)
        },
    )
}
