/*
 * One rank of a multi-rank HCCL test, on the emulated machine.
 *
 *   hccl RANK NRANKS ROOTFILE MODE
 *
 * Rank 0 writes the root info to ROOTFILE (through a temporary name and a
 * rename); the others wait for it. A ROOTFILE ending in .json is a rank
 * table instead: every rank makes its communicator from it
 * (HcclCommInitClusterInfo). Each rank uses device RANK. MODE:
 *   all    every collective over every data type and reduction, on
 *          aclrtMalloc memory and on a VMM mapping; point-to-point, groups,
 *          names, config; results checked on the host
 *   bad    arguments HCCL refuses, and ranks that disagree: the codes, then
 *          a collective that still works
 *   die    rank 1 exits after the communicator is made; rank 0's next
 *          collective must fail (not hang), and the async error says why
 *   fake   one process, rank RANK of NRANKS, in the fake world
 *          (ACLMEM_HCCL_FAKE_WORLD): everything completes at once, peers
 *          contribute zeros and the reductions' identity
 * Prints "ok" and exits 0 when every check holds; else names the check.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "hccl/hccl.h"

static int rank, nranks;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "rank %d: line %d: ", rank, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            exit(1);                                                          \
        }                                                                     \
    } while (0)
#define OK(call) CHECK((call) == 0, "%s failed", #call)
#define HCCL(call)                                                            \
    do {                                                                      \
        HcclResult r_ = (call);                                               \
        CHECK(r_ == HCCL_SUCCESS, "%s answered %d", #call, (int)r_);          \
    } while (0)

static size_t elem_size(int dt)
{
    switch (dt) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16:
    case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    default: return 8;
    }
}

/* Small integers, exact in every type: fp16 and bf16 by their bits. */
static void put(void *buf, int dt, size_t i, double v)
{
    char *p = (char *)buf + i * elem_size(dt);
    switch (dt) {
    case HCCL_DATA_TYPE_INT8: *(int8_t *)p = (int8_t)v; break;
    case HCCL_DATA_TYPE_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case HCCL_DATA_TYPE_INT16: *(int16_t *)p = (int16_t)v; break;
    case HCCL_DATA_TYPE_UINT16: *(uint16_t *)p = (uint16_t)v; break;
    case HCCL_DATA_TYPE_INT32: *(int32_t *)p = (int32_t)v; break;
    case HCCL_DATA_TYPE_UINT32: *(uint32_t *)p = (uint32_t)v; break;
    case HCCL_DATA_TYPE_INT64: *(int64_t *)p = (int64_t)v; break;
    case HCCL_DATA_TYPE_UINT64: *(uint64_t *)p = (uint64_t)v; break;
    case HCCL_DATA_TYPE_FP32: *(float *)p = (float)v; break;
    case HCCL_DATA_TYPE_FP64: *(double *)p = v; break;
    case HCCL_DATA_TYPE_BFP16: {
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        *(uint16_t *)p = (uint16_t)(bits >> 16);
        break;
    }
    case HCCL_DATA_TYPE_FP16: {
        /* Integers up to 2048 in magnitude: sign, exponent, 10 bits. */
        int n = (int)v;
        uint16_t h = 0;
        if (n < 0) { h = 0x8000; n = -n; }
        if (n != 0) {
            int e = 0;
            while ((n >> e) > 1) e++;
            h |= (uint16_t)((e + 15) << 10) | (uint16_t)(((n << 10) >> e) & 0x3ff);
        }
        *(uint16_t *)p = h;
        break;
    }
    }
}

static double get(const void *buf, int dt, size_t i)
{
    const char *p = (const char *)buf + i * elem_size(dt);
    switch (dt) {
    case HCCL_DATA_TYPE_INT8: return *(const int8_t *)p;
    case HCCL_DATA_TYPE_UINT8: return *(const uint8_t *)p;
    case HCCL_DATA_TYPE_INT16: return *(const int16_t *)p;
    case HCCL_DATA_TYPE_UINT16: return *(const uint16_t *)p;
    case HCCL_DATA_TYPE_INT32: return *(const int32_t *)p;
    case HCCL_DATA_TYPE_UINT32: return *(const uint32_t *)p;
    case HCCL_DATA_TYPE_INT64: return (double)*(const int64_t *)p;
    case HCCL_DATA_TYPE_UINT64: return (double)*(const uint64_t *)p;
    case HCCL_DATA_TYPE_FP32: return *(const float *)p;
    case HCCL_DATA_TYPE_FP64: return *(const double *)p;
    case HCCL_DATA_TYPE_BFP16: {
        uint32_t bits = (uint32_t)*(const uint16_t *)p << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    case HCCL_DATA_TYPE_FP16: {
        uint16_t h = *(const uint16_t *)p;
        int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        double v = e == 0 ? m / 1024.0 / 16384.0 : (1.0 + m / 1024.0) * (double)(1 << e) / 32768.0;
        return (h & 0x8000) ? -v : v;
    }
    }
    return 0;
}

/* What rank r holds at element i: 1..4 times (r + 1), signed on odd i. */
static double value(int r, size_t i)
{
    double v = (double)((i % 4) + 1) * (r + 1);
    return (i % 2 && r % 2) ? -v : v;
}

static int is_unsigned(int dt)
{
    return dt == HCCL_DATA_TYPE_UINT8 || dt == HCCL_DATA_TYPE_UINT16 ||
           dt == HCCL_DATA_TYPE_UINT32 || dt == HCCL_DATA_TYPE_UINT64;
}

/* For products, magnitudes of 1 and 2 only: 2^ranks stays in int8. */
static double held(int r, size_t i, int dt, int op)
{
    double v = op == HCCL_REDUCE_PROD ? (double)((i + (size_t)r) % 2 + 1) * ((i % 3 == 1 && r == 0) ? -1 : 1)
                                      : value(r, i);
    return is_unsigned(dt) && v < 0 ? -v : v;
}

static double reduced(int op, size_t i, int dt)
{
    double acc = held(0, i, dt, op);
    for (int r = 1; r < nranks; r++) {
        double v = held(r, i, dt, op);
        switch (op) {
        case HCCL_REDUCE_SUM: acc += v; break;
        case HCCL_REDUCE_PROD: acc *= v; break;
        case HCCL_REDUCE_MAX: acc = v > acc ? v : acc; break;
        case HCCL_REDUCE_MIN: acc = v < acc ? v : acc; break;
        }
    }
    return acc;
}

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    OK(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    return p;
}

static void to_dev(void *dev, const void *host, size_t bytes)
{
    OK(aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
}

static void to_host(void *host, const void *dev, size_t bytes)
{
    OK(aclrtMemcpy(host, bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
}

static const int TYPES[] = {
    HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_INT16, HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT64, HCCL_DATA_TYPE_UINT64, HCCL_DATA_TYPE_UINT8,
    HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_FP64, HCCL_DATA_TYPE_BFP16,
};
#define NTYPES (sizeof TYPES / sizeof TYPES[0])
#define COUNT 37

static void all_reduce_every_type(HcclComm comm, aclrtStream stream, void *dev_a, void *dev_b)
{
    char host[COUNT * 8], out[COUNT * 8];
    for (size_t t = 0; t < NTYPES; t++) {
        int dt = TYPES[t];
        size_t bytes = COUNT * elem_size(dt);
        for (int op = HCCL_REDUCE_SUM; op <= HCCL_REDUCE_MIN; op++) {
            for (size_t i = 0; i < COUNT; i++) put(host, dt, i, held(rank, i, dt, op));
            to_dev(dev_a, host, bytes);
            /* Out of place on even ops, in place on odd ones. */
            void *recv = op % 2 ? dev_a : dev_b;
            HCCL(HcclAllReduce(dev_a, recv, COUNT, dt, op, comm, stream));
            OK(aclrtSynchronizeStream(stream));
            to_host(out, recv, bytes);
            for (size_t i = 0; i < COUNT; i++) {
                double want = reduced(op, i, dt);
                CHECK(get(out, dt, i) == want, "allreduce type %d op %d [%zu]: %g, want %g",
                      dt, op, i, get(out, dt, i), want);
            }
        }
    }
}

static void the_other_collectives(HcclComm comm, aclrtStream stream, void *a, void *b)
{
    int dt = HCCL_DATA_TYPE_FP32;
    float host[COUNT * 8], out[COUNT * 8];
    /* Broadcast from the last rank. */
    for (size_t i = 0; i < COUNT; i++) host[i] = (float)value(rank, i);
    to_dev(a, host, COUNT * 4);
    HCCL(HcclBroadcast(a, COUNT, dt, (uint32_t)(nranks - 1), comm, stream));
    to_host(out, a, COUNT * 4);
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == value(nranks - 1, i), "broadcast [%zu]", i);

    /* AllGather: rank r's part at r * COUNT. */
    to_dev(a, host, COUNT * 4);
    HCCL(HcclAllGather(a, b, COUNT, dt, comm, stream));
    to_host(out, b, COUNT * 4 * nranks);
    for (int r = 0; r < nranks; r++)
        for (size_t i = 0; i < COUNT; i++)
            CHECK(out[r * COUNT + i] == value(r, i), "allgather part %d [%zu]", r, i);

    /* ReduceScatter: chunk r of everyone's, summed, at rank r. */
    for (size_t i = 0; i < COUNT * (size_t)nranks; i++) host[i] = (float)value(rank, i);
    to_dev(a, host, COUNT * 4 * nranks);
    HCCL(HcclReduceScatter(a, b, COUNT, dt, HCCL_REDUCE_SUM, comm, stream));
    to_host(out, b, COUNT * 4);
    for (size_t i = 0; i < COUNT; i++) {
        double want = 0;
        for (int r = 0; r < nranks; r++) want += value(r, rank * COUNT + i);
        CHECK(out[i] == want, "reducescatter [%zu]: %g want %g", i, out[i], want);
    }

    /* Reduce to rank 0 (max); the others' recv is left alone. */
    for (size_t i = 0; i < COUNT; i++) host[i] = (float)value(rank, i);
    to_dev(a, host, COUNT * 4);
    float marker[COUNT];
    for (size_t i = 0; i < COUNT; i++) marker[i] = -1234.0f;
    to_dev(b, marker, COUNT * 4);
    HCCL(HcclReduce(a, b, COUNT, dt, HCCL_REDUCE_MAX, 0, comm, stream));
    to_host(out, b, COUNT * 4);
    for (size_t i = 0; i < COUNT; i++) {
        double want = rank == 0 ? reduced(HCCL_REDUCE_MAX, i, HCCL_DATA_TYPE_FP32) : -1234.0;
        CHECK(out[i] == want, "reduce [%zu]: %g want %g", i, out[i], want);
    }

    /* Scatter from rank 1 % nranks: chunk r to rank r. */
    int root = 1 % nranks;
    for (size_t i = 0; i < COUNT * (size_t)nranks; i++) host[i] = (float)(i * 3 + 1);
    to_dev(a, host, COUNT * 4 * nranks);
    HCCL(HcclScatter(a, b, COUNT, dt, (uint32_t)root, comm, stream));
    to_host(out, b, COUNT * 4);
    for (size_t i = 0; i < COUNT; i++)
        CHECK(out[i] == (float)((rank * COUNT + i) * 3 + 1), "scatter [%zu]", i);

    /* AlltoAll: block j to rank j. */
    for (int j = 0; j < nranks; j++)
        for (size_t i = 0; i < COUNT; i++) host[j * COUNT + i] = (float)(rank * 1000 + j * 100 + i);
    to_dev(a, host, COUNT * 4 * nranks);
    HCCL(HcclAlltoAll(a, COUNT, dt, b, COUNT, dt, comm, stream));
    to_host(out, b, COUNT * 4 * nranks);
    for (int i = 0; i < nranks; i++)
        for (size_t k = 0; k < COUNT; k++)
            CHECK(out[i * COUNT + k] == (float)(i * 1000 + rank * 100 + k), "alltoall from %d [%zu]", i, k);

    /* AlltoAllV: rank i sends j + 1 elements to rank j, receives rank + 1
     * from each, packed in reverse order of ranks. */
    uint64_t sc[8], sd[8], rc[8], rd[8];
    uint64_t at = 0;
    for (int j = 0; j < nranks; j++) { sc[j] = (uint64_t)j + 1; sd[j] = at; at += sc[j]; }
    for (size_t i = 0; i < at; i++) host[i] = (float)(rank * 100 + i);
    to_dev(a, host, at * 4);
    at = 0;
    for (int i = nranks - 1; i >= 0; i--) { rc[i] = (uint64_t)rank + 1; rd[i] = at; at += rc[i]; }
    HCCL(HcclAlltoAllV(a, sc, sd, dt, b, rc, rd, dt, comm, stream));
    to_host(out, b, at * 4);
    for (int i = 0; i < nranks; i++) {
        /* Rank i's block for me starts at its displacement for rank `rank`. */
        uint64_t from = 0;
        for (int j = 0; j < rank; j++) from += (uint64_t)j + 1;
        for (uint64_t k = 0; k < rc[i]; k++)
            CHECK(out[rd[i] + k] == (float)(i * 100 + from + k), "alltoallv from %d [%llu]", i,
                  (unsigned long long)k);
    }

    /* AllGatherV: rank r gives r + 1 elements, placed with a gap of 2. */
    uint64_t gc[8], gd[8];
    at = 0;
    for (int r = 0; r < nranks; r++) { gc[r] = (uint64_t)r + 1; gd[r] = at; at += gc[r] + 2; }
    for (size_t i = 0; i < (size_t)rank + 1; i++) host[i] = (float)(rank * 10 + i);
    to_dev(a, host, (rank + 1) * 4);
    HCCL(HcclAllGatherV(a, (uint64_t)rank + 1, b, gc, gd, dt, comm, stream));
    to_host(out, b, at * 4);
    for (int r = 0; r < nranks; r++)
        for (uint64_t k = 0; k < gc[r]; k++)
            CHECK(out[gd[r] + k] == (float)(r * 10 + k), "allgatherv part %d", r);

    HCCL(HcclBarrier(comm, stream));
}

static void point_to_point(HcclComm comm, aclrtStream stream, void *a, void *b)
{
    int32_t host[COUNT], out[COUNT];
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    for (size_t i = 0; i < COUNT; i++) host[i] = rank * 7 + (int32_t)i;
    to_dev(a, host, sizeof host);
    /* A ring: even ranks send first, odd ranks receive first. */
    if (rank % 2 == 0) {
        HCCL(HcclSend(a, COUNT, HCCL_DATA_TYPE_INT32, (uint32_t)next, comm, stream));
        HCCL(HcclRecv(b, COUNT, HCCL_DATA_TYPE_INT32, (uint32_t)prev, comm, stream));
    } else {
        HCCL(HcclRecv(b, COUNT, HCCL_DATA_TYPE_INT32, (uint32_t)prev, comm, stream));
        HCCL(HcclSend(a, COUNT, HCCL_DATA_TYPE_INT32, (uint32_t)next, comm, stream));
    }
    to_host(out, b, sizeof out);
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == prev * 7 + (int32_t)i, "ring recv [%zu]", i);

    /* Both directions at once, in a batch and in a group. */
    HcclSendRecvItem items[2] = {
        {HCCL_SEND, a, COUNT, HCCL_DATA_TYPE_INT32, (uint32_t)prev},
        {HCCL_RECV, b, COUNT, HCCL_DATA_TYPE_INT32, (uint32_t)next},
    };
    HCCL(HcclBatchSendRecv(items, 2, comm, stream));
    to_host(out, b, sizeof out);
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == next * 7 + (int32_t)i, "batch recv [%zu]", i);

    HCCL(HcclGroupStart());
    HCCL(HcclSend(a, COUNT, HCCL_DATA_TYPE_INT32, (uint32_t)next, comm, stream));
    HCCL(HcclRecv(b, COUNT, HCCL_DATA_TYPE_INT32, (uint32_t)prev, comm, stream));
    HCCL(HcclGroupEnd());
    to_host(out, b, sizeof out);
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == prev * 7 + (int32_t)i, "group recv [%zu]", i);
}

/* A VMM mapping as the buffer: reserve, allocate, map. */
static void on_vmm_memory(HcclComm comm, aclrtStream stream)
{
    size_t gran = 0;
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = (uint32_t)rank;
    OK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran));
    void *va = NULL;
    aclrtDrvMemHandle h = NULL;
    OK(aclrtReserveMemAddress(&va, gran, 0, NULL, 0));
    OK(aclrtMallocPhysical(&h, gran, &prop, 0));
    OK(aclrtMapMem(va, gran, 0, h, 0));
    int64_t host[COUNT], out[COUNT];
    for (size_t i = 0; i < COUNT; i++) host[i] = (int64_t)(rank + 1) << 40;
    to_dev(va, host, sizeof host);
    HCCL(HcclAllReduce(va, va, COUNT, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, stream));
    to_host(out, va, sizeof out);
    int64_t want = 0;
    for (int r = 0; r < nranks; r++) want += (int64_t)(r + 1) << 40;
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == want, "vmm allreduce [%zu]", i);
    OK(aclrtUnmapMem(va));
    OK(aclrtFreePhysical(h));
    OK(aclrtReleaseMemAddress(va));
}

static void bad_arguments(HcclComm comm, aclrtStream stream, void *a, void *b)
{
    HcclResult r;
    uint32_t n = 0;
    CHECK(HcclGetRankSize(NULL, &n) == HCCL_E_PTR, "NULL comm");
    CHECK(HcclGetRankSize((HcclComm)(uintptr_t)0x1234, &n) == HCCL_E_PARA, "garbage comm");
    CHECK(HcclGetRankSize(comm, NULL) == HCCL_E_PTR, "NULL out");
    CHECK(HcclGetRankSize(comm, (uint32_t *)(uintptr_t)8) == HCCL_E_PTR, "garbage out");
    CHECK(HcclSetConfig(HCCL_DETERMINISTIC, (HcclConfigValue){7}) == HCCL_E_PARA, "bad config value");
    CHECK(HcclGroupEnd() == HCCL_E_PARA, "group end without start");
    CHECK(strcmp(HcclGetErrorString(HCCL_E_TIMEOUT), "timeout") == 0, "error string");

    /* Collectives: every rank learns of a bad or differing argument. */
    r = HcclAllReduce(a, b, 8, (HcclDataType)99, HCCL_REDUCE_SUM, comm, stream);
    CHECK(r == HCCL_E_PARA, "bad data type: %d", r);
    r = HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, (HcclReduceOp)9, comm, stream);
    CHECK(r == HCCL_E_PARA, "bad op: %d", r);
    r = HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP8E4M3, HCCL_REDUCE_SUM, comm, stream);
    CHECK(r == HCCL_E_NOT_SUPPORT || r == HCCL_E_PARA, "fp8 reduction: %d", r);
    /* Rank 0 asks for 16 elements, the others for 8. */
    r = HcclAllReduce(a, b, rank == 0 ? 16 : 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
    CHECK(r == HCCL_E_PARA, "differing counts: %d", r);
    /* Rank 0 sums, the others take the max. */
    r = HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, rank == 0 ? HCCL_REDUCE_SUM : HCCL_REDUCE_MAX, comm, stream);
    CHECK(r == HCCL_E_PARA, "differing ops: %d", r);
    /* The last rank's buffer is not device memory. */
    static float on_host[8];
    r = HcclAllReduce(rank == nranks - 1 ? on_host : a, rank == nranks - 1 ? on_host : b, 8,
                      HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
    CHECK(r == (rank == nranks - 1 ? HCCL_E_PTR : HCCL_E_PARA), "host buffer: %d", r);
    r = HcclBroadcast(a, 8, HCCL_DATA_TYPE_FP32, (uint32_t)nranks, comm, stream);
    CHECK(r == HCCL_E_PARA, "root out of range: %d", r);
    /* AllGatherV where rank 1 expects another count of rank 0 than rank 0
     * gives: every rank refuses, none waits for the others. */
    uint64_t gc[8], gd[8];
    for (int k = 0; k < nranks; k++) {
        gc[k] = 2;
        gd[k] = 2 * (uint64_t)k;
    }
    if (rank == 1) gc[0] = 1;
    r = HcclAllGatherV(a, 2, b, gc, gd, HCCL_DATA_TYPE_FP32, comm, stream);
    CHECK(r == HCCL_E_PARA, "allgatherv with differing expectations: %d", r);
    /* Inside a group: rank 0 refuses its arguments at once; the group's end
     * tells every rank. */
    HCCL(HcclGroupStart());
    r = HcclAllReduce(a, b, 8, rank == 0 ? (HcclDataType)99 : HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM,
                      comm, stream);
    CHECK(r == (rank == 0 ? HCCL_E_PARA : HCCL_SUCCESS), "in a group: %d", r);
    r = HcclGroupEnd();
    CHECK(r == HCCL_E_PARA, "the end of a group with a refused collective: %d", r);
    /* Still usable afterwards. */
    float host[8], out[8];
    for (int i = 0; i < 8; i++) host[i] = (float)(rank + i);
    to_dev(a, host, sizeof host);
    HCCL(HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    to_host(out, b, sizeof out);
    for (int i = 0; i < 8; i++) {
        float want = 0;
        for (int k = 0; k < nranks; k++) want += (float)(k + i);
        CHECK(out[i] == want, "after the refusals [%d]", i);
    }
    /* A send the receiver expects with another size: the receiver says so. */
    if (rank == 0) {
        HCCL(HcclSend(a, 4, HCCL_DATA_TYPE_FP32, 1, comm, stream));
    } else if (rank == 1) {
        r = HcclRecv(b, 8, HCCL_DATA_TYPE_FP32, 0, comm, stream);
        CHECK(r == HCCL_E_PARA, "recv of another size: %d", r);
    }
    HCCL(HcclBarrier(comm, stream));
}

/* The fake world's outputs (docs/hccl.md): this rank's own data in its
 * place, zeros from everyone else. */
static void fake_world(HcclComm comm, aclrtStream stream)
{
    size_t n = (size_t)nranks * COUNT;
    float *host = calloc(n, sizeof(float)), *out = calloc(n, sizeof(float));
    CHECK(host && out, "host memory");
    void *a = dev_alloc(n * 4), *b = dev_alloc(n * 4);
    for (size_t i = 0; i < n; i++) host[i] = (float)(i % 1000 + 1);

    to_dev(a, host, COUNT * 4);
    HCCL(HcclAllReduce(a, b, COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    to_host(out, b, COUNT * 4);
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == host[i], "fake allreduce [%zu]", i);

    to_dev(b, host, n * 4); /* garbage where zeros must come */
    HCCL(HcclAllGather(a, b, COUNT, HCCL_DATA_TYPE_FP32, comm, stream));
    to_host(out, b, n * 4);
    for (size_t i = 0; i < n; i++) {
        float want = i / COUNT == (size_t)rank ? host[i % COUNT] : 0.0f;
        CHECK(out[i] == want, "fake allgather [%zu]: %g want %g", i, out[i], want);
    }

    to_dev(a, host, n * 4);
    HCCL(HcclReduceScatter(a, b, COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    to_host(out, b, COUNT * 4);
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == host[rank * COUNT + i], "fake reducescatter [%zu]", i);

    to_dev(b, host, COUNT * 4);
    HCCL(HcclBroadcast(b, COUNT, HCCL_DATA_TYPE_FP32, (uint32_t)(rank + 1) % nranks, comm, stream));
    to_host(out, b, COUNT * 4);
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == 0.0f, "fake broadcast from a peer [%zu]", i);

    to_dev(a, host, n * 4);
    HCCL(HcclAlltoAll(a, COUNT, HCCL_DATA_TYPE_FP32, b, COUNT, HCCL_DATA_TYPE_FP32, comm, stream));
    to_host(out, b, n * 4);
    for (size_t i = 0; i < n; i++) {
        float want = i / COUNT == (size_t)rank ? host[i] : 0.0f;
        CHECK(out[i] == want, "fake alltoall [%zu]", i);
    }

    to_dev(b, host, COUNT * 4);
    HCCL(HcclRecv(b, COUNT, HCCL_DATA_TYPE_FP32, (uint32_t)(rank + 7) % nranks, comm, stream));
    to_host(out, b, COUNT * 4);
    for (size_t i = 0; i < COUNT; i++) CHECK(out[i] == 0.0f, "fake recv [%zu]", i);
    HCCL(HcclSend(a, COUNT, HCCL_DATA_TYPE_FP32, (uint32_t)(rank + 7) % nranks, comm, stream));
    HCCL(HcclBarrier(comm, stream));
    /* The arguments are still checked. */
    CHECK(HcclBroadcast(a, COUNT, HCCL_DATA_TYPE_FP32, (uint32_t)nranks, comm, stream) == HCCL_E_PARA,
          "fake broadcast from no rank");
    OK(aclrtFree(a));
    OK(aclrtFree(b));
    free(host);
    free(out);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: hccl RANK NRANKS ROOTFILE MODE\n");
        return 2;
    }
    rank = atoi(argv[1]);
    nranks = atoi(argv[2]);
    const char *file = argv[3], *mode = argv[4];
    OK(aclInit(NULL));
    OK(aclrtSetDevice(rank));
    aclrtStream stream = NULL;
    OK(aclrtCreateStream(&stream));

    HcclRootInfo root;
    int fake = strcmp(mode, "fake") == 0;
    size_t flen = strlen(file);
    int table = flen > 5 && strcmp(file + flen - 5, ".json") == 0;
    if (table) {
        /* No root info: the table names rank 0's address. */
    } else if (fake) {
        HCCL(HcclGetRootInfo(&root));
    } else if (rank == 0) {
        HCCL(HcclGetRootInfo(&root));
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", file);
        FILE *f = fopen(tmp, "wb");
        CHECK(f && fwrite(&root, sizeof root, 1, f) == 1 && fclose(f) == 0, "write root info");
        CHECK(rename(tmp, file) == 0, "rename root info");
    } else {
        FILE *f = NULL;
        for (int i = 0; i < 3000 && !(f = fopen(file, "rb")); i++) usleep(10000);
        CHECK(f && fread(&root, sizeof root, 1, f) == 1, "read root info");
        fclose(f);
    }
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    snprintf(config.hcclCommName, sizeof config.hcclCommName, "test-group");
    HcclComm comm = NULL;
    if (table) {
        HCCL(HcclCommInitClusterInfoConfig(file, (uint32_t)rank, &config, &comm));
    } else {
        HCCL(HcclCommInitRootInfoConfig((uint32_t)nranks, &root, (uint32_t)rank, &config, &comm));
    }
    uint32_t got = 99;
    HCCL(HcclGetRankId(comm, &got));
    CHECK(got == (uint32_t)rank, "rank id %u", got);
    HCCL(HcclGetRankSize(comm, &got));
    CHECK(got == (uint32_t)nranks, "rank size %u", got);
    char name[128];
    HCCL(HcclGetCommName(comm, name));
    CHECK(strcmp(name, "test-group") == 0, "comm name %s", name);
    CHECK(HcclGetCommConfigCapability() > 2, "capability");

    size_t big = COUNT * 8 * 8;
    void *a = dev_alloc(big), *b = dev_alloc(big);
    if (strcmp(mode, "all") == 0) {
        all_reduce_every_type(comm, stream, a, b);
        the_other_collectives(comm, stream, a, b);
        if (nranks > 1) point_to_point(comm, stream, a, b);
        on_vmm_memory(comm, stream);
    } else if (strcmp(mode, "bad") == 0) {
        bad_arguments(comm, stream, a, b);
    } else if (fake) {
        fake_world(comm, stream);
    } else if (strcmp(mode, "die") == 0) {
        if (rank == 1) {
            printf("dead\n");
            fflush(stdout);
            _exit(0);
        }
        HcclResult r = HcclAllReduce(a, b, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
        CHECK(r == HCCL_E_TCP_TRANSFER || r == HCCL_E_TIMEOUT, "allreduce with a dead peer: %d", r);
        HcclResult async = HCCL_SUCCESS;
        HCCL(HcclGetCommAsyncError(comm, &async));
        CHECK(async == r, "async error %d, want %d", async, r);
        r = HcclBarrier(comm, stream);
        CHECK(r == async, "a broken communicator answers its error: %d", r);
    } else {
        CHECK(0, "unknown mode %s", mode);
    }
    OK(aclrtFree(a));
    OK(aclrtFree(b));
    HCCL(HcclCommDestroy(comm));
    CHECK(HcclCommDestroy(comm) == HCCL_E_PARA, "destroyed twice");
    OK(aclrtDestroyStream(stream));
    OK(aclrtResetDevice(rank));
    OK(aclFinalize());
    printf("ok\n");
    return 0;
}
