/*
 * vllm-ascend's swap_blocks_batch on the emulated machine, as its C++ does
 * it (csrc/torch_binding.cpp): KV-cache blocks of device memory swapped
 * out to pinned host memory (aclrtMallocHost) and back in, each direction
 * one aclrtMemcpyBatchAsync call with destMaxs the same array as sizes,
 * one zero-initialised attribute (host {id 0}, device {id aclrtGetDevice})
 * at index 0, failIndex initialised to 0, on a stream; the bytes compared.
 * Prints "ok" and exits 0 when every check holds; else names the check.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

#define BLOCKS 8
#define BLOCK (64 * 1024)
#define MOVED 4

#define CHECK(what, cond)                                  \
    do {                                                   \
        if (!(cond)) {                                     \
            printf("FAILED: %s (line %d)\n", what, __LINE__); \
            return 1;                                      \
        }                                                  \
    } while (0)

static unsigned char byte_at(size_t i) { return (unsigned char)(i * 131u + 7u); }

/* One swap of n blocks from srcs to dsts, as vllm-ascend makes it. */
static aclError swap(void **dsts, void **srcs, size_t *sizes, size_t n, int to_device,
                     int32_t device, aclrtStream stream, size_t *fail_index) {
    aclrtMemcpyBatchAttr attr;
    memset(&attr, 0, sizeof attr);
    aclrtMemLocation host_loc = {0, ACL_MEM_LOCATION_TYPE_HOST};
    aclrtMemLocation device_loc = {(uint32_t)device, ACL_MEM_LOCATION_TYPE_DEVICE};
    attr.srcLoc = to_device ? host_loc : device_loc;
    attr.dstLoc = to_device ? device_loc : host_loc;
    size_t attrs_index = 0;
    *fail_index = 0;
    return aclrtMemcpyBatchAsync(dsts, sizes, srcs, sizes, n, &attr, &attrs_index, 1,
                                 fail_index, stream);
}

int main(void) {
    CHECK("aclInit", aclInit(NULL) == ACL_SUCCESS);
    CHECK("aclrtSetDevice", aclrtSetDevice(0) == ACL_SUCCESS);
    int32_t device = -1;
    CHECK("aclrtGetDevice", aclrtGetDevice(&device) == ACL_SUCCESS && device == 0);
    aclrtStream stream = NULL;
    CHECK("aclrtCreateStream", aclrtCreateStream(&stream) == ACL_SUCCESS);

    void *kv = NULL, *pinned = NULL;
    CHECK("aclrtMalloc", aclrtMalloc(&kv, BLOCKS * BLOCK, ACL_MEM_MALLOC_HUGE_FIRST) == 0);
    CHECK("aclrtMallocHost", aclrtMallocHost(&pinned, BLOCKS * BLOCK) == 0);
    static unsigned char original[BLOCKS * BLOCK], back[BLOCKS * BLOCK];
    for (size_t i = 0; i < sizeof original; i++) original[i] = byte_at(i);
    CHECK("fill the device", aclrtMemcpy(kv, sizeof original, original, sizeof original,
                                         ACL_MEMCPY_HOST_TO_DEVICE) == 0);

    /* Out: device blocks 1, 3, 5, 7 to host blocks 0, 1, 2, 3. */
    void *srcs[MOVED], *dsts[MOVED];
    size_t sizes[MOVED];
    for (size_t k = 0; k < MOVED; k++) {
        srcs[k] = (char *)kv + (2 * k + 1) * BLOCK;
        dsts[k] = (char *)pinned + k * BLOCK;
        sizes[k] = BLOCK;
    }
    size_t fail_index = 0;
    aclError e = swap(dsts, srcs, sizes, MOVED, 0, device, stream, &fail_index);
    if (e != ACL_SUCCESS) printf("swap out: %d at %zu\n", e, fail_index);
    CHECK("swap out", e == ACL_SUCCESS && fail_index == SIZE_MAX);
    CHECK("synchronize", aclrtSynchronizeStream(stream) == ACL_SUCCESS);
    for (size_t k = 0; k < MOVED; k++) {
        CHECK("host block holds its device block",
              memcmp((char *)pinned + k * BLOCK, original + (2 * k + 1) * BLOCK, BLOCK) == 0);
    }

    /* In: host blocks 0..3 to device blocks 0, 2, 4, 6, over zeroed memory. */
    CHECK("zero the device", aclrtMemset(kv, BLOCKS * BLOCK, 0, BLOCKS * BLOCK) == 0);
    for (size_t k = 0; k < MOVED; k++) {
        srcs[k] = (char *)pinned + k * BLOCK;
        dsts[k] = (char *)kv + 2 * k * BLOCK;
    }
    e = swap(dsts, srcs, sizes, MOVED, 1, device, stream, &fail_index);
    if (e != ACL_SUCCESS) printf("swap in: %d at %zu\n", e, fail_index);
    CHECK("swap in", e == ACL_SUCCESS && fail_index == SIZE_MAX);
    CHECK("synchronize", aclrtSynchronizeStream(stream) == ACL_SUCCESS);
    CHECK("read back", aclrtMemcpy(back, sizeof back, kv, sizeof back,
                                   ACL_MEMCPY_DEVICE_TO_HOST) == 0);
    for (size_t b = 0; b < BLOCKS; b++) {
        if (b % 2 == 0) {
            CHECK("device block swapped in",
                  memcmp(back + b * BLOCK, original + (b + 1) * BLOCK, BLOCK) == 0);
        } else {
            for (size_t i = 0; i < BLOCK; i++) CHECK("untouched block is zero", back[b * BLOCK + i] == 0);
        }
    }

    /* A refusal names its copy: the third source is not host memory. */
    srcs[2] = kv;
    e = swap(dsts, srcs, sizes, MOVED, 1, device, stream, &fail_index);
    CHECK("a wrong location is refused at its index",
          e == ACL_ERROR_RT_PARAM_INVALID && fail_index == 2);

    CHECK("aclrtFreeHost", aclrtFreeHost(pinned) == 0);
    CHECK("aclrtFree", aclrtFree(kv) == 0);
    CHECK("aclrtDestroyStream", aclrtDestroyStream(stream) == 0);
    CHECK("aclFinalize", aclFinalize() == 0);
    printf("ok\n");
    return 0;
}
