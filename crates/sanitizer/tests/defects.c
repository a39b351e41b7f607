/*
 * Seeded defects, one per class the sanitizer reports, chosen by argv[1];
 * `clean` makes none. Every defect is a call the emulated library answers
 * with a code (or, for free-while-mapped and leak, accepts): the program
 * itself never crashes, so what is under test is only what the sanitizer
 * reports. Run with ACLMEM_SANITIZER_TARGETS=a2@8.3 for `portability`.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c11 */
#endif
#define _DEFAULT_SOURCE /* vfork */
#include <acl/acl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dlfcn.h>
#include <pthread.h>

#define MIB ((size_t)1 << 20)

/* The sanitizer's phase marker, when it is loaded. */
__attribute__((weak)) void aclmem_sanitizer_phase(const char *name);
static void phase(const char *name) {
    if (aclmem_sanitizer_phase) aclmem_sanitizer_phase(name);
}

static aclrtPhysicalMemProp prop(aclrtMemAttr attr) {
    aclrtPhysicalMemProp p;
    memset(&p, 0, sizeof p);
    p.memAttr = attr;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    return p;
}

/* One call site reached through two callers with the same frame: the
 * stacks kept at the call must name the caller of each call (the
 * sanitizer reuses a stack only when the stack still holds it). */
static void __attribute__((noinline)) make_handle(aclrtDrvMemHandle *out) {
    aclrtPhysicalMemProp p = prop(ACL_HBM_MEM_HUGE);
    aclrtMallocPhysical(out, 2 * MIB, &p, 0); /* TWO-CALLERS */
}
static void __attribute__((noinline)) first_caller(aclrtDrvMemHandle *out) { make_handle(out); }

/* Out of memory: device memory held from three places, then a request
 * the device cannot hold. */
static void __attribute__((noinline)) load_weights(aclrtDrvMemHandle *w) {
    aclrtPhysicalMemProp p = prop(ACL_HBM_MEM_HUGE);
    for (int i = 0; i < 3; i++) aclrtMallocPhysical(&w[i], 16 * MIB, &p, 0); /* OOM-WEIGHTS */
}
static void __attribute__((noinline)) fill_cache(void **c) {
    for (int i = 0; i < 2; i++) aclrtMalloc(&c[i], 8 * MIB, ACL_MEM_MALLOC_HUGE_FIRST); /* OOM-CACHE */
}
static void __attribute__((noinline)) activations(aclrtDrvMemHandle *a) {
    aclrtPhysicalMemProp p = prop(ACL_HBM_MEM_HUGE);
    aclrtMallocPhysical(a, 4 * MIB, &p, 0); /* OOM-ACTIVATIONS */
}
static void __attribute__((noinline)) second_caller(aclrtDrvMemHandle *out) { make_handle(out); }

/* Out of memory through an allocation wrapper: one call site for every
 * block, reached from two callers (one of them calling twice on one
 * line). The report tells the callers apart and keeps one place per line. */
static void *wrapped[3];
static void __attribute__((noinline)) *device_block(size_t size) {
    void *p = NULL;
    aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST); /* WRAPPER */
    return p;
}
static void __attribute__((noinline)) kv_cache(void) {
    wrapped[0] = device_block(8 * MIB), wrapped[1] = device_block(8 * MIB); /* KV-CACHE */
}
static void __attribute__((noinline)) workspace(void) {
    wrapped[2] = device_block(4 * MIB); /* WORKSPACE */
}

/* C functions whose names a C++ demangler would read as types. */
static void __attribute__((noinline)) f(aclrtDrvMemHandle *out) {
    aclrtPhysicalMemProp p = prop(ACL_HBM_MEM_HUGE);
    aclrtMallocPhysical(out, 2 * MIB, &p, 0); /* SHORT-NAME */
}

/* Two threads unmapping one mapping at once, RACES times: the library
 * answers one of each pair, and the other unmaps nothing. */
#define RACES 50
static pthread_barrier_t race_start;
static void *unmap_racer(void *va) {
    pthread_barrier_wait(&race_start);
    aclrtUnmapMem(va); /* RACING-UNMAP */
    pthread_barrier_wait(&race_start);
    return NULL;
}
static void *racer_thread(void *va_slot) {
    void **slot = va_slot;
    /* Never leaves early: the main thread waits at every barrier. */
    aclrtSetDevice(0);
    for (int i = 0; i < RACES; i++) {
        pthread_barrier_wait(&race_start); /* the round's mapping is made */
        unmap_racer(*slot);
    }
    return NULL;
}

/* Threads on their own handles and addresses (other shards of the
 * sanitizer's model) beside the racing unmaps: each round of each worker
 * unmaps its own mapping twice (its range stays reserved: no other thread
 * gets that address) and frees its handle twice (the emulated library's
 * handle values are never handed out again). */
#define WORKERS 4
#define WORKER_ROUNDS 40
static void *shard_worker(void *unused) {
    (void)unused;
    aclrtSetDevice(0);
    aclrtPhysicalMemProp hbm = prop(ACL_HBM_MEM_HUGE);
    for (int i = 0; i < WORKER_ROUNDS; i++) {
        aclrtDrvMemHandle h = NULL;
        void *va = NULL, *block = NULL;
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtMapMem(va, 2 * MIB, 0, h, 0);
        aclrtMalloc(&block, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMemcpy(va, 2 * MIB, block, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE);
        aclrtFree(block);
        aclrtUnmapMem(va);
        aclrtUnmapMem(va); /* SHARD-UNMAP-AGAIN */
        aclrtReleaseMemAddress(va);
        aclrtFreePhysical(h);
        aclrtFreePhysical(h); /* SHARD-DOUBLE-FREE */
    }
    return NULL;
}

/* A mapping across a boundary of the sanitizer's address shards (1 GiB):
 * a map of the range's second half overlaps it, a release of its
 * reservation finds it, and a copy over all of it is of mapped memory. */
static int across_shards(void) {
    const size_t gib = (size_t)1 << 30;
    aclrtPhysicalMemProp hbm = prop(ACL_HBM_MEM_HUGE);
    aclrtDrvMemHandle wide = NULL, other = NULL;
    void *va = NULL, *block = NULL;
    if (aclrtReserveMemAddress(&va, gib + 8 * MIB, 0, NULL, 0) != ACL_SUCCESS) return 3;
    size_t start = (size_t)va;
    size_t boundary = (start + 2 * MIB + gib - 1) & ~(gib - 1);
    void *at = (void *)(boundary - 2 * MIB);
    if (aclrtMallocPhysical(&wide, 4 * MIB, &hbm, 0) != ACL_SUCCESS) return 3;
    if (aclrtMallocPhysical(&other, 2 * MIB, &hbm, 0) != ACL_SUCCESS) return 3;
    if (aclrtMapMem(at, 4 * MIB, 0, wide, 0) != ACL_SUCCESS) return 3;
    aclrtMapMem((void *)boundary, 2 * MIB, 0, other, 0); /* SHARD-OVERLAP */
    aclrtMalloc(&block, 4 * MIB, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(at, 4 * MIB, block, 4 * MIB, ACL_MEMCPY_DEVICE_TO_DEVICE);
    aclrtFree(block);
    aclrtReleaseMemAddress(va); /* SHARD-RELEASE-MAPPED */
    aclrtUnmapMem(at);
    aclrtReleaseMemAddress(va);
    aclrtFreePhysical(wide);
    aclrtFreePhysical(other);
    return 0;
}

static void end_on_alarm(int sig) {
    (void)sig;
    _exit(3);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    aclrtPhysicalMemProp hbm = prop(ACL_HBM_MEM_HUGE);
    aclrtDrvMemHandle h = NULL, h2 = NULL;
    void *va = NULL;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;

    if (strcmp(mode, "rule") == 0) {
        aclrtPhysicalMemProp ddr = prop(ACL_DDR_MEM_HUGE); /* host-only, on the device */
        aclrtMallocPhysical(&h, 2 * MIB, &ddr, 0);
    } else if (strcmp(mode, "portability") == 0) {
        aclrtPhysicalMemProp generic = prop(ACL_MEM_HUGE); /* 8.5 and later */
        aclrtMallocPhysical(&h, 2 * MIB, &generic, 0);
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "double-free") == 0) {
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtFreePhysical(h);
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "free-while-mapped") == 0) {
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtMapMem(va, 2 * MIB, 0, h, 0);
        aclrtFreePhysical(h);
        aclrtUnmapMem(va);
        aclrtReleaseMemAddress(va);
    } else if (strcmp(mode, "use-after-free") == 0) {
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtFreePhysical(h);
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtMapMem(va, 2 * MIB, 0, h, 0);
        aclrtReleaseMemAddress(va);
    } else if (strcmp(mode, "unmap-unmapped") == 0) {
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtUnmapMem(va);
        aclrtReleaseMemAddress(va);
    } else if (strcmp(mode, "release-while-mapped") == 0) {
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtMapMem(va, 2 * MIB, 0, h, 0);
        aclrtReleaseMemAddress(va);
        aclrtUnmapMem(va);
        aclrtReleaseMemAddress(va);
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "release-unreserved") == 0) {
        /* A double release (vllm's cleanup path releasing twice). */
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtReleaseMemAddress(va);
        aclrtReleaseMemAddress(va);
    } else if (strcmp(mode, "overlapping-map") == 0) {
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtMallocPhysical(&h2, 2 * MIB, &hbm, 0);
        aclrtReserveMemAddress(&va, 4 * MIB, 0, NULL, 0);
        aclrtMapMem(va, 2 * MIB, 0, h, 0);
        aclrtMapMem(va, 2 * MIB, 0, h2, 0);
        aclrtUnmapMem(va);
        aclrtReleaseMemAddress(va);
        aclrtFreePhysical(h);
        aclrtFreePhysical(h2);
    } else if (strcmp(mode, "copy-unmapped") == 0) {
        char buf[64] = "bytes";
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtMemcpy(va, 2 * MIB, buf, sizeof buf, ACL_MEMCPY_HOST_TO_DEVICE);
        aclrtReleaseMemAddress(va);
    } else if (strcmp(mode, "import-own-export") == 0) {
        uint64_t s = 0;
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 1, &s);
        aclrtMemImportFromShareableHandle(s, 0, &h2);
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "adjacent") == 0) {
        /* Not a defect: one copy across two adjacent mappings, as into an
         * expandable segment grown handle by handle. A gap is a defect. */
        static char buf[6 * MIB];
        char *base = NULL;
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtMallocPhysical(&h2, 2 * MIB, &hbm, 0);
        aclrtReserveMemAddress(&va, 6 * MIB, 0, NULL, 0);
        base = va;
        aclrtMapMem(base, 2 * MIB, 0, h, 0);
        aclrtMapMem(base + 2 * MIB, 2 * MIB, 0, h2, 0);
        aclrtMemcpy(base, 4 * MIB, buf, 4 * MIB, ACL_MEMCPY_HOST_TO_DEVICE);
        if (argc > 2) { /* "gap": the second handle 2 MiB further on */
            aclrtUnmapMem(base + 2 * MIB);
            aclrtMapMem(base + 4 * MIB, 2 * MIB, 0, h2, 0);
            aclrtMemcpy(base, 6 * MIB, buf, 6 * MIB, ACL_MEMCPY_HOST_TO_DEVICE);
            aclrtUnmapMem(base + 4 * MIB);
        } else {
            aclrtUnmapMem(base + 2 * MIB);
        }
        aclrtUnmapMem(base);
        aclrtFreePhysical(h);
        aclrtFreePhysical(h2);
        aclrtReleaseMemAddress(va);
    } else if (strcmp(mode, "fork") == 0) {
        /* Not a defect: a child forked after aclInit is a new process; it
         * initialises, imports its parent's export and lets it go. Neither
         * process owns the other's handles. */
        uint64_t s = 0;
        int status = 0;
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
        aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 1, &s);
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
            int ok = aclInit(NULL) == 0 && aclrtSetDevice(0) == 0 &&
                     aclrtMemImportFromShareableHandle(s, 0, &h2) == 0 &&
                     aclrtFreePhysical(h2) == 0;
            aclrtResetDevice(0);
            aclFinalize();
            exit(ok ? 0 : 3);
        }
        waitpid(child, &status, 0);
        aclrtFreePhysical(h);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 3;
    } else if (strcmp(mode, "cycle-growth") == 0 || strcmp(mode, "sleep-wake") == 0) {
        /* vllm-ascend's sleep mode, five cycles: sleep unmaps and frees the
         * weights (the address stays reserved), wake maps new memory at the
         * same address. With "cycle-growth", each wake also makes a 2 MiB
         * handle it never frees (the shape of vllm-ascend #9563). */
        int grow = strcmp(mode, "cycle-growth") == 0;
        aclrtDrvMemHandle kept[8] = {0};
        aclrtReserveMemAddress(&va, 4 * MIB, 0, NULL, 0);
        aclrtMallocPhysical(&h, 4 * MIB, &hbm, 0);
        aclrtMapMem(va, 4 * MIB, 0, h, 0);
        for (int cycle = 0; cycle < 5; cycle++) {
            aclrtUnmapMem(va); /* sleep */
            aclrtFreePhysical(h);
            aclrtMallocPhysical(&h, 4 * MIB, &hbm, 0); /* wake */
            aclrtMapMem(va, 4 * MIB, 0, h, 0);
            if (grow) aclrtMallocPhysical(&kept[cycle], 2 * MIB, &hbm, 0); /* GROWTH-SITE */
        }
        aclrtUnmapMem(va);
        aclrtFreePhysical(h);
        aclrtReleaseMemAddress(va);
        (void)kept;
    } else if (strcmp(mode, "api-error") == 0) {
        /* Calls the library refuses: reported only when asked
         * (--report-api-errors). */
        aclrtMallocPhysical(&h, 0, &hbm, 0); /* API-ERROR-1 */
        aclrtGetDeviceCount(NULL);           /* API-ERROR-2 */
    } else if (strcmp(mode, "unsupported") == 0) {
        /* A framework function the emulator does not support, looked up by
         * name as frameworks do: the emulator answers 207000 and records
         * it; the sanitizer reports it from that record. */
        void *lib = dlopen("libascendcl.so", RTLD_NOW | RTLD_NOLOAD);
        aclError (*utilization)(int32_t, void *) =
            (aclError (*)(int32_t, void *))(lib ? dlsym(lib, "aclrtGetDeviceUtilizationRate") : NULL);
        char info[64];
        if (utilization) utilization(0, info);
        if (utilization) utilization(0, info);
    } else if (strcmp(mode, "phases") == 0 || strcmp(mode, "phases-unmarked") == 0 ||
               strcmp(mode, "phases-mstx") == 0) {
        /* A sleep/wake loop the heuristic cannot see (each wake maps at the
         * other of two ranges) that leaks 2 MiB per wake: with the phases
         * marked (by aclmem's marker, or by an mstx range around each sleep,
         * looked up by name in libms_tools_ext.so as frameworks do), its
         * growth is reported. */
        int marked = strcmp(mode, "phases") == 0;
        uint64_t (*range_start)(const char *, void *) = NULL;
        void (*range_end)(uint64_t) = NULL;
        if (strcmp(mode, "phases-mstx") == 0) {
            void *tools = dlopen("libms_tools_ext.so", RTLD_NOW | RTLD_LOCAL);
            if (!tools) return 4;
            range_start = (uint64_t (*)(const char *, void *))dlsym(tools, "mstxRangeStartA");
            range_end = (void (*)(uint64_t))dlsym(tools, "mstxRangeEnd");
            if (!range_start || !range_end) return 4;
        }
        void *ranges[2] = {NULL, NULL};
        aclrtDrvMemHandle kept[8] = {0};
        aclrtReserveMemAddress(&ranges[0], 4 * MIB, 0, NULL, 0);
        aclrtReserveMemAddress(&ranges[1], 4 * MIB, 0, NULL, 0);
        aclrtMallocPhysical(&h, 4 * MIB, &hbm, 0);
        aclrtMapMem(ranges[0], 4 * MIB, 0, h, 0);
        for (int cycle = 0; cycle < 5; cycle++) {
            uint64_t sleeping = 0;
            if (marked) phase("sleep");
            if (range_start && (sleeping = range_start("model sleep", NULL)) == 0) return 5;
            aclrtUnmapMem(ranges[cycle % 2]);
            aclrtFreePhysical(h);
            if (marked) phase("wake");
            if (range_end) range_end(sleeping);
            aclrtMallocPhysical(&h, 4 * MIB, &hbm, 0);
            aclrtMapMem(ranges[(cycle + 1) % 2], 4 * MIB, 0, h, 0);
            aclrtMallocPhysical(&kept[cycle], 2 * MIB, &hbm, 0); /* PHASE-GROWTH-SITE */
        }
        aclrtUnmapMem(ranges[1]);
        aclrtFreePhysical(h);
        aclrtReleaseMemAddress(ranges[0]);
        aclrtReleaseMemAddress(ranges[1]);
        for (int i = 0; i < 5; i++) aclrtFreePhysical(kept[i]);
    } else if (strcmp(mode, "two-callers") == 0) {
        /* Four leaks from one call site: first, first, second, first. */
        aclrtDrvMemHandle kept[4];
        first_caller(&kept[0]);
        first_caller(&kept[1]);
        second_caller(&kept[2]);
        first_caller(&kept[3]);
    } else if (strcmp(mode, "out-of-memory") == 0) {
        aclrtDrvMemHandle w[3], a, big = NULL;
        void *c[2];
        load_weights(w);
        fill_cache(c);
        activations(&a);
        /* More than the device has: 207001. */
        aclrtMallocPhysical(&big, (size_t)1 << 40, &hbm, 0); /* OOM-REFUSED */
        for (int i = 0; i < 3; i++) aclrtFreePhysical(w[i]);
        for (int i = 0; i < 2; i++) aclrtFree(c[i]);
        aclrtFreePhysical(a);
    } else if (strcmp(mode, "out-of-memory-wrapped") == 0) {
        kv_cache();
        workspace();
        void *big = device_block((size_t)1 << 40); /* WRAPPED-REFUSED */
        if (big != NULL) return 3;
        for (int i = 0; i < 3; i++) aclrtFree(wrapped[i]);
    } else if (strcmp(mode, "short-name") == 0) {
        f(&h); /* leaked */
    } else if (strcmp(mode, "racing-unmaps") == 0) {
        pthread_t other;
        pthread_barrier_init(&race_start, NULL, 2);
        if (pthread_create(&other, NULL, racer_thread, &va) != 0) return 3;
        for (int i = 0; i < RACES; i++) {
            aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
            aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
            aclrtMapMem(va, 2 * MIB, 0, h, 0);
            pthread_barrier_wait(&race_start);
            unmap_racer(va);
            aclrtReleaseMemAddress(va);
            aclrtFreePhysical(h);
        }
        pthread_join(other, NULL);
    } else if (strcmp(mode, "sharded-races") == 0) {
        if (across_shards() != 0) return 3;
        pthread_t other, workers[WORKERS];
        pthread_barrier_init(&race_start, NULL, 2);
        for (int w = 0; w < WORKERS; w++)
            if (pthread_create(&workers[w], NULL, shard_worker, NULL) != 0) return 3;
        if (pthread_create(&other, NULL, racer_thread, &va) != 0) return 3;
        for (int i = 0; i < RACES; i++) {
            aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0);
            aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
            aclrtMapMem(va, 2 * MIB, 0, h, 0);
            pthread_barrier_wait(&race_start);
            unmap_racer(va);
            aclrtReleaseMemAddress(va);
            aclrtFreePhysical(h);
        }
        pthread_join(other, NULL);
        for (int w = 0; w < WORKERS; w++) pthread_join(workers[w], NULL);
    } else if (strcmp(mode, "leak") == 0) {
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0); /* LEAK-SITE */
    } else if (strcmp(mode, "leak-at-_exit") == 0) {
        /* An error path that ends with _exit, which runs no exit handler:
         * the handle is still held at the end. */
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0); /* EXIT-LEAK */
        fflush(NULL);
        _exit(0);
    } else if (strcmp(mode, "vfork-exec-fails") == 0) {
        /* A child of vfork shares this process's memory: its _exit after a
         * failed exec must leave the parent's state alone. The parent then
         * leaks one handle, reported once, as the parent's. */
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0); /* VFORK-LEAK */
        int status = 0;
        pid_t child = vfork();
        if (child == 0) {
            execl("/nonexistent/aclmem-no-such-program", "x", (char *)NULL);
            _exit(127);
        }
        if (child < 0 || waitpid(child, &status, 0) != child) return 3;
        printf("pid %d\n", (int)getpid());
    } else if (strcmp(mode, "_exit-in-handler") == 0) {
        /* A signal handler that ends the process with _exit (async-signal-
         * safe) while the main thread cycles through the hooks: the
         * process ends with the handler's code, never waits on itself. */
        signal(SIGALRM, end_on_alarm);
        struct itimerval soon = {{0, 0}, {0, 20000}};
        setitimer(ITIMER_REAL, &soon, NULL);
        for (;;) {
            if (aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0) != 0) continue;
            if (aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0) == 0) {
                aclrtMapMem(va, 2 * MIB, 0, h, 0);
                aclrtUnmapMem(va);
                aclrtReleaseMemAddress(va);
            }
            aclrtFreePhysical(h);
        }
    } else if (strcmp(mode, "worker-_exit") == 0) {
        /* A worker forked after aclInit that never uses ACL and ends with
         * _exit, as Python's multiprocessing workers do. */
        int status = 0;
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) _exit(0);
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0) return 3;
    } else if (strcmp(mode, "chdir-leak") == 0) {
        /* A program that changes directory: a log named relative to where
         * it was started still receives the findings. */
        if (chdir("/") != 0) return 3;
        aclrtMallocPhysical(&h, 2 * MIB, &hbm, 0); /* CHDIR-LEAK */
    } else if (strcmp(mode, "clean") != 0) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
