//! The operator API's fused attention (`libopapi.so`): what torch_npu's
//! `scaled_dot_product_attention` and `npu_fusion_attention` launch,
//! appended to the operator API's entries by
//! [`__with_optimizer_api!`](crate::__with_optimizer_api) (one list for
//! every consumer). Prototypes are CANN's `aclnn_flash_attention_score.h`
//! and `aclnn_flash_attention_score_grad.h` (docs/operators.md).

/// The fused attention's operator API entries after `$rest`, handed to
/// `$callback` (see
/// [`with_framework_functions!`](crate::with_framework_functions)).
#[doc(hidden)]
#[macro_export]
macro_rules! __with_attention_api {
    ($callback:ident; $($rest:tt)*) => {
        $crate::__with_atb_api! { $callback;
            $($rest)*
            aclnnFlashAttentionScoreGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnFlashAttentionScoreGetWorkspaceSize(const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional, const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional, const aclIntArray *prefixOptional, double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnFlashAttentionScore in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnFlashAttentionScore(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnFlashAttentionScoreGradGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnFlashAttentionScoreGradGetWorkspaceSize(const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *dy, const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional, const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional, const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional, const aclIntArray *prefixOptional, double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode, const aclTensor *dqOut, const aclTensor *dkOut, const aclTensor *dvOut, const aclTensor *dpseOut, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnFlashAttentionScoreGrad in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnFlashAttentionScoreGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
        }
    };
}
