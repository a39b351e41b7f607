/*
 * Ascend physical memory from C, the way the CANN samples and torch_npu use
 * it: query the granularity, allocate physical memory, reserve a virtual
 * range, map the handle twice, check that the two mappings alias, export it,
 * and tear everything down in order. Exits 0 on success.
 *
 * Build against the emulator (cargo xtask ci does this):
 *   cc -std=c11 -Wall -Wextra -I crates/emu-capi/include -o vmm_demo vmm_demo.c -L<dir> -lascendcl -Wl,-rpath,<dir>
 */
#include "example.h"

#include <stddef.h>

/* The struct layout the Rust side mirrors (aclmem_core::RawPhysicalMemProp). */
_Static_assert(sizeof(aclrtPhysicalMemProp) == 32, "aclrtPhysicalMemProp is 32 bytes");
_Static_assert(offsetof(aclrtPhysicalMemProp, location) == 12, "location at offset 12");
_Static_assert(offsetof(aclrtPhysicalMemProp, reserve) == 24, "reserve at offset 24");

int main(void) {
    CHECK(aclInit(NULL), ACL_SUCCESS);
    CHECK(aclrtSetDevice(0), ACL_SUCCESS);

    const char *soc = aclrtGetSocName();
    uint32_t devices = 0;
    aclrtRunMode mode = ACL_DEVICE;
    CHECK(aclrtGetDeviceCount(&devices), ACL_SUCCESS);
    CHECK(aclrtGetRunMode(&mode), ACL_SUCCESS);
    printf("SoC %s, %u devices, run mode %s\n", soc ? soc : "(null)", devices,
           mode == ACL_HOST ? "ACL_HOST" : "ACL_DEVICE");

    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;

    size_t granularity = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                                           &granularity), ACL_SUCCESS);
    size_t want = 3u << 20; /* 3 MiB, rounded up to the granularity */
    size_t size = (want + granularity - 1) / granularity * granularity;
    printf("granularity %zu bytes, allocating %zu bytes\n", granularity, size);

    /* What the runtime refuses, with the documented codes. */
    CHECK(aclrtMallocPhysical(NULL, size, &prop, 0), ACL_ERROR_INVALID_PARAM);
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtMallocPhysical(&handle, size, &prop, 1), ACL_ERROR_INVALID_PARAM);
    /* Not a multiple of the granularity: the driver refuses it, which
     * surfaces as the runtime's invalid-value code. */
    CHECK(aclrtMallocPhysical(&handle, want, &prop, 0), ACL_ERROR_RT_PARAM_INVALID);

    CHECK(aclrtMallocPhysical(&handle, size, &prop, 0), ACL_SUCCESS);

    void *va = NULL;
    CHECK(aclrtReserveMemAddress(&va, 2 * size, 0, NULL, 0), ACL_SUCCESS);
    char *first = (char *)va;
    char *second = first + size;
    CHECK(aclrtMapMem(first, size, 0, handle, 0), ACL_SUCCESS);
    CHECK(aclrtMapMem(second, size, 0, handle, 0), ACL_SUCCESS);

    const char msg[] = "one handle, two addresses";
    memcpy(first + 4096, msg, sizeof msg);
    if (memcmp(second + 4096, msg, sizeof msg) != 0) {
        fprintf(stderr, "FAIL: the two mappings do not alias\n");
        failures++;
    } else {
        printf("ok   read \"%s\" through the second mapping\n", second + 4096);
    }

    uint64_t shareable = 0;
    CHECK(aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
                                          ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &shareable),
          ACL_SUCCESS);
    int32_t pid = 4242;
    CHECK(aclrtMemSetPidToShareableHandle(shareable, &pid, 1), ACL_SUCCESS);

    CHECK(aclrtReleaseMemAddress(va), 107000); /* still mapped */
    CHECK(aclrtUnmapMem(first), ACL_SUCCESS);
    CHECK(aclrtUnmapMem(second), ACL_SUCCESS);
    CHECK(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    CHECK(aclrtFreePhysical(handle), ACL_SUCCESS);
    CHECK(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK(aclFinalize(), ACL_SUCCESS);

    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return EXIT_FAILURE;
    }
    printf("all checks passed\n");
    return EXIT_SUCCESS;
}
