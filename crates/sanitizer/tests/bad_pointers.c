/*
 * Every function the sanitizer checks, called with pointers the library
 * refuses: NULL, (void *)1, a PROT_NONE page and a page unmapped again.
 * Prints one line per call: the call, which argument was bad, how, and the
 * code. Run with and without the sanitizer preloaded, the output must be
 * the same (the sanitizer forwards unchanged and never reads memory the
 * library would refuse), and the program must not crash. The last line is
 * `done N` (N calls made).
 */
#define _DEFAULT_SOURCE
#include <acl/acl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define MIB ((size_t)1 << 20)

#ifndef MAP_FIXED_NOREPLACE /* glibc before 2.28; the kernel's value */
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static int calls;

static void show(const char *call, const char *arg, const char *how, aclError code) {
    printf("%s %s %s %d\n", call, arg, how, (int)code);
    fflush(stdout);
    calls++;
}

/* A page mapped with `prot`, or (`unmap`) a page mapped and unmapped again.
 * The unmapped one is placed low in the address space, where the kernel's
 * top-down placement (and so the library's own mappings) never reaches:
 * it stays unmapped for the whole run, the same in every run. */
static void *page(int prot, int unmap) {
    void *p = MAP_FAILED;
    if (unmap) {
        for (uintptr_t at = (uintptr_t)1 << 32; p == MAP_FAILED && at < ((uintptr_t)1 << 36);
             at += (uintptr_t)1 << 30) {
            p = mmap((void *)at, 4096, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p != MAP_FAILED && p != (void *)at) {
                munmap(p, 4096); /* an old kernel took the address as a hint only */
                p = MAP_FAILED;
            }
        }
    } else {
        p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (p == MAP_FAILED) return NULL;
    memset(p, 0x5a, 4096);
    if (unmap) {
        munmap(p, 4096);
    } else {
        mprotect(p, 4096, prot);
    }
    return p;
}

int main(void) {
    aclrtPhysicalMemProp hbm;
    memset(&hbm, 0, sizeof hbm);
    hbm.memAttr = ACL_HBM_MEM_HUGE;
    hbm.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;

    /* Valid objects the calls below refer to. */
    aclrtDrvMemHandle h = NULL, h2 = NULL;
    void *va = NULL, *dev = NULL, *got = NULL;
    uint64_t id = 0;
    char host[64] = {0};
    if (aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0) != 0) return 3;
    if (aclrtReserveMemAddress(&va, 4 * MIB, 0, NULL, 0) != 0) return 4;
    if (aclrtMapMem(va, 2 * MIB, 0, h, 0) != 0) return 5;
    if (aclrtMalloc(&dev, 2 * MIB, ACL_MEM_MALLOC_HUGE_FIRST) != 0) return 6;
    show("aclrtMemExportToShareableHandle", "-", "valid",
         aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &id));

    struct {
        const char *how;
        void *p;
    } bad[] = {
        {"null", NULL},
        {"one", (void *)1},
        {"prot-none", page(PROT_NONE, 0)},
        {"unmapped", page(0, 1)},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *how = bad[i].how;
        void *b = bad[i].p;
        if (b == NULL && i != 0) return 7;
        show("aclrtCreateContext", "context", how, aclrtCreateContext((aclrtContext *)b, 0));
        show("aclrtSetCurrentContext", "context", how, aclrtSetCurrentContext((aclrtContext)b));
        show("aclrtMallocPhysical", "prop", how,
             aclrtMallocPhysical(&h2, 2 * MIB, (const aclrtPhysicalMemProp *)b, 0));
        show("aclrtMallocPhysical", "handle", how,
             aclrtMallocPhysical((aclrtDrvMemHandle *)b, 2 * MIB, &hbm, 0));
        show("aclrtFreePhysical", "handle", how, aclrtFreePhysical((aclrtDrvMemHandle)b));
        show("aclrtReserveMemAddress", "virPtr", how,
             aclrtReserveMemAddress((void **)b, 2 * MIB, 0, NULL, 0));
        show("aclrtReleaseMemAddress", "virPtr", how, aclrtReleaseMemAddress(b));
        show("aclrtMapMem", "virPtr", how, aclrtMapMem(b, 2 * MIB, 0, h, 0));
        show("aclrtMapMem", "handle", how,
             aclrtMapMem((char *)va + 2 * MIB, 2 * MIB, 0, (aclrtDrvMemHandle)b, 0));
        show("aclrtUnmapMem", "virPtr", how, aclrtUnmapMem(b));
        show("aclrtMemExportToShareableHandle", "shareable", how,
             aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, (uint64_t *)b));
        show("aclrtMemExportToShareableHandleV2", "shareable", how,
             aclrtMemExportToShareableHandleV2(h, 0, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, b));
        show("aclrtMemImportFromShareableHandle", "handle", how,
             aclrtMemImportFromShareableHandle(id, 0, (aclrtDrvMemHandle *)b));
        show("aclrtMemImportFromShareableHandleV2", "shareable", how,
             aclrtMemImportFromShareableHandleV2(b, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, &h2));
        show("aclrtMemImportFromShareableHandleV2", "handle", how,
             aclrtMemImportFromShareableHandleV2(&id, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0,
                                                 (aclrtDrvMemHandle *)b));
        show("aclrtMemRetainAllocationHandle", "handle", how,
             aclrtMemRetainAllocationHandle(va, (aclrtDrvMemHandle *)b));
        show("aclrtMalloc", "devPtr", how, aclrtMalloc((void **)b, 2 * MIB, ACL_MEM_MALLOC_HUGE_FIRST));
        show("aclrtMallocAlign32", "devPtr", how,
             aclrtMallocAlign32((void **)b, 2 * MIB, ACL_MEM_MALLOC_HUGE_FIRST));
        show("aclrtFree", "devPtr", how, aclrtFree(b));
        show("aclrtMallocHost", "hostPtr", how, aclrtMallocHost((void **)b, 4096));
        show("aclrtFreeHost", "hostPtr", how, aclrtFreeHost(b));
        show("aclrtMemcpy", "dst", how, aclrtMemcpy(b, 16, dev, 16, ACL_MEMCPY_DEVICE_TO_HOST));
        show("aclrtMemcpy", "src", how, aclrtMemcpy(dev, 16, b, 16, ACL_MEMCPY_HOST_TO_DEVICE));
        show("aclrtMemcpy", "host", how, aclrtMemcpy(host, 16, b, 16, ACL_MEMCPY_HOST_TO_HOST));
        show("aclrtMemcpyAsync", "src", how,
             aclrtMemcpyAsync(dev, 16, b, 16, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
        show("aclrtMemcpyAsync", "dst", how,
             aclrtMemcpyAsync(b, 16, dev, 16, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
        show("aclrtMemset", "devPtr", how, aclrtMemset(b, 16, 0, 16));
        show("aclrtIpcMemImportByKey", "devPtr", how,
             aclrtIpcMemImportByKey((void **)b, "no-such-key", 0));
        show("aclrtIpcMemImportByKey", "key", how, aclrtIpcMemImportByKey(&got, (const char *)b, 0));
        show("aclrtIpcMemClose", "key", how, aclrtIpcMemClose((const char *)b));
    }
    show("aclrtSynchronizeStream", "-", "valid", aclrtSynchronizeStream(NULL));
    show("aclrtUnmapMem", "-", "valid", aclrtUnmapMem(va));
    show("aclrtReleaseMemAddress", "-", "valid", aclrtReleaseMemAddress(va));
    show("aclrtFreePhysical", "-", "valid", aclrtFreePhysical(h));
    show("aclrtFree", "-", "valid", aclrtFree(dev));
    show("aclFinalize", "-", "valid", aclFinalize());
    printf("done %d\n", calls);
    return 0;
}
