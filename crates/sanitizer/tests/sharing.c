/*
 * Seeded sharing defects across processes, chosen by argv[1]; `clean`
 * shares memory correctly. The parent exports, a forked child imports (or
 * the other way round); pipes order the two. Each defect is one the
 * emulated library accepts or answers with a code: neither process
 * crashes, so what is under test is what `aclmem sanitize` reports.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <acl/acl.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

static aclrtPhysicalMemProp hbm(int32_t device) {
    aclrtPhysicalMemProp p;
    memset(&p, 0, sizeof p);
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = device;
    return p;
}

static void put(int fd, uint64_t v) {
    if (write(fd, &v, sizeof v) != sizeof v) exit(4);
}

static uint64_t get(int fd) {
    uint64_t v = 0;
    if (read(fd, &v, sizeof v) != sizeof v) exit(4);
    return v;
}

static int wait_child(pid_t child) {
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 5;
}

/* Forks; in the child, initialises on `device` and returns 0. */
static pid_t start_child(int32_t device) {
    fflush(NULL);
    pid_t child = fork();
    if (child == 0 && (aclInit(NULL) != 0 || aclrtSetDevice(device) != 0)) exit(2);
    return child;
}

/* Waits until the run's sharing events record the end of `child`: a
 * process that ends by _exit writes none itself, and `aclmem sanitize`
 * writes it when it sees the process gone. What the caller does next then
 * comes after that end, whatever the machine's load (60 s at most). */
static int wait_recorded_end(pid_t child) {
    const char *path = getenv("ACLMEM_SANITIZER_SHARING");
    char needle[32];
    if (!path) return 0;
    snprintf(needle, sizeof needle, "\"pid\":%d,", (int)child);
    for (int i = 0; i < 6000; i++) {
        FILE *f = fopen(path, "r");
        int seen = 0;
        char line[4096];
        while (f && !seen && fgets(line, sizeof line, f))
            seen = strstr(line, "\"ev\":\"exit\"") && strstr(line, needle);
        if (f) fclose(f);
        if (seen) return 0;
        usleep(10000);
    }
    return 1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    aclrtPhysicalMemProp prop = hbm(0);
    aclrtDrvMemHandle h = NULL;
    uint64_t s = 0;
    pid_t pid = 0;
    int down[2], up[2]; /* parent -> child, child -> parent */
    if (pipe(down) != 0 || pipe(up) != 0) return 2;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;

    if (strcmp(mode, "clean") == 0) {
        /* CANN's sample with pid validation: the child sends its pid, the
         * parent whitelists it and sends the handle; the child imports,
         * maps, reads, unmaps and frees; the parent frees after it. */
        if ((pid = start_child(0)) == 0) {
            int32_t me = 0;
            aclrtDrvMemHandle mine = NULL;
            void *va = NULL;
            aclrtDeviceGetBareTgid(&me);
            put(up[1], (uint64_t)me);
            uint64_t id = get(down[0]);
            if (aclrtMemImportFromShareableHandle(id, 0, &mine) != 0) exit(3);
            if (aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0) != 0) exit(3);
            if (aclrtMapMem(va, 2 * MIB, 0, mine, 0) != 0) exit(3);
            aclrtUnmapMem(va);
            aclrtReleaseMemAddress(va);
            aclrtFreePhysical(mine);
            aclrtResetDevice(0);
            aclFinalize();
            exit(0);
        }
        int32_t importer = (int32_t)get(up[0]);
        aclrtMallocPhysical(&h, 2 * MIB, &prop, 0);
        aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &s);
        aclrtMemSetPidToShareableHandle(s, &importer, 1);
        put(down[1], s);
        if (wait_child(pid) != 0) return 3;
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "import-after-free") == 0) {
        /* The exporter frees before the child imports (a
         * cleanup order that frees too early): the import names the free. */
        if ((pid = start_child(0)) == 0) {
            aclrtDrvMemHandle mine = NULL;
            uint64_t id = get(down[0]);
            if (aclrtMemImportFromShareableHandle(id, 0, &mine) == 0) /* IMPORT-AFTER-FREE */
                aclrtFreePhysical(mine);
            exit(0);
        }
        aclrtMallocPhysical(&h, 2 * MIB, &prop, 0);
        aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 1, &s);
        aclrtFreePhysical(h); /* FREED-BEFORE-IMPORT */
        put(down[1], s);
        if (wait_child(pid) != 0) return 3;
    } else if (strcmp(mode, "whitelisted-never-imported") == 0) {
        /* The parent whitelists its child, which exits without importing. */
        if ((pid = start_child(0)) == 0) {
            (void)get(down[0]);
            exit(0);
        }
        int32_t importer = (int32_t)pid;
        aclrtMallocPhysical(&h, 2 * MIB, &prop, 0);
        aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 0, &s);
        aclrtMemSetPidToShareableHandle(s, &importer, 1); /* WHITELIST */
        put(down[1], s);
        if (wait_child(pid) != 0) return 3;
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "import-held-at-exit") == 0 ||
               strcmp(mode, "import-held-at-_exit") == 0 ||
               strcmp(mode, "import-held-at-signal") == 0) {
        /* The child imports and maps, and ends still mapping it: by exit,
         * by _exit (no exit handler runs) or killed by a signal. */
        int how = strcmp(mode, "import-held-at-_exit") == 0    ? 1
                  : strcmp(mode, "import-held-at-signal") == 0 ? 2
                                                               : 0;
        if ((pid = start_child(0)) == 0) {
            aclrtDrvMemHandle mine = NULL;
            void *va = NULL;
            uint64_t id = get(down[0]);
            if (aclrtMemImportFromShareableHandle(id, 0, &mine) != 0) exit(3);
            aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
            aclrtMapMem(va, 2 * MIB, 0, mine, 0); /* HELD-MAP */
            if (how == 1) _exit(0);
            if (how == 2) raise(SIGKILL);
            exit(0);
        }
        aclrtMallocPhysical(&h, 2 * MIB, &prop, 0);
        aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 1, &s);
        put(down[1], s);
        int status = wait_child(pid);
        if (how == 2 ? status != 5 : status != 0) return 3;
        if (how != 0 && wait_recorded_end(pid) != 0) return 6;
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "import-own-export-after-fork") == 0) {
        /* The parent exports, forks a child that ends at once, then imports
         * its own export: refused, whatever the fork. */
        aclrtDrvMemHandle again = NULL;
        aclrtMallocPhysical(&h, 2 * MIB, &prop, 0);
        aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 1, &s); /* OWN-EXPORT */
        if ((pid = start_child(0)) == 0) exit(0);
        if (wait_child(pid) != 0) return 3;
        if (aclrtMemImportFromShareableHandle(s, 0, &again) == 0) /* OWN-IMPORT */
            aclrtFreePhysical(again);
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "exporter-exited-while-mapped") == 0 ||
               strcmp(mode, "exporter-ended-by-_exit") == 0 ||
               strcmp(mode, "exporter-killed-while-mapped") == 0) {
        /* The child exports and exits holding the handle while the parent
         * still maps what it imported (by exit, or by _exit or a signal,
         * which run no exit handler: the end is seen from outside). */
        int killed = strcmp(mode, "exporter-killed-while-mapped") == 0;
        int no_handlers = killed || strcmp(mode, "exporter-ended-by-_exit") == 0;
        if ((pid = start_child(0)) == 0) {
            aclrtDrvMemHandle mine = NULL;
            uint64_t id = 0;
            aclrtMallocPhysical(&mine, 2 * MIB, &prop, 0);
            aclrtMemExportToShareableHandle(mine, ACL_MEM_HANDLE_TYPE_NONE, 1, &id); /* EXPORTER */
            put(up[1], id);
            (void)get(down[0]); /* until the parent mapped it */
            if (killed) raise(SIGKILL);
            if (no_handlers) _exit(0);
            exit(0);
        }
        void *va = NULL;
        s = get(up[0]);
        aclrtMemImportFromShareableHandle(s, 0, &h);
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtMapMem(va, 2 * MIB, 0, h, 0);
        put(down[1], 1);
        if (wait_child(pid) != (killed ? 5 : 0)) return 3;
        if (no_handlers && wait_recorded_end(pid) != 0) return 6;
        aclrtUnmapMem(va);
        aclrtReleaseMemAddress(va);
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "exporter-freed-and-exited-while-mapped") == 0) {
        /* A forked child joins the machine itself, exports to its parent,
         * and while the parent still maps the import frees its handle,
         * finalises and exits. */
        if ((pid = start_child(0)) == 0) {
            aclrtDrvMemHandle mine = NULL;
            uint64_t id = 0;
            aclrtMallocPhysical(&mine, 2 * MIB, &prop, 0);
            aclrtMemExportToShareableHandle(mine, ACL_MEM_HANDLE_TYPE_NONE, 1, &id);
            put(up[1], id);
            (void)get(down[0]); /* until the parent mapped it */
            aclrtFreePhysical(mine);
            aclrtResetDevice(0);
            aclFinalize();
            exit(0); /* EXPORTER-EXIT */
        }
        void *va = NULL;
        s = get(up[0]);
        aclrtMemImportFromShareableHandle(s, 0, &h);
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtMapMem(va, 2 * MIB, 0, h, 0); /* PARENT-MAP */
        put(down[1], 1);
        if (wait_child(pid) != 0) return 3;
        aclrtUnmapMem(va);
        aclrtReleaseMemAddress(va);
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "handle-type-as-device") == 0) {
        /* The child, on device 1, passes a
         * handle type where the import's device id belongs. */
        if ((pid = start_child(1)) == 0) {
            aclrtDrvMemHandle mine = NULL;
            uint64_t id = get(down[0]);
            if (aclrtMemImportFromShareableHandle(id, ACL_MEM_HANDLE_TYPE_NONE, &mine) == 0) /* TYPE-AS-DEVICE */
                aclrtFreePhysical(mine);
            aclrtResetDevice(1);
            aclFinalize();
            exit(0);
        }
        aclrtMallocPhysical(&h, 2 * MIB, &prop, 0);
        aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 1, &s); /* EXPORTED-TO-CHILD */
        put(down[1], s);
        if (wait_child(pid) != 0) return 3;
        aclrtFreePhysical(h);
    } else if (strcmp(mode, "ipc-key-on-vmm") == 0) {
        /* A legacy IPC key asked for memory mapped through the VMM calls. */
        void *va = NULL;
        char key[65] = {0};
        aclrtMallocPhysical(&h, 2 * MIB, &prop, 0);
        aclrtReserveMemAddress(&va, 2 * MIB, 0, NULL, 0);
        aclrtMapMem(va, 2 * MIB, 0, h, 0);
        aclrtIpcMemGetExportKey(va, 2 * MIB, key, sizeof key, 1); /* IPC-KEY */
        aclrtUnmapMem(va);
        aclrtReleaseMemAddress(va);
        aclrtFreePhysical(h);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
