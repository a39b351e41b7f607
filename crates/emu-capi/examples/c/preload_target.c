/*
 * Run with LD_PRELOAD=libpreload_counter.so: allocates and frees through
 * aclrtMallocAlign32 / aclrtFree, then asks the preloaded wrapper how many
 * calls it saw. The wrapper must have seen each one, and each must still
 * have reached the emulated library (the memory is really allocated and
 * accounted). Exits 0 on success.
 */
#include "example.h"

#include <dlfcn.h>

typedef void (*calls_fn)(unsigned long *, unsigned long *);

int main(void) {
    CHECK(aclInit(NULL), ACL_SUCCESS);
    CHECK(aclrtSetDevice(0), ACL_SUCCESS);
    size_t before = 0, total = 0, during = 0;
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &before, &total), ACL_SUCCESS);
    void *ptrs[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        CHECK(aclrtMallocAlign32(&ptrs[i], (size_t)2 << 20, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    }
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &during, &total), ACL_SUCCESS);
    EXPECT(before - during >= ((size_t)6 << 20));
    for (int i = 0; i < 3; i++) {
        CHECK(aclrtFree(ptrs[i]), ACL_SUCCESS);
    }
    CHECK(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM);

    calls_fn calls = (calls_fn)dlsym(RTLD_DEFAULT, "aclmem_preload_calls");
    EXPECT(calls != NULL);
    if (calls != NULL) {
        unsigned long m = 0, f = 0;
        calls(&m, &f);
        printf("     the wrapper saw %lu aclrtMallocAlign32 and %lu aclrtFree calls\n", m, f);
        EXPECT(m == 3 && f == 4);
    }
    /* The library's own definitions are still reachable by name. */
    EXPECT(dlsym(RTLD_DEFAULT, "aclrtMallocPhysical") != NULL);
    CHECK(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK(aclFinalize(), ACL_SUCCESS);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
