/*
 * ACL graphs and the memory they captured, for the sanitizer's tests: a
 * copy captured into a graph, then, by the mode in argv[1]:
 *   clean   replayed, the graph destroyed, the memory freed: no finding;
 *   freed   the captured device memory freed while the graph lives, then a
 *           replay: graph-memory-released and graph-replay-released;
 *   kept    the graph never destroyed: graph-not-destroyed at exit.
 * Lines the tests look for carry a marker comment.
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

#define N 4096

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        return 2;
    }
    aclrtStream s = NULL;
    void *dev = NULL, *host = NULL;
    if (aclrtCreateStream(&s) != ACL_SUCCESS ||
        aclrtMalloc(&dev, N, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
        aclrtMallocHost(&host, N) != ACL_SUCCESS) {
        return 2;
    }
    memset(host, 3, N);
    aclmdlRI graph = NULL;
    if (aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) != ACL_SUCCESS) { /* capture-begin */
        return 2;
    }
    aclrtMemcpyAsync(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s); /* captured-copy */
    if (aclmdlRICaptureEnd(s, &graph) != ACL_SUCCESS) {
        return 2;
    }
    if (strcmp(mode, "freed") == 0) {
        aclrtFree(dev); /* freed-under-graph */
        aclmdlRIExecuteAsync(graph, s); /* replay-after-free */
        aclmdlRIDestroy(graph);
    } else {
        aclmdlRIExecuteAsync(graph, s);
        aclrtSynchronizeStream(s);
        if (strcmp(mode, "kept") != 0) {
            aclmdlRIDestroy(graph);
        }
        aclrtFree(dev);
    }
    aclrtFreeHost(host);
    aclrtDestroyStream(s);
    aclrtResetDevice(0);
    aclFinalize();
    printf("done\n");
    return 0;
}
