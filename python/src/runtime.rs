//! The runtime's calls: `aclInit` and `aclFinalize`, devices, versions and
//! memory information, contexts, streams and synchronisation.

use std::ffi::{CStr, CString, c_char};
use std::ptr;

use aclmem_core::AclError;
use aclmem_sys as sys;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::backend::{as_ptr, call, f};

#[pyfunction]
#[pyo3(signature = (config_path=None))]
pub(crate) fn init(config_path: Option<&str>) -> PyResult<i32> {
    let path = config_path.map(CString::new).transpose();
    let Ok(path) = path else {
        return Ok(AclError::INVALID_PARAM.code());
    };
    let p = path.as_ref().map_or(ptr::null(), |p| p.as_ptr());
    Ok(call!(f()?.aclInit, p))
}

#[pyfunction]
pub(crate) fn finalize() -> PyResult<i32> {
    Ok(call!(f()?.aclFinalize,))
}

#[pyfunction]
pub(crate) fn set_device(device_id: i32) -> PyResult<i32> {
    Ok(call!(f()?.aclrtSetDevice, device_id))
}

#[pyfunction]
pub(crate) fn reset_device(device_id: i32) -> PyResult<i32> {
    Ok(call!(f()?.aclrtResetDevice, device_id))
}

#[pyfunction]
pub(crate) fn reset_device_force(device_id: i32) -> PyResult<i32> {
    Ok(call!(f()?.aclrtResetDeviceForce, device_id))
}

#[pyfunction]
pub(crate) fn get_device() -> PyResult<(i32, i32)> {
    let mut d = -1;
    let ret = call!(f()?.aclrtGetDevice, &mut d);
    Ok((d, ret))
}

#[pyfunction]
pub(crate) fn get_device_count() -> PyResult<(u32, i32)> {
    let mut n = 0;
    let ret = call!(f()?.aclrtGetDeviceCount, &mut n);
    Ok((n, ret))
}

#[pyfunction]
pub(crate) fn get_run_mode() -> PyResult<(u32, i32)> {
    let mut m = 0;
    let ret = call!(f()?.aclrtGetRunMode, &mut m);
    Ok((m, ret))
}

#[pyfunction]
pub(crate) fn get_soc_name() -> PyResult<Option<String>> {
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
pub(crate) fn get_version() -> PyResult<(i32, i32, i32, i32)> {
    let (mut a, mut b, mut c) = (0, 0, 0);
    let ret = call!(f()?.aclrtGetVersion, &mut a, &mut b, &mut c);
    Ok((a, b, c, ret))
}

/// `aclsysGetCANNVersion`: (dict of the version strings, ret).
#[pyfunction]
pub(crate) fn get_cann_version(py: Python<'_>, name: u32) -> PyResult<(Py<PyAny>, i32)> {
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
pub(crate) fn get_mem_info(attr: u32) -> PyResult<(usize, usize, i32)> {
    let (mut free, mut total) = (0, 0);
    let ret = call!(f()?.aclrtGetMemInfo, attr, &mut free, &mut total);
    Ok((free, total, ret))
}

#[pyfunction]
pub(crate) fn device_get_bare_tgid() -> PyResult<(i32, i32)> {
    let mut pid = 0;
    let ret = call!(f()?.aclrtDeviceGetBareTgid, &mut pid);
    Ok((pid, ret))
}

#[pyfunction]
pub(crate) fn synchronize_device() -> PyResult<i32> {
    Ok(call!(f()?.aclrtSynchronizeDevice,))
}

#[pyfunction]
pub(crate) fn synchronize_device_with_timeout(timeout: i32) -> PyResult<i32> {
    Ok(call!(f()?.aclrtSynchronizeDeviceWithTimeout, timeout))
}

#[pyfunction]
pub(crate) fn create_context(device_id: i32) -> PyResult<(usize, i32)> {
    let mut c: sys::aclrtContext = ptr::null_mut();
    let ret = call!(f()?.aclrtCreateContext, &mut c, device_id);
    Ok((c as usize, ret))
}

#[pyfunction]
pub(crate) fn destroy_context(context: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtDestroyContext, as_ptr(context)))
}

#[pyfunction]
pub(crate) fn set_context(context: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtSetCurrentContext, as_ptr(context)))
}

#[pyfunction]
pub(crate) fn get_context() -> PyResult<(usize, i32)> {
    let mut c: sys::aclrtContext = ptr::null_mut();
    let ret = call!(f()?.aclrtGetCurrentContext, &mut c);
    Ok((c as usize, ret))
}

#[pyfunction]
pub(crate) fn create_stream() -> PyResult<(usize, i32)> {
    let mut s: sys::aclrtStream = ptr::null_mut();
    let ret = call!(f()?.aclrtCreateStream, &mut s);
    Ok((s as usize, ret))
}

#[pyfunction]
pub(crate) fn destroy_stream(stream: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtDestroyStream, as_ptr(stream)))
}

#[pyfunction]
pub(crate) fn synchronize_stream(stream: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtSynchronizeStream, as_ptr(stream)))
}
