/*
 * The Gloo engine: the C interface between the emulated libhccl.so (Rust,
 * crates/emu-capi/src/hccl/engine.rs mirrors these types) and
 * libaclmem_gloo.so, which runs HCCL's collectives on Gloo.
 *
 * The engine is a separate object, opened when a communicator is made, so
 * that loading the emulated library never needs Gloo (a machine without it
 * fails at HcclCommInit*, not at `import torch_npu`). It exports one symbol,
 * aclmem_gloo_engine_v1, and keeps every Gloo symbol local (a version
 * script), so it never meets the newer Gloo that torch exports.
 *
 * Every function catches every C++ exception: a failure is a status and a
 * message in `struct aclmem_gloo_error`, never an unwind into the caller.
 */
#ifndef ACLMEM_GLOO_ENGINE_H
#define ACLMEM_GLOO_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACLMEM_GLOO_ENGINE_VERSION 1

/* What went wrong, as the caller maps it to an HcclResult. */
enum aclmem_gloo_status {
    ACLMEM_GLOO_OK = 0,
    /* No answer within the timeout. */
    ACLMEM_GLOO_TIMEOUT = 1,
    /* A peer went away, or the network failed. */
    ACLMEM_GLOO_IO = 2,
    /* Gloo refused the arguments (sizes that do not match, ...). */
    ACLMEM_GLOO_INVALID = 3,
    /* Anything else (memory, an unexpected exception). */
    ACLMEM_GLOO_INTERNAL = 4,
};

struct aclmem_gloo_error {
    int32_t status;
    char message[512];
};

/*
 * The rendezvous store, served by the caller. `get` blocks until the key is
 * set or `timeout_ms` passes (status TIMEOUT), and hands out a buffer the
 * engine gives back with `release`. Status codes as above.
 */
struct aclmem_gloo_store {
    void *ctx;
    int32_t (*set)(void *ctx, const char *key, const void *data, size_t len);
    int32_t (*get)(void *ctx, const char *key, int64_t timeout_ms, void **data, size_t *len);
    void (*release)(void *ctx, void *data, size_t len);
};

/* c[i] = op(a[i], b[i]) for n elements; c may be a or b. */
typedef void (*aclmem_gloo_reduce_fn)(void *c, const void *a, const void *b, size_t n);

/* One send or receive of a batch. */
struct aclmem_gloo_p2p {
    int32_t send; /* 1: send `bytes` from buf to peer; 0: receive into buf */
    int32_t peer;
    void *buf;
    size_t bytes;
    uint64_t slot; /* the matching channel; FIFO per (peer, slot) */
};

struct aclmem_gloo_engine {
    uint32_t version; /* ACLMEM_GLOO_ENGINE_VERSION */
    uint32_t size;    /* sizeof(struct aclmem_gloo_engine) */
    /* A context of `size` ranks, connected in full mesh through `store`;
     * `hostname` is the address this rank listens on. NULL on failure. */
    void *(*connect)(int32_t rank, int32_t size, const char *hostname,
                     const struct aclmem_gloo_store *store, int64_t timeout_ms,
                     struct aclmem_gloo_error *err);
    void (*destroy)(void *ctx);
    /* In place: `buf` holds this rank's input and receives the result. */
    int32_t (*allreduce)(void *ctx, void *buf, size_t count, size_t elem,
                         aclmem_gloo_reduce_fn fn, int64_t timeout_ms,
                         struct aclmem_gloo_error *err);
    int32_t (*broadcast)(void *ctx, void *buf, size_t bytes, int32_t root,
                         int64_t timeout_ms, struct aclmem_gloo_error *err);
    /* `out` (count elements) is written on every rank: scratch but root's. */
    int32_t (*reduce)(void *ctx, const void *in, void *out, size_t count, size_t elem,
                      aclmem_gloo_reduce_fn fn, int32_t root, int64_t timeout_ms,
                      struct aclmem_gloo_error *err);
    /* out receives rank i's bytes[i] back to back; `in` (bytes[rank]) may be
     * NULL when out already holds this rank's part in place. */
    int32_t (*allgatherv)(void *ctx, const void *in, void *out, const size_t *bytes,
                          int64_t timeout_ms, struct aclmem_gloo_error *err);
    /* in_bytes[j] go to rank j, out_bytes[i] come from rank i, back to back. */
    int32_t (*alltoallv)(void *ctx, const void *in, const int64_t *in_bytes, void *out,
                         const int64_t *out_bytes, int64_t timeout_ms,
                         struct aclmem_gloo_error *err);
    int32_t (*barrier)(void *ctx, int64_t timeout_ms, struct aclmem_gloo_error *err);
    /* Posts every item, then waits for all of them. */
    int32_t (*p2p)(void *ctx, const struct aclmem_gloo_p2p *items, size_t n,
                   int64_t timeout_ms, struct aclmem_gloo_error *err);
};

const struct aclmem_gloo_engine *aclmem_gloo_engine_v1(void);

#ifdef __cplusplus
}
#endif

#endif
