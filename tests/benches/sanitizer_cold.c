/*
 * A library underneath the sanitizer that does nothing but, at each call,
 * optionally evicts the caches as a real library's system calls do: what
 * the sanitizer itself costs per call, warm and cold, without the noise of
 * the emulator's kernel work (docs/benchmarks.md, goal 9, "Where the rest
 * is"). It defines the functions of the 2 MiB cycle and what the sanitizer
 * asks at its start; each answers success at once.
 *
 *   cc -O2 -shared -fPIC -o target/libsanitizer_cold.so tests/benches/sanitizer_cold.c
 *   cc -O2 -Icrates/emu-capi/include -o target/sanitizer_slices \
 *       tests/benches/sanitizer_slices.c -ldl
 *   COLD_EVICT_CODE=1 ACLMEM_ASCENDCL=$PWD/target/libsanitizer_cold.so \
 *   ACLMEM_SANITIZER_TARGETS=a2@8.3,a3 target/sanitizer_slices \
 *       target/libsanitizer_cold.so target/release/libaclmem_sanitizer.so 51
 *
 * The slice harness prints the ratio; the sanitizer's own nanoseconds per
 * cycle are the difference of the two sides' times, which the harness
 * prints with `ACLMEM_SLICES_TIMES=1`.
 *
 * COLD_EVICT_CODE=1: each call runs 64 KiB of straight-line code (twice
 * the first-level instruction cache). COLD_EVICT_DATA=KiB: each call
 * touches that many KiB of a buffer, one byte per 64-byte line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef int aclError;

static uintptr_t next_handle = 0x1000;
static char *buffer;
static size_t data_kib;
static int code, configured;

/* 64 KiB of no-operations, run from the first to the last. */
static void __attribute__((noinline)) code_sweep(void) {
#if defined(__x86_64__) || defined(__aarch64__)
    __asm__ volatile(".rept 16384\n\tnop\n\tnop\n\tnop\n\tnop\n\t.endr" ::: "memory");
#endif
}

static void evict(void) {
    if (!configured) {
        const char *d = getenv("COLD_EVICT_DATA"), *c = getenv("COLD_EVICT_CODE");
        data_kib = d ? (size_t)strtoul(d, NULL, 10) : 0;
        code = c != NULL && c[0] == '1';
        buffer = data_kib ? malloc(data_kib * 1024) : NULL;
        if (buffer == NULL) data_kib = 0;
        configured = 1;
    }
    for (size_t i = 0; i < data_kib * 1024; i += 64) ((volatile char *)buffer)[i]++;
    if (code) code_sweep();
}

aclError aclInit(const char *config) {
    (void)config;
    return 0;
}
aclError aclFinalize(void) { return 0; }
aclError aclrtSetDevice(int32_t device) {
    (void)device;
    return 0;
}
aclError aclrtResetDevice(int32_t device) {
    (void)device;
    return 0;
}
aclError aclrtGetRunMode(int *mode) {
    *mode = 1; /* ACL_HOST */
    return 0;
}
const char *aclrtGetSocName(void) { return "Ascend910B3"; }

aclError aclrtMallocPhysical(void **handle, size_t size, const void *prop, uint64_t flags) {
    (void)size, (void)prop, (void)flags;
    evict();
    next_handle += 64;
    *handle = (void *)next_handle;
    return 0;
}
aclError aclrtFreePhysical(void *handle) {
    (void)handle;
    evict();
    return 0;
}
aclError aclrtReserveMemAddress(void **va, size_t size, size_t alignment, void *expect,
                                uint64_t flags) {
    (void)size, (void)alignment, (void)expect, (void)flags;
    evict();
    *va = (void *)(uintptr_t)0x7f0000000000;
    return 0;
}
aclError aclrtReleaseMemAddress(void *va) {
    (void)va;
    evict();
    return 0;
}
aclError aclrtMapMem(void *va, size_t size, size_t offset, void *handle, uint64_t flags) {
    (void)va, (void)size, (void)offset, (void)handle, (void)flags;
    evict();
    return 0;
}
aclError aclrtUnmapMem(void *va) {
    (void)va;
    evict();
    return 0;
}
