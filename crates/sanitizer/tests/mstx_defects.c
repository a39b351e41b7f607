/*
 * Seeded defects of the mstx memory API for the sanitizer, one per mode,
 * on a pool of 4096 bytes of aclrtMalloc memory carved into blocks of 256:
 *   mstx-heap-unmapped           a heap registered over host memory
 *   mstx-region-outside-heap     a region that runs past its heap's end
 *   mstx-access-outside-region   a copy that runs past its block's end
 *   mstx-access-after-unregister a fill of a block already handed back
 *                                (class mstx-access-outside-region)
 *   mstx-freed-while-registered  the pool freed with a block registered
 *   mstx-unknown-handle          a block unregistered twice
 *   clean                        all of it done right
 * Each line that commits a defect is marked with a comment the test finds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl.h>
#include <mstx/ms_tools_ext.h>

#define CHECK(call)                                                           \
    do {                                                                      \
        int r_ = (int)(call);                                                 \
        if (r_ != 0) {                                                        \
            fprintf(stderr, "%s: %d\n", #call, r_);                           \
            return 3;                                                         \
        }                                                                     \
    } while (0)

#define POOL 4096
#define BLOCK 256

/* Macros, not functions: each mstx call is then made at the line that
 * uses it, the line a finding names. */
#define REGISTER_HEAP(domain, base, size)                                                   \
    ({                                                                                      \
        mstxMemVirtualRangeDesc_t range_ = {0, (base), (size)};                             \
        mstxMemHeapDesc_t desc_ = {MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR,                  \
                                   MSTX_MEM_TYPE_VIRTUAL_ADDRESS, &range_};                 \
        mstxMemHeapRegister((domain), &desc_);                                              \
    })

#define REGISTER_BLOCK(domain, heap, at, size)                                              \
    ({                                                                                      \
        mstxMemVirtualRangeDesc_t range_ = {0, (at), (size)};                               \
        mstxMemRegionHandle_t handle_ = NULL;                                               \
        mstxMemRegionsRegisterBatch_t batch_ = {(heap), MSTX_MEM_TYPE_VIRTUAL_ADDRESS, 1,   \
                                                &range_, &handle_};                         \
        mstxMemRegionsRegister((domain), &batch_);                                          \
        handle_;                                                                            \
    })

#define UNREGISTER_BLOCK(domain, block)                                                     \
    do {                                                                                    \
        mstxMemRegionRef_t ref_;                                                            \
        ref_.refType = MSTX_MEM_REGION_REF_TYPE_HANDLE;                                     \
        ref_.handle = (block);                                                              \
        mstxMemRegionsUnregisterBatch_t batch_ = {1, &ref_};                                \
        mstxMemRegionsUnregister((domain), &batch_);                                        \
    } while (0)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    mstxDomainHandle_t domain = mstxDomainCreateA("pool");
    if (domain == NULL) {
        fprintf(stderr, "no domain\n");
        return 3;
    }
    char *pool = NULL;
    CHECK(aclrtMalloc((void **)&pool, POOL, ACL_MEM_MALLOC_HUGE_FIRST));
    mstxMemHeapHandle_t heap = REGISTER_HEAP(domain, pool, POOL);
    if (heap == NULL) {
        fprintf(stderr, "no heap\n");
        return 3;
    }
    char host[BLOCK];
    memset(host, 7, sizeof host);
    mstxMemRegionHandle_t a = REGISTER_BLOCK(domain, heap, pool, BLOCK);
    mstxMemRegionHandle_t b = REGISTER_BLOCK(domain, heap, pool + BLOCK, BLOCK);
    if (a == NULL || b == NULL) {
        fprintf(stderr, "no region\n");
        return 3;
    }
    CHECK(aclrtMemcpy(pool, BLOCK, host, BLOCK, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(pool + BLOCK, BLOCK, pool, BLOCK, ACL_MEMCPY_DEVICE_TO_DEVICE));

    if (strcmp(mode, "mstx-heap-unmapped") == 0) {
        static char not_device[POOL];
        mstxMemHeapHandle_t stray = REGISTER_HEAP(domain, not_device, POOL); /* DEFECT: mstx-heap-unmapped */
        mstxMemHeapUnregister(domain, stray);
    } else if (strcmp(mode, "mstx-region-outside-heap") == 0) {
        mstxMemRegionHandle_t c = REGISTER_BLOCK(domain, heap, pool + POOL - BLOCK, 2 * BLOCK); /* DEFECT: mstx-region-outside-heap */
        UNREGISTER_BLOCK(domain, c);
    } else if (strcmp(mode, "mstx-access-outside-region") == 0) {
        /* A block's worth from the middle of the first block: it runs into
         * the second, which the pool's memory hides from copy-unmapped. */
        CHECK(aclrtMemcpy(pool + BLOCK / 2, POOL - BLOCK / 2, host, BLOCK, ACL_MEMCPY_HOST_TO_DEVICE)); /* DEFECT: mstx-access-outside-region */
    } else if (strcmp(mode, "mstx-access-after-unregister") == 0) {
        UNREGISTER_BLOCK(domain, b);
        b = NULL;
        CHECK(aclrtMemset(pool + BLOCK, BLOCK, 0, BLOCK)); /* DEFECT: mstx-access-after-unregister */
    } else if (strcmp(mode, "mstx-freed-while-registered") == 0) {
        UNREGISTER_BLOCK(domain, b);
        CHECK(aclrtFree(pool)); /* DEFECT: mstx-freed-while-registered */
        mstxDomainDestroy(domain);
        return aclFinalize() == 0 ? 0 : 3;
    } else if (strcmp(mode, "mstx-unknown-handle") == 0) {
        UNREGISTER_BLOCK(domain, b);
        UNREGISTER_BLOCK(domain, b); /* DEFECT: mstx-unknown-handle */
        b = NULL;
    }

    if (b != NULL) {
        UNREGISTER_BLOCK(domain, b);
    }
    UNREGISTER_BLOCK(domain, a);
    mstxMemHeapUnregister(domain, heap);
    CHECK(aclrtFree(pool));
    mstxDomainDestroy(domain);
    CHECK(aclFinalize());
    return 0;
}
