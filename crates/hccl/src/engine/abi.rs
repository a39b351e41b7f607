//! The one definition of the C interface between this crate and the Gloo
//! engine, `libaclmem_gloo.so` (`crates/libascendcl/gloo/engine.cc`).
//!
//! This file is the only place the interface is written. The engine's
//! build (`crates/libascendcl/build.rs`) runs cbindgen over it and compiles
//! `engine.cc` against the header it makes, so both compilers check the
//! same types: a field renamed, added or retyped here changes the header,
//! and the C++ side stops compiling until it follows. The loader also
//! compares [`ACLMEM_GLOO_ENGINE_VERSION`] and the table's size at run
//! time, against an engine built by another version.
//!
//! The engine is a separate object, opened when a communicator is made, so
//! that loading the emulated library never needs Gloo (a machine without it
//! fails at `HcclCommInit*`, not at `import torch_npu`). It exports one
//! function, `aclmem_gloo_engine_v1`, which returns its
//! [`GlooEngine`] table, and keeps every Gloo symbol local (a version
//! script), so it never meets the newer Gloo that torch exports. Every
//! function of the table catches every C++ exception: a failure is a
//! status and a message in [`GlooError`], never an unwind into the caller.

use std::ffi::{c_char, c_void};

/// The table's layout version; [`GlooEngine::version`] holds it.
pub const ACLMEM_GLOO_ENGINE_VERSION: u32 = 1;

/// Status: success.
pub const ACLMEM_GLOO_OK: i32 = 0;
/// Status: no answer within the timeout.
pub const ACLMEM_GLOO_TIMEOUT: i32 = 1;
/// Status: a peer went away, or the network failed.
pub const ACLMEM_GLOO_IO: i32 = 2;
/// Status: Gloo refused the arguments (sizes that do not match, ...).
pub const ACLMEM_GLOO_INVALID: i32 = 3;
/// Status: anything else (memory, an unexpected exception).
pub const ACLMEM_GLOO_INTERNAL: i32 = 4;

/// The length of [`GlooError::message`], its NUL included.
pub const ACLMEM_GLOO_MESSAGE_LEN: usize = 512;

/// What went wrong in a call, as the caller maps it to an `HcclResult`.
#[repr(C)]
pub struct GlooError {
    /// One of the `ACLMEM_GLOO_*` statuses.
    pub status: i32,
    /// Gloo's message, NUL-terminated.
    pub message: [c_char; ACLMEM_GLOO_MESSAGE_LEN],
}

/// The rendezvous store, served by the caller. `get` blocks until the key
/// is set or `timeout_ms` passes (status `ACLMEM_GLOO_TIMEOUT`), and hands
/// out a buffer the engine gives back with `release`.
#[repr(C)]
pub struct GlooStore {
    /// The callbacks' context.
    pub ctx: *mut c_void,
    /// Sets `key` to `len` bytes at `data`.
    pub set: unsafe extern "C" fn(
        ctx: *mut c_void,
        key: *const c_char,
        data: *const c_void,
        len: usize,
    ) -> i32,
    /// Gets `key`, waiting up to `timeout_ms`.
    pub get: unsafe extern "C" fn(
        ctx: *mut c_void,
        key: *const c_char,
        timeout_ms: i64,
        data: *mut *mut c_void,
        len: *mut usize,
    ) -> i32,
    /// Gives back what `get` handed out.
    pub release: unsafe extern "C" fn(ctx: *mut c_void, data: *mut c_void, len: usize),
}

/// `c[i] = op(a[i], b[i])` for `n` elements; `c` may be `a` or `b`.
pub type GlooReduceFn =
    unsafe extern "C" fn(c: *mut c_void, a: *const c_void, b: *const c_void, n: usize);

/// One send or receive of a batch.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GlooP2p {
    /// 1: send `bytes` from `buf` to `peer`; 0: receive into `buf`.
    pub send: i32,
    /// The peer's rank.
    pub peer: i32,
    /// The bytes.
    pub buf: *mut c_void,
    /// How many.
    pub bytes: usize,
    /// The matching channel; FIFO per (peer, slot).
    pub slot: u64,
}

/// The engine's table of functions.
#[repr(C)]
pub struct GlooEngine {
    /// [`ACLMEM_GLOO_ENGINE_VERSION`].
    pub version: u32,
    /// `sizeof(GlooEngine)`.
    pub size: u32,
    /// A context of `size` ranks, connected in full mesh through `store`;
    /// `hostname` is the address this rank listens on. NULL on failure.
    pub connect: unsafe extern "C" fn(
        rank: i32,
        size: i32,
        hostname: *const c_char,
        store: *const GlooStore,
        timeout_ms: i64,
        err: *mut GlooError,
    ) -> *mut c_void,
    /// Closes a context's connections and frees it.
    pub destroy: unsafe extern "C" fn(ctx: *mut c_void),
    /// In place: `buf` holds this rank's input and receives the result.
    pub allreduce: unsafe extern "C" fn(
        ctx: *mut c_void,
        buf: *mut c_void,
        count: usize,
        elem: usize,
        op: GlooReduceFn,
        timeout_ms: i64,
        err: *mut GlooError,
    ) -> i32,
    /// `bytes` at `buf` from `root` to every rank.
    pub broadcast: unsafe extern "C" fn(
        ctx: *mut c_void,
        buf: *mut c_void,
        bytes: usize,
        root: i32,
        timeout_ms: i64,
        err: *mut GlooError,
    ) -> i32,
    /// `out` (`count` elements) is written on every rank: scratch on all
    /// but `root`.
    pub reduce: unsafe extern "C" fn(
        ctx: *mut c_void,
        input: *const c_void,
        out: *mut c_void,
        count: usize,
        elem: usize,
        op: GlooReduceFn,
        root: i32,
        timeout_ms: i64,
        err: *mut GlooError,
    ) -> i32,
    /// `out` receives rank i's `bytes[i]` back to back; `input`
    /// (`bytes[rank]`) may be NULL when `out` already holds this rank's
    /// part in place.
    pub allgatherv: unsafe extern "C" fn(
        ctx: *mut c_void,
        input: *const c_void,
        out: *mut c_void,
        bytes: *const usize,
        timeout_ms: i64,
        err: *mut GlooError,
    ) -> i32,
    /// `in_bytes[j]` go to rank j, `out_bytes[i]` come from rank i, back to
    /// back.
    pub alltoallv: unsafe extern "C" fn(
        ctx: *mut c_void,
        input: *const c_void,
        in_bytes: *const i64,
        out: *mut c_void,
        out_bytes: *const i64,
        timeout_ms: i64,
        err: *mut GlooError,
    ) -> i32,
    /// Waits for every rank.
    pub barrier:
        unsafe extern "C" fn(ctx: *mut c_void, timeout_ms: i64, err: *mut GlooError) -> i32,
    /// Posts every item, then waits for all of them.
    pub p2p: unsafe extern "C" fn(
        ctx: *mut c_void,
        items: *const GlooP2p,
        n: usize,
        timeout_ms: i64,
        err: *mut GlooError,
    ) -> i32,
}

/// The engine's one export: `const GlooEngine *aclmem_gloo_engine_v1(void)`.
pub type GlooEngineEntry = unsafe extern "C" fn() -> *const GlooEngine;
