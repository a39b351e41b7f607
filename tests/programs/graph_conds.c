/*
 * Conditional tasks of ACL graphs on the emulated machine, as CANN's
 * sample and torch_npu's conditional nodes use them: a condition handle
 * made in a capturing model, its value in device memory, an IF, WHILE or
 * SWITCH task whose bodies are models captured with
 * aclmdlRICaptureToModelRIBegin; each execution reads the value (set by
 * the host, by a copy inside the graph, or reset to its default) and runs
 * the body it selects. Then every refusal, with the runtime's code. Prints
 * "ok" and exits 0 when every check holds; else names the check.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream);

#define N 256
#define MODE ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL

#define CHECK(what, cond)                                     \
    do {                                                      \
        if (!(cond)) {                                        \
            printf("FAILED: %s (line %d)\n", what, __LINE__); \
            return 1;                                         \
        }                                                     \
    } while (0)

static int passes;
static void count_pass(void *arg) {
    (void)arg;
    passes++;
}

/* The first byte of device memory `p`, read back. */
static int first_byte(void *p) {
    unsigned char b[N];
    if (aclrtMemcpy(b, N, p, N, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
        return -1;
    }
    for (int i = 1; i < N; i++) {
        if (b[i] != b[0]) {
            return -2;
        }
    }
    return b[0];
}

static aclError set_value(uint64_t *cond, uint64_t v) {
    return aclrtMemcpy(cond, sizeof v, &v, sizeof v, ACL_MEMCPY_HOST_TO_DEVICE);
}

/* Runs `model` on `exec` and waits. */
static aclError run(aclmdlRI model, aclrtStream exec) {
    aclError e = aclmdlRIExecuteAsync(model, exec);
    return e != ACL_SUCCESS ? e : aclrtSynchronizeStream(exec);
}

int main(void) {
    CHECK("aclInit", aclInit(NULL) == ACL_SUCCESS);
    CHECK("aclrtSetDevice", aclrtSetDevice(0) == ACL_SUCCESS);
    aclrtStream s = NULL, sub = NULL, exec = NULL;
    CHECK("create stream", aclrtCreateStream(&s) == ACL_SUCCESS);
    CHECK("create sub stream", aclrtCreateStream(&sub) == ACL_SUCCESS);
    CHECK("create exec stream", aclrtCreateStream(&exec) == ACL_SUCCESS);
    void *out = NULL, *pred = NULL, *vals = NULL;
    CHECK("malloc out", aclrtMalloc(&out, N, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    CHECK("malloc pred", aclrtMalloc(&pred, 8, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
    CHECK("malloc vals", aclrtMalloc(&vals, 24, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);

    /* IF with two bodies; the value set by the host (flag 0: kept). */
    aclmdlRI parent = NULL, bodies[3] = {NULL, NULL, NULL};
    aclmdlRICaptureStatus status;
    CHECK("capture begin", aclmdlRICaptureBegin(s, MODE) == ACL_SUCCESS);
    CHECK("capture info", aclmdlRICaptureGetInfo(s, &status, &parent) == ACL_SUCCESS);
    aclmdlRICondHandle h = NULL;
    CHECK("handle", aclmdlRICondHandleCreate(parent, 0, 0, &h) == ACL_SUCCESS && h != NULL);
    uint64_t *cond = NULL;
    CHECK("cond ptr", aclmdlRICondHandleGetCondPtr(h, &cond) == ACL_SUCCESS && cond != NULL);
    aclmdlRICondTaskParams p = {h, ACL_MODEL_RI_COND_TYPE_IF, 2, bodies};
    CHECK("add IF", aclmdlRIAddCondTask(p, s, 0) == ACL_SUCCESS);
    CHECK("bodies made", bodies[0] != NULL && bodies[1] != NULL && bodies[0] != bodies[1]);
    CHECK("handle serves one task", aclmdlRIAddCondTask(p, s, 0) == 107000);
    for (int i = 0; i < 2; i++) {
        aclmdlRI got = NULL;
        CHECK("body capture", aclmdlRICaptureToModelRIBegin(sub, bodies[i], MODE) == ACL_SUCCESS);
        CHECK("body set", aclrtMemsetAsync(out, N, i + 1, N, sub) == ACL_SUCCESS);
        CHECK("body end", aclmdlRICaptureEnd(sub, &got) == ACL_SUCCESS && got == bodies[i]);
    }
    CHECK("a body is not run alone", aclmdlRIExecuteAsync(bodies[0], exec) == 107000);
    CHECK("capture end", aclmdlRICaptureEnd(s, &parent) == ACL_SUCCESS);
    CHECK("nothing ran while captured", aclrtMemset(out, N, 0, N) == ACL_SUCCESS);
    CHECK("no handle after the capture", aclmdlRICondHandleCreate(parent, 0, 0, &h) == 107000);
    CHECK("value 1", set_value(cond, 1) == ACL_SUCCESS && run(parent, exec) == ACL_SUCCESS);
    CHECK("IF true runs the first body", first_byte(out) == 1);
    CHECK("value 0", set_value(cond, 0) == ACL_SUCCESS && run(parent, exec) == ACL_SUCCESS);
    CHECK("IF false runs the second body", first_byte(out) == 2);
    CHECK("value 7", set_value(cond, 7) == ACL_SUCCESS && run(parent, exec) == ACL_SUCCESS);
    CHECK("any value but 0 is true", first_byte(out) == 1);
    CHECK("a body is not destroyed alone", aclmdlRIDestroy(bodies[1]) == 107000);
    CHECK("destroy", aclmdlRIDestroy(parent) == ACL_SUCCESS);
    CHECK("the bodies went with it", aclmdlRIDestroy(bodies[0]) == ACL_ERROR_INVALID_PARAM);

    /* IF with one body, ASSIGN_DEFAULT 0: the value is reset before each
     * execution, so only a copy inside the graph (torch_npu's pattern:
     * the predicate copied into the value) selects the body. */
    CHECK("capture begin 2", aclmdlRICaptureBegin(s, MODE) == ACL_SUCCESS);
    CHECK("capture info 2", aclmdlRICaptureGetInfo(s, &status, &parent) == ACL_SUCCESS);
    aclmdlRICondHandle hd = NULL, hr = NULL;
    CHECK("handle d", aclmdlRICondHandleCreate(parent, 0, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &hd) == ACL_SUCCESS);
    CHECK("handle r", aclmdlRICondHandleCreate(parent, 0, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &hr) == ACL_SUCCESS);
    uint64_t *cd = NULL, *cr = NULL;
    CHECK("cond d", aclmdlRICondHandleGetCondPtr(hd, &cd) == ACL_SUCCESS);
    CHECK("cond r", aclmdlRICondHandleGetCondPtr(hr, &cr) == ACL_SUCCESS && cr != cd);
    CHECK("pred into value", aclrtMemcpyAsync(cd, 8, pred, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s) == ACL_SUCCESS);
    aclmdlRICondTaskParams pd = {hd, ACL_MODEL_RI_COND_TYPE_IF, 1, bodies};
    CHECK("add IF d", aclmdlRIAddCondTask(pd, s, 0) == ACL_SUCCESS);
    CHECK("body d capture", aclmdlRICaptureToModelRIBegin(sub, bodies[0], MODE) == ACL_SUCCESS);
    CHECK("body d set", aclrtMemsetAsync(out, N, 5, N, sub) == ACL_SUCCESS);
    CHECK("body d end", aclmdlRICaptureEnd(sub, &bodies[0]) == ACL_SUCCESS);
    aclmdlRICondTaskParams pr = {hr, ACL_MODEL_RI_COND_TYPE_IF, 1, bodies + 1};
    CHECK("add IF r", aclmdlRIAddCondTask(pr, s, 0) == ACL_SUCCESS);
    CHECK("body r capture", aclmdlRICaptureToModelRIBegin(sub, bodies[1], MODE) == ACL_SUCCESS);
    CHECK("body r set", aclrtMemsetAsync(out, N, 9, N, sub) == ACL_SUCCESS);
    CHECK("body r end", aclmdlRICaptureEnd(sub, &bodies[1]) == ACL_SUCCESS);
    CHECK("capture end 2", aclmdlRICaptureEnd(s, &parent) == ACL_SUCCESS);
    CHECK("out 0", aclrtMemset(out, N, 0, N) == ACL_SUCCESS);
    CHECK("pred 1", set_value(pred, 1) == ACL_SUCCESS);
    CHECK("host value reset", set_value(cr, 1) == ACL_SUCCESS && run(parent, exec) == ACL_SUCCESS);
    CHECK("pred true runs the body; the host's value was reset", first_byte(out) == 5);
    CHECK("out 0 again", aclrtMemset(out, N, 0, N) == ACL_SUCCESS);
    CHECK("pred 0", set_value(pred, 0) == ACL_SUCCESS && run(parent, exec) == ACL_SUCCESS);
    CHECK("pred false runs nothing", first_byte(out) == 0);
    CHECK("destroy 2", aclmdlRIDestroy(parent) == ACL_SUCCESS);

    /* WHILE: the body shifts a list of values into the condition, so it
     * runs while they are not 0: {1, 1, 0} after a default of 1 is three
     * passes, every execution (the default is assigned again). */
    CHECK("capture begin 3", aclmdlRICaptureBegin(s, MODE) == ACL_SUCCESS);
    CHECK("capture info 3", aclmdlRICaptureGetInfo(s, &status, &parent) == ACL_SUCCESS);
    aclmdlRICondHandle hw = NULL;
    CHECK("handle w", aclmdlRICondHandleCreate(parent, 1, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &hw) == ACL_SUCCESS);
    uint64_t *cw = NULL;
    CHECK("cond w", aclmdlRICondHandleGetCondPtr(hw, &cw) == ACL_SUCCESS);
    aclmdlRICondTaskParams pw = {hw, ACL_MODEL_RI_COND_TYPE_WHILE, 1, bodies};
    aclmdlRICondTaskParams pw2 = {hw, ACL_MODEL_RI_COND_TYPE_WHILE, 2, bodies};
    CHECK("WHILE takes one body", aclmdlRIAddCondTask(pw2, s, 0) == 107000);
    CHECK("add WHILE", aclmdlRIAddCondTask(pw, s, 0) == ACL_SUCCESS);
    uint64_t *v = vals;
    CHECK("body w capture", aclmdlRICaptureToModelRIBegin(sub, bodies[0], MODE) == ACL_SUCCESS);
    CHECK("count", aclrtLaunchHostFunc(sub, count_pass, NULL) == ACL_SUCCESS);
    CHECK("shift 0", aclrtMemcpyAsync(cw, 8, v, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, sub) == ACL_SUCCESS);
    CHECK("shift 1", aclrtMemcpyAsync(v, 8, v + 1, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, sub) == ACL_SUCCESS);
    CHECK("shift 2", aclrtMemcpyAsync(v + 1, 8, v + 2, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, sub) == ACL_SUCCESS);
    CHECK("body w end", aclmdlRICaptureEnd(sub, &bodies[0]) == ACL_SUCCESS);
    CHECK("capture end 3", aclmdlRICaptureEnd(s, &parent) == ACL_SUCCESS);
    CHECK("nothing counted while captured", passes == 0);
    for (int round = 1; round <= 2; round++) {
        uint64_t list[3] = {1, 1, 0};
        CHECK("list", aclrtMemcpy(vals, 24, list, 24, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
        CHECK("run WHILE", run(parent, exec) == ACL_SUCCESS);
        CHECK("three passes each execution", passes == 3 * round);
    }
    CHECK("destroy 3", aclmdlRIDestroy(parent) == ACL_SUCCESS);

    /* SWITCH over three bodies: the value picks one; out of range, none. */
    CHECK("capture begin 4", aclmdlRICaptureBegin(s, MODE) == ACL_SUCCESS);
    CHECK("capture info 4", aclmdlRICaptureGetInfo(s, &status, &parent) == ACL_SUCCESS);
    aclmdlRICondHandle hs = NULL;
    CHECK("handle s", aclmdlRICondHandleCreate(parent, 0, 0, &hs) == ACL_SUCCESS);
    uint64_t *cs = NULL;
    CHECK("cond s", aclmdlRICondHandleGetCondPtr(hs, &cs) == ACL_SUCCESS);
    aclmdlRICondTaskParams ps = {hs, ACL_MODEL_RI_COND_TYPE_SWITCH, 3, bodies};
    aclmdlRICondTaskParams bad = ps;
    bad.type = (aclmdlRICondTaskType)3;
    CHECK("no type 3", aclmdlRIAddCondTask(bad, s, 0) == 107000);
    bad = ps;
    bad.size = 0;
    CHECK("SWITCH needs a body", aclmdlRIAddCondTask(bad, s, 0) == 107000);
    CHECK("flags are reserved", aclmdlRIAddCondTask(ps, s, 1) == 107000);
    bad = ps;
    bad.modelRIArray = NULL;
    CHECK("bodies array", aclmdlRIAddCondTask(bad, s, 0) == 107000);
    bad.modelRIArray = (aclmdlRI *)(uintptr_t)0x10;
    CHECK("garbage bodies array", aclmdlRIAddCondTask(bad, s, 0) == ACL_ERROR_INVALID_PARAM);
    CHECK("not on a stream that does not capture", aclmdlRIAddCondTask(ps, exec, 0) == 107029);
    CHECK("NULL stream", aclmdlRIAddCondTask(ps, NULL, 0) == ACL_ERROR_INVALID_PARAM);
    CHECK("add SWITCH", aclmdlRIAddCondTask(ps, s, 0) == ACL_SUCCESS);
    for (int i = 0; i < 3; i++) {
        CHECK("case capture", aclmdlRICaptureToModelRIBegin(sub, bodies[i], MODE) == ACL_SUCCESS);
        CHECK("case set", aclrtMemsetAsync(out, N, 10 + i, N, sub) == ACL_SUCCESS);
        CHECK("case end", aclmdlRICaptureEnd(sub, &bodies[i]) == ACL_SUCCESS);
    }
    CHECK("capture end 4", aclmdlRICaptureEnd(s, &parent) == ACL_SUCCESS);
    for (uint64_t i = 0; i < 3; i++) {
        CHECK("case value", set_value(cs, i) == ACL_SUCCESS && run(parent, exec) == ACL_SUCCESS);
        CHECK("the value's case ran", first_byte(out) == 10 + (int)i);
    }
    CHECK("out 0 before 5", aclrtMemset(out, N, 0, N) == ACL_SUCCESS);
    CHECK("value 5", set_value(cs, 5) == ACL_SUCCESS && run(parent, exec) == ACL_SUCCESS);
    CHECK("out of range runs no case", first_byte(out) == 0);
    CHECK("destroy 4", aclmdlRIDestroy(parent) == ACL_SUCCESS);

    /* The handle functions' own checks. */
    CHECK("capture begin 5", aclmdlRICaptureBegin(s, MODE) == ACL_SUCCESS);
    CHECK("capture info 5", aclmdlRICaptureGetInfo(s, &status, &parent) == ACL_SUCCESS);
    CHECK("NULL model", aclmdlRICondHandleCreate(NULL, 0, 0, &h) == ACL_ERROR_INVALID_PARAM);
    CHECK("NULL handle out", aclmdlRICondHandleCreate(parent, 0, 0, NULL) == ACL_ERROR_INVALID_PARAM);
    CHECK("flag 2", aclmdlRICondHandleCreate(parent, 0, (aclmdlRICondHandleFlag)2, &h) == 107000);
    CHECK("NULL cond handle", aclmdlRICondHandleGetCondPtr(NULL, &cond) == ACL_ERROR_INVALID_PARAM);
    CHECK("NULL cond out", aclmdlRICondHandleGetCondPtr(hs, NULL) == ACL_ERROR_INVALID_PARAM);
    CHECK("a destroyed model's handle", aclmdlRICondHandleGetCondPtr(hs, &cond) == 107000);
    CHECK("capture end 5", aclmdlRICaptureEnd(s, &parent) == ACL_SUCCESS);
    CHECK("destroy 5", aclmdlRIDestroy(parent) == ACL_SUCCESS);

    CHECK("free", aclrtFree(out) == ACL_SUCCESS && aclrtFree(pred) == ACL_SUCCESS &&
                      aclrtFree(vals) == ACL_SUCCESS);
    CHECK("destroy streams", aclrtDestroyStream(s) == ACL_SUCCESS &&
                                 aclrtDestroyStream(sub) == ACL_SUCCESS &&
                                 aclrtDestroyStream(exec) == ACL_SUCCESS);
    CHECK("reset", aclrtResetDevice(0) == ACL_SUCCESS);
    CHECK("finalize", aclFinalize() == ACL_SUCCESS);
    printf("ok\n");
    return 0;
}
