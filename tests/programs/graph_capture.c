/*
 * ACL graph capture and replay on the emulated machine, as serving stacks
 * use it: a step of copies, sets, a host function and an event joining a
 * second stream captured into a model; nothing runs while captured; each
 * replay runs the step again on the captured addresses (new input data
 * each time); a task group updated between replays; the calls the runtime
 * refuses during capture; a capture invalidated, unjoined or ended on the
 * wrong stream. Prints "ok" and exits 0 when every check holds; else names
 * the check.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

/* Framework calls the emulated headers leave to CANN's full acl_rt.h. */
typedef void *aclrtEvent;
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream);

#define N 4096

#define CHECK(what, cond)                                     \
    do {                                                      \
        if (!(cond)) {                                        \
            printf("FAILED: %s (line %d)\n", what, __LINE__); \
            return 1;                                         \
        }                                                     \
    } while (0)

static int calls;
static void count_call(void *arg) { calls += (int)(intptr_t)arg; }

static int all(const unsigned char *p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; i++) {
        if (p[i] != v) {
            return 0;
        }
    }
    return 1;
}

int main(void) {
    CHECK("aclInit", aclInit(NULL) == ACL_SUCCESS);
    CHECK("aclrtSetDevice", aclrtSetDevice(0) == ACL_SUCCESS);
    aclrtStream s = NULL, side = NULL;
    CHECK("create stream", aclrtCreateStream(&s) == ACL_SUCCESS);
    CHECK("create side stream", aclrtCreateStream(&side) == ACL_SUCCESS);
    void *in = NULL, *mid = NULL, *out = NULL, *host = NULL, *back = NULL;
    CHECK("malloc in", aclrtMalloc(&in, N, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    CHECK("malloc mid", aclrtMalloc(&mid, N, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    CHECK("malloc out", aclrtMalloc(&out, N, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    CHECK("malloc host", aclrtMallocHost(&host, N) == ACL_SUCCESS);
    CHECK("malloc back", aclrtMallocHost(&back, N) == ACL_SUCCESS);
    aclrtEvent fork_ev = NULL, join_ev = NULL;
    CHECK("event", aclrtCreateEvent(&fork_ev) == ACL_SUCCESS);
    CHECK("event", aclrtCreateEvent(&join_ev) == ACL_SUCCESS);
    CHECK("clear out", aclrtMemset(out, N, 0, N) == ACL_SUCCESS);

    /* Capture: host -> in, in -> mid on the side stream, mid -> out. */
    memset(host, 1, N);
    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    aclmdlRI model = NULL;
    CHECK("info before", aclmdlRICaptureGetInfo(s, &status, &model) == ACL_SUCCESS &&
                             status == ACL_MODEL_RI_CAPTURE_STATUS_NONE && model == NULL);
    CHECK("begin", aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == ACL_SUCCESS);
    CHECK("begin twice", aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) ==
                             ACL_ERROR_RT_STREAM_CAPTURED);
    CHECK("info during", aclmdlRICaptureGetInfo(s, &status, &model) == ACL_SUCCESS &&
                             status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE && model != NULL);
    CHECK("copy in", aclrtMemcpyAsync(in, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s) ==
                         ACL_SUCCESS);
    CHECK("fork", aclrtRecordEvent(fork_ev, s) == ACL_SUCCESS);
    CHECK("side joins", aclrtStreamWaitEvent(side, fork_ev) == ACL_SUCCESS);
    CHECK("side is captured", aclmdlRICaptureGetInfo(side, &status, &model) == ACL_SUCCESS &&
                                  status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    CHECK("copy mid", aclrtMemcpyAsync(mid, N, in, N, ACL_MEMCPY_DEVICE_TO_DEVICE, side) ==
                          ACL_SUCCESS);
    CHECK("join", aclrtRecordEvent(join_ev, side) == ACL_SUCCESS);
    CHECK("origin waits", aclrtStreamWaitEvent(s, join_ev) == ACL_SUCCESS);
    CHECK("host fn", aclrtLaunchHostFunc(s, count_call, (void *)(intptr_t)1) == ACL_SUCCESS);
    CHECK("group begin", aclmdlRICaptureTaskGrpBegin(s) == ACL_SUCCESS);
    CHECK("copy out", aclrtMemcpyAsync(out, N, mid, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s) ==
                          ACL_SUCCESS);
    aclrtTaskGrp group = NULL;
    CHECK("group end", aclmdlRICaptureTaskGrpEnd(s, &group) == ACL_SUCCESS && group != NULL);
    CHECK("copy back", aclrtMemcpyAsync(back, N, out, N, ACL_MEMCPY_DEVICE_TO_HOST, s) ==
                           ACL_SUCCESS);

    /* Refused while capturing. */
    unsigned char pageable[64];
    CHECK("sync copy", aclrtMemcpy(out, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) ==
                           ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
    CHECK("sync set", aclrtMemset(out, N, 0, N) == ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
    CHECK("pageable copy", aclrtMemcpyAsync(out, 64, pageable, 64, ACL_MEMCPY_HOST_TO_DEVICE, s) ==
                               ACL_ERROR_RT_PARAM_INVALID);
    CHECK("sync stream", aclrtSynchronizeStream(s) == ACL_ERROR_RT_STREAM_CAPTURED);
    CHECK("sync device", aclrtSynchronizeDevice() == ACL_ERROR_RT_STREAM_CAPTURED);
    CHECK("destroy stream", aclrtDestroyStream(s) == ACL_ERROR_RT_STREAM_CAPTURED);
    CHECK("end on a joined stream", aclmdlRICaptureEnd(side, &model) ==
                                        ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED);
    /* Relaxed in this thread: synchronous calls are allowed again. */
    aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    CHECK("exchange", aclmdlRICaptureThreadExchangeMode(&mode) == ACL_SUCCESS &&
                          mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
    CHECK("relaxed sync set", aclrtMemset(back, N, 9, N) == ACL_SUCCESS);
    CHECK("exchange back", aclmdlRICaptureThreadExchangeMode(&mode) == ACL_SUCCESS &&
                               mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED);

    aclmdlRI ended = NULL;
    CHECK("end", aclmdlRICaptureEnd(s, &ended) == ACL_SUCCESS && ended == model);
    CHECK("info after", aclmdlRICaptureGetInfo(side, &status, &model) == ACL_SUCCESS &&
                            status == ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    /* Nothing ran while captured. */
    CHECK("nothing ran", calls == 0 && all(back, N, 9));
    unsigned char probe[N];
    CHECK("read out", aclrtMemcpy(probe, N, out, N, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
    CHECK("out untouched", all(probe, N, 0));

    /* Replays, each on new input. */
    for (int i = 1; i <= 3; i++) {
        memset(host, 10 + i, N);
        CHECK("replay", aclmdlRIExecuteAsync(ended, s) == ACL_SUCCESS);
        CHECK("sync", aclrtSynchronizeStream(s) == ACL_SUCCESS);
        CHECK("replayed data", all(back, N, (unsigned char)(10 + i)));
        CHECK("host fn per replay", calls == i);
    }
    uint32_t id = 0;
    CHECK("id", aclmdlRIGetId(ended, &id) == ACL_SUCCESS);

    /* Update the group: out now comes from in, then a set of its first byte. */
    memset(host, 42, N);
    CHECK("update begin", aclmdlRICaptureTaskUpdateBegin(side, group) == ACL_SUCCESS);
    CHECK("update copy", aclrtMemcpyAsync(out, N, in, N, ACL_MEMCPY_DEVICE_TO_DEVICE, side) ==
                             ACL_SUCCESS);
    CHECK("update end", aclmdlRICaptureTaskUpdateEnd(side) == ACL_SUCCESS);
    CHECK("mid cleared", aclrtMemset(mid, N, 0, N) == ACL_SUCCESS);
    CHECK("replay updated", aclmdlRIExecuteAsync(ended, s) == ACL_SUCCESS);
    CHECK("updated data", all(back, N, 42));
    CHECK("update of another size", aclmdlRICaptureTaskUpdateBegin(side, group) == ACL_SUCCESS);
    CHECK("no tasks", aclmdlRICaptureTaskUpdateEnd(side) == ACL_ERROR_RT_PARAM_INVALID);

    /* A joined stream never joined back: the capture fails. */
    aclmdlRI bad = NULL;
    CHECK("begin 2", aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL) == ACL_SUCCESS);
    CHECK("fork 2", aclrtRecordEvent(fork_ev, s) == ACL_SUCCESS);
    CHECK("join 2", aclrtStreamWaitEvent(side, fork_ev) == ACL_SUCCESS);
    CHECK("work 2", aclrtMemsetAsync(mid, N, 1, N, side) == ACL_SUCCESS);
    CHECK("unjoined", aclmdlRICaptureEnd(s, &bad) == ACL_ERROR_RT_STREAM_UNJOINED);
    CHECK("over", aclmdlRICaptureGetInfo(side, &status, &bad) == ACL_SUCCESS &&
                      status == ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    CHECK("not captured", aclmdlRICaptureEnd(s, &bad) == ACL_ERROR_RT_STREAM_NOT_CAPTURED);

    /* Handles checked. */
    CHECK("null model", aclmdlRIExecuteAsync(NULL, s) == ACL_ERROR_INVALID_PARAM);
    CHECK("null out", aclmdlRICaptureEnd(s, NULL) == ACL_ERROR_INVALID_PARAM);
    CHECK("bad mode", aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)7) == ACL_ERROR_RT_PARAM_INVALID);
    CHECK("default stream", aclmdlRICaptureBegin(NULL, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) ==
                                ACL_ERROR_RT_PARAM_INVALID);

    CHECK("destroy", aclmdlRIDestroy(ended) == ACL_SUCCESS);
    CHECK("destroyed", aclmdlRIExecuteAsync(ended, s) == ACL_ERROR_INVALID_PARAM);
    CHECK("free", aclrtFree(in) == ACL_SUCCESS && aclrtFree(mid) == ACL_SUCCESS &&
                      aclrtFree(out) == ACL_SUCCESS);
    CHECK("free host", aclrtFreeHost(host) == ACL_SUCCESS && aclrtFreeHost(back) == ACL_SUCCESS);
    CHECK("events", aclrtDestroyEvent(fork_ev) == ACL_SUCCESS &&
                        aclrtDestroyEvent(join_ev) == ACL_SUCCESS);
    CHECK("streams", aclrtDestroyStream(s) == ACL_SUCCESS && aclrtDestroyStream(side) == ACL_SUCCESS);
    CHECK("reset", aclrtResetDevice(0) == ACL_SUCCESS);
    CHECK("finalize", aclFinalize() == ACL_SUCCESS);
    printf("ok\n");
    return 0;
}
