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
        $callback! {
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
        }
    };
}
