/* A pluggable allocator for torch_npu in the style of vllm-ascend's sleep
 * mode (its camem allocator): `my_malloc` reserves an address range,
 * allocates physical HBM and maps it; `my_free` undoes that.
 * `camem_sleep` unmaps and frees the physical memory of every live
 * allocation while keeping its address reserved; `camem_wake` allocates
 * new physical memory and maps it at the same addresses. Written against
 * the ACL headers aclmem ships, linked with -lascendcl. */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <acl/acl.h>

#define MAX_ALLOCATIONS 256
#define GRANULE ((size_t)2 << 20)

struct allocation {
    void *va;
    size_t size;
    int device;
    aclrtDrvMemHandle handle; /* NULL while asleep */
};

static struct allocation table[MAX_ALLOCATIONS];

static aclrtPhysicalMemProp hbm(int device) {
    aclrtPhysicalMemProp prop = {0};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (uint32_t)device;
    return prop;
}

static int map_new(struct allocation *a) {
    aclrtPhysicalMemProp prop = hbm(a->device);
    aclrtDrvMemHandle handle = NULL;
    int ret = aclrtMallocPhysical(&handle, a->size, &prop, 0);
    if (ret != 0) return ret;
    ret = aclrtMapMem(a->va, a->size, 0, handle, 0);
    if (ret != 0) {
        aclrtFreePhysical(handle);
        return ret;
    }
    a->handle = handle;
    return 0;
}

static int unmap_free(struct allocation *a) {
    int ret = aclrtUnmapMem(a->va);
    if (ret != 0) return ret;
    ret = aclrtFreePhysical(a->handle);
    a->handle = NULL;
    return ret;
}

void *my_malloc(ssize_t size, int device, aclrtStream stream) {
    (void)stream;
    if (size <= 0) return NULL;
    for (int i = 0; i < MAX_ALLOCATIONS; i++) {
        struct allocation *a = &table[i];
        if (a->va != NULL) continue;
        size_t rounded = ((size_t)size + GRANULE - 1) / GRANULE * GRANULE;
        void *va = NULL;
        if (aclrtReserveMemAddress(&va, rounded, 0, NULL, 0) != 0) return NULL;
        a->va = va;
        a->size = rounded;
        a->device = device;
        if (map_new(a) != 0) {
            aclrtReleaseMemAddress(va);
            a->va = NULL;
            return NULL;
        }
        return va;
    }
    return NULL;
}

void my_free(void *ptr, ssize_t size, int device, aclrtStream stream) {
    (void)size;
    (void)device;
    (void)stream;
    for (int i = 0; i < MAX_ALLOCATIONS; i++) {
        struct allocation *a = &table[i];
        if (a->va != ptr || ptr == NULL) continue;
        if (a->handle != NULL) unmap_free(a);
        aclrtReleaseMemAddress(a->va);
        a->va = NULL;
        return;
    }
}

int camem_sleep(void) {
    for (int i = 0; i < MAX_ALLOCATIONS; i++) {
        if (table[i].va != NULL && table[i].handle != NULL) {
            int ret = unmap_free(&table[i]);
            if (ret != 0) return ret;
        }
    }
    return 0;
}

int camem_wake(void) {
    for (int i = 0; i < MAX_ALLOCATIONS; i++) {
        if (table[i].va != NULL && table[i].handle == NULL) {
            int ret = map_new(&table[i]);
            if (ret != 0) return ret;
        }
    }
    return 0;
}

size_t camem_mapped_bytes(void) {
    size_t total = 0;
    for (int i = 0; i < MAX_ALLOCATIONS; i++) {
        if (table[i].va != NULL && table[i].handle != NULL) total += table[i].size;
    }
    return total;
}
