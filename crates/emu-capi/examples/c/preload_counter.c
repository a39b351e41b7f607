/*
 * An LD_PRELOAD library that wraps aclrtMallocAlign32 and aclrtFree, the way
 * sglang's torch_memory_saver interposes the ACL allocator: each wrapper
 * counts the call and forwards it to the next definition, found with
 * dlsym(RTLD_NEXT). preload_target.c checks the counts.
 *
 *   cc -std=c11 -Wall -Wextra -fPIC -shared -I crates/emu-capi/include \
 *      preload_counter.c -o libpreload_counter.so -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include <acl/acl.h>

typedef aclError (*malloc_fn)(void **, size_t, aclrtMemMallocPolicy);
typedef aclError (*free_fn)(void *);

static unsigned long mallocs, frees;

/* What preload_target.c looks up with dlsym(RTLD_DEFAULT). */
__attribute__((visibility("default"))) void aclmem_preload_calls(unsigned long *m,
                                                                 unsigned long *f) {
    *m = mallocs;
    *f = frees;
}

ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size,
                                                aclrtMemMallocPolicy policy) {
    malloc_fn next = (malloc_fn)dlsym(RTLD_NEXT, "aclrtMallocAlign32");
    if (next == NULL) {
        return ACL_ERROR_INTERNAL_ERROR;
    }
    mallocs++;
    return next(devPtr, size, policy);
}

ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr) {
    free_fn next = (free_fn)dlsym(RTLD_NEXT, "aclrtFree");
    if (next == NULL) {
        return ACL_ERROR_INTERNAL_ERROR;
    }
    frees++;
    return next(devPtr);
}
