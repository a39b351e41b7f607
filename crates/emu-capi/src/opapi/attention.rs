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

/// The attributes, checked: a layout this library computes, a head count.
#[allow(clippy::too_many_arguments)]
fn spec(
    layout: *const c_char,
    heads: i64,
    scale: f64,
    keep_prob: f64,
    pre_tokens: i64,
    next_tokens: i64,
    sparse_mode: i64,
) -> Result<Spec, i32> {
    let layout = cptr::read_cstr(layout, 16).map_err(|_| aclmem_ops::aclnn::ERR_PARAM_NULLPTR)?;
    Ok(Spec {
        layout: Layout::parse(&layout).ok_or(ERR_PARAM_INVALID)?,
        heads: usize::try_from(heads).map_err(|_| ERR_PARAM_INVALID)?,
        scale,
        keep_prob,
        pre_tokens,
        next_tokens,
        sparse_mode,
    })
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
            let a = Attention {
                spec: spec(
                    layout,
                    heads,
                    scale,
                    keep_prob,
                    pre_tokens,
                    next_tokens,
                    sparse_mode,
                )?,
                query: tensor(query)?,
                key: tensor(key)?,
                value: tensor(value)?,
                atten_mask: optional(atten_mask)?,
                drop_mask: optional(drop_mask)?,
                pass: Pass::Forward {
                    softmax_max: tensor(softmax_max)?,
                    softmax_sum: tensor(softmax_sum)?,
                },
            };
            let kind = Kind::Attention(Box::new(a));
            checked(Plan::new(
                "aclnnFlashAttentionScore",
                kind,
                Vec::new(),
                tensor(attention)?,
            ))
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
            let a = Attention {
                spec: spec(
                    layout,
                    heads,
                    scale,
                    keep_prob,
                    pre_tokens,
                    next_tokens,
                    sparse_mode,
                )?,
                query: tensor(query)?,
                key: tensor(key)?,
                value: tensor(value)?,
                atten_mask: optional(atten_mask)?,
                drop_mask: optional(drop_mask)?,
                pass: Pass::Backward {
                    dy: tensor(dy)?,
                    softmax_max: tensor(softmax_max)?,
                    softmax_sum: tensor(softmax_sum)?,
                    attention: tensor(attention_in)?,
                    dk: tensor(dk)?,
                    dv: tensor(dv)?,
                },
            };
            let kind = Kind::Attention(Box::new(a));
            checked(Plan::new(
                "aclnnFlashAttentionScoreGrad",
                kind,
                Vec::new(),
                tensor(dq)?,
            ))
        },
    )
}
