/*
 * For `aclmem explore`: a forked child with error paths of its own, which
 * ends with _exit as forked children do (no exit handlers run), and two
 * calls of one function on one line.
 *
 * The child imports its parent's export (when that fails, it aborts: a
 * crash of the child, which the parent survives); when its aclrtMalloc
 * fails it leaves at once, still holding the import (a leak). Every other
 * error path is handled. The two calls on one line are tried apart: each
 * record's `fault` names its own call.
 */
#define _DEFAULT_SOURCE /* _exit, fork */
#include <acl/acl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

static int child(uint64_t shared) {
    aclrtDrvMemHandle imported = NULL;
    void *block = NULL;
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 2;
    if (aclrtMemImportFromShareableHandle(shared, 0, &imported) != 0) { /* CHILD-CRASH */
        abort(); /* CHILD-CRASH-AT */
    }
    if (aclrtMalloc(&block, MIB, ACL_MEM_MALLOC_HUGE_FIRST) != 0) { /* CHILD-LEAK */
        return 4; /* the import is still held */
    }
    aclrtFree(block);
    aclrtFreePhysical(imported);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}

int main(void) {
    if (aclInit(NULL) != 0 || aclrtSetDevice(0) != 0) return 1;
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    aclrtDrvMemHandle h = NULL;
    uint64_t shared = 0;
    int status = 0;
    if (aclrtMallocPhysical(&h, 2 * MIB, &prop, 0) != 0) goto finalize;
    if (aclrtMemExportToShareableHandle(h, ACL_MEM_HANDLE_TYPE_NONE, 1, &shared) != 0) goto free;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(child(shared));
    if (pid < 0 || waitpid(pid, &status, 0) != pid) goto free;
    void *a = NULL, *b = NULL;
    if (aclrtMalloc(&a, MIB, ACL_MEM_MALLOC_HUGE_FIRST) == 0 && aclrtMalloc(&b, MIB, ACL_MEM_MALLOC_HUGE_FIRST) == 0) { /* SAME-LINE */
        aclrtFree(b);
    }
    if (a != NULL) aclrtFree(a);
free:
    aclrtFreePhysical(h);
finalize:
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
