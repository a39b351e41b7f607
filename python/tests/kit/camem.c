/* A C extension in vllm-ascend's camem style: it reserves, allocates and
 * maps device memory, and unmaps and frees it, through libascendcl.so.
 * Built against aclmem.include_dir() and aclmem.lib_dir(). */
#include <stddef.h>
#include <acl/acl.h>

/* Reserves `size` bytes, allocates HBM and maps it: the address in *va. */
int create_and_map(size_t size, void **va, void **handle) {
    aclrtPhysicalMemProp prop = {0};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    int ret = aclrtReserveMemAddress(va, size, 0, NULL, 0);
    if (ret != 0) return ret;
    ret = aclrtMallocPhysical((aclrtDrvMemHandle *)handle, size, &prop, 0);
    if (ret != 0) return ret;
    return aclrtMapMem(*va, size, 0, (aclrtDrvMemHandle)*handle, 0);
}

int unmap_and_release(void *va, void *handle) {
    int ret = aclrtUnmapMem(va);
    if (ret != 0) return ret;
    ret = aclrtFreePhysical((aclrtDrvMemHandle)handle);
    if (ret != 0) return ret;
    return aclrtReleaseMemAddress(va);
}
