//! `aclmem._native`: the ACL calls of the backend, one Python function per
//! C function, with plain integers in and `(values..., ret)` out; and the
//! rules table as Python values. The pyACL-compatible module
//! (`aclmem.acl`) and the Pythonic layer are written in Python over it.
//!
//! The backend is chosen once per process, at the first call:
//! `ACLMEM_BACKEND=emulator` (the default: the process's one emulated
//! `libascendcl.so` — see [`shared_emulator`] — joining the machine
//! `ACLMEM_EMU_MACHINE` names, as C and Rust processes do) or
//! `ACLMEM_BACKEND=driver` (the real `libascendcl.so`, found as
//! `aclmem-driver` finds it).
//!
//! Pointers come from Python as integers. With the emulator every pointer
//! argument is checked by the kernel before use, so a wrong one is an ACL
//! error, never a crash; with the real library, pointers go to it as they
//! come, as with pyACL.

use std::ffi::{CStr, CString, c_char, c_void};
use std::os::unix::ffi::OsStrExt;
use std::ptr;
use std::sync::{Arc, OnceLock};

use aclmem_core::AclError;
use aclmem_driver::AscendCl;
use aclmem_sys::{self as sys, AclFunctions};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What a call answers when the loaded library lacks the function
/// (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, as the driver does).
const ABSENT: i32 = AclError::RT_FEATURE_NOT_SUPPORT.code();

struct Backend {
    f: AclFunctions,
    name: String,
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
            _library: None,
        });
    }
    match std::env::var("ACLMEM_BACKEND").as_deref() {
        Ok("driver") => {
            let library = AscendCl::load(None).map_err(|e| e.to_string())?;
            Ok(Backend {
                f: library.functions(),
                name: format!("driver ({})", library.path()),
                _library: Some(library),
            })
        }
        Ok("emulator") | Ok("") | Err(_) => match shared_emulator()? {
            Some(library) => Ok(Backend {
                f: library.functions(),
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
fn shared_emulator() -> Result<Option<Arc<AscendCl>>, String> {
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
fn f() -> PyResult<&'static AclFunctions> {
    Ok(&backend()?.f)
}

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
            None => ABSENT,
        }
    };
}

fn as_ptr(addr: usize) -> *mut c_void {
    addr as *mut c_void
}

/// The backend's name: `emulator` or `driver (<path>)`.
#[pyfunction]
fn backend_name() -> PyResult<String> {
    Ok(backend()?.name.clone())
}

#[pyfunction]
#[pyo3(signature = (config_path=None))]
fn init(config_path: Option<&str>) -> PyResult<i32> {
    let path = config_path.map(CString::new).transpose();
    let Ok(path) = path else {
        return Ok(AclError::INVALID_PARAM.code());
    };
    let p = path.as_ref().map_or(ptr::null(), |p| p.as_ptr());
    Ok(call!(f()?.aclInit, p))
}

#[pyfunction]
fn finalize() -> PyResult<i32> {
    Ok(call!(f()?.aclFinalize,))
}

#[pyfunction]
fn set_device(device_id: i32) -> PyResult<i32> {
    Ok(call!(f()?.aclrtSetDevice, device_id))
}

#[pyfunction]
fn reset_device(device_id: i32) -> PyResult<i32> {
    Ok(call!(f()?.aclrtResetDevice, device_id))
}

#[pyfunction]
fn reset_device_force(device_id: i32) -> PyResult<i32> {
    Ok(call!(f()?.aclrtResetDeviceForce, device_id))
}

#[pyfunction]
fn get_device() -> PyResult<(i32, i32)> {
    let mut d = -1;
    let ret = call!(f()?.aclrtGetDevice, &mut d);
    Ok((d, ret))
}

#[pyfunction]
fn get_device_count() -> PyResult<(u32, i32)> {
    let mut n = 0;
    let ret = call!(f()?.aclrtGetDeviceCount, &mut n);
    Ok((n, ret))
}

#[pyfunction]
fn get_run_mode() -> PyResult<(u32, i32)> {
    let mut m = 0;
    let ret = call!(f()?.aclrtGetRunMode, &mut m);
    Ok((m, ret))
}

#[pyfunction]
fn get_soc_name() -> PyResult<Option<String>> {
    let Some(func) = f()?.aclrtGetSocName else {
        return Ok(None);
    };
    // SAFETY: the documented prototype: no arguments, a NUL-terminated
    // string owned by the library, or NULL.
    let p = unsafe { func() };
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL: a NUL-terminated string the library keeps alive.
    Ok(Some(
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned(),
    ))
}

#[pyfunction]
fn get_version() -> PyResult<(i32, i32, i32, i32)> {
    let (mut a, mut b, mut c) = (0, 0, 0);
    let ret = call!(f()?.aclrtGetVersion, &mut a, &mut b, &mut c);
    Ok((a, b, c, ret))
}

/// `aclsysGetCANNVersion`: (dict of the version strings, ret).
#[pyfunction]
fn get_cann_version(py: Python<'_>, name: u32) -> PyResult<(Py<PyAny>, i32)> {
    let mut v = sys::aclCANNPackageVersion::default();
    let ret = call!(f()?.aclsysGetCANNVersion, name, &mut v);
    let d = PyDict::new(py);
    let text = |field: &[c_char]| {
        let bytes: Vec<u8> = field
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    if ret == 0 {
        d.set_item("version", text(&v.version))?;
        d.set_item("major_version", text(&v.majorVersion))?;
        d.set_item("minor_version", text(&v.minorVersion))?;
        d.set_item("release_version", text(&v.releaseVersion))?;
        d.set_item("patch_version", text(&v.patchVersion))?;
    }
    Ok((d.into_any().unbind(), ret))
}

#[pyfunction]
fn get_mem_info(attr: u32) -> PyResult<(usize, usize, i32)> {
    let (mut free, mut total) = (0, 0);
    let ret = call!(f()?.aclrtGetMemInfo, attr, &mut free, &mut total);
    Ok((free, total, ret))
}

#[pyfunction]
fn device_get_bare_tgid() -> PyResult<(i32, i32)> {
    let mut pid = 0;
    let ret = call!(f()?.aclrtDeviceGetBareTgid, &mut pid);
    Ok((pid, ret))
}

#[pyfunction]
fn synchronize_device() -> PyResult<i32> {
    Ok(call!(f()?.aclrtSynchronizeDevice,))
}

#[pyfunction]
fn synchronize_device_with_timeout(timeout: i32) -> PyResult<i32> {
    Ok(call!(f()?.aclrtSynchronizeDeviceWithTimeout, timeout))
}

#[pyfunction]
fn create_context(device_id: i32) -> PyResult<(usize, i32)> {
    let mut c: sys::aclrtContext = ptr::null_mut();
    let ret = call!(f()?.aclrtCreateContext, &mut c, device_id);
    Ok((c as usize, ret))
}

#[pyfunction]
fn destroy_context(context: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtDestroyContext, as_ptr(context)))
}

#[pyfunction]
fn set_context(context: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtSetCurrentContext, as_ptr(context)))
}

#[pyfunction]
fn get_context() -> PyResult<(usize, i32)> {
    let mut c: sys::aclrtContext = ptr::null_mut();
    let ret = call!(f()?.aclrtGetCurrentContext, &mut c);
    Ok((c as usize, ret))
}

#[pyfunction]
fn create_stream() -> PyResult<(usize, i32)> {
    let mut s: sys::aclrtStream = ptr::null_mut();
    let ret = call!(f()?.aclrtCreateStream, &mut s);
    Ok((s as usize, ret))
}

#[pyfunction]
fn destroy_stream(stream: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtDestroyStream, as_ptr(stream)))
}

#[pyfunction]
fn synchronize_stream(stream: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtSynchronizeStream, as_ptr(stream)))
}

#[pyfunction]
fn malloc(size: usize, policy: u32) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(f()?.aclrtMalloc, &mut p, size, policy);
    Ok((p as usize, ret))
}

#[pyfunction]
fn malloc_align32(size: usize, policy: u32) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(f()?.aclrtMallocAlign32, &mut p, size, policy);
    Ok((p as usize, ret))
}

#[pyfunction]
fn free(dev_ptr: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtFree, as_ptr(dev_ptr)))
}

#[pyfunction]
fn malloc_host(size: usize) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(f()?.aclrtMallocHost, &mut p, size);
    Ok((p as usize, ret))
}

#[pyfunction]
fn free_host(host_ptr: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtFreeHost, as_ptr(host_ptr)))
}

#[pyfunction]
fn memcpy(dst: usize, dest_max: usize, src: usize, count: usize, kind: u32) -> PyResult<i32> {
    Ok(call!(
        f()?.aclrtMemcpy,
        as_ptr(dst),
        dest_max,
        src as *const c_void,
        count,
        kind
    ))
}

#[pyfunction]
fn memcpy_async(
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: u32,
    stream: usize,
) -> PyResult<i32> {
    Ok(call!(
        f()?.aclrtMemcpyAsync,
        as_ptr(dst),
        dest_max,
        src as *const c_void,
        count,
        kind,
        as_ptr(stream)
    ))
}

#[pyfunction]
fn memset(dev_ptr: usize, max_count: usize, value: i32, count: usize) -> PyResult<i32> {
    Ok(call!(
        f()?.aclrtMemset,
        as_ptr(dev_ptr),
        max_count,
        value,
        count
    ))
}

/// `aclrtPhysicalMemProp` from its six fields.
type PropTuple = (u32, u32, u32, u32, u32, u64);

fn prop_of(p: PropTuple) -> sys::aclrtPhysicalMemProp {
    let (handle_type, allocation_type, mem_attr, id, type_, reserve) = p;
    sys::aclrtPhysicalMemProp {
        handle_type,
        allocation_type,
        mem_attr,
        location: sys::aclrtMemLocation { id, type_ },
        reserve,
    }
}

#[pyfunction]
fn malloc_physical(size: usize, prop: PropTuple, flags: u64) -> PyResult<(usize, i32)> {
    let p = prop_of(prop);
    let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
    let ret = call!(f()?.aclrtMallocPhysical, &mut h, size, &p, flags);
    Ok((h as usize, ret))
}

#[pyfunction]
fn free_physical(handle: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtFreePhysical, as_ptr(handle)))
}

#[pyfunction]
fn mem_get_allocation_granularity(prop: PropTuple, option: u32) -> PyResult<(usize, i32)> {
    let mut p = prop_of(prop);
    let mut g = 0;
    let ret = call!(
        f()?.aclrtMemGetAllocationGranularity,
        &mut p,
        option,
        &mut g
    );
    Ok((g, ret))
}

#[pyfunction]
fn reserve_mem_address(
    size: usize,
    alignment: usize,
    expect_ptr: usize,
    flags: u64,
) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(
        f()?.aclrtReserveMemAddress,
        &mut p,
        size,
        alignment,
        as_ptr(expect_ptr),
        flags
    );
    Ok((p as usize, ret))
}

#[pyfunction]
fn release_mem_address(vir_ptr: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtReleaseMemAddress, as_ptr(vir_ptr)))
}

#[pyfunction]
fn map_mem(vir_ptr: usize, size: usize, offset: usize, handle: usize, flags: u64) -> PyResult<i32> {
    Ok(call!(
        f()?.aclrtMapMem,
        as_ptr(vir_ptr),
        size,
        offset,
        as_ptr(handle),
        flags
    ))
}

#[pyfunction]
fn unmap_mem(vir_ptr: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtUnmapMem, as_ptr(vir_ptr)))
}

#[pyfunction]
fn mem_export_to_shareable_handle(
    handle: usize,
    handle_type: u32,
    flags: u64,
) -> PyResult<(u64, i32)> {
    let mut s = 0u64;
    let ret = call!(
        f()?.aclrtMemExportToShareableHandle,
        as_ptr(handle),
        handle_type,
        flags,
        &mut s
    );
    Ok((s, ret))
}

#[pyfunction]
fn mem_set_pid_to_shareable_handle(shareable_handle: u64, pids: Vec<i32>) -> PyResult<i32> {
    let mut pids = pids;
    let p = sys::pid_list_ptr(&mut pids);
    Ok(call!(
        f()?.aclrtMemSetPidToShareableHandle,
        shareable_handle,
        p,
        pids.len()
    ))
}

#[pyfunction]
fn mem_import_from_shareable_handle(
    shareable_handle: u64,
    device_id: i32,
) -> PyResult<(usize, i32)> {
    let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
    let ret = call!(
        f()?.aclrtMemImportFromShareableHandle,
        shareable_handle,
        device_id,
        &mut h
    );
    Ok((h as usize, ret))
}

#[pyfunction]
fn mem_get_address_range(ptr_: usize) -> PyResult<(usize, usize, i32)> {
    let mut base: *mut c_void = ptr::null_mut();
    let mut size = 0;
    let ret = call!(
        f()?.aclrtMemGetAddressRange,
        as_ptr(ptr_),
        &mut base,
        &mut size
    );
    Ok((base as usize, size, ret))
}

#[pyfunction]
fn ipc_mem_get_export_key(dev_ptr: usize, size: usize, flags: u64) -> PyResult<(String, i32)> {
    let mut key = [0 as c_char; sys::ACL_IPC_KEY_LEN];
    let ret = call!(
        f()?.aclrtIpcMemGetExportKey,
        as_ptr(dev_ptr),
        size,
        key.as_mut_ptr(),
        key.len(),
        flags
    );
    let bytes: Vec<u8> = key
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    Ok((String::from_utf8_lossy(&bytes).into_owned(), ret))
}

fn key_of(key: &str) -> Option<CString> {
    CString::new(key).ok()
}

#[pyfunction]
fn ipc_mem_set_import_pid(key: &str, pids: Vec<i32>) -> PyResult<i32> {
    let Some(k) = key_of(key) else {
        return Ok(AclError::INVALID_PARAM.code());
    };
    let mut pids = pids;
    let p = sys::pid_list_ptr(&mut pids);
    Ok(call!(
        f()?.aclrtIpcMemSetImportPid,
        k.as_ptr(),
        p,
        pids.len()
    ))
}

#[pyfunction]
fn ipc_mem_import_by_key(key: &str, flags: u64) -> PyResult<(usize, i32)> {
    let Some(k) = key_of(key) else {
        return Ok((0, AclError::INVALID_PARAM.code()));
    };
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(f()?.aclrtIpcMemImportByKey, &mut p, k.as_ptr(), flags);
    Ok((p as usize, ret))
}

#[pyfunction]
fn ipc_mem_close(key: &str) -> PyResult<i32> {
    let Some(k) = key_of(key) else {
        return Ok(AclError::INVALID_PARAM.code());
    };
    Ok(call!(f()?.aclrtIpcMemClose, k.as_ptr()))
}

mod memory;
mod rules;

use memory::*;
use rules::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($f:ident),* $(,)?) => { $( m.add_function(wrap_pyfunction!($f, m)?)?; )* };
    }
    add!(
        backend_name,
        init,
        finalize,
        set_device,
        reset_device,
        reset_device_force,
        get_device,
        get_device_count,
        get_run_mode,
        get_soc_name,
        get_version,
        get_cann_version,
        get_mem_info,
        device_get_bare_tgid,
        synchronize_device,
        synchronize_device_with_timeout,
        create_context,
        destroy_context,
        set_context,
        get_context,
        create_stream,
        destroy_stream,
        synchronize_stream,
        malloc,
        malloc_align32,
        free,
        malloc_host,
        free_host,
        memcpy,
        memcpy_async,
        memset,
        malloc_physical,
        free_physical,
        mem_get_allocation_granularity,
        reserve_mem_address,
        release_mem_address,
        map_mem,
        unmap_mem,
        mem_export_to_shareable_handle,
        mem_set_pid_to_shareable_handle,
        mem_import_from_shareable_handle,
        mem_get_address_range,
        ipc_mem_get_export_key,
        ipc_mem_set_import_pid,
        ipc_mem_import_by_key,
        ipc_mem_close,
        read_memory,
        write_memory,
        check,
        matrix,
        constants,
        cann_releases,
    );
    Ok(())
}
