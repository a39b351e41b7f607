//! bfloat16 matrix products through oneDNN, where the machine has it.
//!
//! `gemm` (the kernel library of every other product, [`crate::linalg`])
//! has no bfloat16 kernel: a bfloat16 product there is widened to `f32`
//! and multiplied at the `f32` rate, half the rate of a CPU with
//! bfloat16 dot-product instructions (AVX512-BF16, AMX), which CPU torch
//! reaches through oneDNN. So when oneDNN 2.x (`libdnnl.so.2`, Debian's
//! `libdnnl2`) can be loaded at run time and its matrix product picks a
//! kernel with native bfloat16 instructions, bfloat16 × bfloat16 products
//! go through it, accumulated in `f32` (the product of two bfloat16 values
//! is exact in `f32`, as on the NPU's cube unit) into an `f32` result the
//! caller rounds once. Anywhere else (no library, another major version,
//! no native kernel, a view oneDNN refuses, `ACLMEM_EMU_ONEDNN=0`) the
//! product is `gemm`'s, with the same values up to the order of the
//! additions. [`status`] says which and why.
//!
//! Threads and forks: oneDNN is driven as `gemm` is, a band of the output
//! per core on threads of the call's own ([`crate::parallel`]), each band
//! one sequential oneDNN call (its OpenMP runtime told to use one thread on
//! that thread, and told back after), so no OpenMP worker threads exist to
//! be lost by a fork; and no fork happens during a call (a lock held across
//! the fork by `pthread_atfork`), so a child never inherits oneDNN's
//! internal locks held by a thread it does not have.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use aclmem_core::AclError;
use aclmem_fork::KeptMutex;
use libloading::Library;

use crate::linalg::View;
use crate::parallel;

type Status = c_int;
type Handle = *mut c_void;

// oneDNN 2.x's constants (`dnnl_types.h`, `dnnl_config.h`).
const SUCCESS: Status = 0;
const ENGINE_CPU: c_int = 1;
const STREAM_IN_ORDER: u32 = 1;
const DATA_BF16: c_int = 2;
const DATA_F32: c_int = 3;
const ARG_SRC: c_int = 1;
const ARG_DST: c_int = 17;
const ARG_WEIGHTS: c_int = 33;
const QUERY_IMPL_INFO_STR: c_int = 8;
const RUNTIME_SEQ: u32 = 1;
const RUNTIME_OMP: u32 = 2;
const MAX_NDIMS: usize = 12;

/// `dnnl_version_t`.
#[repr(C)]
struct Version {
    major: c_int,
    minor: c_int,
    patch: c_int,
    hash: *const c_char,
    cpu_runtime: u32,
    gpu_runtime: u32,
}

/// `dnnl_exec_arg_t`.
#[repr(C)]
struct ExecArg {
    arg: c_int,
    memory: Handle,
}

/// Room for a `dnnl_memory_desc_t`, which the library fills and reads
/// only through pointers (696 bytes in oneDNN 2.6; thrice that here).
#[repr(C, align(64))]
struct MemoryDesc([u8; 2048]);

/// Room for a `dnnl_matmul_desc_t` (2,800 bytes in oneDNN 2.6).
#[repr(C, align(64))]
struct MatmulDesc([u8; 8192]);

/// The functions used, from the loaded library.
struct Api {
    memory_desc_init_by_strides:
        unsafe extern "C" fn(*mut MemoryDesc, c_int, *const i64, c_int, *const i64) -> Status,
    matmul_desc_init: unsafe extern "C" fn(
        *mut MatmulDesc,
        *const MemoryDesc,
        *const MemoryDesc,
        *const MemoryDesc,
        *const MemoryDesc,
    ) -> Status,
    primitive_desc_create:
        unsafe extern "C" fn(*mut Handle, *const c_void, Handle, Handle, Handle) -> Status,
    primitive_desc_query: unsafe extern "C" fn(Handle, c_int, c_int, *mut c_void) -> Status,
    primitive_desc_destroy: unsafe extern "C" fn(Handle) -> Status,
    primitive_create: unsafe extern "C" fn(*mut Handle, Handle) -> Status,
    primitive_destroy: unsafe extern "C" fn(Handle) -> Status,
    primitive_execute: unsafe extern "C" fn(Handle, Handle, c_int, *const ExecArg) -> Status,
    memory_create:
        unsafe extern "C" fn(*mut Handle, *const MemoryDesc, Handle, *mut c_void) -> Status,
    memory_destroy: unsafe extern "C" fn(Handle) -> Status,
    stream_create: unsafe extern "C" fn(*mut Handle, Handle, u32) -> Status,
    stream_wait: unsafe extern "C" fn(Handle) -> Status,
    stream_destroy: unsafe extern "C" fn(Handle) -> Status,
    /// The OpenMP runtime's thread count of the calling thread, when the
    /// library runs on OpenMP.
    omp: Option<(unsafe extern "C" fn() -> c_int, unsafe extern "C" fn(c_int))>,
    /// The process's CPU engine (engines may be shared between threads;
    /// never destroyed, as the library is never unloaded).
    engine: Handle,
    /// The kernel the library picked for a bfloat16 product.
    kernel: String,
    _library: Library,
}

// SAFETY: `engine` is a oneDNN engine, which oneDNN allows every thread to
// use at once; the rest are function pointers and the library they live in.
unsafe impl Send for Api {}
// SAFETY: as above.
unsafe impl Sync for Api {}

/// Held for each call into oneDNN, and by the forking thread across a fork.
static CALLS: KeptMutex<()> = KeptMutex::new(());

extern "C" fn before_fork() {
    aclmem_fork::hold(CALLS.lock());
}

extern "C" fn after_fork() {
    aclmem_fork::release_held();
}

/// The loaded library, or why there is none.
fn api() -> Result<&'static Api, &'static str> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        if std::env::var("ACLMEM_EMU_ONEDNN").is_ok_and(|v| v.trim() == "0") {
            return Err("turned off by ACLMEM_EMU_ONEDNN=0".into());
        }
        // The handlers first, then the loading under the lock they take:
        // a fork waits for the library's initialisers and first primitive
        // as it waits for a product.
        // SAFETY: both are `extern "C"` functions of this library, valid
        // for the life of the process; they take and drop a lock.
        unsafe {
            libc::pthread_atfork(Some(before_fork), Some(after_fork), Some(after_fork));
        }
        let _calls = CALLS.lock();
        load(false)
    })
    .as_ref()
    .map_err(|why| why.as_str())
}

/// Whether bfloat16 products go through oneDNN in this process: the
/// kernel it picked (for example `brg:avx512_core_bf16`), or why not.
pub fn status() -> Result<&'static str, &'static str> {
    api().map(|a| a.kernel.as_str())
}

/// Loads `libdnnl.so.2` and checks it as [`status`] reports; with
/// `any_kernel`, whatever kernel it picks for bfloat16 is taken (for the
/// tests of this module on a CPU without bfloat16 instructions).
fn load(any_kernel: bool) -> Result<Api, String> {
    // SAFETY: loading a shared library runs its initialisers; oneDNN's
    // only set up its own state.
    let library = unsafe { Library::new("libdnnl.so.2") }
        .map_err(|e| format!("libdnnl.so.2 (oneDNN 2.x) not loaded: {e}"))?;
    /// A function of `library` by its C name, typed as `oneDNN` declares it.
    macro_rules! get {
        ($name:literal) => {
            // SAFETY: the symbol is oneDNN 2.x's function of that name,
            // whose C declaration the field's type follows; the pointer
            // is used only while `library` (kept in the `Api`) is loaded.
            *unsafe { library.get($name) }
                .map_err(|e| format!("oneDNN without {}: {e}", String::from_utf8_lossy($name)))?
        };
    }
    let version: unsafe extern "C" fn() -> *const Version = get!(b"dnnl_version\0");
    // SAFETY: `dnnl_version` returns a pointer to a static structure.
    let v = unsafe { version().as_ref() }.ok_or("oneDNN without a version")?;
    if v.major != 2 {
        return Err(format!(
            "oneDNN {}.{} (this library drives 2.x)",
            v.major, v.minor
        ));
    }
    // OpenMP's functions as the library's own calls bind them: the
    // process's global scope first (an OpenMP runtime loaded before, such
    // as the one torch brings), then the library's own dependencies.
    let global = libloading::os::unix::Library::this();
    macro_rules! omp {
        ($name:literal) => {
            // SAFETY: OpenMP's function of that name, whose C declaration
            // the field's type follows; both libraries stay loaded (the
            // process's own scope, and `library`, kept in the `Api`).
            match unsafe { global.get($name) } {
                Ok(f) => *f,
                // SAFETY: as above.
                Err(_) => *unsafe { library.get($name) }
                    .map_err(|e| format!("oneDNN on OpenMP without its runtime: {e}"))?,
            }
        };
    }
    let omp = match v.cpu_runtime {
        RUNTIME_SEQ => None,
        RUNTIME_OMP => Some((
            omp!(b"omp_get_max_threads\0"),
            omp!(b"omp_set_num_threads\0"),
        )),
        other => {
            return Err(format!(
                "oneDNN on CPU runtime {other}, neither OpenMP nor sequential"
            ));
        }
    };
    let engine_create: unsafe extern "C" fn(*mut Handle, c_int, usize) -> Status =
        get!(b"dnnl_engine_create\0");
    let mut engine: Handle = std::ptr::null_mut();
    // SAFETY: an out parameter for the new engine.
    if unsafe { engine_create(&mut engine, ENGINE_CPU, 0) } != SUCCESS || engine.is_null() {
        return Err("oneDNN made no CPU engine".into());
    }
    let mut api = Api {
        memory_desc_init_by_strides: get!(b"dnnl_memory_desc_init_by_strides\0"),
        matmul_desc_init: get!(b"dnnl_matmul_desc_init\0"),
        primitive_desc_create: get!(b"dnnl_primitive_desc_create\0"),
        primitive_desc_query: get!(b"dnnl_primitive_desc_query\0"),
        primitive_desc_destroy: get!(b"dnnl_primitive_desc_destroy\0"),
        primitive_create: get!(b"dnnl_primitive_create\0"),
        primitive_destroy: get!(b"dnnl_primitive_destroy\0"),
        primitive_execute: get!(b"dnnl_primitive_execute\0"),
        memory_create: get!(b"dnnl_memory_create\0"),
        memory_destroy: get!(b"dnnl_memory_destroy\0"),
        stream_create: get!(b"dnnl_stream_create\0"),
        stream_wait: get!(b"dnnl_stream_wait\0"),
        stream_destroy: get!(b"dnnl_stream_destroy\0"),
        omp,
        engine,
        kernel: String::new(),
        _library: library,
    };
    // The kernel for a product of a typical size: one with the machine's
    // bfloat16 instructions, or none of this.
    let probe = View::dense(256, 256, 0);
    let kernel = api
        .with_primitive(probe, probe, probe, |_, kernel| kernel.to_owned())
        .ok_or("oneDNN refused a bfloat16 product")?;
    if !(any_kernel || kernel.contains("bf16") || kernel.contains("amx")) {
        return Err(format!(
            "oneDNN's bfloat16 product here is `{kernel}`, without bfloat16 instructions"
        ));
    }
    api.kernel = kernel;
    Ok(api)
}

/// oneDNN's description of a 2-D view of `data_type` elements.
fn describe(api: &Api, v: View, data_type: c_int) -> Option<Box<MemoryDesc>> {
    let mut dims = [0i64; MAX_NDIMS];
    let mut strides = [0i64; MAX_NDIMS];
    dims[0] = i64::try_from(v.rows).ok()?;
    dims[1] = i64::try_from(v.cols).ok()?;
    strides[0] = i64::try_from(v.row_stride).ok()?;
    strides[1] = i64::try_from(v.col_stride).ok()?;
    let mut md = Box::new(MemoryDesc([0; 2048]));
    // SAFETY: `md` has room for the descriptor; the arrays have
    // `DNNL_MAX_NDIMS` entries, as the function reads.
    let s = unsafe {
        (api.memory_desc_init_by_strides)(&mut *md, 2, dims.as_ptr(), data_type, strides.as_ptr())
    };
    (s == SUCCESS).then_some(md)
}

impl Api {
    /// `f` of the primitive of the product `a (m × k, bfloat16) · b (k × n,
    /// bfloat16) → d (m × n, f32)` with these views' strides, and the name
    /// of its kernel; `None` when oneDNN refuses it.
    fn with_primitive<R>(
        &self,
        d: View,
        a: View,
        b: View,
        f: impl FnOnce(Handle, &str) -> R,
    ) -> Option<R> {
        let (dm, am, bm) = (
            describe(self, d, DATA_F32)?,
            describe(self, a, DATA_BF16)?,
            describe(self, b, DATA_BF16)?,
        );
        let mut op = Box::new(MatmulDesc([0; 8192]));
        // SAFETY: `op` has room for the descriptor; the memory descriptors
        // were filled by the library; no bias (NULL).
        let s = unsafe { (self.matmul_desc_init)(&mut *op, &*am, &*bm, std::ptr::null(), &*dm) };
        if s != SUCCESS {
            return None;
        }
        let mut pd: Handle = std::ptr::null_mut();
        // SAFETY: an out parameter; the operation descriptor the library
        // filled; no attributes, no hint (NULL).
        let s = unsafe {
            (self.primitive_desc_create)(
                &mut pd,
                (&raw const *op).cast(),
                std::ptr::null_mut(),
                self.engine,
                std::ptr::null_mut(),
            )
        };
        if s != SUCCESS || pd.is_null() {
            return None;
        }
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: `pd` is live; the query writes a pointer to a string the
        // descriptor owns.
        let named = unsafe {
            (self.primitive_desc_query)(pd, QUERY_IMPL_INFO_STR, 0, (&raw mut name).cast())
        };
        let kernel = if named == SUCCESS && !name.is_null() {
            // SAFETY: a NUL-terminated string owned by `pd`, read before
            // `pd` is destroyed.
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        } else {
            String::new()
        };
        let mut prim: Handle = std::ptr::null_mut();
        // SAFETY: an out parameter; `pd` is live.
        let made = unsafe { (self.primitive_create)(&mut prim, pd) };
        // SAFETY: `pd` is live and no longer needed (the primitive keeps
        // its own copy).
        unsafe { (self.primitive_desc_destroy)(pd) };
        if made != SUCCESS || prim.is_null() {
            return None;
        }
        let result = f(prim, &kernel);
        // SAFETY: `prim` is live, and `f` has returned (its executions
        // waited for).
        unsafe { (self.primitive_destroy)(prim) };
        Some(result)
    }

    /// `d = a · b` on the calling thread, one thread of oneDNN's; whether
    /// oneDNN did it.
    ///
    /// # Safety
    /// The three views must lie inside the memory their pointers start
    /// (`dst` writable, not overlapping the others, not written by another
    /// thread meanwhile; `a` and `b` readable).
    unsafe fn band(
        &self,
        dst: *mut f32,
        d: View,
        a: *const u16,
        av: View,
        b: *const u16,
        bv: View,
    ) -> bool {
        let at = |v: View| View { offset: 0, ..v };
        // One OpenMP thread on this thread from the primitive's making
        // (which reads the count into its plan) to its execution.
        let saved = self.omp.map(|(get, set)| {
            // SAFETY: OpenMP's calls on the calling thread's own setting.
            unsafe {
                let n = get();
                set(1);
                n
            }
        });
        let done = self.with_primitive(at(d), at(av), at(bv), |prim, _| {
            let mut stream: Handle = std::ptr::null_mut();
            // SAFETY: an out parameter; the engine is live.
            if unsafe { (self.stream_create)(&mut stream, self.engine, STREAM_IN_ORDER) } != SUCCESS
            {
                return false;
            }
            // The arguments: the bands' first elements.
            // SAFETY: the caller's contract: each offset is inside its memory.
            let handles = unsafe {
                [
                    (ARG_SRC, a.add(av.offset) as *mut c_void, av, DATA_BF16),
                    (ARG_WEIGHTS, b.add(bv.offset) as *mut c_void, bv, DATA_BF16),
                    (ARG_DST, dst.add(d.offset).cast::<c_void>(), d, DATA_F32),
                ]
            };
            let mut args = Vec::with_capacity(3);
            let mut ok = true;
            for (arg, ptr, v, t) in handles {
                let Some(md) = describe(self, at(v), t) else {
                    ok = false;
                    break;
                };
                let mut memory: Handle = std::ptr::null_mut();
                // SAFETY: an out parameter; the description the library
                // filled; `ptr` is the caller's memory, outliving the call.
                if unsafe { (self.memory_create)(&mut memory, &*md, self.engine, ptr) } != SUCCESS {
                    ok = false;
                    break;
                }
                args.push(ExecArg { arg, memory });
            }
            // SAFETY: the primitive, stream and memories are live; the
            // memories describe the caller's views.
            ok = ok
                && unsafe {
                    (self.primitive_execute)(prim, stream, 3, args.as_ptr()) == SUCCESS
                        && (self.stream_wait)(stream) == SUCCESS
                };
            for a in args {
                // SAFETY: live memories of this call, no longer used.
                unsafe { (self.memory_destroy)(a.memory) };
            }
            // SAFETY: the live stream, waited for.
            unsafe { (self.stream_destroy)(stream) };
            ok
        });
        if let (Some((_, set)), Some(n)) = (self.omp, saved) {
            // SAFETY: as above: this thread's setting, put back.
            unsafe { set(n) };
        }
        done.unwrap_or(false)
    }
}

/// `dst = a · b` through oneDNN, `a` (`m × k`) and `b` (`k × n`) bfloat16
/// (their raw bits), `dst` (`m × n`) `f32`: `Ok(true)` when oneDNN
/// computed it, `Ok(false)` when it is not to be had or refused (`dst` is
/// then unspecified and the caller computes the product otherwise). Views
/// that do not fit their slices, or shapes that do not agree, are
/// `ACL_ERROR_INVALID_PARAM`.
pub fn bf16_product(
    dst: &mut [f32],
    d: View,
    a: &[u16],
    av: View,
    b: &[u16],
    bv: View,
) -> Result<bool, AclError> {
    check(dst, d, a, av, b, bv)?;
    Ok(api().is_ok_and(|api| product(api, dst, d, a, av, b, bv)))
}

/// The shapes agree and every view lies inside its slice.
fn check(dst: &[f32], d: View, a: &[u16], av: View, b: &[u16], bv: View) -> Result<(), AclError> {
    let (m, k, n) = (av.rows, av.cols, bv.cols);
    if bv.rows != k || d.rows != m || d.cols != n {
        return Err(AclError::INVALID_PARAM);
    }
    if !(d.fits(dst.len()) && av.fits(a.len()) && bv.fits(b.len())) {
        return Err(AclError::INVALID_PARAM);
    }
    Ok(())
}

/// [`bf16_product`] through `api`, on views [`check`]ed; whether oneDNN
/// computed it.
fn product(api: &Api, dst: &mut [f32], d: View, a: &[u16], av: View, b: &[u16], bv: View) -> bool {
    let (m, k, n) = (av.rows, av.cols, bv.cols);
    if m == 0 || n == 0 || k == 0 || !d.injective() {
        return false;
    }
    let _calls = CALLS.lock();
    let parts = parallel::parts(m.max(n), MIN_BAND)
        .min(m.saturating_mul(n).saturating_mul(k) / MIN_WORK)
        .max(1);
    let dp = Shared(dst.as_mut_ptr());
    let (ap, bp) = (Shared(a.as_ptr().cast_mut()), Shared(b.as_ptr().cast_mut()));
    let done = parallel::bands(m.max(n), parts, |r| {
        let (d, av, bv) = if m >= n {
            (
                d.row_band(r.start, r.len()),
                av.row_band(r.start, r.len()),
                bv,
            )
        } else {
            let t = |v: View| v.t().row_band(r.start, r.len()).t();
            (t(d), av, t(bv))
        };
        // SAFETY: bands of views checked to lie inside their slices, which
        // outlive the bands (joined before `bands` returns); the bands of
        // `d` are disjoint (`injective`), so no two threads write one
        // element; `a` and `b` are only read.
        unsafe { api.band(dp.get(), d, ap.get(), av, bp.get(), bv) }
    });
    done.into_iter().all(|ok| ok)
}

/// Products below this many multiply-adds stay on the calling thread.
const MIN_WORK: usize = 1 << 21;

/// A band is at least this many rows or columns of the output.
const MIN_BAND: usize = 32;

/// A slice's first element, shared by the threads of one product.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);

impl<T> Shared<T> {
    /// The pointer (a method, so that a closure captures the whole
    /// `Shared`, not its field).
    fn get(self) -> *mut T {
        self.0
    }
}

// SAFETY: the threads of one product write disjoint bands of `dst` and
// only read `a` and `b` (see `bf16_product`); the slices outlive them.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above; the pointer itself is only copied.
unsafe impl<T: Send> Sync for Shared<T> {}

#[cfg(test)]
mod tests;
