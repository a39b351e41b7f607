//! The memory chapter's functions added with CANN 9.x's runtime
//! (stream-ordered pools, managed memory, cache maintenance, the custom
//! allocator, device variables and the rest; issue 48), appended to the
//! framework functions of `functions.rs` by
//! [`with_framework_functions!`](crate::with_framework_functions) (one list
//! for every consumer; kept here so that neither file grows past the
//! project's size limit). Prototypes are CANN's headers at RT HEAD
//! (`acl_rt.h`, `acl_rt_memory_soma.h`, `acl_rt_allocator.h`); `since` is
//! the first release whose headers declare the function (docs/facts.md).

/// The memory chapter's entries after `$rest`, the other framework
/// functions, handed to `$callback` (see
/// [`with_framework_functions!`](crate::with_framework_functions)).
#[doc(hidden)]
#[macro_export]
macro_rules! __with_memory_chapter {
    ($callback:ident; $($rest:tt)*) => {
        $crate::__with_operator_api! { $callback;
            $($rest)*
            aclrtMemPoolCreate in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtMemPoolCreate(aclrtMemPool* memPool, const aclrtMemPoolProps* poolProps)";
            aclrtMemPoolDestroy in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtMemPoolDestroy(const aclrtMemPool memPool)";
            aclrtMemPoolSetAttr in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void* value)";
            aclrtMemPoolGetAttr in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr attr, void* value)";
            aclrtMemPoolMallocAsync in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemPoolMallocAsync(void** ptr, size_t size, aclrtMemPool memPool, aclrtStream stream)";
            aclrtMemPoolFreeAsync in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemPoolFreeAsync(void* ptr, aclrtStream stream)";
            aclrtMemPoolTrimTo in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t minBytesToKeep)";
            aclrtMemAllocManaged in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtMemAllocManaged(void** ptr, uint64_t size, uint32_t flag)";
            aclrtMemManagedAdvise in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemManagedAdvise(const void* const ptr, uint64_t size, aclrtMemManagedAdviseType advise, aclrtMemManagedLocation location)";
            aclrtMemManagedGetAttr in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute, const void* ptr, size_t size, void* data, size_t dataSize)";
            aclrtMemManagedGetAttrs in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute* attributes, size_t numAttributes, const void* ptr, size_t size, void** data, size_t* dataSizes)";
            aclrtMemManagedPrefetchAsync in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemManagedPrefetchAsync(const void* ptr, size_t size, aclrtMemManagedLocation location, uint32_t flags, aclrtStream stream)";
            aclrtMemManagedPrefetchBatchAsync in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemManagedPrefetchBatchAsync(const void** ptrs, size_t* sizes, size_t count, aclrtMemManagedLocation* prefetchLocs, size_t* prefetchLocIdxs, size_t numPrefetchLocs, uint64_t flags, aclrtStream stream)";
            aclrtMemP2PMap in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtMemP2PMap(void* devPtr, size_t size, int32_t dstDevId, uint64_t flags)";
            aclrtDevicePeerAccessStatus in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t* status)";
            aclrtCmoAsyncWithBarrier in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtCmoAsyncWithBarrier(void* src, size_t size, aclrtCmoType cmoType, uint32_t barrierId, aclrtStream stream)";
            aclrtCmoWaitBarrier in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo* taskInfo, aclrtStream stream, uint32_t flag)";
            aclrtCmoGetDescSize in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtCmoGetDescSize(size_t* size)";
            aclrtCmoSetDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtCmoSetDesc(void* cmoDesc, void* src, size_t size)";
            aclrtCmoAsyncWithDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtCmoAsyncWithDesc(void* cmoDesc, aclrtCmoType cmoType, aclrtStream stream, const void* reserve)";
            aclrtDeviceL2CacheFlush in AscendCl since (9, 2): Emulated -> Code =
                "aclError aclrtDeviceL2CacheFlush(void* rsv)";
            aclrtReserveMemAddressNoUCMemory in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtReserveMemAddressNoUCMemory(void** virPtr, size_t size, size_t alignment, void* expectPtr, uint64_t flags)";
            aclrtMemMapNoAccess in AscendCl since (9, 2): Emulated -> Code =
                "aclError aclrtMemMapNoAccess(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)";
            aclrtMemMapSelectedLink in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemMapSelectedLink(void* virPtrDst, size_t size, void* virPtrSrc, uint32_t linkIdx)";
            aclrtMemMapSetLink in AscendCl since (9, 2): Emulated -> Code =
                "aclError aclrtMemMapSetLink(aclrtDrvMemHandle handle, aclrtMemLinkType adviceLink)";
            aclrtMallocForTaskScheduler in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtMallocForTaskScheduler(void** devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig* cfg)";
            aclrtHostMemMapCapabilities in AscendCl since (9, 0): Emulated -> Code =
                "aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType, aclrtHostMemMapCapability* capabilities)";
            aclrtIpcMemSetAttr in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtIpcMemSetAttr(const char* key, aclrtIpcMemAttrType type, uint64_t attr)";
            aclrtIpcMemImportPidInterServer in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtIpcMemImportPidInterServer(const char* key, aclrtServerPid* serverPids, size_t num)";
            aclrtAllocatorCreateDesc in AscendCl since (8, 5): Emulated -> Pointer =
                "aclrtAllocatorDesc aclrtAllocatorCreateDesc()";
            aclrtAllocatorDestroyDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)";
            aclrtAllocatorSetObjToDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator)";
            aclrtAllocatorSetAllocFuncToDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocFunc func)";
            aclrtAllocatorSetFreeFuncToDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorFreeFunc func)";
            aclrtAllocatorSetAllocAdviseFuncToDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorAllocAdviseFunc func)";
            aclrtAllocatorSetGetAddrFromBlockFuncToDesc in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocatorGetAddrFromBlockFunc func)";
            aclrtAllocatorRegister in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)";
            aclrtAllocatorGetByStream in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc* allocatorDesc, aclrtAllocator* allocator, aclrtAllocatorAllocFunc* allocFunc, aclrtAllocatorFreeFunc* freeFunc, aclrtAllocatorAllocAdviseFunc* allocAdviseFunc, aclrtAllocatorGetAddrFromBlockFunc* getAddrFromBlockFunc)";
            aclrtAllocatorUnregister in AscendCl since (8, 5): Emulated -> Code =
                "aclError aclrtAllocatorUnregister(aclrtStream stream)";
            aclrtGetSymbolAddress in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtGetSymbolAddress(const void* symbol, void** devPtr)";
            aclrtGetSymbolSize in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtGetSymbolSize(const void* symbol, size_t* size)";
            aclrtMemcpyFromSymbol in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemcpyFromSymbol(void* dst, size_t dstMax, const void* symbol, size_t count, size_t offset, aclrtMemcpyKind kind)";
            aclrtMemcpyFromSymbolAsync in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemcpyFromSymbolAsync(void* dst, size_t dstMax, const void* symbol, size_t count, size_t offset, aclrtMemcpyKind kind, aclrtStream stream)";
            aclrtMemcpyToSymbol in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset, aclrtMemcpyKind kind)";
            aclrtMemcpyToSymbolAsync in AscendCl since (9, 1): Emulated -> Code =
                "aclError aclrtMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset, aclrtMemcpyKind kind, aclrtStream stream)";
        }
    };
}
