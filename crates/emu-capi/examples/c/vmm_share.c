/*
 * Sharing physical memory between processes with the documented calls,
 * written from the prototypes only. The parent:
 *
 *  1. allocates 4 MiB of HBM, writes a pattern through a mapping, exports
 *     the handle with the whitelist enforced;
 *  2. cannot import its own export;
 *  3. starts a child (fork + exec of this program), which reports its pid
 *     from aclrtDeviceGetBareTgid; the parent whitelists it; the child
 *     imports, maps and compares the bytes;
 *  4. starts an outsider that is not whitelisted: its import is refused;
 *  5. holds 40 GiB of the 64 GiB device: a child asking for 40 GiB more is
 *     refused (capacity is the machine's, not the process's);
 *  6. lets a child take 40 GiB and kills it with SIGKILL: the memory
 *     returns without anyone freeing it.
 *
 * Exits 0 when every step behaved. Run it against the emulated library
 * with the default machine settings (ACLMEM_EMU_HBM=64GiB).
 *
 *   cc -std=c11 -Wall -Wextra -I crates/emu-capi/include vmm_share.c \
 *      -L<dir> -lascendcl -Wl,-rpath,<dir>
 */
#include "example.h"

#include <signal.h>

#define SIZE ((size_t)4 << 20)
#define BIG ((size_t)40 << 30)

static aclrtPhysicalMemProp hbm(void) {
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    return prop;
}

static unsigned char byte_at(size_t i) { return (unsigned char)(i * 13 + 5); }

static void start(void) {
    CHECK(aclInit(NULL), ACL_SUCCESS);
    CHECK(aclrtSetDevice(0), ACL_SUCCESS);
}

static int finish(void) {
    CHECK(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK(aclFinalize(), ACL_SUCCESS);
    printf("done %d\n", failures);
    return failures ? 1 : 0;
}

/* Tells the parent this process's pid, waits for a line from it. */
static void handshake(char *line, size_t len) {
    int32_t pid = 0;
    CHECK(aclrtDeviceGetBareTgid(&pid), ACL_SUCCESS);
    printf("pid %d\n", pid);
    fflush(stdout);
    if (fgets(line, (int)len, stdin) == NULL) {
        line[0] = '\0';
    }
}

static int importer(void) {
    start();
    char line[64];
    handshake(line, sizeof line);
    uint64_t shareable = strtoull(line, NULL, 10);
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtMemImportFromShareableHandle(shareable, 0, &handle), ACL_SUCCESS);
    void *va = NULL;
    CHECK(aclrtReserveMemAddress(&va, SIZE, 0, NULL, 0), ACL_SUCCESS);
    CHECK(aclrtMapMem(va, SIZE, 0, handle, 0), ACL_SUCCESS);
    static unsigned char seen[SIZE];
    CHECK(aclrtMemcpy(seen, SIZE, va, SIZE, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    int same = 1;
    for (size_t i = 0; i < SIZE; i++) {
        same &= seen[i] == byte_at(i);
    }
    EXPECT(same);
    CHECK(aclrtUnmapMem(va), ACL_SUCCESS);
    CHECK(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    CHECK(aclrtFreePhysical(handle), ACL_SUCCESS);
    return finish();
}

static int outsider(void) {
    start();
    char line[64];
    handshake(line, sizeof line);
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtMemImportFromShareableHandle(strtoull(line, NULL, 10), 0, &handle),
          ACL_ERROR_RT_NO_PERMISSION);
    return finish();
}

static int wants_big(void) {
    start();
    aclrtPhysicalMemProp prop = hbm();
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtMallocPhysical(&handle, BIG, &prop, 0), ACL_ERROR_RT_MEMORY_ALLOCATION);
    return finish();
}

static int hog(void) {
    start();
    aclrtPhysicalMemProp prop = hbm();
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtMallocPhysical(&handle, BIG, &prop, 0), ACL_SUCCESS);
    printf("holding\n");
    fflush(stdout);
    for (;;) {
        pause(); /* until killed */
    }
    return 1;
}

static size_t hbm_free(void) {
    size_t free_bytes = 0, total = 0;
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total), ACL_SUCCESS);
    return free_bytes;
}

/* Runs a child in `mode`: reads its lines; answers its pid with `reply`
 * (after whitelisting it when `whitelist` is non-zero); returns its exit
 * code. */
static int run_child(const char *mode, uint64_t shareable, int whitelist) {
    const char *args[] = {mode, NULL};
    child c = spawn_self(args);
    char line[256];
    while (child_line(&c, line, sizeof line) == 0) {
        int32_t pid = 0;
        if (sscanf(line, "pid %d", &pid) == 1) {
            if (whitelist) {
                CHECK(aclrtMemSetPidToShareableHandle(shareable, &pid, 1), ACL_SUCCESS);
            }
            char reply[32];
            snprintf(reply, sizeof reply, "%llu", (unsigned long long)shareable);
            child_send(&c, reply);
        }
    }
    return child_wait(&c);
}

int main(int argc, char **argv) {
    if (argc > 1) {
        if (strcmp(argv[1], "importer") == 0) return importer();
        if (strcmp(argv[1], "outsider") == 0) return outsider();
        if (strcmp(argv[1], "wants-big") == 0) return wants_big();
        if (strcmp(argv[1], "hog") == 0) return hog();
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    start();
    aclrtPhysicalMemProp prop = hbm();

    /* 1. Allocate, write, export. */
    aclrtDrvMemHandle handle = NULL;
    CHECK(aclrtMallocPhysical(&handle, SIZE, &prop, 0), ACL_SUCCESS);
    void *va = NULL;
    CHECK(aclrtReserveMemAddress(&va, SIZE, 0, NULL, 0), ACL_SUCCESS);
    CHECK(aclrtMapMem(va, SIZE, 0, handle, 0), ACL_SUCCESS);
    static unsigned char data[SIZE];
    for (size_t i = 0; i < SIZE; i++) {
        data[i] = byte_at(i);
    }
    CHECK(aclrtMemcpy(va, SIZE, data, SIZE, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    CHECK(aclrtUnmapMem(va), ACL_SUCCESS);
    CHECK(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    uint64_t shareable = 0;
    CHECK(aclrtMemExportToShareableHandle(handle, ACL_MEM_HANDLE_TYPE_NONE,
                                          ACL_RT_VMM_EXPORT_FLAG_DEFAULT, &shareable),
          ACL_SUCCESS);

    /* 2. Not into the exporting process. */
    aclrtDrvMemHandle own = NULL;
    CHECK(aclrtMemImportFromShareableHandle(shareable, 0, &own),
          ACL_ERROR_RT_FEATURE_NOT_SUPPORT);

    /* 3. A whitelisted child sees the bytes. */
    EXPECT(run_child("importer", shareable, 1) == 0);

    /* 4. An outsider is refused. */
    EXPECT(run_child("outsider", shareable, 0) == 0);
    CHECK(aclrtFreePhysical(handle), ACL_SUCCESS);

    /* 5. Capacity is shared. */
    size_t before = hbm_free();
    aclrtDrvMemHandle big = NULL;
    CHECK(aclrtMallocPhysical(&big, BIG, &prop, 0), ACL_SUCCESS);
    EXPECT(run_child("wants-big", 0, 0) == 0);
    CHECK(aclrtFreePhysical(big), ACL_SUCCESS);

    /* 6. A killed process's memory comes back. */
    const char *args[] = {"hog", NULL};
    child h = spawn_self(args);
    char line[256];
    while (child_line(&h, line, sizeof line) == 0 && strcmp(line, "holding") != 0) {
    }
    EXPECT(hbm_free() == before - BIG);
    kill(h.pid, SIGKILL);
    EXPECT(child_wait(&h) == 128 + SIGKILL);
    CHECK(aclrtMallocPhysical(&big, BIG, &prop, 0), ACL_SUCCESS);
    CHECK(aclrtFreePhysical(big), ACL_SUCCESS);
    EXPECT(hbm_free() == before);

    int code = finish();
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return code;
}
