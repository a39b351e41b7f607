//! The Gloo engine, `libaclmem_gloo.so`: loaded when the first communicator
//! is made, so that the emulated library itself never needs Gloo.
//!
//! It is `$ACLMEM_GLOO_ENGINE` when that is set (that file only), else the
//! one beside the emulated library (the directory of the real file, links
//! followed), else the one the dynamic loader finds by name. It is opened `RTLD_LOCAL | RTLD_DEEPBIND`:
//! the engine and the Gloo it links resolve their own symbols first, never
//! the newer Gloo that torch's `libtorch_cpu.so` exports.
//!
//! The interface is [`abi`], its one definition; the engine is compiled
//! against a header generated from it, and the loader checks a loaded
//! engine's version and table size (an engine of another build).

use std::ffi::{CStr, CString, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;

pub mod abi;

use abi::{GlooEngine, GlooEngineEntry, GlooError, GlooReduceFn};
pub use abi::{GlooP2p, GlooStore};

/// The engine's file name.
pub const FILE: &str = "libaclmem_gloo.so";

/// A failure's kind (the `ACLMEM_GLOO_*` statuses but OK).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// No answer within the timeout.
    Timeout,
    /// A peer went away, or the network failed.
    Io,
    /// Gloo refused the arguments.
    Invalid,
    /// Anything else.
    Internal,
}

impl Status {
    fn from_raw(raw: i32) -> Status {
        match raw {
            abi::ACLMEM_GLOO_TIMEOUT => Status::Timeout,
            abi::ACLMEM_GLOO_IO => Status::Io,
            abi::ACLMEM_GLOO_INVALID => Status::Invalid,
            _ => Status::Internal,
        }
    }

    /// The raw value, as the store callbacks answer it.
    pub const fn raw(self) -> i32 {
        match self {
            Status::Timeout => abi::ACLMEM_GLOO_TIMEOUT,
            Status::Io => abi::ACLMEM_GLOO_IO,
            Status::Invalid => abi::ACLMEM_GLOO_INVALID,
            Status::Internal => abi::ACLMEM_GLOO_INTERNAL,
        }
    }
}

/// A failure of the engine, with Gloo's message.
#[derive(Debug, Clone)]
pub struct Failure {
    /// What kind.
    pub status: Status,
    /// What Gloo said.
    pub message: String,
}

impl GlooError {
    fn new() -> GlooError {
        GlooError {
            status: 0,
            message: [0; abi::ACLMEM_GLOO_MESSAGE_LEN],
        }
    }

    fn failure(&self, status: i32) -> Failure {
        // SAFETY: the engine writes a NUL-terminated message (snprintf);
        // the array starts zeroed, so it is terminated in any case.
        let message = unsafe { CStr::from_ptr(self.message.as_ptr()) };
        Failure {
            status: Status::from_raw(status),
            message: message.to_string_lossy().into_owned(),
        }
    }
}

struct Engine {
    table: &'static GlooEngine,
    // Never unloaded: contexts may outlive any one user.
    _library: libloading::os::unix::Library,
}

static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();

/// Where the emulated library's own file is (its links followed).
fn own_directory() -> Option<PathBuf> {
    // SAFETY: `Dl_info` is plain data; dladdr fills it for an address of
    // a loaded object and answers 0 otherwise.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: any address may be asked about; this one is our own code.
    let found = unsafe { libc::dladdr(own_directory as *const c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's file name is a NUL-terminated string of the loader.
    let file = unsafe { CStr::from_ptr(info.dli_fname) };
    let file = PathBuf::from(std::ffi::OsStr::from_bytes(file.to_bytes()));
    std::fs::canonicalize(file)
        .ok()?
        .parent()
        .map(PathBuf::from)
}

fn open(path: &std::ffi::OsStr) -> Result<Engine, String> {
    let flags = libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND;
    // SAFETY: the engine's initialisers are Gloo's and the C++ runtime's,
    // which have no preconditions on the caller.
    let library = unsafe { libloading::os::unix::Library::open(Some(path), flags) }
        .map_err(|e| e.to_string())?;
    // SAFETY: the symbol is `const struct aclmem_gloo_engine
    // *aclmem_gloo_engine_v1(void)`, a `GlooEngineEntry` (the engine's
    // build asserts it against the header generated from `abi`).
    let get: libloading::os::unix::Symbol<GlooEngineEntry> =
        unsafe { library.get(b"aclmem_gloo_engine_v1\0") }.map_err(|e| e.to_string())?;
    // SAFETY: the function takes nothing and returns a static table.
    let table = unsafe { get() };
    // SAFETY: a static of the loaded engine, which is never unloaded; its
    // first two fields say whether the rest is the layout we know.
    let table = unsafe { table.as_ref() }.ok_or("the engine has no table")?;
    if table.version != abi::ACLMEM_GLOO_ENGINE_VERSION
        || table.size as usize != std::mem::size_of::<GlooEngine>()
    {
        return Err(format!(
            "{} is of another version ({}, {} bytes; this library needs {}, {} bytes)",
            path.to_string_lossy(),
            table.version,
            table.size,
            abi::ACLMEM_GLOO_ENGINE_VERSION,
            std::mem::size_of::<GlooEngine>()
        ));
    }
    Ok(Engine {
        table,
        _library: library,
    })
}

fn engine() -> Result<&'static Engine, String> {
    ENGINE
        .get_or_init(|| {
            let mut tried = Vec::new();
            let mut candidates: Vec<std::ffi::OsString> = Vec::new();
            // Named: that one only, so a wrong name is an error, not
            // another engine found silently.
            match std::env::var_os("ACLMEM_GLOO_ENGINE").filter(|p| !p.is_empty()) {
                Some(p) => candidates.push(p),
                None => {
                    if let Some(dir) = own_directory() {
                        candidates.push(dir.join(FILE).into_os_string());
                    }
                    candidates.push(FILE.into());
                }
            }
            for c in candidates {
                match open(&c) {
                    Ok(e) => return Ok(e),
                    Err(e) => tried.push(e),
                }
            }
            Err(format!(
                "HCCL on aclmem needs its Gloo engine, {FILE}, which the wheels carry beside \
                 the library (a build from source links the system's Gloo: on Debian/Ubuntu \
                 apt-get install libgloo-dev, then build aclmem; or set ACLMEM_GLOO_ENGINE): {}",
                tried.join("; ")
            ))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Whether the engine can be loaded, and if not why.
pub fn available() -> Result<(), String> {
    engine().map(|_| ())
}

/// One Gloo context: a communicator's connections to its peers. One
/// operation at a time (`&mut self`).
pub struct Context {
    raw: *mut c_void,
    engine: &'static Engine,
}

// SAFETY: a Gloo context may be used from any thread, one operation at a
// time, which `&mut self` ensures.
unsafe impl Send for Context {}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: made by `connect`, destroyed once.
        unsafe { (self.engine.table.destroy)(self.raw) }
    }
}

fn status(raw: i32, err: &GlooError) -> Result<(), Failure> {
    if raw == 0 {
        Ok(())
    } else {
        Err(err.failure(raw))
    }
}

impl Context {
    /// Connects rank `rank` of `size` through `store`, listening on
    /// `hostname`.
    pub fn connect(
        rank: u32,
        size: u32,
        hostname: &str,
        store: &GlooStore,
        timeout_ms: i64,
    ) -> Result<Context, Failure> {
        let engine = engine().map_err(|message| Failure {
            status: Status::Internal,
            message,
        })?;
        let host = CString::new(hostname).map_err(|_| Failure {
            status: Status::Invalid,
            message: "a host name with a NUL".into(),
        })?;
        let mut err = GlooError::new();
        // SAFETY: the store's callbacks live for the call (the caller's
        // borrow); strings are NUL-terminated; the engine catches every
        // exception.
        let raw = unsafe {
            (engine.table.connect)(
                rank as i32,
                size as i32,
                host.as_ptr(),
                store,
                timeout_ms,
                &mut err,
            )
        };
        if raw.is_null() {
            return Err(err.failure(if err.status == abi::ACLMEM_GLOO_OK {
                abi::ACLMEM_GLOO_INTERNAL
            } else {
                err.status
            }));
        }
        Ok(Context { raw, engine })
    }

    /// In-place allreduce of `count` elements of `elem` bytes at `buf`.
    ///
    /// # Safety
    /// `buf` must be readable and writable for `count * elem` bytes, and
    /// nothing else may access it during the call.
    pub unsafe fn allreduce(
        &mut self,
        buf: usize,
        count: usize,
        elem: usize,
        f: GlooReduceFn,
        timeout_ms: i64,
    ) -> Result<(), Failure> {
        let mut err = GlooError::new();
        // SAFETY: the caller's contract.
        let r = unsafe {
            (self.engine.table.allreduce)(
                self.raw,
                buf as *mut c_void,
                count,
                elem,
                f,
                timeout_ms,
                &mut err,
            )
        };
        status(r, &err)
    }

    /// Broadcast of `bytes` at `buf` from `root`.
    ///
    /// # Safety
    /// As [`Context::allreduce`].
    pub unsafe fn broadcast(
        &mut self,
        buf: usize,
        bytes: usize,
        root: u32,
        timeout_ms: i64,
    ) -> Result<(), Failure> {
        let mut err = GlooError::new();
        // SAFETY: the caller's contract.
        let r = unsafe {
            (self.engine.table.broadcast)(
                self.raw,
                buf as *mut c_void,
                bytes,
                root as i32,
                timeout_ms,
                &mut err,
            )
        };
        status(r, &err)
    }

    /// Reduce to `root`; `out` is written on every rank.
    ///
    /// # Safety
    /// `input` readable and `out` writable for `count * elem` bytes; they
    /// are the same address or do not overlap.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn reduce(
        &mut self,
        input: usize,
        out: usize,
        count: usize,
        elem: usize,
        f: GlooReduceFn,
        root: u32,
        timeout_ms: i64,
    ) -> Result<(), Failure> {
        let mut err = GlooError::new();
        // SAFETY: the caller's contract.
        let r = unsafe {
            (self.engine.table.reduce)(
                self.raw,
                input as *const c_void,
                out as *mut c_void,
                count,
                elem,
                f,
                root as i32,
                timeout_ms,
                &mut err,
            )
        };
        status(r, &err)
    }

    /// Allgather of `bytes[i]` from each rank into `out`, back to back;
    /// `input` 0 when `out` already holds this rank's part.
    ///
    /// # Safety
    /// `out` writable for the sum of `bytes`, `input` readable for this
    /// rank's part and not overlapping `out`.
    pub unsafe fn allgatherv(
        &mut self,
        input: usize,
        out: usize,
        bytes: &[usize],
        timeout_ms: i64,
    ) -> Result<(), Failure> {
        let mut err = GlooError::new();
        // SAFETY: the caller's contract; `bytes` has one count per rank
        // (the caller's communicator size).
        let r = unsafe {
            (self.engine.table.allgatherv)(
                self.raw,
                input as *const c_void,
                out as *mut c_void,
                bytes.as_ptr(),
                timeout_ms,
                &mut err,
            )
        };
        status(r, &err)
    }

    /// All-to-all: `send[j]` bytes to rank j, `recv[i]` from rank i, back
    /// to back.
    ///
    /// # Safety
    /// `input` readable for the sum of `send`, `out` writable for the sum
    /// of `recv`, no overlap; one count per rank.
    pub unsafe fn alltoallv(
        &mut self,
        input: usize,
        send: &[i64],
        out: usize,
        recv: &[i64],
        timeout_ms: i64,
    ) -> Result<(), Failure> {
        let mut err = GlooError::new();
        // SAFETY: the caller's contract.
        let r = unsafe {
            (self.engine.table.alltoallv)(
                self.raw,
                input as *const c_void,
                send.as_ptr(),
                out as *mut c_void,
                recv.as_ptr(),
                timeout_ms,
                &mut err,
            )
        };
        status(r, &err)
    }

    /// A barrier.
    pub fn barrier(&mut self, timeout_ms: i64) -> Result<(), Failure> {
        let mut err = GlooError::new();
        // SAFETY: no buffers.
        let r = unsafe { (self.engine.table.barrier)(self.raw, timeout_ms, &mut err) };
        status(r, &err)
    }

    /// Posts every send and receive, then waits for all.
    ///
    /// # Safety
    /// Every item's buffer readable (send) or writable (receive) for its
    /// bytes, receives overlapping nothing else.
    pub unsafe fn p2p(&mut self, items: &[GlooP2p], timeout_ms: i64) -> Result<(), Failure> {
        let mut err = GlooError::new();
        // SAFETY: the caller's contract.
        let r = unsafe {
            (self.engine.table.p2p)(self.raw, items.as_ptr(), items.len(), timeout_ms, &mut err)
        };
        status(r, &err)
    }
}
