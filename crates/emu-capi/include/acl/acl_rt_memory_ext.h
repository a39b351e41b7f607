/*
 * aclmem: the memory calls of CANN's acl_rt.h that the emulated
 * libascendcl.so carries out beyond the typed API of acl_rt.h (the
 * catalogue's framework functions, docs/catalogue.md), with their types.
 * CANN declares them in acl_rt.h itself; acl_rt.h includes this file, so
 * programs include <acl/acl_rt.h> as with CANN (vllm-ascend's build checks
 * for aclrtMemcpyBatchAsync, aclrtMemcpyBatchAttr, aclrtMemLocation and
 * ACL_MEM_LOCATION_TYPE_HOST there).
 *
 * Prototypes and values are CANN's (hicann/runtime acl_rt.h; docs/facts.md
 * lists the sources); a test checks each declaration against the
 * catalogue's prototype and each layout against the library's.
 */
#ifndef ACLMEM_ACL_ACL_RT_MEMORY_EXT_H
#define ACLMEM_ACL_ACL_RT_MEMORY_EXT_H

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aclrtCheckMemType's memory types (CANN's values; the runtime's mask for
 * reserved memory is 0x20, so it refuses ACL_RT_MEM_TYPE_RSVD). */
#define ACL_RT_MEM_TYPE_DEV (0X2U)
#define ACL_RT_MEM_TYPE_DVPP (0X8U)
#define ACL_RT_MEM_TYPE_RSVD (0X10U)

/* aclrtValueWait's conditions. */
#define ACL_STREAM_WAIT_VALUE_GEQ 0x00000000U
#define ACL_STREAM_WAIT_VALUE_EQ 0x00000001U
#define ACL_STREAM_WAIT_VALUE_AND 0x00000002U
#define ACL_STREAM_WAIT_VALUE_NOR 0x00000003U

typedef enum {
    ACL_RT_MEM_ATTR_RSV = 0,
    ACL_RT_MEM_ATTR_MODULE_ID,
    ACL_RT_MEM_ATTR_DEVICE_ID,
    ACL_RT_MEM_ATTR_VA_FLAG,
} aclrtMallocAttrType;

typedef union {
    uint16_t moduleId;
    uint32_t deviceId;
    uint32_t vaFlag;
    uint8_t rsv[8];
} aclrtMallocAttrValue;

typedef struct {
    aclrtMallocAttrType attr;
    aclrtMallocAttrValue value;
} aclrtMallocAttribute;

typedef struct {
    aclrtMallocAttribute *attrs;
    size_t numAttrs;
} aclrtMallocConfig;

typedef enum {
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM = 10,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX = 11,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN = 12,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL = 13,
} aclrtReduceKind;

/* CANN's acl_base.h data types (the values aclrtReduceAsync takes, and the
 * others of its enum that the emulated library knows). */
#ifndef ACLMEM_ACL_DATA_TYPE_DEFINED
#define ACLMEM_ACL_DATA_TYPE_DEFINED
typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
} aclDataType;
#endif

typedef struct {
    aclrtMemLocation dstLoc;
    aclrtMemLocation srcLoc;
    uint8_t rsv[16];
} aclrtMemcpyBatchAttr;

/* Managed memory (CANN 9.0 and 9.1). */
#define ACL_RT_MEM_ATTACH_GLOBAL 0x01U

typedef enum aclrtMemManagedAdviseType {
    ACL_MEM_ADVISE_SET_READ_MOSTLY = 0,
    ACL_MEM_ADVISE_UNSET_READ_MOSTLY,
    ACL_MEM_ADVISE_SET_PREFERRED_LOCATION,
    ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
    ACL_MEM_ADVISE_SET_ACCESSED_BY,
    ACL_MEM_ADVISE_UNSET_ACCESSED_BY,
} aclrtMemManagedAdviseType;

typedef enum aclrtMemManagedLocationType {
    ACL_MEM_LOCATIONTYPE_INVALID = 0,
    ACL_MEM_LOCATIONTYPE_DEVICE,
    ACL_MEM_LOCATIONTYPE_HOST,
    ACL_MEM_LOCATIONTYPE_HOST_NUMA,
    ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT,
} aclrtMemManagedLocationType;

typedef struct aclrtMemManagedLocation {
    aclrtMemManagedLocationType type;
    int32_t id;
} aclrtMemManagedLocation;

typedef enum aclrtMemManagedRangeAttribute {
    ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
    ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
    ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
    ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID,
} aclrtMemManagedRangeAttribute;

/* Cache maintenance. */
typedef enum aclrtCmoType {
    ACL_RT_CMO_TYPE_PREFETCH = 0,
    ACL_RT_CMO_TYPE_WRITEBACK,
    ACL_RT_CMO_TYPE_INVALID,
    ACL_RT_CMO_TYPE_FLUSH,
} aclrtCmoType;

typedef struct {
    aclrtCmoType cmoType;
    uint32_t barrierId;
} aclrtBarrierCmoInfo;

#define ACL_RT_CMO_MAX_BARRIER_NUM 6U

typedef struct {
    size_t barrierNum;
    aclrtBarrierCmoInfo cmoInfo[ACL_RT_CMO_MAX_BARRIER_NUM];
} aclrtBarrierTaskInfo;

/* Uncorrectable memory errors. */
#define MAX_MEM_UCE_INFO_ARRAY_SIZE 128
#define UCE_INFO_RESERVED_SIZE 14
#define ACL_RT_MAX_RECORD_PA_NUM_PER_DEV 20U

typedef struct aclrtMemUceInfo {
    void* addr;
    size_t len;
    size_t reserved[UCE_INFO_RESERVED_SIZE];
} aclrtMemUceInfo;

/* Links between devices, and host memory seen by accelerators. */
#define ACL_RT_MEM_LINK_IDX_0 0U
#define ACL_RT_MEM_LINK_IDX_1 1U

typedef enum {
    ACL_RT_MEM_ACCESS_LINK_SIO = 0,
    ACL_RT_MEM_ACCESS_LINK_HCCS = 1,
    ACL_RT_MEM_ACCESS_UB_ONE_PORT_PATH = 2,
    ACL_RT_MEM_ACCESS_UB_MULTI_PORT_PATH = 3,
} aclrtMemLinkType;

typedef enum {
    ACL_RT_HAC_TYPE_STARS = 0,
    ACL_RT_HAC_TYPE_AICPU,
    ACL_RT_HAC_TYPE_AIC,
    ACL_RT_HAC_TYPE_AIV,
    ACL_RT_HAC_TYPE_PCIEDMA,
    ACL_RT_HAC_TYPE_RDMA,
    ACL_RT_HAC_TYPE_SDMA,
    ACL_RT_HAC_TYPE_DVPP,
    ACL_RT_HAC_TYPE_UDMA,
    ACL_RT_HAC_TYPE_CCU,
} aclrtHacType;

typedef enum {
    ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED = 0,
    ACL_RT_HOST_MEM_MAP_SUPPORTED,
} aclrtHostMemMapCapability;

/* IPC: the access link of an exported block, and pids of other servers. */
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_SIO 0
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS 1
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_ONE_PORT_PATH 2
#define ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH 3

typedef enum {
    ACL_RT_IPC_MEM_ATTR_ACCESS_LINK,
} aclrtIpcMemAttrType;

typedef struct {
    uint32_t sdid;
    int32_t* pid;
    size_t num;
} aclrtServerPid;

/* ---- Allocation variants, frees after a device sync, caches, types ----- */

ACL_FUNC_VISIBILITY aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult, uint32_t reserve);
ACL_FUNC_VISIBILITY aclError aclrtFreeHostWithDevSync(void *hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtFreeWithDevSync(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg);
ACL_FUNC_VISIBILITY aclError aclrtMallocWithCfg(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg);
ACL_FUNC_VISIBILITY aclError aclrtMallocForTaskScheduler(void** devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig* cfg);
ACL_FUNC_VISIBILITY aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType, aclrtHostMemMapCapability* capabilities);
ACL_FUNC_VISIBILITY aclError aclrtMemFlush(void *devPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtMemInvalidate(void *devPtr, size_t size);

/* ---- 2D copies, base pointers, descriptors, reductions, 32-bit sets ----- */

ACL_FUNC_VISIBILITY aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, aclrtMemcpyKind kind, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t dstDataOffset, const void **src, size_t count, size_t srcDataOffset, aclrtMemcpyKind kind, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize);
ACL_FUNC_VISIBILITY aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr, void *dstAddr, size_t count, void *config);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count, aclrtReduceKind kind, aclDataType type, aclrtStream stream, void *reserve);
ACL_FUNC_VISIBILITY aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N);
ACL_FUNC_VISIBILITY aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value, size_t N, aclrtStream stream);

/* ---- Managed memory, peer mappings and peer access ---------------------- */

ACL_FUNC_VISIBILITY aclError aclrtMemAllocManaged(void** ptr, uint64_t size, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedAdvise(const void* const ptr, uint64_t size, aclrtMemManagedAdviseType advise, aclrtMemManagedLocation location);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute, const void* ptr, size_t size, void* data, size_t dataSize);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute* attributes, size_t numAttributes, const void* ptr, size_t size, void** data, size_t* dataSizes);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedPrefetchAsync(const void* ptr, size_t size, aclrtMemManagedLocation location, uint32_t flags, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemManagedPrefetchBatchAsync(const void** ptrs, size_t* sizes, size_t count, aclrtMemManagedLocation* prefetchLocs, size_t* prefetchLocIdxs, size_t numPrefetchLocs, uint64_t flags, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemP2PMap(void* devPtr, size_t size, int32_t dstDevId, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t* status);

/* ---- Cache maintenance, memory errors ----------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtCmoAsyncWithBarrier(void* src, size_t size, aclrtCmoType cmoType, uint32_t barrierId, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo* taskInfo, aclrtStream stream, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtCmoGetDescSize(size_t* size);
ACL_FUNC_VISIBILITY aclError aclrtCmoSetDesc(void* cmoDesc, void* src, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtCmoAsyncWithDesc(void* cmoDesc, aclrtCmoType cmoType, aclrtStream stream, const void* reserve);
ACL_FUNC_VISIBILITY aclError aclrtDeviceL2CacheFlush(void* rsv);
ACL_FUNC_VISIBILITY aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize, size_t *retSize);
ACL_FUNC_VISIBILITY aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize);

/* ---- Reservations, mappings and IPC links of CANN 9.x ------------------- */

ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddressNoUCMemory(void** virPtr, size_t size, size_t alignment, void* expectPtr, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtMemMapNoAccess(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtMemMapSelectedLink(void* virPtrDst, size_t size, void* virPtrSrc, uint32_t linkIdx);
ACL_FUNC_VISIBILITY aclError aclrtMemMapSetLink(aclrtDrvMemHandle handle, aclrtMemLinkType adviceLink);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetAttr(const char* key, aclrtIpcMemAttrType type, uint64_t attr);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportPidInterServer(const char* key, aclrtServerPid* serverPids, size_t num);

/* ---- Device variables (every symbol unknown: no kernel binaries) ------- */

ACL_FUNC_VISIBILITY aclError aclrtGetSymbolAddress(const void* symbol, void** devPtr);
ACL_FUNC_VISIBILITY aclError aclrtGetSymbolSize(const void* symbol, size_t* size);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyFromSymbol(void* dst, size_t dstMax, const void* symbol, size_t count, size_t offset, aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyFromSymbolAsync(void* dst, size_t dstMax, const void* symbol, size_t count, size_t offset, aclrtMemcpyKind kind, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset, aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset, aclrtMemcpyKind kind, aclrtStream stream);

/* ---- Batched copies between host and device (vllm-ascend, torch_npu) ----- */

ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, aclrtStream stream);

/* ---- Stream value operations (torch_npu's external events) --------------- */

ACL_FUNC_VISIBILITY aclError aclrtValueWrite(void* devAddr, uint64_t value, uint32_t flag, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtValueWait(void* devAddr, uint64_t value, uint32_t flag, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLMEM_ACL_ACL_RT_MEMORY_EXT_H */
