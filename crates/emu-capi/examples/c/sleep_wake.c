/*
 * Sleep and wake, the way vllm-ascend's sleep mode does it: keep a virtual
 * range, and release and re-take the physical memory behind it.
 *
 *   allocate + map   reserve a range, allocate physical memory, map it
 *   write            copy a pattern from pinned host memory to the range
 *   sleep            copy the range to a host backup, unmap, free the
 *                    physical memory (the range stays reserved)
 *   wake             allocate again, map at the same address, copy back
 *   verify           the range holds the pattern again
 *
 * aclrtGetMemInfo shows the device memory really released while asleep and
 * taken again after waking. Exits 0 on success.
 *
 *   cc -std=c11 -Wall -Wextra -I crates/emu-capi/include sleep_wake.c \
 *      -L<dir> -lascendcl -Wl,-rpath,<dir>
 */
#include "example.h"

#define SIZE ((size_t)64 << 20)

static size_t hbm_free(void) {
    size_t free_bytes = 0, total = 0;
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total), ACL_SUCCESS);
    return free_bytes;
}

int main(void) {
    CHECK(aclInit(NULL), ACL_SUCCESS);
    CHECK(aclrtSetDevice(0), ACL_SUCCESS);

    /* vllm-ascend's allocator runs in the caller's context, making one if
     * the thread has none. */
    aclrtContext context = NULL;
    if (aclrtGetCurrentContext(&context) != ACL_SUCCESS || context == NULL) {
        CHECK(aclrtCreateContext(&context, 0), ACL_SUCCESS);
    }
    CHECK(aclrtSetCurrentContext(context), ACL_SUCCESS);

    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;

    size_t granularity = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                                           &granularity),
          ACL_SUCCESS);
    EXPECT(granularity > 0 && SIZE % granularity == 0);

    size_t before = hbm_free();
    void *va = NULL;
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtReserveMemAddress(&va, SIZE, 0, NULL, 0), ACL_SUCCESS);
    CHECK(aclrtMallocPhysical(&handle, SIZE, &prop, 0), ACL_SUCCESS);
    CHECK(aclrtMapMem(va, SIZE, 0, handle, 0), ACL_SUCCESS);
    size_t awake = hbm_free();
    printf("     HBM free: %zu MiB before, %zu MiB allocated\n", before >> 20, awake >> 20);
    EXPECT(before - awake == SIZE);

    unsigned char *pattern = NULL, *backup = NULL;
    CHECK(aclrtMallocHost((void **)&pattern, SIZE), ACL_SUCCESS);
    CHECK(aclrtMallocHost((void **)&backup, SIZE), ACL_SUCCESS);
    if (pattern == NULL || backup == NULL) {
        fprintf(stderr, "FAIL no host memory\n");
        return 1;
    }
    for (size_t i = 0; i < SIZE; i++) {
        pattern[i] = (unsigned char)(i * 131 + 7);
    }
    CHECK(aclrtMemcpy(va, SIZE, pattern, SIZE, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);

    /* Sleep. */
    CHECK(aclrtMemcpy(backup, SIZE, va, SIZE, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    CHECK(aclrtUnmapMem(va), ACL_SUCCESS);
    CHECK(aclrtFreePhysical(handle), ACL_SUCCESS);
    size_t asleep = hbm_free();
    printf("     HBM free asleep: %zu MiB\n", asleep >> 20);
    EXPECT(asleep == before);

    /* Wake, at the same address. */
    CHECK(aclrtMallocPhysical(&handle, SIZE, &prop, 0), ACL_SUCCESS);
    CHECK(aclrtMapMem(va, SIZE, 0, handle, 0), ACL_SUCCESS);
    EXPECT(hbm_free() == awake);
    CHECK(aclrtMemcpy(va, SIZE, backup, SIZE, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);

    /* Verify through a device-to-host copy into a cleared buffer. */
    memset(backup, 0, SIZE);
    CHECK(aclrtMemcpy(backup, SIZE, va, SIZE, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT(memcmp(backup, pattern, SIZE) == 0);

    CHECK(aclrtSynchronizeDevice(), ACL_SUCCESS);
    CHECK(aclrtUnmapMem(va), ACL_SUCCESS);
    CHECK(aclrtFreePhysical(handle), ACL_SUCCESS);
    CHECK(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    CHECK(aclrtFreeHost(pattern), ACL_SUCCESS);
    CHECK(aclrtFreeHost(backup), ACL_SUCCESS);
    EXPECT(hbm_free() == before);
    CHECK(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK(aclFinalize(), ACL_SUCCESS);

    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
