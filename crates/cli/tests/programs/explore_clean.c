/*
 * A sleep/wake program whose every error path is right, for `aclmem
 * explore`: two cycles of a weight buffer (physical handle, reservation,
 * mapping, a fill and a copy back), each releasing what it made in the
 * reverse order whatever call failed, a failed release tried once more,
 * and a host staging block freed on every path. Every fault explore can
 * inject is `handled`.
 */
#include <acl/acl.h>
#include <stdio.h>
#include <string.h>

#define SIZE ((size_t)2 << 20)

/* A release that failed is tried once more: a fault fails one call. */
#define RELEASE(call) ((call) == 0 || (call) == 0)

static int cycle(void *host) {
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;

    int ok = 0;
    aclrtDrvMemHandle h = NULL;
    void *va = NULL;
    if (aclrtMallocPhysical(&h, SIZE, &prop, 0) != 0) return 0;
    if (aclrtReserveMemAddress(&va, SIZE, 0, NULL, 0) != 0) goto free_handle;
    if (aclrtMapMem(va, SIZE, 0, h, 0) != 0) goto release;
    ok = aclrtMemset(va, SIZE, 0x5a, SIZE) == 0 &&
         aclrtMemcpy(host, SIZE, va, SIZE, ACL_MEMCPY_DEVICE_TO_HOST) == 0 &&
         ((const unsigned char *)host)[SIZE - 1] == 0x5a;
    if (!RELEASE(aclrtUnmapMem(va))) {
        /* Still mapped: neither the reservation nor the handle can go. */
        return 0;
    }
release:
    if (!RELEASE(aclrtReleaseMemAddress(va))) ok = 0;
free_handle:
    if (!RELEASE(aclrtFreePhysical(h))) ok = 0;
    return ok;
}

int main(void) {
    if (aclInit(NULL) != 0) return 1;
    int ok = 0;
    if (aclrtSetDevice(0) == 0) {
        void *host = NULL;
        if (aclrtMallocHost(&host, SIZE) == 0) {
            ok = cycle(host) && cycle(host);
            if (!RELEASE(aclrtFreeHost(host))) ok = 0;
        }
        if (!RELEASE(aclrtResetDevice(0))) ok = 0;
    }
    if (!RELEASE(aclFinalize())) ok = 0;
    printf("%s\n", ok ? "slept and woke twice" : "gave up");
    return ok ? 0 : 1;
}
