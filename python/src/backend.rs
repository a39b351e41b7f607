//! The ACL backend of the process, chosen once at the first call (the
//! sanitizer's definitions, the real `libascendcl.so`, the process's
//! shared emulated library, or the emulator built into this module), and
//! how the other modules call its functions ([`call!`], [`f`]).

use std::ffi::{CStr, c_void};
use std::os::unix::ffi::OsStrExt;
use std::ptr;
use std::sync::{Arc, OnceLock};

use aclmem_core::AclError;
use aclmem_driver::AscendCl;
use aclmem_sys::AclFunctions;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// What a call answers when the loaded library lacks the function
/// (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, as the driver does).
pub(crate) const ABSENT: i32 = AclError::RT_FEATURE_NOT_SUPPORT.code();

struct Backend {
    f: AclFunctions,
    name: String,
    /// The calls go to the sanitizer's global definitions.
    sanitizer: bool,
    /// Keeps the real library loaded for as long as the process runs.
    _library: Option<Arc<AscendCl>>,
}

static BACKEND: OnceLock<Result<Backend, String>> = OnceLock::new();

/// Whether `libaclmem_sanitizer.so` is loaded into the process (preloaded
/// by `aclmem sanitize`): then the calls go through its definitions, so
/// that it sees them.
fn sanitizer_loaded() -> bool {
    // SAFETY: dlsym of a NUL-terminated name in the global scope.
    !unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"aclmem_sanitizer_findings".as_ptr()) }.is_null()
}

fn load() -> Result<Backend, String> {
    if sanitizer_loaded() {
        // SAFETY: the global definitions of the ACL names are the
        // sanitizer's, with the documented prototypes (it checks them
        // against aclmem_sys at compile time); it stays loaded.
        let f = unsafe {
            AclFunctions::from_lookup(|name| match std::ffi::CString::new(name) {
                Ok(c) => libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()),
                Err(_) => ptr::null_mut(),
            })
        };
        return Ok(Backend {
            f,
            name: "sanitizer".into(),
            sanitizer: true,
            _library: None,
        });
    }
    match std::env::var("ACLMEM_BACKEND").as_deref() {
        Ok("driver") => {
            let library = AscendCl::load(None).map_err(|e| e.to_string())?;
            Ok(Backend {
                f: library.functions(),
                name: format!("driver ({})", library.path()),
                sanitizer: false,
                _library: Some(library),
            })
        }
        Ok("emulator") | Ok("") | Err(_) => match shared_emulator()? {
            Some(library) => Ok(Backend {
                f: library.functions(),
                sanitizer: false,
                // The process's one library, as pyACL binds to it: named
                // for what it is (CANN's, when a framework loaded it first).
                name: format!(
                    "{} ({})",
                    if library.emulated().is_some() {
                        "emulator"
                    } else {
                        "driver"
                    },
                    library
                        .file()
                        .map_or_else(|| library.path().to_owned(), |f| f.display().to_string())
                ),
                _library: Some(library),
            }),
            None => Ok(Backend {
                f: aclmem_emu_capi::functions(),
                name: "emulator (built into aclmem._native)".into(),
                sanitizer: false,
                _library: None,
            }),
        },
        Ok(other) => Err(format!(
            "ACLMEM_BACKEND=`{other}`: expected `emulator` (the default) or `driver`"
        )),
    }
}

/// The emulated `libascendcl.so` this process shares with its C code, so
/// that one emulator serves the whole process (memory a C extension maps
/// is memory `aclmem.acl` copies): the `libascendcl.so` already loaded in
/// the process, else the one `$ACLMEM_ASCENDCL` names, else the one the
/// wheel carries next to this module (`aclmem/_lib`), loaded under its
/// soname so that a C extension imported later binds to it too. `None`
/// when there is none of them (a build from source without the library):
/// then the emulator built into this module serves Python alone.
pub(crate) fn shared_emulator() -> Result<Option<Arc<AscendCl>>, String> {
    // SAFETY: RTLD_NOLOAD loads nothing; the handle only tells whether
    // the library is loaded, and is given back at once.
    let loaded = unsafe {
        let h = libc::dlopen(
            c"libascendcl.so".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_NOLOAD,
        );
        if !h.is_null() {
            libc::dlclose(h);
        }
        !h.is_null()
    };
    let named = std::env::var_os("ACLMEM_ASCENDCL").is_some_and(|v| !v.is_empty());
    if loaded || named {
        return AscendCl::load(None).map(Some).map_err(|e| e.to_string());
    }
    match bundled_library() {
        Some(path) => AscendCl::load(Some(&path))
            .map(Some)
            .map_err(|e| e.to_string()),
        None => Ok(None),
    }
}

/// `_lib/libascendcl.so` next to this module's file, if it is there.
fn bundled_library() -> Option<std::path::PathBuf> {
    // SAFETY: `Dl_info` is plain C data; all zeros is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables for the address of a
    // function of this module, which is loaded; `info` is a live local.
    let found = unsafe { libc::dladdr(bundled_library as *const c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr set `dli_fname` to a NUL-terminated path the loader
    // keeps for as long as the module is loaded.
    let module = unsafe { CStr::from_ptr(info.dli_fname) };
    let module = std::path::Path::new(std::ffi::OsStr::from_bytes(module.to_bytes()));
    let path = module.parent()?.join("_lib").join("libascendcl.so");
    path.is_file().then_some(path)
}

fn backend() -> PyResult<&'static Backend> {
    BACKEND
        .get_or_init(load)
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(format!("aclmem: no ACL backend: {e}")))
}

/// The table of the backend's functions.
pub(crate) fn f() -> PyResult<&'static AclFunctions> {
    Ok(&backend()?.f)
}

/// The address of a function outside the typed table (the stream-ordered
/// pools, managed memory, the 2-D copies and the other framework memory
/// calls Python binds), by name, in the
/// backend: the sanitizer's global definition, the loaded library's, or
/// the built-in emulator's; `None` where the backend lacks it.
pub(crate) fn symbol(name: &CStr) -> PyResult<Option<usize>> {
    let b = backend()?;
    if b.sanitizer {
        // SAFETY: dlsym of a NUL-terminated name in the global scope; the
        // address is not called here.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        return Ok((!p.is_null()).then_some(p as usize));
    }
    if let Some(library) = &b._library {
        return Ok(name.to_str().ok().and_then(|n| library.symbol_address(n)));
    }
    use aclmem_emu_capi as e;
    let p = match name.to_bytes() {
        b"aclrtMemPoolCreate" => e::aclrtMemPoolCreate as *const () as usize,
        b"aclrtMemPoolDestroy" => e::aclrtMemPoolDestroy as *const () as usize,
        b"aclrtMemPoolSetAttr" => e::aclrtMemPoolSetAttr as *const () as usize,
        b"aclrtMemPoolGetAttr" => e::aclrtMemPoolGetAttr as *const () as usize,
        b"aclrtMemPoolMallocAsync" => e::aclrtMemPoolMallocAsync as *const () as usize,
        b"aclrtMemPoolFreeAsync" => e::aclrtMemPoolFreeAsync as *const () as usize,
        b"aclrtMemPoolTrimTo" => e::aclrtMemPoolTrimTo as *const () as usize,
        b"aclrtMemAllocManaged" => e::aclrtMemAllocManaged as *const () as usize,
        b"aclrtMemManagedAdvise" => e::aclrtMemManagedAdvise as *const () as usize,
        b"aclrtMemManagedPrefetchAsync" => e::aclrtMemManagedPrefetchAsync as *const () as usize,
        b"aclrtMemsetAsync" => e::aclrtMemsetAsync as *const () as usize,
        b"aclrtMemcpy2d" => e::aclrtMemcpy2d as *const () as usize,
        b"aclrtMemcpy2dAsync" => e::aclrtMemcpy2dAsync as *const () as usize,
        b"aclrtMallocCached" => e::aclrtMallocCached as *const () as usize,
        b"aclrtMemFlush" => e::aclrtMemFlush as *const () as usize,
        b"aclrtMemInvalidate" => e::aclrtMemInvalidate as *const () as usize,
        b"aclrtMemsetD32" => e::aclrtMemsetD32 as *const () as usize,
        b"aclrtMemsetD32Async" => e::aclrtMemsetD32Async as *const () as usize,
        _ => return Ok(None),
    };
    Ok(Some(p))
}

/// The backend's function `$name` as `$ty`, called with `$args`, or
/// [`ABSENT`] (207000) where the backend lacks it.
macro_rules! call_by_name {
    ($name:literal as $ty:ty, $($arg:expr),* $(,)?) => {
        match $crate::backend::symbol($name)? {
            Some(p) => {
                // SAFETY: the backend's definition of that name has the
                // documented prototype `$ty` (`aclmem_sys::pools`, or the
                // caller's type checked against the emulator's function
                // at compile time).
                let f = unsafe { std::mem::transmute::<*const c_void, $ty>(p as *const c_void) };
                // SAFETY: every pointer argument is a live local of the
                // caller or an address the Python caller passed, which the
                // emulator checks through the kernel and the real library
                // takes as pyACL hands it over.
                unsafe { f($($arg),*) }
            }
            None => $crate::backend::ABSENT,
        }
    };
}
// By path, in the modules of the calls found by name.
pub(crate) use call_by_name;

/// Calls `$f` (an `Option` of a function pointer) with `$args`, or
/// evaluates to [`ABSENT`] when the library lacks it.
macro_rules! call {
    ($f:expr, $($arg:expr),* $(,)?) => {
        match $f {
            // SAFETY: the pointer is the backend's function of the
            // documented prototype (`aclmem_sys` checks the emulator's
            // against it at compile time; the driver resolves the real
            // library's by name). Every pointer argument is a live local
            // of this function or an address the Python caller passed,
            // which the emulator checks through the kernel and the real
            // library takes as pyACL hands it over.
            Some(func) => unsafe { func($($arg),*) },
            None => $crate::backend::ABSENT,
        }
    };
}
// By path (`crate::backend::call`), in the modules of the calls.
pub(crate) use call;

pub(crate) fn as_ptr(addr: usize) -> *mut c_void {
    addr as *mut c_void
}

/// The backend's name: `emulator` or `driver (<path>)`.
#[pyfunction]
pub(crate) fn backend_name() -> PyResult<String> {
    Ok(backend()?.name.clone())
}
