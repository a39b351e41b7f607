/*
 * Two processes share an aclrtMalloc block through an IPC key, the flow of
 * CANN's IPC documentation:
 *
 *   A (parent): aclrtMalloc -> write -> aclrtIpcMemGetExportKey
 *   B (child):  aclrtDeviceGetBareTgid, tells A its pid
 *   A:          aclrtIpcMemSetImportPid(key, B's pid)
 *   B:          aclrtIpcMemImportByKey -> read -> aclrtIpcMemClose
 *   A:          aclrtIpcMemClose -> aclrtFree
 *
 * The child is this program run again (fork + exec). Exits 0 on success.
 *
 *   cc -std=c11 -Wall -Wextra -I crates/emu-capi/include ipc_key.c \
 *      -L<dir> -lascendcl -Wl,-rpath,<dir>
 */
#include "example.h"

#define SIZE ((size_t)2 << 20)
#define KEY_LEN 65

static unsigned char byte_at(size_t i) { return (unsigned char)(i * 7 + 1); }

static int importer(void) {
    CHECK(aclInit(NULL), ACL_SUCCESS);
    CHECK(aclrtSetDevice(0), ACL_SUCCESS);
    int32_t pid = 0;
    CHECK(aclrtDeviceGetBareTgid(&pid), ACL_SUCCESS);
    printf("pid %d\n", pid);
    fflush(stdout);

    char key[KEY_LEN + 2] = {0};
    if (fgets(key, sizeof key, stdin) == NULL) {
        return 2;
    }
    key[strcspn(key, "\n")] = '\0';
    void *ptr = NULL;
    CHECK(aclrtIpcMemImportByKey(&ptr, key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT), ACL_SUCCESS);
    static unsigned char seen[SIZE];
    CHECK(aclrtMemcpy(seen, SIZE, ptr, SIZE, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    int same = 1;
    for (size_t i = 0; i < SIZE; i++) {
        same &= seen[i] == byte_at(i);
    }
    EXPECT(same);
    CHECK(aclrtIpcMemClose(key), ACL_SUCCESS);
    CHECK(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK(aclFinalize(), ACL_SUCCESS);
    printf("done %d\n", failures);
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "importer") == 0) {
        return importer();
    }
    CHECK(aclInit(NULL), ACL_SUCCESS);
    CHECK(aclrtSetDevice(0), ACL_SUCCESS);
    void *ptr = NULL;
    CHECK(aclrtMalloc(&ptr, SIZE, ACL_MEM_MALLOC_HUGE_ONLY), ACL_SUCCESS);
    static unsigned char data[SIZE];
    for (size_t i = 0; i < SIZE; i++) {
        data[i] = byte_at(i);
    }
    CHECK(aclrtMemcpy(ptr, SIZE, data, SIZE, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    char key[KEY_LEN] = {0};
    CHECK(aclrtIpcMemGetExportKey(ptr, SIZE, key, KEY_LEN, ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT),
          ACL_SUCCESS);
    printf("     key %s\n", key);

    const char *args[] = {"importer", NULL};
    child b = spawn_self(args);
    char line[256];
    int32_t pid = 0;
    /* The child's check lines, up to its pid. */
    while (child_line(&b, line, sizeof line) == 0 && sscanf(line, "pid %d", &pid) != 1) {
    }
    EXPECT(pid > 0);
    CHECK(aclrtIpcMemSetImportPid(key, &pid, 1), ACL_SUCCESS);
    child_send(&b, key);
    while (child_line(&b, line, sizeof line) == 0) {
    }
    EXPECT(child_wait(&b) == 0);

    CHECK(aclrtIpcMemClose(key), ACL_SUCCESS);
    CHECK(aclrtFree(ptr), ACL_SUCCESS);
    CHECK(aclrtResetDevice(0), ACL_SUCCESS);
    CHECK(aclFinalize(), ACL_SUCCESS);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
