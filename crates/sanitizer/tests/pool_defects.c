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
 *   leaked     managed memory never freed: managed-memory-leaked at exit;
 *   unordered  the block copied on a second stream with nothing ordering
 *              it after the allocation: pool-stream-unordered.
 * The clean run also uses the block on the second stream after an event
 * (recorded on the first, waited for by the second) and after the first
 * stream's synchronisation: no finding.
 * Lines the tests look for carry a marker comment (`at: ...`).
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "acl/acl_rt_memory_soma.h"

/* Events: framework functions the shipped headers do not declare (CANN's
 * acl_rt.h does). */
typedef void *aclrtEvent;
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);

#define N 4096

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        return 2;
    }
    aclrtStream s = NULL, s2 = NULL;
    aclrtEvent ev = NULL;
    void *host = NULL, *block = NULL, *managed = NULL;
    aclrtMemPool pool = NULL;
    aclrtMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    props.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    props.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    props.maxSize = 64 << 20;
    if (aclrtCreateStream(&s) != ACL_SUCCESS || aclrtCreateStream(&s2) != ACL_SUCCESS ||
        aclrtCreateEvent(&ev) != ACL_SUCCESS || aclrtMallocHost(&host, N) != ACL_SUCCESS ||
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
    } else if (strcmp(mode, "unordered") == 0) {
        void *other = NULL;
        aclrtMemPoolMallocAsync(&other, N, pool, s);
        aclrtMemcpyAsync(other, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s2); /* at: unordered-use */
        aclrtMemPoolFreeAsync(other, s);
        aclrtMemPoolFreeAsync(block, s);
        aclrtSynchronizeStream(s);
        aclrtMemPoolDestroy(pool);
    } else {
        /* Ordered by an event: recorded on s after the allocation, waited for by s2. */
        aclrtRecordEvent(ev, s);
        aclrtStreamWaitEvent(s2, ev);
        aclrtMemcpyAsync(host, N, block, N, ACL_MEMCPY_DEVICE_TO_HOST, s2);
        /* Ordered by the host: s synchronised after the allocation. */
        void *other = NULL;
        aclrtMemPoolMallocAsync(&other, N, pool, s);
        aclrtSynchronizeStream(s);
        aclrtMemcpyAsync(other, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s2);
        aclrtSynchronizeStream(s2);
        aclrtMemPoolFreeAsync(other, s);
        aclrtMemPoolFreeAsync(block, s);
        aclrtSynchronizeStream(s);
        aclrtMemPoolDestroy(pool);
    }
    if (strcmp(mode, "leaked") != 0) {
        aclrtFree(managed);
    }
    aclrtFreeHost(host);
    aclrtDestroyEvent(ev);
    aclrtDestroyStream(s2);
    aclrtDestroyStream(s);
    aclrtResetDevice(0);
    aclFinalize();
    printf("done\n");
    return 0;
}
