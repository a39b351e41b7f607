// libaclmem_gloo.so: HCCL's collectives carried by Gloo. Its interface,
// engine_abi.h, is generated at build time from the one Rust definition
// (crates/hccl/src/engine/abi.rs), so both sides compile against one text.
//
// Each communicator is one gloo::rendezvous::Context over Gloo's TCP
// transport, connected in full mesh through the caller's store; the caller
// serialises the operations of a context (Gloo allows one at a time).

#include "engine_abi.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

namespace {

using Millis = std::chrono::milliseconds;

// A store failure, carried through Gloo to the function that called it.
struct StoreError : std::exception {
    int32_t status;
    std::string what_;
    StoreError(int32_t status, std::string what) : status(status), what_(std::move(what)) {}
    const char *what() const noexcept override { return what_.c_str(); }
};

// gloo::rendezvous::Store over the caller's callbacks.
class CallbackStore : public gloo::rendezvous::Store {
  public:
    CallbackStore(const GlooStore &s, Millis timeout) : s_(s), timeout_(timeout) {}

    void set(const std::string &key, const std::vector<char> &data) override {
        int32_t st = s_.set(s_.ctx, key.c_str(), data.data(), data.size());
        if (st != ACLMEM_GLOO_OK) {
            throw StoreError(st, "the rendezvous store refused key " + key);
        }
    }

    std::vector<char> get(const std::string &key) override {
        void *data = nullptr;
        size_t len = 0;
        int32_t st = s_.get(s_.ctx, key.c_str(), timeout_.count(), &data, &len);
        if (st != ACLMEM_GLOO_OK) {
            throw StoreError(st, "no rendezvous value for key " + key);
        }
        std::vector<char> out(static_cast<char *>(data), static_cast<char *>(data) + len);
        s_.release(s_.ctx, data, len);
        return out;
    }

    void wait(const std::vector<std::string> &keys) override { wait(keys, timeout_); }

    void wait(const std::vector<std::string> &keys, const Millis &timeout) override {
        for (const auto &key : keys) {
            void *data = nullptr;
            size_t len = 0;
            int32_t st = s_.get(s_.ctx, key.c_str(), timeout.count(), &data, &len);
            if (st != ACLMEM_GLOO_OK) {
                throw StoreError(st, "no rendezvous value for key " + key);
            }
            s_.release(s_.ctx, data, len);
        }
    }

  private:
    GlooStore s_;
    Millis timeout_;
};

struct Comm {
    std::shared_ptr<gloo::transport::Device> device;
    std::shared_ptr<gloo::rendezvous::Context> context;
};

void fill(GlooError *err, int32_t status, const char *what) {
    if (err == nullptr) {
        return;
    }
    err->status = status;
    std::snprintf(err->message, sizeof err->message, "%s", what);
}

bool timed_out(const char *what) {
    return std::strstr(what, "Timed out") != nullptr || std::strstr(what, "timed out") != nullptr;
}

// Runs `f`, turning every exception into a status and a message.
template <typename F> int32_t run(GlooError *err, F f) {
    try {
        f();
        fill(err, ACLMEM_GLOO_OK, "");
        return ACLMEM_GLOO_OK;
    } catch (const StoreError &e) {
        fill(err, e.status, e.what());
        return e.status;
    } catch (const gloo::IoException &e) {
        int32_t st = timed_out(e.what()) ? ACLMEM_GLOO_TIMEOUT : ACLMEM_GLOO_IO;
        fill(err, st, e.what());
        return st;
    } catch (const gloo::EnforceNotMet &e) {
        fill(err, ACLMEM_GLOO_INVALID, e.what());
        return ACLMEM_GLOO_INVALID;
    } catch (const std::exception &e) {
        int32_t st = timed_out(e.what()) ? ACLMEM_GLOO_TIMEOUT : ACLMEM_GLOO_INTERNAL;
        fill(err, st, e.what());
        return st;
    } catch (...) {
        fill(err, ACLMEM_GLOO_INTERNAL, "an unknown exception");
        return ACLMEM_GLOO_INTERNAL;
    }
}

std::shared_ptr<gloo::Context> ctx_of(void *c) { return static_cast<Comm *>(c)->context; }

// Gloo's typed options need an element type of the right size; the bytes
// are moved as they are and reduced by the caller's function.
struct Bytes16 {
    uint64_t lo, hi;
};

template <typename F> void by_size(size_t elem, F f) {
    switch (elem) {
    case 1: f(static_cast<uint8_t *>(nullptr)); break;
    case 2: f(static_cast<uint16_t *>(nullptr)); break;
    case 4: f(static_cast<uint32_t *>(nullptr)); break;
    case 8: f(static_cast<uint64_t *>(nullptr)); break;
    case 16: f(static_cast<Bytes16 *>(nullptr)); break;
    default: throw gloo::EnforceNotMet(__FILE__, __LINE__, "elem", "an element size Gloo is not given");
    }
}

void *engine_connect(int32_t rank, int32_t size, const char *hostname,
                     const GlooStore *store, int64_t timeout_ms,
                     GlooError *err) {
    Comm *comm = nullptr;
    int32_t st = run(err, [&] {
        gloo::transport::tcp::attr attr;
        attr.hostname = hostname;
        auto device = gloo::transport::tcp::CreateDevice(attr);
        auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
        context->setTimeout(Millis(timeout_ms));
        CallbackStore s(*store, Millis(timeout_ms));
        context->connectFullMesh(s, device);
        // Every rank has read the store once this barrier is passed: the
        // caller may close it.
        gloo::BarrierOptions opts(context);
        opts.setTimeout(Millis(timeout_ms));
        gloo::barrier(opts);
        comm = new Comm{device, context};
    });
    return st == ACLMEM_GLOO_OK ? comm : nullptr;
}

void engine_destroy(void *c) { delete static_cast<Comm *>(c); }

int32_t engine_allreduce(void *c, void *buf, size_t count, size_t elem, GlooReduceFn fn,
                         int64_t timeout_ms, GlooError *err) {
    return run(err, [&] {
        by_size(elem, [&](auto *t) {
            using T = std::remove_pointer_t<decltype(t)>;
            gloo::AllreduceOptions opts(ctx_of(c));
            opts.setOutput(static_cast<T *>(buf), count);
            opts.setReduceFunction(fn);
            opts.setTimeout(Millis(timeout_ms));
            gloo::allreduce(opts);
        });
    });
}

int32_t engine_broadcast(void *c, void *buf, size_t bytes, int32_t root, int64_t timeout_ms,
                         GlooError *err) {
    return run(err, [&] {
        gloo::BroadcastOptions opts(ctx_of(c));
        opts.setOutput(static_cast<uint8_t *>(buf), bytes);
        opts.setRoot(root);
        opts.setTimeout(Millis(timeout_ms));
        gloo::broadcast(opts);
    });
}

int32_t engine_reduce(void *c, const void *in, void *out, size_t count, size_t elem,
                      GlooReduceFn fn, int32_t root, int64_t timeout_ms,
                      GlooError *err) {
    return run(err, [&] {
        by_size(elem, [&](auto *t) {
            using T = std::remove_pointer_t<decltype(t)>;
            gloo::ReduceOptions opts(ctx_of(c));
            if (in != out) {
                opts.setInput(static_cast<T *>(const_cast<void *>(in)), count);
            }
            opts.setOutput(static_cast<T *>(out), count);
            opts.setRoot(root);
            opts.setReduceFunction(fn);
            opts.setTimeout(Millis(timeout_ms));
            gloo::reduce(opts);
        });
    });
}

int32_t engine_allgatherv(void *c, const void *in, void *out, const size_t *bytes,
                          int64_t timeout_ms, GlooError *err) {
    return run(err, [&] {
        auto ctx = ctx_of(c);
        std::vector<size_t> counts(bytes, bytes + ctx->size);
        gloo::AllgathervOptions opts(ctx);
        if (in != nullptr) {
            opts.setInput(static_cast<uint8_t *>(const_cast<void *>(in)), counts[ctx->rank]);
        }
        opts.setOutput(static_cast<uint8_t *>(out), counts);
        opts.setTimeout(Millis(timeout_ms));
        gloo::allgatherv(opts);
    });
}

int32_t engine_alltoallv(void *c, const void *in, const int64_t *in_bytes, void *out,
                         const int64_t *out_bytes, int64_t timeout_ms, GlooError *err) {
    return run(err, [&] {
        auto ctx = ctx_of(c);
        gloo::AlltoallvOptions opts(ctx);
        opts.setInput(static_cast<uint8_t *>(const_cast<void *>(in)),
                      std::vector<int64_t>(in_bytes, in_bytes + ctx->size));
        opts.setOutput(static_cast<uint8_t *>(out),
                       std::vector<int64_t>(out_bytes, out_bytes + ctx->size));
        opts.setTimeout(Millis(timeout_ms));
        gloo::alltoallv(opts);
    });
}

int32_t engine_barrier(void *c, int64_t timeout_ms, GlooError *err) {
    return run(err, [&] {
        gloo::BarrierOptions opts(ctx_of(c));
        opts.setTimeout(Millis(timeout_ms));
        gloo::barrier(opts);
    });
}

int32_t engine_p2p(void *c, const GlooP2p *items, size_t n, int64_t timeout_ms,
                   GlooError *err) {
    return run(err, [&] {
        auto ctx = ctx_of(c);
        std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> bufs;
        bufs.reserve(n);
        for (size_t i = 0; i < n; i++) {
            const auto &it = items[i];
            bufs.push_back(ctx->createUnboundBuffer(it.buf, it.bytes));
            if (it.send) {
                bufs.back()->send(it.peer, it.slot);
            } else {
                bufs.back()->recv(it.peer, it.slot);
            }
        }
        for (size_t i = 0; i < n; i++) {
            bool done = items[i].send ? bufs[i]->waitSend(Millis(timeout_ms))
                                      : bufs[i]->waitRecv(Millis(timeout_ms));
            if (!done) {
                throw gloo::IoException("Timed out waiting for a peer to send or receive");
            }
        }
    });
}

const GlooEngine ENGINE = {
    ACLMEM_GLOO_ENGINE_VERSION, sizeof(GlooEngine),
    engine_connect,  engine_destroy,    engine_allreduce,  engine_broadcast, engine_reduce,
    engine_allgatherv, engine_alltoallv, engine_barrier,   engine_p2p,
};

} // namespace

extern "C" __attribute__((visibility("default"))) const GlooEngine *aclmem_gloo_engine_v1(void) {
    return &ENGINE;
}

// The export has the type the Rust loader calls it through.
static_assert(std::is_same<decltype(&aclmem_gloo_engine_v1), GlooEngineEntry>::value,
              "aclmem_gloo_engine_v1 must be a GlooEngineEntry");
