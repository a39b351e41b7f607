//! Memory calls of the catalogue's framework functions that pyACL binds
//! (`acl.rt.memcpy2d`, `memcpy2d_async`, `memset_async`, `malloc_cached`,
//! `mem_flush`, `mem_invalidate`: pyACL's `rt_memory.cpp`) and those it
//! does not, for `aclmem.rt` (`aclrtMemsetD32(Async)`,
//! `aclrtMemManagedAdvise`, `aclrtMemManagedPrefetchAsync`), found by name
//! in the backend. Each prototype is written once here and checked against
//! the emulated library's function at compile time.

use std::ffi::c_void;
use std::ptr;

use aclmem_sys::pools::{
    aclrtMemManagedAdvise_t, aclrtMemManagedLocation, aclrtMemManagedPrefetchAsync_t,
};
use aclmem_sys::{aclError, aclrtStream};
use pyo3::prelude::*;

use crate::backend::{as_ptr, call_by_name};

type Memcpy2d =
    unsafe extern "C" fn(*mut c_void, usize, *const c_void, usize, usize, usize, u32) -> aclError;
type Memcpy2dAsync = unsafe extern "C" fn(
    *mut c_void,
    usize,
    *const c_void,
    usize,
    usize,
    usize,
    u32,
    aclrtStream,
) -> aclError;
type MemsetAsync = unsafe extern "C" fn(*mut c_void, usize, i32, usize, aclrtStream) -> aclError;
type MallocCached = unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> aclError;
type CacheOp = unsafe extern "C" fn(*mut c_void, usize) -> aclError;
type MemsetD32 = unsafe extern "C" fn(*mut c_void, usize, u32, usize) -> aclError;
type MemsetD32Async = unsafe extern "C" fn(*mut c_void, usize, u32, usize, aclrtStream) -> aclError;

// The prototypes above are the emulated library's.
const _: Memcpy2d = aclmem_emu_capi::aclrtMemcpy2d;
const _: Memcpy2dAsync = aclmem_emu_capi::aclrtMemcpy2dAsync;
const _: MemsetAsync = aclmem_emu_capi::aclrtMemsetAsync;
const _: MallocCached = aclmem_emu_capi::aclrtMallocCached;
const _: CacheOp = aclmem_emu_capi::aclrtMemFlush;
const _: CacheOp = aclmem_emu_capi::aclrtMemInvalidate;
const _: MemsetD32 = aclmem_emu_capi::aclrtMemsetD32;
const _: MemsetD32Async = aclmem_emu_capi::aclrtMemsetD32Async;

#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn memcpy2d(
    dst: usize,
    dpitch: usize,
    src: usize,
    spitch: usize,
    width: usize,
    height: usize,
    kind: u32,
) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemcpy2d" as Memcpy2d,
        as_ptr(dst),
        dpitch,
        as_ptr(src),
        spitch,
        width,
        height,
        kind
    ))
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn memcpy2d_async(
    dst: usize,
    dpitch: usize,
    src: usize,
    spitch: usize,
    width: usize,
    height: usize,
    kind: u32,
    stream: usize,
) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemcpy2dAsync" as Memcpy2dAsync,
        as_ptr(dst),
        dpitch,
        as_ptr(src),
        spitch,
        width,
        height,
        kind,
        as_ptr(stream)
    ))
}

#[pyfunction]
pub(crate) fn memset_async(
    dev_ptr: usize,
    max_count: usize,
    value: i32,
    count: usize,
    stream: usize,
) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemsetAsync" as MemsetAsync,
        as_ptr(dev_ptr),
        max_count,
        value,
        count,
        as_ptr(stream)
    ))
}

/// `aclrtMallocCached`: (ptr, ret).
#[pyfunction]
pub(crate) fn malloc_cached(size: usize, policy: u32) -> PyResult<(usize, i32)> {
    let mut p: *mut c_void = ptr::null_mut();
    let ret = call_by_name!(c"aclrtMallocCached" as MallocCached, &mut p, size, policy);
    Ok((p as usize, ret))
}

#[pyfunction]
pub(crate) fn mem_flush(dev_ptr: usize, size: usize) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemFlush" as CacheOp,
        as_ptr(dev_ptr),
        size
    ))
}

#[pyfunction]
pub(crate) fn mem_invalidate(dev_ptr: usize, size: usize) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemInvalidate" as CacheOp,
        as_ptr(dev_ptr),
        size
    ))
}

#[pyfunction]
pub(crate) fn memset_d32(ptr: usize, mem_size: usize, value: u32, n: usize) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemsetD32" as MemsetD32,
        as_ptr(ptr),
        mem_size,
        value,
        n
    ))
}

#[pyfunction]
pub(crate) fn memset_d32_async(
    ptr: usize,
    mem_size: usize,
    value: u32,
    n: usize,
    stream: usize,
) -> PyResult<i32> {
    Ok(call_by_name!(
        c"aclrtMemsetD32Async" as MemsetD32Async,
        as_ptr(ptr),
        mem_size,
        value,
        n,
        as_ptr(stream)
    ))
}

/// `aclrtMemManagedAdvise(ptr, size, advise, {type, id})`.
#[pyfunction]
pub(crate) fn mem_managed_advise(
    ptr: usize,
    size: u64,
    advise: u32,
    location_type: u32,
    location_id: i32,
) -> PyResult<i32> {
    let location = aclrtMemManagedLocation {
        type_: location_type,
        id: location_id,
    };
    Ok(call_by_name!(
        c"aclrtMemManagedAdvise" as aclrtMemManagedAdvise_t,
        as_ptr(ptr),
        size,
        advise,
        location
    ))
}

/// `aclrtMemManagedPrefetchAsync(ptr, size, {type, id}, flags, stream)`.
#[pyfunction]
pub(crate) fn mem_managed_prefetch_async(
    ptr: usize,
    size: usize,
    location_type: u32,
    location_id: i32,
    flags: u32,
    stream: usize,
) -> PyResult<i32> {
    let location = aclrtMemManagedLocation {
        type_: location_type,
        id: location_id,
    };
    Ok(call_by_name!(
        c"aclrtMemManagedPrefetchAsync" as aclrtMemManagedPrefetchAsync_t,
        as_ptr(ptr),
        size,
        location,
        flags,
        as_ptr(stream)
    ))
}
