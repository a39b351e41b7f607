/*
 * Stream-ordered pools and managed memory, for the sanitizer's tests (run
 * on Atlas A2 with CANN 9.1): a block of a pool filled from the host,
 * then, by the mode in argv[1]:
 *   clean      the block freed on its stream, the pool destroyed, managed
 *              memory freed: no finding;
 *   freed      the block used after aclrtMemPoolFreeAsync:
 *              pool-use-after-free;
 *   destroyed  the pool destroyed with the block allocated, then the block
 *              used: pool-destroyed-with-live-memory, pool-use-after-destroy;
 *   leaked     managed memory never freed: managed-memory-leaked at exit.
 * Lines the tests look for carry a marker comment (`at: ...`).
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"

#define N 4096

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        return 2;
    }
    aclrtStream s = NULL;
    void *host = NULL, *block = NULL, *managed = NULL;
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    props.maxSize = 64 << 20;
    if (aclrtCreateStream(&s) != ACL_SUCCESS || aclrtMallocHost(&host, N) != ACL_SUCCESS ||
        aclrtMemPoolCreate(&pool, &props) != ACL_SUCCESS ||
        aclrtMemPoolMallocAsync(&block, N, pool, s) != ACL_SUCCESS || /* at: pool-malloc */
        aclrtMemAllocManaged(&managed, N, ACL_RT_MEM_ATTACH_GLOBAL) != ACL_SUCCESS) { /* at: managed-alloc */
        return 2;
    }
    memset(host, 3, N);
    if (aclrtMemcpyAsync(block, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s) != ACL_SUCCESS) {
        return 3;
    }
    if (strcmp(mode, "freed") == 0) {
        aclrtMemPoolFreeAsync(block, s); /* at: pool-free */
        aclrtMemcpyAsync(host, N, block, N, ACL_MEMCPY_DEVICE_TO_HOST, s); /* at: use-after-free */
        aclrtMemPoolDestroy(pool);
    } else if (strcmp(mode, "destroyed") == 0) {
        aclrtMemPoolDestroy(pool); /* at: destroy-with-live */
        aclrtMemcpy(host, N, block, N, ACL_MEMCPY_DEVICE_TO_HOST); /* at: use-after-destroy */
    } else {
        aclrtMemPoolFreeAsync(block, s);
        aclrtSynchronizeStream(s);
        aclrtMemPoolDestroy(pool);
    }
    if (strcmp(mode, "leaked") != 0) {
        aclrtFree(managed);
    }
    aclrtFreeHost(host);
    aclrtDestroyStream(s);
    aclrtResetDevice(0);
    aclFinalize();
    printf("done\n");
    return 0;
}
