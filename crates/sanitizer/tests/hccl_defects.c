/*
 * Seeded HCCL defects for the sanitizer, one per mode, on a communicator of
 * one rank (which needs no peer):
 *   collective-unmapped                an allreduce on freed device memory
 *   comm-memory-released-while-active  activated memory freed
 *   communicator-not-destroyed         a communicator left at exit
 *   clean                              all of it done right
 * Each line that commits a defect is marked with a comment the test finds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl.h>
#include <hccl/hccl.h>

#define CHECK(call)                                                           \
    do {                                                                      \
        int r_ = (int)(call);                                                 \
        if (r_ != 0) {                                                        \
            fprintf(stderr, "%s: %d\n", #call, r_);                           \
            return 3;                                                         \
        }                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    HcclRootInfo root;
    HcclComm comm = NULL;
    CHECK(HcclGetRootInfo(&root));
    CHECK(HcclCommInitRootInfo(1, &root, 0, &comm));
    void *buf = NULL;
    CHECK(aclrtMalloc(&buf, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(HcclAllReduce(buf, buf, 1024, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL));
    if (strcmp(mode, "collective-unmapped") == 0) {
        CHECK(aclrtFree(buf));
        int r = HcclAllReduce(buf, buf, 1024, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, NULL); /* DEFECT: collective-unmapped */
        if (r != HCCL_E_PTR) {
            fprintf(stderr, "allreduce on freed memory answered %d\n", r);
            return 3;
        }
    } else if (strcmp(mode, "comm-memory-released-while-active") == 0) {
        CHECK(HcclCommActivateCommMemory(comm, buf, 4096, 0, NULL, 0));
        CHECK(aclrtFree(buf)); /* DEFECT: comm-memory-released-while-active */
    } else {
        CHECK(HcclCommActivateCommMemory(comm, buf, 4096, 0, NULL, 0));
        CHECK(HcclCommDeactivateCommMemory(comm, buf));
        CHECK(aclrtFree(buf));
    }
    if (strcmp(mode, "communicator-not-destroyed") != 0) {
        CHECK(HcclCommDestroy(comm));
    }
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
