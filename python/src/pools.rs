//! Stream-ordered memory pools (`aclrtMemPool*`, CANN 9.0/9.1) and managed
//! memory (`aclrtMemAllocManaged`, 9.0): functions outside the typed table,
//! found by name in the backend ([`symbol`]) with the prototypes of
//! `aclmem_sys::pools`, bound under the names pyACL gives C functions
//! (pyACL itself binds none of them; `aclmem.rt` exposes these).

use std::ffi::c_void;
use std::ptr;

use aclmem_sys::pools::{
    aclrtMemAllocManaged_t, aclrtMemPool, aclrtMemPoolAttr_t, aclrtMemPoolCreate_t,
    aclrtMemPoolDestroy_t, aclrtMemPoolFreeAsync_t, aclrtMemPoolMallocAsync_t, aclrtMemPoolProps,
    aclrtMemPoolTrimTo_t,
};
use pyo3::prelude::*;

use crate::backend::{as_ptr, call_by_name};

/// `aclrtMemPoolCreate` with the fields of `aclrtMemPoolProps`: (pool,
/// ret).
#[pyfunction]
pub(crate) fn mem_pool_create(
    alloc_type: u32,
    handle_type: u32,
    location_type: u32,
    location_id: u32,
    max_size: usize,
) -> PyResult<(usize, i32)> {
    let mut props = aclrtMemPoolProps {
        alloc_type,
        handle_type,
        max_size,
        ..aclrtMemPoolProps::default()
    };
    props.location.type_ = location_type;
    props.location.id = location_id;
    let mut pool: aclrtMemPool = ptr::null_mut();
    let ret = call_by_name!(
        c"aclrtMemPoolCreate" as aclrtMemPoolCreate_t,
        &mut pool,
        &props
    );
    Ok((pool as usize, ret))
}

#[pyfunction]
pub(crate) fn mem_pool_destroy(pool: usize) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemPoolDestroy" as aclrtMemPoolDestroy_t,
        as_ptr(pool)
    ))
}

/// Whether attribute `attr` is a `uint32_t` (the reuse switches, 1–3).
fn narrow(attr: u32) -> bool {
    (1..=3).contains(&attr)
}

/// `aclrtMemPoolSetAttr`: `value` as the attribute's C type (`uint32_t`
/// for the reuse switches, else `uint64_t`).
#[pyfunction]
pub(crate) fn mem_pool_set_attr(pool: usize, attr: u32, value: u64) -> PyResult<i32> {
    let mut wide = value;
    let mut small = value as u32;
    let p: *mut c_void = if narrow(attr) {
        (&raw mut small).cast()
    } else {
        (&raw mut wide).cast()
    };
    Ok(call_by_name!(
        c"aclrtMemPoolSetAttr" as aclrtMemPoolAttr_t,
        as_ptr(pool),
        attr,
        p
    ))
}

/// `aclrtMemPoolGetAttr`: (value, ret).
#[pyfunction]
pub(crate) fn mem_pool_get_attr(pool: usize, attr: u32) -> PyResult<(u64, i32)> {
    let mut out = [0u8; 8];
    let ret = call_by_name!(
        c"aclrtMemPoolGetAttr" as aclrtMemPoolAttr_t,
        as_ptr(pool),
        attr,
        out.as_mut_ptr().cast()
    );
    let value = if narrow(attr) {
        u64::from(u32::from_ne_bytes([out[0], out[1], out[2], out[3]]))
    } else {
        u64::from_ne_bytes(out)
    };
    Ok((value, ret))
}

/// `aclrtMemPoolMallocAsync`: (ptr, ret).
#[pyfunction]
pub(crate) fn mem_pool_malloc_async(
    size: usize,
    pool: usize,
    stream: usize,
) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call_by_name!(
        c"aclrtMemPoolMallocAsync" as aclrtMemPoolMallocAsync_t,
        &mut p,
        size,
        as_ptr(pool),
        as_ptr(stream)
    );
    Ok((p as usize, ret))
}

#[pyfunction]
pub(crate) fn mem_pool_free_async(ptr: usize, stream: usize) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemPoolFreeAsync" as aclrtMemPoolFreeAsync_t,
        as_ptr(ptr),
        as_ptr(stream)
    ))
}

#[pyfunction]
pub(crate) fn mem_pool_trim_to(pool: usize, min_bytes_to_keep: usize) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemPoolTrimTo" as aclrtMemPoolTrimTo_t,
        as_ptr(pool),
        min_bytes_to_keep
    ))
}

/// `aclrtMemAllocManaged`: (ptr, ret); freed with `free`.
#[pyfunction]
pub(crate) fn mem_alloc_managed(size: u64, flag: u32) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call_by_name!(
        c"aclrtMemAllocManaged" as aclrtMemAllocManaged_t,
        &mut p,
        size,
        flag
    );
    Ok((p as usize, ret))
}
