/*
 * aclmem: the mstx functions of CANN's mstx/ms_tools_ext.h (markers,
 * ranges, domains, and the memory API a program describes its pools with),
 * as the emulated libms_tools_ext.so answers them. Each prototype is the
 * catalogue's (crates/sys/src/catalogue.rs) and each layout the Rust
 * side's (crates/sys/src/mstx.rs), which tests check; the answers and the
 * sanitizer's checks are in docs/mstx.md.
 */
#ifndef ACLMEM_MSTX_MS_TOOLS_EXT_H
#define ACLMEM_MSTX_MS_TOOLS_EXT_H

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The failure of mstxRangeStartA and mstxDomainRangeStartA. */
#define MSTX_INVALID_ID 0

typedef uint64_t mstxRangeId;

struct mstxDomainRegistration_st;
typedef struct mstxDomainRegistration_st mstxDomainRegistration_t;
/* A domain; NULL is the global one. */
typedef mstxDomainRegistration_t *mstxDomainHandle_t;

struct mstxMemHeap_st;
typedef struct mstxMemHeap_st mstxMemHeap_t;
/* A heap: memory the program allocated and sub-allocates. */
typedef mstxMemHeap_t *mstxMemHeapHandle_t;

struct mstxMemRegion_st;
typedef struct mstxMemRegion_st mstxMemRegion_t;
/* A region: a block of a heap handed out. */
typedef mstxMemRegion_t *mstxMemRegionHandle_t;

/* A linear range of one device's memory. */
typedef struct mstxMemVirtualRangeDesc_t {
    uint32_t deviceId;
    const void *ptr;
    uint64_t size;
} mstxMemVirtualRangeDesc_t;

typedef enum mstxMemHeapUsageType {
    /* A pool: its memory may be accessed only inside registered regions. */
    MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR = 0
} mstxMemHeapUsageType;

typedef enum mstxMemType {
    /* Described by an mstxMemVirtualRangeDesc_t. */
    MSTX_MEM_TYPE_VIRTUAL_ADDRESS = 0
} mstxMemType;

typedef struct mstxMemHeapDesc_t {
    mstxMemHeapUsageType usage;
    mstxMemType type;
    const void *typeSpecificDesc;
} mstxMemHeapDesc_t;

typedef struct mstxMemRegionsRegisterBatch_t {
    mstxMemHeapHandle_t heap;
    mstxMemType regionType;
    size_t regionCount;
    const void *regionDescArray;
    mstxMemRegionHandle_t *regionHandleArrayOut;
} mstxMemRegionsRegisterBatch_t;

typedef enum mstxMemRegionRefType {
    MSTX_MEM_REGION_REF_TYPE_POINTER = 0,
    MSTX_MEM_REGION_REF_TYPE_HANDLE = 1
} mstxMemRegionRefType;

typedef struct mstxMemRegionRef_t {
    mstxMemRegionRefType refType;
    union {
        const void *pointer;
        mstxMemRegionHandle_t handle;
    };
} mstxMemRegionRef_t;

typedef struct mstxMemRegionsUnregisterBatch_t {
    size_t refCount;
    const mstxMemRegionRef_t *refArray;
} mstxMemRegionsUnregisterBatch_t;

mstxDomainHandle_t mstxDomainCreateA(const char *name);
void mstxDomainDestroy(mstxDomainHandle_t domain);
void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id);
mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
void mstxMarkA(const char *message, aclrtStream stream);
mstxMemHeapHandle_t mstxMemHeapRegister(mstxDomainHandle_t domain, const mstxMemHeapDesc_t *desc);
void mstxMemHeapUnregister(mstxDomainHandle_t domain, mstxMemHeapHandle_t heap);
void mstxMemRegionsRegister(mstxDomainHandle_t domain, const mstxMemRegionsRegisterBatch_t *desc);
void mstxMemRegionsUnregister(mstxDomainHandle_t domain, const mstxMemRegionsUnregisterBatch_t *desc);
void mstxRangeEnd(mstxRangeId id);
mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
