/*
 * The 2 MiB cycle (malloc, reserve, map, unmap, release, free) through two
 * copies of the ACL API opened in one process, in alternating slices of
 * 3,000 cycles (which side runs first alternates): prints the median and
 * quartiles of the slices' time ratios, second / first. Goal 9's
 * measurement (tests/benches/goals.rs) in C, quicker to run while changing
 * the sanitizer (docs/benchmarks.md, goal 9):
 *
 *   cc -O2 -Icrates/emu-capi/include -o target/sanitizer_slices \
 *       tests/benches/sanitizer_slices.c -ldl
 *   ACLMEM_ASCENDCL=$PWD/target/release/libascendcl.so ACLMEM_EMU_QUIET=1 \
 *   ACLMEM_EMU_HBM=64GiB ACLMEM_SANITIZER_TARGETS=a2@8.3,a3 \
 *       target/sanitizer_slices target/release/libascendcl.so \
 *       target/release/libaclmem_sanitizer.so 101
 *
 * With ACLMEM_SLICES_TIMES=1 it also prints each side's median time per
 * cycle. Both sides may be sanitizers (two builds compared in one process,
 * each over the same library), or the library may be
 * tests/benches/sanitizer_cold.c (what the sanitizer itself costs, warm and
 * with the caches evicted at each call).
 *
 * tests/tests/bench_tools.rs builds and runs it (the cycle must run clean
 * under the sanitizer; the ratio printed is not asserted).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <acl/acl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef aclError (*malloc_physical_t)(aclrtDrvMemHandle *, size_t, const aclrtPhysicalMemProp *,
                                      uint64_t);
typedef aclError (*reserve_t)(void **, size_t, size_t, void *, uint64_t);
typedef aclError (*map_t)(void *, size_t, size_t, aclrtDrvMemHandle, uint64_t);
typedef aclError (*by_address_t)(void *);
typedef aclError (*free_physical_t)(aclrtDrvMemHandle);

struct api {
    malloc_physical_t malloc_physical;
    reserve_t reserve;
    map_t map;
    by_address_t unmap, release;
    free_physical_t free_physical;
};

static void *must(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (f == NULL) {
        fprintf(stderr, "no %s\n", name);
        exit(2);
    }
    return f;
}

static struct api open_api(const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "%s\n", dlerror());
        exit(2);
    }
    aclError (*init)(const char *) = must(lib, "aclInit");
    aclError (*set_device)(int32_t) = must(lib, "aclrtSetDevice");
    aclError r = init(NULL);
    if ((r != 0 && r != 100002) || set_device(0) != 0) {
        fprintf(stderr, "%s: aclInit or aclrtSetDevice failed\n", path);
        exit(2);
    }
    struct api a = {must(lib, "aclrtMallocPhysical"), must(lib, "aclrtReserveMemAddress"),
                    must(lib, "aclrtMapMem"),         must(lib, "aclrtUnmapMem"),
                    must(lib, "aclrtReleaseMemAddress"), must(lib, "aclrtFreePhysical")};
    return a;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Nanoseconds per cycle over `n` cycles. */
static double slice(const struct api *a, long n) {
    aclrtPhysicalMemProp prop = {0};
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    const size_t size = (size_t)2 << 20;
    double start = now_ns();
    for (long i = 0; i < n; i++) {
        aclrtDrvMemHandle h;
        void *va;
        if (a->malloc_physical(&h, size, &prop, 0) || a->reserve(&va, size, 0, NULL, 0) ||
            a->map(va, size, 0, h, 0) || a->unmap(va) || a->release(va) || a->free_physical(h)) {
            fprintf(stderr, "a call of the cycle failed\n");
            exit(1);
        }
    }
    return (now_ns() - start) / n;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s FIRST.so SECOND.so [SLICES]\n", argv[0]);
        return 2;
    }
    struct api first = open_api(argv[1]), second = open_api(argv[2]);
    int slices = argc > 3 ? atoi(argv[3]) : 31;
    if (slices < 4 || slices > 1001) slices = 31;
    const long n = 3000;
    double *ratio = malloc(sizeof(double) * (size_t)slices);
    double *first_ns = malloc(sizeof(double) * (size_t)slices);
    double *second_ns = malloc(sizeof(double) * (size_t)slices);
    if (ratio == NULL || first_ns == NULL || second_ns == NULL) return 1;
    slice(&first, n);
    slice(&second, n);
    for (int i = 0; i < slices; i++) {
        double x, y;
        if (i % 2) {
            y = slice(&second, n);
            x = slice(&first, n);
        } else {
            x = slice(&first, n);
            y = slice(&second, n);
        }
        ratio[i] = y / x;
        first_ns[i] = x;
        second_ns[i] = y;
    }
    qsort(ratio, (size_t)slices, sizeof ratio[0], by_value);
    printf("median %.3f (quartiles %.3f, %.3f) of %d slices\n", ratio[slices / 2],
           ratio[slices / 4], ratio[3 * slices / 4], slices);
    const char *times = getenv("ACLMEM_SLICES_TIMES");
    if (times != NULL && times[0] == '1') {
        qsort(first_ns, (size_t)slices, sizeof first_ns[0], by_value);
        qsort(second_ns, (size_t)slices, sizeof second_ns[0], by_value);
        printf("median ns per cycle: first %.1f, second %.1f (difference %.1f)\n",
               first_ns[slices / 2], second_ns[slices / 2],
               second_ns[slices / 2] - first_ns[slices / 2]);
    }
    free(ratio);
    free(first_ns);
    free(second_ns);
    return 0;
}
