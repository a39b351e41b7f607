//! The real Ascend backend: `libascendcl.so` loaded at run time.
//!
//! * [`sys`]: the C declarations (types, constants, function-pointer types),
//!   with layout tests.
//! * [`AscendCl::load`]: finds the library (explicit path, the
//!   `libascendcl.so` the process already loaded, `$ACLMEM_ASCENDCL`, `$ASCEND_HOME_PATH/lib64`,
//!   `$ASCEND_TOOLKIT_HOME/lib64`,
//!   `/usr/local/Ascend/ascend-toolkit/latest/lib64`, then the dynamic
//!   loader's own search). A missing library is a [`LoadError`] naming every
//!   place tried; nothing on this path panics.
//! * Symbols resolve lazily, each with a policy: *required* symbols are
//!   checked when the library is loaded (a missing one is a `LoadError`);
//!   *optional* ones, absent from older CANN releases, make only their own
//!   call answer `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000).
//! * [`Runtime`] owns `aclInit` / `aclFinalize`; [`Driver`] is one device
//!   and implements every `aclmem-hal` trait.
//! * [`AscendCl::file`] is the file the dynamic loader opened, and
//!   [`AscendCl::emulated`] tells aclmem's emulated library from CANN's, so
//!   that tools can say when no NPU is involved.
//!
//! ## Devices and threads
//!
//! `aclrtSetDevice` binds a device to the *calling thread*. A [`Driver`] is
//! bound to one device and may be used from any thread: before each call it
//! makes sure the calling thread has that device set (one `aclrtSetDevice`
//! per thread and device switch, remembered in a thread-local), so calls
//! from another thread behave exactly like calls from the creating one.
//! Devices set this way are released by `aclFinalize`. The thread-local
//! remembers what the driver set; code that calls `aclrtSetDevice` itself
//! on a thread a [`Driver`] also uses must call [`Driver::release_thread`]
//! afterwards, so the driver sets its device again on its next call.
//!
//! ```no_run
//! use aclmem_driver::AscendCl;
//! let runtime = AscendCl::load(None)?.init()?;
//! let (product, run_mode) = runtime.platform()?;
//! println!("{} in {run_mode} form, {} devices", product, runtime.device_count()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

use std::cell::Cell;
use std::ffi::{CStr, c_void};
use std::fmt;
use std::num::{NonZeroU64, NonZeroUsize};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use aclmem_core::{AclError, CannVersion, GranularityOption, Product, RawPhysicalMemProp, RunMode};
use aclmem_hal::{
    DeviceInfo, ErrorType, PhysicalAllocator, RawHandle, ShareHandleType, ShareableHandle,
    ShareableHandleV2, ShareableMemory, VirtAddr, VirtualMemory,
};
use libloading::Library;

mod loader;
mod version;

pub use aclmem_sys as sys;
pub use aclmem_sys::{FUNCTIONS as SYMBOLS, Policy};
pub use loader::{
    Attempt, DEFAULT_TOOLKIT_LIB64, ENV_OVERRIDE, LIBRARY_NAME, LoadError, SearchPath,
};
pub use version::{CANN_OVERRIDE, CannSource, DetectedCann};

macro_rules! symbols {
    ($($name:ident: $ty:ident = $policy:ident, fn($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        #[allow(non_snake_case)]
        struct Symbols {
            $($name: OnceLock<Option<sys::$ty>>,)*
        }

        impl Symbols {
            fn new() -> Symbols {
                Symbols { $($name: OnceLock::new(),)* }
            }
        }

        impl AscendCl {
            /// Every ACL function of the one list, resolved (`None` where
            /// this library lacks it). The pointers are valid while this
            /// `AscendCl` lives: keep its `Arc` as long as you call them.
            pub fn functions(&self) -> aclmem_sys::AclFunctions {
                aclmem_sys::AclFunctions {
                    $($name: self.$name().ok(),)*
                }
            }

            $(
                /// The resolved function, or 207000 if the library lacks it.
                /// The pointer is valid only while this `AscendCl` lives:
                /// every caller calls it through a `Runtime` or `Driver`,
                /// which hold the `Arc<AscendCl>` for as long as they exist,
                /// and never keeps it beyond the call.
                #[allow(non_snake_case)]
                fn $name(&self) -> Result<sys::$ty, AclError> {
                    let f = self.symbols.$name.get_or_init(|| {
                        // SAFETY: `sys::$ty` is the documented C prototype of
                        // this symbol, so reading the symbol as that type is
                        // sound. The copied pointer points into the
                        // library's code, which stays mapped while `self`
                        // (the owner of the `Library`) lives; the callers
                        // hold the `Arc<AscendCl>` across every call through
                        // it (see above), so it is never called after the
                        // library is closed.
                        unsafe {
                            self.library
                                .get::<sys::$ty>(concat!(stringify!($name), "\0").as_bytes())
                                .ok()
                                .map(|s| *s)
                        }
                    });
                    f.ok_or(AclError::RT_FEATURE_NOT_SUPPORT)
                }
            )*
        }
    };
}

/// The loaded `libascendcl.so`.
pub struct AscendCl {
    library: Library,
    path: String,
    symbols: Symbols,
}

aclmem_sys::with_acl_functions!(symbols);

impl fmt::Debug for AscendCl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AscendCl")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl AscendCl {
    /// Loads the library from `explicit` (a file or a directory) or, when
    /// `None`, from the documented search path.
    pub fn load(explicit: Option<&Path>) -> Result<Arc<AscendCl>, LoadError> {
        AscendCl::load_from(&SearchPath {
            explicit: explicit.map(Path::to_path_buf),
        })
    }

    /// Loads the library from a search path.
    pub fn load_from(search: &SearchPath) -> Result<Arc<AscendCl>, LoadError> {
        let (library, path) = search.open()?;
        for (symbol, policy) in SYMBOLS {
            if *policy == Policy::Required {
                let name = format!("{symbol}\0");
                // SAFETY: only checks that the symbol exists; the pointer is
                // not kept or called here.
                if unsafe { library.get::<*const c_void>(name.as_bytes()) }.is_err() {
                    return Err(LoadError::MissingSymbol {
                        symbol,
                        library: path,
                    });
                }
            }
        }
        Ok(Arc::new(AscendCl {
            library,
            path,
            symbols: Symbols::new(),
        }))
    }

    /// Where the library was loaded from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The file the library was loaded from, as the dynamic loader resolved
    /// it (`dladdr` of `aclInit`): an absolute path also when the library
    /// was found by the loader's own search, where [`AscendCl::path`] is
    /// only `libascendcl.so`. `None` if the loader cannot say.
    pub fn file(&self) -> Option<PathBuf> {
        // SAFETY: only the symbol's address is read; it is not called.
        let symbol = unsafe { self.library.get::<*const c_void>(b"aclInit\0") }.ok()?;
        let address: *const c_void = *symbol;
        // SAFETY: `Dl_info` is plain C data (pointers and integers), for
        // which all zeroes is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: `dladdr` only reads the loader's tables for an address
        // inside a library that stays loaded while `self` lives; `info` is
        // a live local it fills in.
        let found = unsafe { libc::dladdr(address, &mut info) };
        if found == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: a non-NULL `dli_fname` is a NUL-terminated string owned by
        // the loader, valid while the library is loaded; copied at once.
        let name = unsafe { CStr::from_ptr(info.dli_fname) };
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
        Some(std::fs::canonicalize(&path).unwrap_or(path))
    }

    /// Whether this is aclmem's emulated `libascendcl.so` rather than
    /// CANN's: `Some` with what the emulator is configured by, `None` for
    /// any other library (or if its file cannot be read).
    ///
    /// The emulated library exports exactly CANN's functions and nothing
    /// else, so it is told by its file: it holds the names of the
    /// environment variables it reads at `aclInit`, documented in
    /// `crates/emu-capi/README.md`, among them [`EMULATOR_MARKER`]; a CANN
    /// library has no reason to contain aclmem's variable names. This holds
    /// however the library was found (path, `$ACLMEM_ASCENDCL`, the
    /// loader's search) and under any file name.
    pub fn emulated(&self) -> Option<Emulated> {
        let file = self.file()?;
        contains_marker(&file).ok()?.then(|| Emulated {
            machine: std::env::var(EMULATOR_MACHINE_VAR)
                .ok()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "default".into()),
        })
    }

    /// Whether an optional symbol is present.
    pub fn has_symbol(&self, symbol: &str) -> bool {
        let name = format!("{symbol}\0");
        // SAFETY: existence check only; the pointer is not kept or called.
        unsafe { self.library.get::<*const c_void>(name.as_bytes()) }.is_ok()
    }

    /// Calls `aclInit(NULL)` and returns the handle that finalizes. If ACL
    /// was already initialised by someone else (100002), the runtime is used
    /// as it is and not finalized by this handle.
    pub fn init(self: &Arc<Self>) -> Result<Runtime, AclError> {
        let init = self.aclInit()?;
        // SAFETY: a NULL config path is documented as valid.
        let code = unsafe { init(ptr::null()) };
        let owns_init = match AclError::check(code) {
            Ok(()) => true,
            Err(AclError::REPEAT_INITIALIZE) => false,
            Err(e) => return Err(e),
        };
        static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
        Ok(Runtime {
            inner: Arc::new(RuntimeInner {
                cl: Arc::clone(self),
                owns_init,
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                cann: OnceLock::new(),
            }),
        })
    }
}

/// Found in the file of aclmem's emulated `libascendcl.so` (see
/// [`AscendCl::emulated`]): the name of the variable that chooses the
/// emulated machine a process joins.
pub const EMULATOR_MARKER: &[u8] = EMULATOR_MACHINE_VAR.as_bytes();

/// The emulator's variable naming the machine to join.
const EMULATOR_MACHINE_VAR: &str = "ACLMEM_EMU_MACHINE";

/// Whether the file at `path` contains [`EMULATOR_MARKER`].
fn contains_marker(path: &Path) -> std::io::Result<bool> {
    let bytes = std::fs::read(path)?;
    Ok(memchr::memmem::find(&bytes, EMULATOR_MARKER).is_some())
}

/// The loaded library is aclmem's emulator ([`AscendCl::emulated`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Emulated {
    /// The emulated machine this process joins at `aclInit`:
    /// `$ACLMEM_EMU_MACHINE`, or `default`. Its other settings
    /// (`ACLMEM_EMU_SOC`, `_DEVICES`, `_HBM`, …) are the library's to
    /// report, through the ordinary ACL queries.
    pub machine: String,
}

struct RuntimeInner {
    cl: Arc<AscendCl>,
    owns_init: bool,
    id: usize,
    cann: OnceLock<Result<DetectedCann, AclError>>,
}

impl Drop for RuntimeInner {
    fn drop(&mut self) {
        if !self.owns_init {
            return;
        }
        if let Ok(finalize) = self.cl.aclFinalize() {
            // SAFETY: the runtime was initialised by this handle and no
            // driver of it is left (they hold this `Arc`). The result cannot
            // be reported from Drop; a failed finalize leaves nothing for us
            // to release.
            let _ = unsafe { finalize() };
        }
    }
}

/// An initialised ACL runtime. Dropping the last [`Runtime`] or [`Driver`]
/// of it calls `aclFinalize`.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<RuntimeInner>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("library", &self.inner.cl.path)
            .field("owns_init", &self.inner.owns_init)
            .finish()
    }
}

impl Runtime {
    /// The loaded library.
    pub fn library(&self) -> &Arc<AscendCl> {
        &self.inner.cl
    }

    /// `aclrtGetSocName`. NULL (failure) is reported as
    /// `ACL_ERROR_RT_INTERNAL_ERROR`.
    pub fn soc_name(&self) -> Result<String, AclError> {
        let f = self.inner.cl.aclrtGetSocName()?;
        // SAFETY: documented prototype, no arguments.
        let p = unsafe { f() };
        if p.is_null() {
            return Err(AclError::RT_INTERNAL_ERROR);
        }
        // SAFETY: a non-NULL return is a NUL-terminated string owned by the
        // runtime; we copy it out at once.
        Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    /// `aclrtGetRunMode`, as a [`RunMode`]. An unknown value is
    /// `ACL_ERROR_RT_INTERNAL_ERROR`.
    pub fn run_mode(&self) -> Result<RunMode, AclError> {
        let f = self.inner.cl.aclrtGetRunMode()?;
        let mut raw = u32::MAX;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut raw) })?;
        RunMode::from_acl_run_mode(raw).ok_or(AclError::RT_INTERNAL_ERROR)
    }

    /// The product (from the SoC name) and run mode. An unknown SoC name is
    /// `ACL_ERROR_INVALID_PARAM`.
    pub fn platform(&self) -> Result<(Product, RunMode), AclError> {
        let soc = self.soc_name()?;
        let product = Product::from_soc_name(&soc).map_err(|e| e.code())?;
        Ok((product, self.run_mode()?))
    }

    /// The installed CANN release (detected once per runtime; see
    /// [`DetectedCann`] for the order of sources). Nothing found is
    /// `ACL_ERROR_INVALID_FILE` (100003); a bad `$ACLMEM_CANN` is 100000.
    pub fn cann(&self) -> Result<DetectedCann, AclError> {
        self.inner.cann.get_or_init(|| self.detect_cann()).clone()
    }

    fn detect_cann(&self) -> Result<DetectedCann, AclError> {
        if let Some(overridden) = version::from_override() {
            return overridden;
        }
        if let Ok(f) = self.inner.cl.aclsysGetCANNVersion() {
            let mut v = sys::aclCANNPackageVersion::default();
            // SAFETY: documented prototype; the out pointer is a live local
            // of the documented 512-byte layout.
            if unsafe { f(sys::ACL_PKG_NAME_CANN, &mut v) } == sys::ACL_SUCCESS
                && let Some(release) = version::from_c_field(&v.version)
            {
                return Ok(DetectedCann::new(release, CannSource::LibraryCall));
            }
        }
        version::from_files(&version::toolkit_dirs(Path::new(&self.inner.cl.path)))
            .ok_or(AclError::INVALID_FILE)
    }

    /// `aclrtGetVersion`: the ACL interface version (major, minor, patch),
    /// which is not the CANN release (see [`Runtime::cann`]).
    pub fn acl_version(&self) -> Result<(i32, i32, i32), AclError> {
        let f = self.inner.cl.aclrtGetVersion()?;
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: documented prototype; the out pointers are live locals.
        AclError::check(unsafe { f(&mut major, &mut minor, &mut patch) })?;
        Ok((major, minor, patch))
    }

    /// `aclrtGetDeviceCount`.
    pub fn device_count(&self) -> Result<u32, AclError> {
        let f = self.inner.cl.aclrtGetDeviceCount()?;
        let mut n = 0u32;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut n) })?;
        Ok(n)
    }

    /// A backend for device `device_id` (checked against the device count:
    /// `ACL_ERROR_RT_INVALID_DEVICEID` otherwise).
    pub fn device(&self, device_id: u32) -> Result<Driver, AclError> {
        if device_id >= self.device_count()? {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        let device = i32::try_from(device_id).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        let driver = Driver {
            rt: Arc::clone(&self.inner),
            device,
        };
        driver.enter()?;
        Ok(driver)
    }
}

thread_local! {
    /// The (runtime id, device) this thread last set with `aclrtSetDevice`.
    static CURRENT: Cell<(usize, i32)> = const { Cell::new((0, -1)) };
}

/// One device of a [`Runtime`]: implements every `aclmem-hal` trait.
/// `Send + Sync`; see the crate docs for how threads get their device.
#[derive(Clone)]
pub struct Driver {
    rt: Arc<RuntimeInner>,
    device: i32,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("library", &self.rt.cl.path)
            .field("device", &self.device)
            .finish()
    }
}

impl Driver {
    /// The device this backend is bound to.
    pub fn device_id(&self) -> u32 {
        self.device as u32
    }

    /// The runtime.
    pub fn runtime(&self) -> Runtime {
        Runtime {
            inner: Arc::clone(&self.rt),
        }
    }

    /// Makes sure the calling thread has this driver's device set.
    fn enter(&self) -> Result<&AscendCl, AclError> {
        let want = (self.rt.id, self.device);
        if CURRENT.with(Cell::get) != want {
            let set = self.rt.cl.aclrtSetDevice()?;
            // SAFETY: documented prototype; plain integer argument.
            AclError::check(unsafe { set(self.device) })?;
            CURRENT.with(|c| c.set(want));
        }
        Ok(&self.rt.cl)
    }

    /// `aclrtGetDevice` on the calling thread (after making sure this
    /// driver's device is set there).
    pub fn current_device(&self) -> Result<i32, AclError> {
        let f = self.enter()?.aclrtGetDevice()?;
        let mut d = -1;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut d) })?;
        Ok(d)
    }

    /// Releases this driver's device on the calling thread
    /// (`aclrtResetDevice`), for threads that are about to end. The next call
    /// from this thread sets it again.
    pub fn release_thread(&self) -> Result<(), AclError> {
        if CURRENT.with(Cell::get) != (self.rt.id, self.device) {
            return Ok(());
        }
        let f = self.rt.cl.aclrtResetDevice()?;
        // SAFETY: documented prototype; plain integer argument.
        AclError::check(unsafe { f(self.device) })?;
        CURRENT.with(|c| c.set((0, -1)));
        Ok(())
    }

    /// `aclrtDeviceGetBareTgid`: the pid to whitelist for sharing (the host
    /// pid, even inside a container). Optional symbol: 207000 where absent.
    pub fn bare_tgid(&self) -> Result<i32, AclError> {
        let f = self.enter()?.aclrtDeviceGetBareTgid()?;
        let mut pid = 0;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut pid) })?;
        Ok(pid)
    }

    /// `aclrtGetMemInfo` for `attr` on this device.
    pub fn mem_info(&self, attr: aclmem_core::MemAttr) -> Result<(usize, usize), AclError> {
        let f = self.enter()?.aclrtGetMemInfo()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: documented prototype; the out pointers are live locals.
        AclError::check(unsafe { f(attr.raw(), &mut free, &mut total) })?;
        Ok((free, total))
    }
}

fn handle_ptr(h: RawHandle) -> sys::aclrtDrvMemHandle {
    h.0.get() as usize as sys::aclrtDrvMemHandle
}

fn handle_from(p: sys::aclrtDrvMemHandle) -> Result<RawHandle, AclError> {
    // A successful call that returns NULL breaks the API contract.
    NonZeroU64::new(p as usize as u64)
        .map(RawHandle)
        .ok_or(AclError::RT_INTERNAL_ERROR)
}

fn addr_ptr(a: VirtAddr) -> *mut c_void {
    a.get() as *mut c_void
}

impl ErrorType for Driver {
    type Error = AclError;
}

impl DeviceInfo for Driver {
    fn platform(&self) -> Result<(Product, RunMode), AclError> {
        self.runtime().platform()
    }
    fn cann(&self) -> Result<CannVersion, AclError> {
        self.runtime().cann()?.rules_or_err()
    }
    fn device_count(&self) -> Result<u32, AclError> {
        self.runtime().device_count()
    }
}

impl PhysicalAllocator for Driver {
    fn granularity(
        &self,
        prop: &RawPhysicalMemProp,
        option: GranularityOption,
    ) -> Result<usize, AclError> {
        let f = self.enter()?.aclrtMemGetAllocationGranularity()?;
        // The C prototype takes a non-const pointer: hand it a copy.
        let mut prop = *prop;
        let mut g = 0usize;
        // SAFETY: documented prototype; both pointers are live locals.
        AclError::check(unsafe { f(&mut prop, option as u32, &mut g) })?;
        Ok(g)
    }

    fn malloc_physical(
        &self,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> Result<RawHandle, AclError> {
        let f = self.enter()?.aclrtMallocPhysical()?;
        let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
        // SAFETY: documented prototype; `prop` is a valid 32-byte
        // `aclrtPhysicalMemProp` (same layout) and the out pointer is live.
        AclError::check(unsafe { f(&mut h, size, prop, flags) })?;
        handle_from(h)
    }

    fn free_physical(&self, handle: RawHandle) -> Result<(), AclError> {
        let f = self.enter()?.aclrtFreePhysical()?;
        // SAFETY: documented prototype; the runtime validates the handle.
        AclError::check(unsafe { f(handle_ptr(handle)) })
    }
}

impl VirtualMemory for Driver {
    fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
        flags: u64,
    ) -> Result<VirtAddr, AclError> {
        let f = self.enter()?.aclrtReserveMemAddress()?;
        let mut p: *mut c_void = ptr::null_mut();
        let want = expected.map_or(ptr::null_mut(), addr_ptr);
        // SAFETY: documented prototype; the out pointer is live; `want` is
        // only an address hint, never dereferenced by us.
        AclError::check(unsafe { f(&mut p, size, alignment, want, flags) })?;
        NonZeroUsize::new(p as usize)
            .map(VirtAddr)
            .ok_or(AclError::RT_INTERNAL_ERROR)
    }

    fn release(&self, addr: VirtAddr) -> Result<(), AclError> {
        let f = self.enter()?.aclrtReleaseMemAddress()?;
        // SAFETY: documented prototype; the runtime validates the address.
        AclError::check(unsafe { f(addr_ptr(addr)) })
    }

    fn map(
        &self,
        addr: VirtAddr,
        size: usize,
        offset: usize,
        handle: RawHandle,
        flags: u64,
    ) -> Result<(), AclError> {
        let f = self.enter()?.aclrtMapMem()?;
        // SAFETY: documented prototype; the runtime validates every value.
        AclError::check(unsafe { f(addr_ptr(addr), size, offset, handle_ptr(handle), flags) })
    }

    fn unmap(&self, addr: VirtAddr) -> Result<(), AclError> {
        let f = self.enter()?.aclrtUnmapMem()?;
        // SAFETY: documented prototype; the runtime validates the address.
        AclError::check(unsafe { f(addr_ptr(addr)) })
    }
}

impl ShareableMemory for Driver {
    fn export(&self, handle: RawHandle, flags: u64) -> Result<ShareableHandle, AclError> {
        let f = self.enter()?.aclrtMemExportToShareableHandle()?;
        let mut out = 0u64;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe {
            f(
                handle_ptr(handle),
                sys::ACL_MEM_HANDLE_TYPE_NONE,
                flags,
                &mut out,
            )
        })?;
        Ok(ShareableHandle(out))
    }

    fn set_pids(&self, shareable: ShareableHandle, pids: &[i32]) -> Result<(), AclError> {
        let f = self.enter()?.aclrtMemSetPidToShareableHandle()?;
        // The prototype takes a non-const pointer: hand it a copy.
        let mut pids = pids.to_vec();
        let ptr = sys::pid_list_ptr(&mut pids);
        // SAFETY: documented prototype; `ptr` is NULL (count 0, which the
        // runtime rejects) or points at `pids.len()` live integers.
        AclError::check(unsafe { f(shareable.0, ptr, pids.len()) })
    }

    fn import(&self, shareable: ShareableHandle, device_id: u32) -> Result<RawHandle, AclError> {
        let f = self.enter()?.aclrtMemImportFromShareableHandle()?;
        let device = i32::try_from(device_id).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(shareable.0, device, &mut h) })?;
        handle_from(h)
    }

    fn export_v2(
        &self,
        handle: RawHandle,
        flags: u64,
        kind: ShareHandleType,
    ) -> Result<ShareableHandleV2, AclError> {
        let f = self.enter()?.aclrtMemExportToShareableHandleV2()?;
        let mut out = [0u8; 128];
        // SAFETY: documented prototype; `out` is a live buffer of 128 bytes,
        // the size of the larger handle type (`aclrtMemFabricHandle`).
        AclError::check(unsafe {
            f(
                handle_ptr(handle),
                flags,
                kind.raw(),
                out.as_mut_ptr().cast(),
            )
        })?;
        Ok(ShareableHandleV2::from_c_buffer(kind, &out))
    }

    fn set_pids_v2(&self, shareable: &ShareableHandleV2, pids: &[i32]) -> Result<(), AclError> {
        let f = self.enter()?.aclrtMemSetPidToShareableHandleV2()?;
        let mut buffer = shareable.to_c_buffer();
        let mut pids = pids.to_vec();
        let ptr = sys::pid_list_ptr(&mut pids);
        // SAFETY: documented prototype; `buffer` holds the handle in the
        // layout of its type, `ptr` is NULL (count 0) or `pids.len()` live
        // integers.
        AclError::check(unsafe {
            f(
                buffer.as_mut_ptr().cast(),
                shareable.kind().raw(),
                ptr,
                pids.len(),
            )
        })
    }

    fn import_v2(
        &self,
        shareable: &ShareableHandleV2,
        device_id: u32,
    ) -> Result<RawHandle, AclError> {
        let cl = self.enter()?;
        let f = cl.aclrtMemImportFromShareableHandleV2()?;
        let device = i32::try_from(device_id).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        if device != self.device {
            // The C call imports onto the thread's current device.
            let set = cl.aclrtSetDevice()?;
            // SAFETY: documented prototype; plain integer argument.
            AclError::check(unsafe { set(device) })?;
            CURRENT.with(|c| c.set((self.rt.id, device)));
        }
        let mut buffer = shareable.to_c_buffer();
        let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
        // SAFETY: documented prototype; `buffer` holds the handle in the
        // layout of its type and the out pointer is a live local.
        AclError::check(unsafe {
            f(
                buffer.as_mut_ptr().cast(),
                shareable.kind().raw(),
                0,
                &mut h,
            )
        })?;
        handle_from(h)
    }
}

// The README (this crate's page on crates.io) is compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests;
