/*
 * The subset of CANN's ACL runtime API (acl_base.h / acl_rt.h) that the
 * physical-memory example uses, declared from the documented prototypes and
 * enum values. With a CANN toolkit installed, include <acl/acl.h> instead.
 */
#ifndef ACLMEM_EXAMPLE_ACL_VMM_H
#define ACLMEM_EXAMPLE_ACL_VMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef void *aclrtDrvMemHandle;

#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001

typedef enum aclrtMemAttr {
    ACL_DDR_MEM, ACL_HBM_MEM, ACL_DDR_MEM_HUGE, ACL_DDR_MEM_NORMAL,
    ACL_HBM_MEM_HUGE, ACL_HBM_MEM_NORMAL, ACL_DDR_MEM_P2P_HUGE,
    ACL_DDR_MEM_P2P_NORMAL, ACL_HBM_MEM_P2P_HUGE, ACL_HBM_MEM_P2P_NORMAL,
    ACL_HBM_MEM_HUGE1G, ACL_HBM_MEM_P2P_HUGE1G, ACL_MEM_NORMAL, ACL_MEM_HUGE,
    ACL_MEM_HUGE1G, ACL_MEM_P2P_NORMAL, ACL_MEM_P2P_HUGE, ACL_MEM_P2P_HUGE1G
} aclrtMemAttr;

typedef enum aclrtMemLocationType {
    ACL_MEM_LOCATION_TYPE_HOST = 0,
    ACL_MEM_LOCATION_TYPE_DEVICE,
    ACL_MEM_LOCATION_TYPE_UNREGISTERED,
    ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4
} aclrtMemLocationType;

typedef enum aclrtMemHandleType { ACL_MEM_HANDLE_TYPE_NONE = 0 } aclrtMemHandleType;
typedef enum aclrtMemAllocationType { ACL_MEM_ALLOCATION_TYPE_PINNED = 0 } aclrtMemAllocationType;
typedef enum aclrtMemGranularityOptions {
    ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
    ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
    ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF
} aclrtMemGranularityOptions;
typedef enum aclrtRunMode { ACL_DEVICE, ACL_HOST } aclrtRunMode;

typedef struct aclrtMemLocation {
    uint32_t id;
    aclrtMemLocationType type;
} aclrtMemLocation;

typedef struct aclrtPhysicalMemProp {
    aclrtMemHandleType handleType;
    aclrtMemAllocationType allocationType;
    aclrtMemAttr memAttr;
    aclrtMemLocation location;
    uint64_t reserve;
} aclrtPhysicalMemProp;

#define ACL_RT_VMM_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL

aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
aclError aclrtGetRunMode(aclrtRunMode *runMode);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);
const char *aclrtGetSocName(void);

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                             const aclrtPhysicalMemProp *prop, uint64_t flags);
aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
                                          aclrtMemGranularityOptions option,
                                          size_t *granularity);
aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
                                void *expectPtr, uint64_t flags);
aclError aclrtReleaseMemAddress(void *virPtr);
aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
                     aclrtDrvMemHandle handle, uint64_t flags);
aclError aclrtUnmapMem(void *virPtr);
aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
                                         aclrtMemHandleType handleType,
                                         uint64_t flags, uint64_t *shareableHandle);
aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid,
                                         size_t pidNum);
aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
                                           int32_t deviceId,
                                           aclrtDrvMemHandle *handle);

#ifdef __cplusplus
}
#endif

#endif
