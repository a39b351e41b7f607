/*
 * Error paths with one seeded defect each, for `aclmem explore`: a failed
 * aclrtMalloc is handled; a failed aclrtMallocPhysical leaks the block
 * made before it; a failed aclrtReserveMemAddress frees the handle twice;
 * a failed aclrtMapMem aborts; a failed aclrtMemset waits forever. On the
 * clean path everything is freed.
 *
 * With EXPLORE_OWN_HANDLER=before (or =after), the program handles SIGABRT
 * itself, installing its handler before (or after) aclInit: it ends with
 * exit code 3, and the sanitizer's crash record must not replace it.
 */
#include <acl/acl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

static void own_handler(int sig) {
    (void)sig;
    _exit(3);
}

static void handle_abort_if(const char *when) {
    const char *asked = getenv("EXPLORE_OWN_HANDLER");
    if (asked != NULL && strcmp(asked, when) == 0) signal(SIGABRT, own_handler);
}

int main(void) {
    handle_abort_if("before");
    if (aclInit(NULL) != 0) return 1;
    handle_abort_if("after");
    if (aclrtSetDevice(0) != 0) return 1;
    void *block = NULL;
    if (aclrtMalloc(&block, MIB, ACL_MEM_MALLOC_HUGE_FIRST) != 0) { /* EXPLORE-HANDLED */
        aclrtResetDevice(0);
        aclFinalize();
        return 1;
    }
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    aclrtDrvMemHandle h = NULL;
    if (aclrtMallocPhysical(&h, 2 * MIB, &prop, 0) != 0) { /* EXPLORE-LEAK */
        return 1; /* the block is never freed */
    }
    void *va = NULL;
    if (aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0) != 0) { /* EXPLORE-MISUSE */
        aclrtFreePhysical(h);
        aclrtFreePhysical(h); /* freed twice */
        aclrtFree(block);
        return 1;
    }
    if (aclrtMapMem(va, 2 * MIB, 0, h, 0) != 0) { /* EXPLORE-CRASH */
        abort(); /* EXPLORE-CRASH-AT */
    }
    if (aclrtMemset(va, 2 * MIB, 0, 2 * MIB) != 0) { /* EXPLORE-HANG */
        for (;;) pause(); /* EXPLORE-HANG-AT */
    }
    aclrtUnmapMem(va);
    aclrtReleaseMemAddress(va);
    aclrtFreePhysical(h);
    aclrtFree(block);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
