//! The catalogue's hand-kept list of framework functions, as a macro (each
//! fact once); the operators' list is its sibling `operators.rs`. The
//! types they use and everything derived from them are in the parent
//! module.

/// Calls `$callback! { name in Library: Answer -> Returns = "prototype"; ... }`
/// with every framework function, in one fixed order (by library, then
/// name). A function that not every release of the emulated range has
/// names the first that does: `name in Library since (9, 0): ...` (its
/// major and minor number, which may be newer than every release the rules
/// know); the emulated library answers it, under an older release, as a
/// library without the symbol is answered (207000). The callback is a `macro_rules!` macro of
/// the caller's.
///
/// ```
/// macro_rules! count {
///     ($($name:ident in $lib:ident $(since ($smaj:literal, $smin:literal))?: $answer:ident -> $ret:ident = $proto:literal;)*) => {
///         [$(stringify!($name)),*].len()
///     };
/// }
/// assert_eq!(
///     aclmem_sys::with_framework_functions!(count),
///     aclmem_sys::catalogue::FRAMEWORK.len()
/// );
/// ```
#[macro_export]
macro_rules! with_framework_functions {
    ($callback:ident) => {
        $crate::__with_memory_chapter! { $callback;
            aclAppLog in AscendCl: Accepted -> Void =
                "void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)";
            aclCreateDataBuffer in AscendCl: Emulated -> Pointer =
                "aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)";
            aclCreateTensorDesc in AscendCl: Emulated -> Pointer =
                "aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format)";
            aclDestroyDataBuffer in AscendCl: Emulated -> Code =
                "aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)";
            aclDestroyTensorDesc in AscendCl: Emulated -> Void =
                "void aclDestroyTensorDesc(const aclTensorDesc *desc)";
            aclGetCannAttribute in AscendCl: Emulated -> Code =
                "aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)";
            aclGetCannAttributeList in AscendCl: Unsupported -> Code =
                "aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num)";
            aclGetDeviceCapability in AscendCl: Emulated -> Code =
                "aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value)";
            aclGetRecentErrMsg in AscendCl: Emulated -> Pointer =
                "const char *aclGetRecentErrMsg()";
            aclGetTensorDescDimV2 in AscendCl: Emulated -> Code =
                "aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize)";
            aclGetTensorDescFormat in AscendCl: Emulated -> Enum =
                "aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc)";
            aclGetTensorDescNumDims in AscendCl: Emulated -> Count =
                "size_t aclGetTensorDescNumDims(const aclTensorDesc *desc)";
            aclGetTensorDescType in AscendCl: Emulated -> Enum =
                "aclDataType aclGetTensorDescType(const aclTensorDesc *desc)";
            aclSetTensorDescName in AscendCl: Emulated -> Void =
                "void aclSetTensorDescName(aclTensorDesc *desc, const char *name)";
            aclSetTensorFormat in AscendCl: Emulated -> Code =
                "aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format)";
            aclSetTensorPlaceMent in AscendCl: Emulated -> Code =
                "aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType)";
            aclSetTensorShape in AscendCl: Emulated -> Code =
                "aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims)";
            aclmdlFinalizeDump in AscendCl: Accepted -> Code =
                "aclError aclmdlFinalizeDump()";
            aclmdlInitDump in AscendCl: Accepted -> Code =
                "aclError aclmdlInitDump()";
            aclmdlRIAddCondTask in AscendCl: Emulated -> Code =
                "aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags)";
            aclmdlRICaptureBegin in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)";
            aclmdlRICaptureEnd in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)";
            aclmdlRICaptureGetInfo in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI)";
            aclmdlRICaptureTaskGrpBegin in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream)";
            aclmdlRICaptureTaskGrpEnd in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle)";
            aclmdlRICaptureTaskUpdateBegin in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle)";
            aclmdlRICaptureTaskUpdateEnd in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream)";
            aclmdlRICaptureThreadExchangeMode in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)";
            aclmdlRICaptureToModelRIBegin in AscendCl: Emulated -> Code =
                "aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI, aclmdlRICaptureMode mode)";
            aclmdlRICondHandleCreate in AscendCl: Emulated -> Code =
                "aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue, aclmdlRICondHandleFlag flag, aclmdlRICondHandle *handle)";
            aclmdlRICondHandleGetCondPtr in AscendCl: Emulated -> Code =
                "aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t **ptr)";
            aclmdlRIDebugJsonPrint in AscendCl: Emulated -> Code =
                "aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags)";
            aclmdlRIDebugPrint in AscendCl: Emulated -> Code =
                "aclError aclmdlRIDebugPrint(aclmdlRI modelRI)";
            aclmdlRIDestroy in AscendCl: Emulated -> Code =
                "aclError aclmdlRIDestroy(aclmdlRI modelRI)";
            aclmdlRIExecuteAsync in AscendCl: Emulated -> Code =
                "aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)";
            aclmdlRIGetId in AscendCl: Emulated -> Code =
                "aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)";
            aclmdlSetDump in AscendCl: Accepted -> Code =
                "aclError aclmdlSetDump(const char *dumpCfgPath)";
            aclopCreateAttr in AscendCl: Emulated -> Pointer =
                "aclopAttr *aclopCreateAttr()";
            aclopDestroyAttr in AscendCl: Emulated -> Void =
                "void aclopDestroyAttr(const aclopAttr *attr)";
            aclopSetAttrBool in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue)";
            aclopSetAttrDataType in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue)";
            aclopSetAttrFloat in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue)";
            aclopSetAttrInt in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue)";
            aclopSetAttrListBool in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues, const uint8_t *values)";
            aclopSetAttrListFloat in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues, const float *values)";
            aclopSetAttrListInt in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues, const int64_t *values)";
            aclopSetAttrListListInt in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists, const int *numValues, const int64_t *const values[])";
            aclopSetAttrString in AscendCl: Emulated -> Code =
                "aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue)";
            aclrtBinaryGetFunction in AscendCl: Unsupported -> Code =
                "aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName, aclrtFuncHandle *funcHandle)";
            aclrtBinaryLoadFromData in AscendCl: Unsupported -> Code =
                "aclError aclrtBinaryLoadFromData(const void *data, size_t length, const aclrtBinaryLoadOptions *options, aclrtBinHandle *binHandle)";
            aclrtCheckMemType in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult, uint32_t reserve)";
            aclrtCmoAsync in AscendCl: Emulated -> Code =
                "aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream)";
            aclrtCreateEvent in AscendCl: Emulated -> Code =
                "aclError aclrtCreateEvent(aclrtEvent *event)";
            aclrtCreateEventExWithFlag in AscendCl: Emulated -> Code =
                "aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)";
            aclrtCreateEventWithFlag in AscendCl: Emulated -> Code =
                "aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)";
            aclrtCreateStreamWithConfig in AscendCl: Emulated -> Code =
                "aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)";
            aclrtCtxSetSysParamOpt in AscendCl: Emulated -> Code =
                "aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)";
            aclrtDestroyEvent in AscendCl: Emulated -> Code =
                "aclError aclrtDestroyEvent(aclrtEvent event)";
            aclrtDeviceGetUuid in AscendCl: Unsupported -> Code =
                "aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid)";
            aclrtDeviceTaskAbort in AscendCl: Unsupported -> Code =
                "aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout)";
            aclrtEventElapsedTime in AscendCl: Emulated -> Code =
                "aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)";
            aclrtEventGetTimestamp in AscendCl: Unsupported -> Code =
                "aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)";
            aclrtFreeHostWithDevSync in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtFreeHostWithDevSync(void *hostPtr)";
            aclrtFreeWithDevSync in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtFreeWithDevSync(void *devPtr)";
            aclrtGetMemcpyDescSize in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize)";
            aclrtGetDeviceInfo in AscendCl: Emulated -> Code =
                "aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value)";
            aclrtGetDeviceResLimit in AscendCl: Unsupported -> Code =
                "aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value)";
            aclrtGetDeviceUtilizationRate in AscendCl: Unsupported -> Code =
                "aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo)";
            aclrtGetErrorVerbose in AscendCl: Unsupported -> Code =
                "aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)";
            aclrtGetFunctionAddr in AscendCl: Unsupported -> Code =
                "aclError aclrtGetFunctionAddr(aclrtFuncHandle funcHandle, void **aicAddr, void **aivAddr)";
            aclrtGetHardwareSyncAddr in AscendCl: Unsupported -> Code =
                "aclError aclrtGetHardwareSyncAddr(void **addr)";
            aclrtGetLastError in AscendCl: Emulated -> Code =
                "aclError aclrtGetLastError(aclrtLastErrLevel level)";
            aclrtGetLogicDevIdByUserDevId in AscendCl: Unsupported -> Code =
                "aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId)";
            aclrtGetMemUceInfo in AscendCl: Emulated -> Code =
                "aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize, size_t *retSize)";
            aclrtGetMemUsageInfo in AscendCl: Emulated -> Code =
                "aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo, size_t inputNum, size_t *outputNum)";
            aclrtGetPrimaryCtxState in AscendCl: Unsupported -> Code =
                "aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags, int32_t *active)";
            aclrtGetResInCurrentThread in AscendCl: Unsupported -> Code =
                "aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value)";
            aclrtGetStreamOverflowSwitch in AscendCl: Emulated -> Code =
                "aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag)";
            aclrtGetStreamResLimit in AscendCl: Unsupported -> Code =
                "aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value)";
            aclrtGetSysParamOpt in AscendCl: Emulated -> Code =
                "aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)";
            aclrtHostGetDevicePointer in AscendCl: Emulated -> Code =
                "aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag)";
            aclrtHostRegister in AscendCl: Emulated -> Code =
                "aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr)";
            aclrtHostRegisterV2 in AscendCl: Emulated -> Code =
                "aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)";
            aclrtHostUnregister in AscendCl: Emulated -> Code =
                "aclError aclrtHostUnregister(void *ptr)";
            aclrtIpcGetEventHandle in AscendCl: Emulated -> Code =
                "aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle)";
            aclrtIpcOpenEventHandle in AscendCl: Emulated -> Code =
                "aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event)";
            aclrtLaunchCallback in AscendCl: Emulated -> Code =
                "aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType, aclrtStream stream)";
            aclrtLaunchHostFunc in AscendCl: Emulated -> Code =
                "aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)";
            aclrtLaunchKernelWithHostArgs in AscendCl: Unsupported -> Code =
                "aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks, aclrtStream stream, aclrtLaunchKernelCfg *cfg, void *hostArgs, size_t argsSize, aclrtPlaceHolderInfo *placeHolderArray, size_t placeHolderNum)";
            aclrtMallocCached in AscendCl: Emulated -> Code =
                "aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy)";
            aclrtMallocHostWithCfg in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg)";
            aclrtMallocWithCfg in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtMallocWithCfg(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)";
            aclrtMemFlush in AscendCl: Emulated -> Code =
                "aclError aclrtMemFlush(void *devPtr, size_t size)";
            aclrtMemInvalidate in AscendCl: Emulated -> Code =
                "aclError aclrtMemInvalidate(void *devPtr, size_t size)";
            aclrtMemUceRepair in AscendCl: Emulated -> Code =
                "aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize)";
            aclrtMemcpy2d in AscendCl: Emulated -> Code =
                "aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, aclrtMemcpyKind kind)";
            aclrtMemcpy2dAsync in AscendCl: Emulated -> Code =
                "aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, aclrtMemcpyKind kind, aclrtStream stream)";
            aclrtMemcpyAsyncWithCondition in AscendCl: Emulated -> Code =
                "aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind, aclrtStream stream)";
            aclrtMemcpyAsyncWithDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind, aclrtStream stream)";
            aclrtMemcpyAsyncWithOffset in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t dstDataOffset, const void **src, size_t count, size_t srcDataOffset, aclrtMemcpyKind kind, aclrtStream stream)";
            aclrtMemcpyBatch in AscendCl since (8, 3): Emulated -> Code =
                "aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex)";
            aclrtMemcpyBatchAsync in AscendCl since (8, 3): Emulated -> Code =
                "aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex, aclrtStream stream)";
            aclrtMemcpyBatchAsyncV2 in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, aclrtStream stream)";
            aclrtMemcpyBatchV2 in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs)";
            aclrtMemsetAsync in AscendCl: Emulated -> Code =
                "aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream)";
            aclrtMemsetD32 in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N)";
            aclrtMemsetD32Async in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value, size_t N, aclrtStream stream)";
            aclrtPeekAtLastError in AscendCl: Emulated -> Code =
                "aclError aclrtPeekAtLastError(aclrtLastErrLevel level)";
            aclrtProcessReport in AscendCl: Unsupported -> Code =
                "aclError aclrtProcessReport(int32_t timeout)";
            aclrtQueryEvent in AscendCl: Unsupported -> Code =
                "aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)";
            aclrtQueryEventStatus in AscendCl: Emulated -> Code =
                "aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)";
            aclrtQueryEventWaitStatus in AscendCl: Emulated -> Code =
                "aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status)";
            aclrtRecordEvent in AscendCl: Emulated -> Code =
                "aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)";
            aclrtReduceAsync in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count, aclrtReduceKind kind, aclDataType type, aclrtStream stream, void *reserve)";
            aclrtRepairError in AscendCl: Unsupported -> Code =
                "aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo *errorInfo)";
            aclrtResetDeviceResLimit in AscendCl: Accepted -> Code =
                "aclError aclrtResetDeviceResLimit(int32_t deviceId)";
            aclrtResetEvent in AscendCl: Emulated -> Code =
                "aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)";
            aclrtResetStreamResLimit in AscendCl: Accepted -> Code =
                "aclError aclrtResetStreamResLimit(aclrtStream stream)";
            aclrtSetDeviceResLimit in AscendCl: Accepted -> Code =
                "aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value)";
            aclrtSetDeviceSatMode in AscendCl: Accepted -> Code =
                "aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode)";
            aclrtSetMemcpyDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr, void *dstAddr, size_t count, void *config)";
            aclrtSetOpExecuteTimeOut in AscendCl: Accepted -> Code =
                "aclError aclrtSetOpExecuteTimeOut(uint32_t timeout)";
            aclrtSetOpExecuteTimeOutV2 in AscendCl: Emulated -> Code =
                "aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout)";
            aclrtSetOpWaitTimeout in AscendCl: Accepted -> Code =
                "aclError aclrtSetOpWaitTimeout(uint32_t timeout)";
            aclrtSetStreamAttribute in AscendCl: Accepted -> Code =
                "aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType, aclrtStreamAttrValue *value)";
            aclrtSetStreamFailureMode in AscendCl: Accepted -> Code =
                "aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)";
            aclrtSetStreamOverflowSwitch in AscendCl: Accepted -> Code =
                "aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag)";
            aclrtSetStreamResLimit in AscendCl: Accepted -> Code =
                "aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value)";
            aclrtSetSysParamOpt in AscendCl: Emulated -> Code =
                "aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)";
            aclrtStreamGetId in AscendCl: Unsupported -> Code =
                "aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)";
            aclrtStreamQuery in AscendCl: Emulated -> Code =
                "aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)";
            aclrtStreamWaitEvent in AscendCl: Emulated -> Code =
                "aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)";
            aclrtSubscribeReport in AscendCl: Unsupported -> Code =
                "aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)";
            aclrtSynchronizeEvent in AscendCl: Emulated -> Code =
                "aclError aclrtSynchronizeEvent(aclrtEvent event)";
            aclrtUnSubscribeReport in AscendCl: Unsupported -> Code =
                "aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)";
            aclrtUnuseStreamResInCurrentThread in AscendCl: Accepted -> Code =
                "aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream)";
            aclrtUseStreamResInCurrentThread in AscendCl: Accepted -> Code =
                "aclError aclrtUseStreamResInCurrentThread(aclrtStream stream)";
            aclrtValueWait in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtValueWait(void* devAddr, uint64_t value, uint32_t flag, aclrtStream stream)";
            aclrtValueWrite in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtValueWrite(void* devAddr, uint64_t value, uint32_t flag, aclrtStream stream)";
            aclsysGetVersionNum in AscendCl: Emulated -> Code =
                "aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)";
            aclsysGetVersionStr in AscendCl: Emulated -> Code =
                "aclError aclsysGetVersionStr(char *pkgName, char *versionStr)";
            aclCreateGraphDumpOpt in OpCompiler: Unsupported -> Pointer =
                "aclGraphDumpOption *aclCreateGraphDumpOpt()";
            aclDestroyGraphDumpOpt in OpCompiler: Unsupported -> Code =
                "aclError aclDestroyGraphDumpOpt(const aclGraphDumpOption *graphDumpOpt)";
            aclGenGraphAndDumpForOp in OpCompiler: Unsupported -> Code =
                "aclError aclGenGraphAndDumpForOp(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[], int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[], const aclopAttr *attr, aclopEngineType engineType, const char *graphDumpPath, const aclGraphDumpOption *graphDumpOpt)";
            aclGetCompileopt in OpCompiler: Emulated -> Code =
                "aclError aclGetCompileopt(aclCompileOpt opt, char *value, size_t length)";
            aclGetCompileoptSize in OpCompiler: Emulated -> Count =
                "size_t aclGetCompileoptSize(aclCompileOpt opt)";
            aclSetCompileopt in OpCompiler: Emulated -> Code =
                "aclError aclSetCompileopt(aclCompileOpt opt, const char *value)";
            aclopCompile in OpCompiler: Unsupported -> OpStatus =
                "aclError aclopCompile(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[], int numOutputs, const aclTensorDesc *const outputDesc[], const aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath)";
            aclopCompileAndExecute in OpCompiler: Emulated -> OpStatus =
                "aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[], int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[], const aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath, aclrtStream stream)";
            aclopCompileAndExecuteV2 in OpCompiler: Emulated -> OpStatus =
                "aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[], aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[], aclDataBuffer *outputs[], aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath, aclrtStream stream)";
            HcclAllGather in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType, HcclComm comm, aclrtStream stream)";
            HcclAllGatherV in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf, const void *recvCounts, const void *recvDispls, HcclDataType dataType, HcclComm comm, aclrtStream stream)";
            HcclAllReduce in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op, HcclComm comm, aclrtStream stream)";
            HcclAlltoAll in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType, const void *recvBuf, uint64_t recvCount, HcclDataType recvType, HcclComm comm, aclrtStream stream)";
            HcclAlltoAllV in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls, HcclDataType sendType, const void *recvBuf, const void *recvCounts, const void *rdispls, HcclDataType recvType, HcclComm comm, aclrtStream stream)";
            HcclAlltoAllVC in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix, HcclDataType sendType, const void *recvBuf, HcclDataType recvType, HcclComm comm, aclrtStream stream)";
            HcclBarrier in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclBarrier(HcclComm comm, aclrtStream stream)";
            HcclBatchSendRecv in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm, aclrtStream stream)";
            HcclBroadcast in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm, aclrtStream stream)";
            HcclCommActivateCommMemory in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)";
            HcclCommDeactivateCommMemory in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr)";
            HcclCommDeregister in Hccl: Unsupported -> HcclStatus =
                "HcclResult HcclCommDeregister(HcclComm comm, void *handle)";
            HcclCommDestroy in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommDestroy(HcclComm comm)";
            HcclCommExchangeMem in Hccl: Unsupported -> HcclStatus =
                "HcclResult HcclCommExchangeMem(HcclComm comm, void *windowHandle, uint32_t *peerRanks, uint32_t peerRankNum)";
            HcclCommInitAll in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms)";
            HcclCommInitClusterInfo in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm)";
            HcclCommInitClusterInfoConfig in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank, HcclCommConfig *config, HcclComm *comm)";
            HcclCommInitRootInfo in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, HcclComm *comm)";
            HcclCommInitRootInfoConfig in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, const HcclCommConfig *config, HcclComm *comm)";
            HcclCommInitRootInfoScalable in Hccl: Unsupported -> HcclStatus =
                "HcclResult HcclCommInitRootInfoScalable(uint32_t nRanks, uint32_t nRoot, const HcclRootInfo *rootInfoList, uint32_t rank, uint32_t nExtRoot, const HcclCommConfig *config, HcclComm *comm)";
            HcclCommRegister in Hccl: Unsupported -> HcclStatus =
                "HcclResult HcclCommRegister(HcclComm comm, void *addr, uint64_t size, void **handle, uint32_t flag)";
            HcclCommResume in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommResume(HcclComm comm)";
            HcclCommSetMemoryRange in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr, size_t size, size_t alignment, uint64_t flags)";
            HcclCommSuspend in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommSuspend(HcclComm comm)";
            HcclCommSymWinDeregister in Hccl: Unsupported -> HcclStatus =
                "HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle)";
            HcclCommSymWinRegister in Hccl: Unsupported -> HcclStatus =
                "HcclResult HcclCommSymWinRegister(HcclComm comm, void *addr, uint64_t size, HcclCommSymWindow *winHandle, uint32_t flag)";
            HcclCommUnsetMemoryRange in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void *baseVirPtr)";
            HcclCommWorkingDevNicSet in Hccl: Accepted -> HcclStatus =
                "HcclResult HcclCommWorkingDevNicSet(HcclComm comm, uint32_t *ranks, bool *useBackup, uint32_t nRanks)";
            HcclCreateSubCommConfig in Hccl: Unsupported -> HcclStatus =
                "HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds, uint64_t subCommId, uint32_t subCommRankId, HcclCommConfig *config, HcclComm *subComm)";
            HcclGetCommAsyncError in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError)";
            HcclGetCommConfigCapability in Hccl: Emulated -> Count =
                "uint32_t HcclGetCommConfigCapability(void)";
            HcclGetCommName in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclGetCommName(HcclComm comm, char *commName)";
            HcclGetConfig in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue)";
            HcclGetErrorString in Hccl: Emulated -> Pointer =
                "const char *HcclGetErrorString(HcclResult code)";
            HcclGetRankId in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank)";
            HcclGetRankSize in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)";
            HcclGetRootInfo in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)";
            HcclGetRootInfoScalable in Hccl: Unsupported -> HcclStatus =
                "HcclResult HcclGetRootInfoScalable(HcclRootInfo *rootInfo)";
            HcclRecv in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm, aclrtStream stream)";
            HcclReduce in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream)";
            HcclReduceScatter in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType, HcclReduceOp op, HcclComm comm, aclrtStream stream)";
            HcclReduceScatterV in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls, void *recvBuf, uint64_t recvCount, HcclDataType dataType, HcclReduceOp op, HcclComm comm, aclrtStream stream)";
            HcclScatter in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType, uint32_t root, HcclComm comm, aclrtStream stream)";
            HcclSend in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm, aclrtStream stream)";
            HcclSetConfig in Hccl: Emulated -> HcclStatus =
                "HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue)";
            HcclGroupEnd in Hcomm: Emulated -> HcclStatus =
                "HcclResult HcclGroupEnd(void)";
            HcclGroupStart in Hcomm: Emulated -> HcclStatus =
                "HcclResult HcclGroupStart(void)";
            acltdtCreateChannelWithCapacity in TdtChannel: Unsupported -> Pointer =
                "acltdtChannelHandle *acltdtCreateChannelWithCapacity(uint32_t deviceId, const char *name, size_t capacity)";
            acltdtCreateDataset in TdtChannel: Unsupported -> Pointer =
                "acltdtDataset *acltdtCreateDataset()";
            acltdtDestroyChannel in TdtChannel: Unsupported -> Code =
                "aclError acltdtDestroyChannel(acltdtChannelHandle *handle)";
            acltdtDestroyDataset in TdtChannel: Unsupported -> Code =
                "aclError acltdtDestroyDataset(acltdtDataset *dataset)";
            acltdtGetDataAddrFromItem in TdtChannel: Unsupported -> Pointer =
                "void *acltdtGetDataAddrFromItem(const acltdtDataItem *dataItem)";
            acltdtGetDataItem in TdtChannel: Unsupported -> Pointer =
                "acltdtDataItem *acltdtGetDataItem(const acltdtDataset *dataset, size_t index)";
            acltdtGetDataSizeFromItem in TdtChannel: Unsupported -> Count =
                "size_t acltdtGetDataSizeFromItem(const acltdtDataItem *dataItem)";
            acltdtGetDataTypeFromItem in TdtChannel: Unsupported -> Enum =
                "aclDataType acltdtGetDataTypeFromItem(const acltdtDataItem *dataItem)";
            acltdtGetDatasetSize in TdtChannel: Unsupported -> Count =
                "size_t acltdtGetDatasetSize(const acltdtDataset *dataset)";
            acltdtGetDimNumFromItem in TdtChannel: Unsupported -> Count =
                "size_t acltdtGetDimNumFromItem(const acltdtDataItem *dataItem)";
            acltdtGetDimsFromItem in TdtChannel: Unsupported -> Code =
                "aclError acltdtGetDimsFromItem(const acltdtDataItem *dataItem, int64_t *dims, size_t dimNum)";
            acltdtReceiveTensor in TdtChannel: Unsupported -> Code =
                "aclError acltdtReceiveTensor(const acltdtChannelHandle *handle, acltdtDataset *dataset, int32_t timeout)";
            mstxDomainCreateA in MsToolsExt: Emulated -> Pointer =
                "mstxDomainHandle_t mstxDomainCreateA(const char *name)";
            mstxDomainDestroy in MsToolsExt: Emulated -> Void =
                "void mstxDomainDestroy(mstxDomainHandle_t domain)";
            mstxDomainMarkA in MsToolsExt: Emulated -> Void =
                "void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream)";
            mstxDomainRangeEnd in MsToolsExt: Emulated -> Void =
                "void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id)";
            mstxDomainRangeStartA in MsToolsExt: Emulated -> Count =
                "mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message, aclrtStream stream)";
            mstxMarkA in MsToolsExt: Emulated -> Void =
                "void mstxMarkA(const char *message, aclrtStream stream)";
            mstxMemHeapRegister in MsToolsExt: Emulated -> Pointer =
                "mstxMemHeapHandle_t mstxMemHeapRegister(mstxDomainHandle_t domain, const mstxMemHeapDesc_t *desc)";
            mstxMemHeapUnregister in MsToolsExt: Emulated -> Void =
                "void mstxMemHeapUnregister(mstxDomainHandle_t domain, mstxMemHeapHandle_t heap)";
            mstxMemRegionsRegister in MsToolsExt: Emulated -> Void =
                "void mstxMemRegionsRegister(mstxDomainHandle_t domain, const mstxMemRegionsRegisterBatch_t *desc)";
            mstxMemRegionsUnregister in MsToolsExt: Emulated -> Void =
                "void mstxMemRegionsUnregister(mstxDomainHandle_t domain, const mstxMemRegionsUnregisterBatch_t *desc)";
            mstxRangeEnd in MsToolsExt: Emulated -> Void =
                "void mstxRangeEnd(mstxRangeId id)";
            mstxRangeStartA in MsToolsExt: Emulated -> Count =
                "mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream)";
            MsprofGetHashId in ProfApi: Accepted -> Count =
                "uint64_t MsprofGetHashId(const char *hashInfo, size_t length)";
            MsprofRegisterCallback in ProfApi: Accepted -> Code =
                "int32_t MsprofRegisterCallback(uint32_t moduleId, ProfCommandHandle handle)";
            MsprofReportAdditionalInfo in ProfApi: Accepted -> Code =
                "int32_t MsprofReportAdditionalInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length)";
            MsprofReportApi in ProfApi: Accepted -> Code =
                "int32_t MsprofReportApi(uint32_t nonPersistantFlag, const struct MsprofApi *api)";
            MsprofReportCompactInfo in ProfApi: Accepted -> Code =
                "int32_t MsprofReportCompactInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length)";
            MsprofSysCycleTime in ProfApi: Accepted -> Count =
                "uint64_t MsprofSysCycleTime(void)";
            aclprofCreateConfig in MsProfiler: Unsupported -> Pointer =
                "aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums, aclprofAicoreMetrics aicoreMetrics, const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig)";
            aclprofCreateStepInfo in MsProfiler: Unsupported -> Pointer =
                "aclprofStepInfo* aclprofCreateStepInfo()";
            aclprofDestroyConfig in MsProfiler: Unsupported -> Code =
                "aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig)";
            aclprofDestroyStepInfo in MsProfiler: Unsupported -> Void =
                "void aclprofDestroyStepInfo(aclprofStepInfo* stepinfo)";
            aclprofFinalize in MsProfiler: Unsupported -> Code =
                "aclError aclprofFinalize()";
            aclprofGetStepTimestamp in MsProfiler: Unsupported -> Code =
                "aclError aclprofGetStepTimestamp(aclprofStepInfo* stepInfo, aclprofStepTag tag, aclrtStream stream)";
            aclprofGetSupportedFeatures in MsProfiler: Unsupported -> Code =
                "Status aclprofGetSupportedFeatures(size_t *featuresSize, void **featuresData)";
            aclprofGetSupportedFeaturesV2 in MsProfiler: Unsupported -> Code =
                "Status aclprofGetSupportedFeaturesV2(size_t *featuresSize, void **featuresData)";
            aclprofInit in MsProfiler: Unsupported -> Code =
                "aclError aclprofInit(const char *profilerResultPath, size_t length)";
            aclprofMarkEx in MsProfiler: Unsupported -> Code =
                "aclError aclprofMarkEx(const char *msg, size_t msgLen, aclrtStream stream)";
            aclprofRegisterDeviceCallback in MsProfiler: Unsupported -> Code =
                "int aclprofRegisterDeviceCallback()";
            aclprofSetConfig in MsProfiler: Unsupported -> Code =
                "aclError aclprofSetConfig(aclprofConfigType configType, const char *config, size_t configLength)";
            aclprofStart in MsProfiler: Unsupported -> Code =
                "aclError aclprofStart(const aclprofConfig *profilerConfig)";
            aclprofStop in MsProfiler: Unsupported -> Code =
                "aclError aclprofStop(const aclprofConfig *profilerConfig)";
            aclprofWarmup in MsProfiler: Unsupported -> Code =
                "int aclprofWarmup(const aclprofConfig *profilerConfig)";
            rtDevBinaryRegister in Runtime: Unsupported -> Code =
                "rtError_t rtDevBinaryRegister(const rtDevBinary_t *bin, void **hdl)";
            rtFunctionRegister in Runtime: Unsupported -> Code =
                "rtError_t rtFunctionRegister(void *binHandle, const void *stubFunc, const char_t *stubName, const void *kernelInfoExt, uint32_t funcMode)";
            rtGetC2cCtrlAddr in Runtime: Unsupported -> Code =
                "rtError_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len)";
            rtKernelLaunch in Runtime: Unsupported -> Code =
                "rtError_t rtKernelLaunch(const void *stubFunc, uint32_t numBlocks, void *args, uint32_t argsSize, rtSmDesc_t *smDesc, rtStream_t stm)";
        }
    };
}
