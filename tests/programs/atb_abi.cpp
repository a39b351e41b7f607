/*
 * ATB's C++ ABI, as a program compiled against ATB's headers calls the
 * emulated libatb.so (the same object as libascendcl.so): the classes are
 * declared here from the layouts documented in docs/operators.md ("The
 * Ascend Transformer Boost"), so the compiler lays out the objects, calls
 * the virtual methods through the library's tables, returns std::string by
 * value and runs its destructor. A context on a stream, a paged attention
 * set up and executed on device memory (checked against the definition
 * computed here), refusals with their statuses, both ways of destroying an
 * operation, an operation the emulator does not carry out. Prints "ok" and
 * exits 0 when every check holds; else names the check.
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"

namespace atb {
using Status = int32_t;

struct Dims {
    int64_t dims[8];
    uint64_t dimNum = 0;
};
struct TensorDesc {
    int32_t dtype = -1;
    int32_t format = -1;
    Dims shape;
};
struct Tensor {
    TensorDesc desc;
    void *deviceData = nullptr;
    void *hostData = nullptr;
    uint64_t dataSize = 0;
};
/* The in-place form of ATB's small vector: capacity, size, 65 elements in
 * place, then the heap pointer (NULL here). */
template <class T>
struct SVector {
    size_t capacity_ = 0;
    size_t size_ = 0;
    T storage_[65];
    T *heap_ = nullptr;
    void push_back(const T &v) { storage_[size_++] = v; }
};
struct VariantPack {
    SVector<Tensor> inTensors;
    SVector<Tensor> outTensors;
};

class Context {
public:
    virtual ~Context() = default;
    virtual Status SetExecuteStream(void *stream) = 0;
    virtual void *GetExecuteStream() const = 0;
    virtual Status SetAsyncTilingCopyStatus(bool enable) = 0;
    virtual bool GetAsyncTilingCopyStatus() const = 0;
    virtual Status SetExecuteStreams(const std::vector<aclrtStream> &streams) = 0;
    virtual std::vector<aclrtStream> GetExecuteStreams() = 0;
};
Status CreateContext(Context **context);
Status DestroyContext(Context *context);

class Operation {
public:
    virtual ~Operation() = default;
    virtual std::string GetName() const = 0;
    virtual Status InferShape(const SVector<TensorDesc> &in, SVector<TensorDesc> &out) const = 0;
    virtual uint32_t GetInputNum() const = 0;
    virtual uint32_t GetOutputNum() const = 0;
    virtual Status Setup(const VariantPack &pack, uint64_t &workspaceSize, Context *context) = 0;
    virtual Status Execute(const VariantPack &pack, uint8_t *workspace, uint64_t workspaceSize,
                           Context *context) = 0;
};
template <typename OpParam>
Status CreateOperation(const OpParam &opParam, Operation **operation);
Status DestroyOperation(Operation *operation);

class Utils {
public:
    static uint64_t GetTensorSize(const Tensor &tensor);
};

namespace infer {
struct PagedAttentionParam {
    int32_t headNum = 0;
    float qkScale = 1.0;
    int32_t kvHeadNum = 0;
    int32_t maskType = 0;
    bool batchRunStatusEnable = false;
    int32_t quantType = 0;
    int32_t outDataType = -1;
    bool hasQuantOffset = false;
    int32_t compressType = 0;
    int32_t calcType = 0;
    int32_t scaleType = 0;
    int32_t inputLayout = 0;
    uint32_t mlaVHeadSize = 0;
    uint8_t rsv[68] = {0};
};
struct RopeParam {
    int32_t rotaryCoeff = 4;
};
}  // namespace infer
}  // namespace atb

#define CHECK(what, cond)                                     \
    do {                                                      \
        if (!(cond)) {                                        \
            printf("FAILED: %s (line %d)\n", what, __LINE__); \
            return 1;                                         \
        }                                                     \
    } while (0)

/* float16 by hand (no _Float16 in every C++ compiler): the values here
 * are normal and exact in float16, so no rounding is needed. */
struct Half {
    uint16_t bits = 0;
    Half() = default;
    explicit Half(float f) {
        uint32_t u;
        memcpy(&u, &f, 4);
        uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, man = u & 0x7fffff;
        bits = exp == 0 ? (uint16_t)sign : (uint16_t)(sign | ((exp - 112) << 10) | (man >> 13));
    }
    operator double() const {
        uint32_t sign = (uint32_t)(bits & 0x8000) << 16, exp = (bits >> 10) & 0x1f, man = bits & 0x3ff;
        uint32_t u = exp == 0 && man == 0 ? sign : sign | ((exp + 112) << 23) | (man << 13);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
};

static atb::Tensor tensor(int dtype, std::vector<int64_t> dims, void *device, void *host) {
    atb::Tensor t;
    t.desc.dtype = dtype;
    t.desc.format = 2; /* ND */
    t.desc.shape.dimNum = dims.size();
    for (size_t i = 0; i < dims.size(); i++) t.desc.shape.dims[i] = dims[i];
    t.deviceData = device;
    t.hostData = host;
    t.dataSize = atb::Utils::GetTensorSize(t);
    return t;
}

static void *upload(const void *host, size_t bytes) {
    void *dev = nullptr;
    if (aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != 0) return nullptr;
    if (aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE) != 0) return nullptr;
    return dev;
}

int main() {
    /* Sizes: 2 tokens, 4 heads over 2 kv heads, D 8, Dv 3, 5 blocks of 4. */
    const int T = 2, N = 4, NKV = 2, D = 8, DV = 3, BLOCKS = 5, B = 4, W = 3;
    const float scale = 0.5f;
    CHECK("aclInit", aclInit(nullptr) == 0);
    CHECK("aclrtSetDevice", aclrtSetDevice(0) == 0);
    aclrtStream stream = nullptr;
    CHECK("aclrtCreateStream", aclrtCreateStream(&stream) == 0);

    atb::Context *ctx = nullptr;
    CHECK("CreateContext", atb::CreateContext(&ctx) == 0 && ctx != nullptr);
    CHECK("SetExecuteStream", ctx->SetExecuteStream(stream) == 0);
    CHECK("GetExecuteStream", ctx->GetExecuteStream() == stream);
    /* Both methods returning a class by value: a vector here, a string
     * below (the caller's storage goes in a register on aarch64). */
    CHECK("GetExecuteStreams", ctx->GetExecuteStreams().empty());

    atb::infer::PagedAttentionParam param;
    param.headNum = N;
    param.kvHeadNum = NKV;
    param.qkScale = scale;
    atb::Operation *op = nullptr;
    CHECK("CreateOperation<PagedAttentionParam>", atb::CreateOperation(param, &op) == 0 && op);
    CHECK("GetName", op->GetName() == "PagedAttention");
    CHECK("GetInputNum", op->GetInputNum() == 5 && op->GetOutputNum() == 1);

    /* Inputs exact in float16. */
    std::vector<Half> q(T * N * D), kc(BLOCKS * B * NKV * D), vc(BLOCKS * B * NKV * DV);
    for (size_t i = 0; i < q.size(); i++) q[i] = Half(((int)(i * 7 % 11) - 5) / 8.0f);
    for (size_t i = 0; i < kc.size(); i++) kc[i] = Half(((int)(i * 5 % 13) - 6) / 8.0f);
    for (size_t i = 0; i < vc.size(); i++) vc[i] = Half(((int)(i * 3 % 7) - 3) / 4.0f);
    int32_t table[T * W] = {4, 1, 3, 0, 2, 4};
    int32_t lens[T] = {6, 11};
    void *dq = upload(q.data(), q.size() * 2), *dk = upload(kc.data(), kc.size() * 2);
    void *dv = upload(vc.data(), vc.size() * 2), *dt = upload(table, sizeof table);
    std::vector<Half> out(T * N * DV, Half(0.0f));
    void *dout = upload(out.data(), out.size() * 2);
    CHECK("device memory", dq && dk && dv && dt && dout);

    atb::VariantPack pack;
    pack.inTensors.push_back(tensor(ACL_FLOAT16, {T, N, D}, dq, nullptr));
    pack.inTensors.push_back(tensor(ACL_FLOAT16, {BLOCKS, B, NKV, D}, dk, nullptr));
    pack.inTensors.push_back(tensor(ACL_FLOAT16, {BLOCKS, B, NKV, DV}, dv, nullptr));
    pack.inTensors.push_back(tensor(ACL_INT32, {T, W}, dt, nullptr));
    pack.inTensors.push_back(tensor(ACL_INT32, {T}, nullptr, lens));
    pack.outTensors.push_back(tensor(ACL_FLOAT16, {T, N, DV}, dout, nullptr));
    CHECK("GetTensorSize", pack.inTensors.storage_[1].dataSize == BLOCKS * B * NKV * D * 2u);

    uint64_t workspace = 99;
    CHECK("Setup", op->Setup(pack, workspace, ctx) == 0 && workspace == 0);
    CHECK("Execute", op->Execute(pack, nullptr, 0, ctx) == 0);
    CHECK("aclrtSynchronizeStream", aclrtSynchronizeStream(stream) == 0);
    CHECK("download", aclrtMemcpy(out.data(), out.size() * 2, dout, out.size() * 2,
                                  ACL_MEMCPY_DEVICE_TO_HOST) == 0);
    for (int t = 0; t < T; t++) {
        for (int h = 0; h < N; h++) {
            int kh = h / (N / NKV);
            std::vector<double> s(lens[t]);
            double max = -1e300, sum = 0;
            for (int p = 0; p < lens[t]; p++) {
                int row = table[t * W + p / B] * B + p % B;
                double dot = 0;
                for (int i = 0; i < D; i++)
                    dot += (double)q[(t * N + h) * D + i] * (double)kc[(row * NKV + kh) * D + i];
                s[p] = dot * scale;
                max = s[p] > max ? s[p] : max;
            }
            for (double &x : s) sum += (x = std::exp(x - max));
            for (int j = 0; j < DV; j++) {
                double want = 0;
                for (int p = 0; p < lens[t]; p++) {
                    int row = table[t * W + p / B] * B + p % B;
                    want += s[p] / sum * (double)vc[(row * NKV + kh) * DV + j];
                }
                double got = (double)out[(t * N + h) * DV + j];
                CHECK("the paged attention's value", std::fabs(got - want) <= 2e-3 * (1 + std::fabs(want)));
            }
        }
    }

    /* Refusals: a pack short of a tensor, a length beyond the table (found
     * when it runs, here at once: the output is kept), parameters the
     * emulator does not compute, an operation it does not carry out. */
    atb::VariantPack shorter = pack;
    shorter.inTensors.size_ = 4;
    CHECK("Setup of four tensors: ERROR_INVALID_IN_TENSOR_NUM", op->Setup(shorter, workspace, ctx) == 5);
    std::vector<Half> before = out;
    lens[1] = W * B + 1;
    CHECK("a length beyond the table: ERROR_RT_FAIL", op->Execute(pack, nullptr, 0, ctx) == 4);
    CHECK("download", aclrtMemcpy(out.data(), out.size() * 2, dout, out.size() * 2,
                                  ACL_MEMCPY_DEVICE_TO_HOST) == 0);
    CHECK("the output kept", memcmp(out.data(), before.data(), out.size() * 2) == 0);
    atb::infer::PagedAttentionParam masked = param;
    masked.maskType = 1;
    atb::Operation *none = nullptr;
    CHECK("a mask: ERROR_INVALID_PARAM", atb::CreateOperation(masked, &none) == 1 && !none);
    atb::infer::RopeParam rope;
    CHECK("Rope: ERROR_OPERATION_NULL_RUNNER", atb::CreateOperation(rope, &none) == 10 && !none);

    CHECK("DestroyOperation", atb::DestroyOperation(op) == 0);
    CHECK("DestroyOperation twice: ERROR_INVALID_OPERATION_ADDR", atb::DestroyOperation(op) == 24);
    atb::Operation *other = nullptr;
    CHECK("CreateOperation again", atb::CreateOperation(param, &other) == 0 && other);
    delete other; /* the deleting destructor */
    CHECK("deleted: ERROR_INVALID_OPERATION_ADDR", atb::DestroyOperation(other) == 24);
    CHECK("DestroyContext", atb::DestroyContext(ctx) == 0);
    CHECK("DestroyContext twice: ERROR_INVALID_CONTEXT_ADDR", atb::DestroyContext(ctx) == 20);

    for (void *p : {dq, dk, dv, dt, dout}) aclrtFree(p);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    printf("ok\n");
    return 0;
}
