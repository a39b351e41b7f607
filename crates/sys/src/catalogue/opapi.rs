//! The operator API (`aclnn*`): the objects of `libnnopbase.so` and the
//! operators of `libopapi.so` the emulator carries out, appended to the
//! framework functions by
//! [`with_framework_functions!`](crate::with_framework_functions) after
//! the memory chapter (one list for every consumer). Prototypes are CANN's
//! operator headers (`aclnn/acl_meta.h`, `aclnn_add.h`, `aclnn_mul.h`,
//! `aclnn_matmul.h`, ...; docs/operators.md).

/// The operator API's entries after `$rest`, handed to `$callback` (see
/// [`with_framework_functions!`](crate::with_framework_functions)).
#[doc(hidden)]
#[macro_export]
macro_rules! __with_operator_api {
    ($callback:ident; $($rest:tt)*) => {
        $crate::__with_optimizer_api! { $callback;
            $($rest)*
            aclCreateTensor in NnOpBase: Emulated -> Pointer =
                "aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride, int64_t offset, aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData)";
            aclCreateScalar in NnOpBase: Emulated -> Pointer =
                "aclScalar *aclCreateScalar(void *value, aclDataType dataType)";
            aclCreateIntArray in NnOpBase: Emulated -> Pointer =
                "aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)";
            aclCreateFloatArray in NnOpBase: Emulated -> Pointer =
                "aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size)";
            aclCreateBoolArray in NnOpBase: Emulated -> Pointer =
                "aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size)";
            aclCreateTensorList in NnOpBase: Emulated -> Pointer =
                "aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)";
            aclCreateScalarList in NnOpBase: Emulated -> Pointer =
                "aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size)";
            aclDestroyTensor in NnOpBase: Emulated -> Code =
                "aclnnStatus aclDestroyTensor(const aclTensor *tensor)";
            aclDestroyScalar in NnOpBase: Emulated -> Code =
                "aclnnStatus aclDestroyScalar(const aclScalar *scalar)";
            aclDestroyIntArray in NnOpBase: Emulated -> Code =
                "aclnnStatus aclDestroyIntArray(const aclIntArray *intArray)";
            aclDestroyFloatArray in NnOpBase: Emulated -> Code =
                "aclnnStatus aclDestroyFloatArray(const aclFloatArray *floatArray)";
            aclDestroyBoolArray in NnOpBase: Emulated -> Code =
                "aclnnStatus aclDestroyBoolArray(const aclBoolArray *boolArray)";
            aclDestroyTensorList in NnOpBase: Emulated -> Code =
                "aclnnStatus aclDestroyTensorList(const aclTensorList *tensorList)";
            aclDestroyScalarList in NnOpBase: Emulated -> Code =
                "aclnnStatus aclDestroyScalarList(const aclScalarList *scalarList)";
            aclDestroyAclOpExecutor in NnOpBase: Emulated -> Code =
                "aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)";
            aclnnAddGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAdd in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnAddsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAdds in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceAddGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceAdd in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceAddsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other, const aclScalar *alpha, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceAdds in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnSubGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSubGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnSub in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSub(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnSubsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSubsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnSubs in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSubs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceSubGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSubGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceSub in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSub(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceSubsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSubsGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other, const aclScalar *alpha, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceSubs in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSubs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMulGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMul in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMulsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMuls in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceMulGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceMulGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceMul in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceMulsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceMuls in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnDivGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnDivGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnDiv in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnDiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnDivsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnDivsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnDivs in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnDivs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceDivGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceDivGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceDiv in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceDiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceDivsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceDivsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceDivs in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceDivs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMmGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMm in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMatmulGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMatmul in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnBatchMatMulGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnBatchMatMul in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnBatchMatMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnAddmmGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1, const aclTensor *mat2, const aclScalar *beta, const aclScalar *alpha, aclTensor *out, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAddmm in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceAddmmGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *mat1, const aclTensor *mat2, const aclScalar *beta, const aclScalar *alpha, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceAddmm in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceCopyGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceCopy in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceCopy(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnCastGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnCast in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceFillScalarGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *value, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceFillScalar in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceFillScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceZeroGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceZero in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceZero(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceOneGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceOneGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceOne in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceOne(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceNormalGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceNormalGetWorkspaceSize(const aclTensor *selfRef, float mean, float std, int64_t seed, int64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceNormal in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceNormal(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceNormalTensorGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceNormalTensorGetWorkspaceSize(const aclTensor *selfRef, float mean, float std, const aclTensor *seedTensor, const aclTensor *offsetTensor, int64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceNormalTensor in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceNormalTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceUniformGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor *selfRef, double from, double to, uint64_t seed, uint64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceUniform in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceUniform(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceUniformTensorGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceUniformTensorGetWorkspaceSize(const aclTensor *selfRef, double from, double to, const aclTensor *seedTensor, const aclTensor *offsetTensor, uint64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceUniformTensor in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceUniformTensor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnReluGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnRelu in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceReluGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceRelu in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnSigmoidGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnSigmoid in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceSigmoidGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSigmoidGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceSigmoid in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnTanhGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnTanh in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnTanh(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceTanhGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceTanhGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceTanh in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceTanh(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnGeluGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnGelu in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnGelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnNegGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnNegGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnNeg in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnNeg(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceNegGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceNegGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceNeg in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceNeg(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnAbsGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAbsGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAbs in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAbs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMaxGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMaxGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMax in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMinGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMinGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMin in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMin(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnAmaxGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAmaxGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAmax in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnAminGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAminGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAmin in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAmin(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnReduceSumGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims, bool keepDims, aclDataType dtype, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnReduceSum in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnMeanGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim, aclDataType dtype, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnMean in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnMean(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnVarMeanGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnVarMeanGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, int64_t correction, bool keepdim, aclTensor *varOut, aclTensor *meanOut, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnVarMean in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnVarMean(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnAminmaxGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAminmaxGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim, aclTensor *minOut, aclTensor *maxOut, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnAminmax in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnAminmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnSinGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSinGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnSin in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSin(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceSinGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSinGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceSin in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSin(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnCosGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnCosGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnCos in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnCos(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceCosGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceCosGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceCos in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceCos(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnExpGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnExpGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnExp in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnExp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceExpGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceExpGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceExp in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceExp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnLogGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnLogGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnLog in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnLog(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceLogGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceLogGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceLog in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceLog(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnSqrtGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSqrtGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnSqrt in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceSqrtGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSqrtGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceSqrt in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceSqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnRsqrtGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnRsqrtGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnRsqrt in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnRsqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceRsqrtGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceRsqrtGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceRsqrt in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceRsqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnReciprocalGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnReciprocalGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnReciprocal in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnReciprocal(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceReciprocalGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceReciprocalGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceReciprocal in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceReciprocal(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnLogicalNotGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnLogicalNotGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnLogicalNot in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnLogicalNot(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceLogicalNotGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceLogicalNotGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceLogicalNot in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceLogicalNot(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnFloorGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnFloorGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnFloor in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnFloor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnInplaceFloorGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceFloorGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnInplaceFloor in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnInplaceFloor(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
            aclnnSWhereGetWorkspaceSize in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor *condition, const aclTensor *self, const aclTensor *other, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)";
            aclnnSWhere in OpApi: Emulated -> OpStatus =
                "aclnnStatus aclnnSWhere(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)";
        }
    };
}
