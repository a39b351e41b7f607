//! Device and host blocks (`aclrtMalloc`, `aclrtMallocHost` and their
//! frees), copies and memsets.

use std::ffi::c_void;
use std::ptr;

use pyo3::prelude::*;

use crate::backend::{as_ptr, call, f};

#[pyfunction]
pub(crate) fn malloc(size: usize, policy: u32) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(f()?.aclrtMalloc, &mut p, size, policy);
    Ok((p as usize, ret))
}

#[pyfunction]
pub(crate) fn malloc_align32(size: usize, policy: u32) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(f()?.aclrtMallocAlign32, &mut p, size, policy);
    Ok((p as usize, ret))
}

#[pyfunction]
pub(crate) fn free(dev_ptr: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtFree, as_ptr(dev_ptr)))
}

#[pyfunction]
pub(crate) fn malloc_host(size: usize) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call!(f()?.aclrtMallocHost, &mut p, size);
    Ok((p as usize, ret))
}

#[pyfunction]
pub(crate) fn free_host(host_ptr: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtFreeHost, as_ptr(host_ptr)))
}

#[pyfunction]
pub(crate) fn memcpy(
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: u32,
) -> PyResult<i32> {
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
pub(crate) fn memcpy_async(
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
pub(crate) fn memset(dev_ptr: usize, max_count: usize, value: i32, count: usize) -> PyResult<i32> {
    Ok(call!(
        f()?.aclrtMemset,
        as_ptr(dev_ptr),
        max_count,
        value,
        count
    ))
}
