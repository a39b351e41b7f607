//! The operator API's operators of an optimizer's step and of
//! `clip_grad_norm_` (`libopapi.so`): the list operators
//! (`aclnnForeach*`), the pointwise updates and the vector norm, appended
//! to the operator API's entries by
//! [`__with_operator_api!`](crate::__with_operator_api) (one list for
//! every consumer). Prototypes are CANN's operator headers
//! (`aclnn_foreach_*.h`, `aclnn_addcmul.h`, `aclnn_linalg_vector_norm.h`,
//! ...; docs/operators.md).

/// The optimizer's operator API entries after `$rest`, handed to
/// `$callback` (see
/// [`with_framework_functions!`](crate::with_framework_functions)).
#[doc(hidden)]
#[macro_export]
macro_rules! __with_optimizer_api {
    ($callback:ident; $($rest:tt)*) => {
        $crate::__with_attention_api! { $callback;
            $($rest)*
            aclnnForeachAddScalarV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAddScalarV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddScalarV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachSubScalarV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSubScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachSubScalarV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSubScalarV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachMulScalarV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMulScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachMulScalarV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMulScalarV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachDivScalarV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachDivScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachDivScalarV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachDivScalarV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachMaximumScalarV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMaximumScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachMaximumScalarV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMaximumScalarV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachMinimumScalarV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMinimumScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachMinimumScalarV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMinimumScalarV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachAddScalarGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddScalarGetWorkspaceSize(const aclTensorList *x, const aclTensor *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAddScalar in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachSubScalarGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSubScalarGetWorkspaceSize(const aclTensorList *x, const aclTensor *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachSubScalar in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSubScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachMulScalarGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMulScalarGetWorkspaceSize(const aclTensorList *x, const aclTensor *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachMulScalar in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMulScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachDivScalarGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachDivScalarGetWorkspaceSize(const aclTensorList *x, const aclTensor *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachDivScalar in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachDivScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachAddScalarListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddScalarListGetWorkspaceSize(const aclTensorList *x, const aclScalarList *scalars, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAddScalarList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddScalarList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachSubScalarListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSubScalarListGetWorkspaceSize(const aclTensorList *x, const aclScalarList *scalars, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachSubScalarList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSubScalarList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachMulScalarListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMulScalarListGetWorkspaceSize(const aclTensorList *x, const aclScalarList *scalars, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachMulScalarList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMulScalarList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachDivScalarListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachDivScalarListGetWorkspaceSize(const aclTensorList *x, const aclScalarList *scalars, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachDivScalarList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachDivScalarList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachAddListV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddListV2GetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2, const aclScalar *alpha, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAddListV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddListV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachSubListV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSubListV2GetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2, const aclScalar *alpha, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachSubListV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSubListV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachMulListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMulListGetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachMulList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMulList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachDivListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachDivListGetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachDivList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachDivList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachMaximumListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMaximumListGetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachMaximumList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMaximumList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachMinimumListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMinimumListGetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachMinimumList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachMinimumList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachAddcmulScalarV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddcmulScalarV2GetWorkspaceSize(const aclTensorList *x, const aclTensorList *x1, const aclTensorList *x2, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAddcmulScalarV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddcmulScalarV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachAddcdivScalarV2GetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddcdivScalarV2GetWorkspaceSize(const aclTensorList *x, const aclTensorList *x1, const aclTensorList *x2, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAddcdivScalarV2 in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddcdivScalarV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachAddcmulScalarGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddcmulScalarGetWorkspaceSize(const aclTensorList *x, const aclTensorList *x1, const aclTensorList *x2, const aclTensor *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAddcmulScalar in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddcmulScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachAddcdivScalarGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddcdivScalarGetWorkspaceSize(const aclTensorList *x, const aclTensorList *x1, const aclTensorList *x2, const aclTensor *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAddcdivScalar in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAddcdivScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachLerpScalarGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachLerpScalarGetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2, const aclScalar *weight, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachLerpScalar in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachLerpScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachLerpListGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachLerpListGetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2, const aclTensorList *weight, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachLerpList in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachLerpList(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachSqrtGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSqrtGetWorkspaceSize(const aclTensorList *x, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachSqrt in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachSqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachNegGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachNegGetWorkspaceSize(const aclTensorList *x, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachNeg in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachNeg(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachAbsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAbsGetWorkspaceSize(const aclTensorList *x, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachAbs in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachAbs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachExpGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachExpGetWorkspaceSize(const aclTensorList *x, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachExp in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachExp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachReciprocalGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachReciprocalGetWorkspaceSize(const aclTensorList *x, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachReciprocal in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachReciprocal(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnForeachNormGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachNormGetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnForeachNorm in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnForeachNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnAddcmulGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAddcmulGetWorkspaceSize(const aclTensor *self, const aclTensor *tensor1, const aclTensor *tensor2, const aclScalar *value, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAddcmul in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAddcmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceAddcmulGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAddcmulGetWorkspaceSize(aclTensor *selfRef, const aclTensor *tensor1, const aclTensor *tensor2, const aclScalar *value, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceAddcmul in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAddcmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnAddcdivGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAddcdivGetWorkspaceSize(const aclTensor *self, const aclTensor *tensor1, const aclTensor *tensor2, const aclScalar *value, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAddcdiv in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAddcdiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceAddcdivGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAddcdivGetWorkspaceSize(aclTensor *selfRef, const aclTensor *tensor1, const aclTensor *tensor2, const aclScalar *value, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceAddcdiv in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAddcdiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMaximumGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMaximumGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMaximum in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMaximum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMinimumGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMinimumGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMinimum in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMinimum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnLinalgVectorNormGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnLinalgVectorNormGetWorkspaceSize(const aclTensor *self, const aclScalar *ord, const aclIntArray *dims, bool keepDims, aclDataType dtype, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnLinalgVectorNorm in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnLinalgVectorNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
        }
    };
}
