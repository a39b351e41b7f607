//! Virtual memory management: physical handles, reserved addresses and
//! mappings, and shareable handles that carry physical memory to other
//! processes.

use std::ffi::c_void;
use std::ptr;

use aclmem_sys as sys;
use pyo3::prelude::*;

use crate::backend::{as_ptr, call, f};

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
pub(crate) fn malloc_physical(size: usize, prop: PropTuple, flags: u64) -> PyResult<(usize, i32)> {
    let p = prop_of(prop);
    let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
    let ret = call!(f()?.aclrtMallocPhysical, &mut h, size, &p, flags);
    Ok((h as usize, ret))
}

#[pyfunction]
pub(crate) fn free_physical(handle: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtFreePhysical, as_ptr(handle)))
}

#[pyfunction]
pub(crate) fn mem_get_allocation_granularity(
    prop: PropTuple,
    option: u32,
) -> PyResult<(usize, i32)> {
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
pub(crate) fn reserve_mem_address(
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
pub(crate) fn release_mem_address(vir_ptr: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtReleaseMemAddress, as_ptr(vir_ptr)))
}

#[pyfunction]
pub(crate) fn map_mem(
    vir_ptr: usize,
    size: usize,
    offset: usize,
    handle: usize,
    flags: u64,
) -> PyResult<i32> {
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
pub(crate) fn unmap_mem(vir_ptr: usize) -> PyResult<i32> {
    Ok(call!(f()?.aclrtUnmapMem, as_ptr(vir_ptr)))
}

#[pyfunction]
pub(crate) fn mem_export_to_shareable_handle(
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
pub(crate) fn mem_set_pid_to_shareable_handle(
    shareable_handle: u64,
    pids: Vec<i32>,
) -> PyResult<i32> {
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
pub(crate) fn mem_import_from_shareable_handle(
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
pub(crate) fn mem_get_address_range(ptr_: usize) -> PyResult<(usize, usize, i32)> {
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
