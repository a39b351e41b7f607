//! IPC memory by key: exporting a device range under a key, allowing
//! processes to import it, importing it and closing it.

use std::ffi::{CString, c_char, c_void};
use std::ptr;

use aclmem_core::AclError;
use aclmem_sys as sys;
use pyo3::prelude::*;

use crate::backend::{as_ptr, call, f};

#[pyfunction]
pub(crate) fn ipc_mem_get_export_key(
    dev_ptr: usize,
    size: usize,
    flags: u64,
) -> PyResult<(String, i32)> {
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
pub(crate) fn ipc_mem_set_import_pid(key: &str, pids: Vec<i32>) -> PyResult<i32> {
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
pub(crate) fn ipc_mem_import_by_key(key: &str, flags: u64) -> PyResult<(usize, i32)> {
    let Some(k) = key_of(key) else {
        return Ok((0, AclError::INVALID_PARAM.code()));
    };
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(f()?.aclrtIpcMemImportByKey, &mut p, k.as_ptr(), flags);
    Ok((p as usize, ret))
}

#[pyfunction]
pub(crate) fn ipc_mem_close(key: &str) -> PyResult<i32> {
    let Some(k) = key_of(key) else {
        return Ok(AclError::INVALID_PARAM.code());
    };
    Ok(call!(f()?.aclrtIpcMemClose, k.as_ptr()))
}
