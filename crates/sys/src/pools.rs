//! The C types and prototypes of the stream-ordered memory pools
//! (`acl_rt_memory_soma.h`, CANN 9.0/9.1) and of managed memory
//! (`acl_rt.h`, 9.0/9.1): the one Rust copy of `aclrtMemPoolProps`'s and
//! `aclrtMemManagedLocation`'s layouts, and the function pointer types the
//! driver resolves by name and the emulated library's functions are
//! checked against. Not in [`with_acl_functions!`](crate::with_acl_functions):
//! the pools are framework functions of the catalogue
//! (`catalogue/memory.rs`), absent before 9.0 and outside Atlas A2.

use core::ffi::c_void;

use crate::{aclError, aclrtStream};
use aclmem_core::RawMemLocation;

/// `aclrtMemPool`: an opaque pool handle.
pub type aclrtMemPool = *mut c_void;
/// `aclrtMemPoolAttr`.
pub type aclrtMemPoolAttr = u32;

/// `aclrtMemPoolProps`: `{ aclrtMemAllocationType allocType;
/// aclrtMemHandleType handleType; aclrtMemLocation location; size_t
/// maxSize; unsigned char reserved[32]; }` (56 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct aclrtMemPoolProps {
    /// `ACL_MEM_ALLOCATION_TYPE_PINNED` (0) only.
    pub alloc_type: u32,
    /// `ACL_MEM_HANDLE_TYPE_NONE` (0), or `POSIX` (2) from CANN 9.1.
    pub handle_type: u32,
    /// `ACL_MEM_LOCATION_TYPE_DEVICE` (1) and the device's id.
    pub location: RawMemLocation,
    /// The pool's size; 0 is the device's memory.
    pub max_size: usize,
    /// Must be zero.
    pub reserved: [u8; 32],
}

/// `aclrtMemPoolCreate`.
pub type aclrtMemPoolCreate_t =
    unsafe extern "C" fn(mem_pool: *mut aclrtMemPool, props: *const aclrtMemPoolProps) -> aclError;
/// `aclrtMemPoolDestroy`.
pub type aclrtMemPoolDestroy_t = unsafe extern "C" fn(mem_pool: aclrtMemPool) -> aclError;
/// `aclrtMemPoolSetAttr` and `aclrtMemPoolGetAttr`.
pub type aclrtMemPoolAttr_t = unsafe extern "C" fn(
    mem_pool: aclrtMemPool,
    attr: aclrtMemPoolAttr,
    value: *mut c_void,
) -> aclError;
/// `aclrtMemPoolMallocAsync`.
pub type aclrtMemPoolMallocAsync_t = unsafe extern "C" fn(
    ptr: *mut *mut c_void,
    size: usize,
    mem_pool: aclrtMemPool,
    stream: aclrtStream,
) -> aclError;
/// `aclrtMemPoolFreeAsync`.
pub type aclrtMemPoolFreeAsync_t =
    unsafe extern "C" fn(ptr: *mut c_void, stream: aclrtStream) -> aclError;
/// `aclrtMemManagedLocation`: `{ aclrtMemManagedLocationType type;
/// int32_t id; }` (8 bytes; the type first, unlike `aclrtMemLocation`),
/// passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct aclrtMemManagedLocation {
    /// `ACL_MEM_LOCATIONTYPE_INVALID` 0, `DEVICE` 1, `HOST` 2,
    /// `HOST_NUMA` 3, `HOST_NUMA_CURRENT` 4.
    pub type_: u32,
    /// The device or NUMA node.
    pub id: i32,
}

/// `aclrtMemManagedAdvise` (CANN 9.1).
pub type aclrtMemManagedAdvise_t = unsafe extern "C" fn(
    ptr: *const c_void,
    size: u64,
    advise: u32,
    location: aclrtMemManagedLocation,
) -> aclError;
/// `aclrtMemManagedPrefetchAsync` (CANN 9.1).
pub type aclrtMemManagedPrefetchAsync_t = unsafe extern "C" fn(
    ptr: *const c_void,
    size: usize,
    location: aclrtMemManagedLocation,
    flags: u32,
    stream: aclrtStream,
) -> aclError;
/// `aclrtMemAllocManaged` (managed memory, CANN 9.0; freed with
/// `aclrtFree`).
pub type aclrtMemAllocManaged_t =
    unsafe extern "C" fn(ptr: *mut *mut c_void, size: u64, flag: u32) -> aclError;
/// `aclrtMemPoolTrimTo`.
pub type aclrtMemPoolTrimTo_t =
    unsafe extern "C" fn(mem_pool: aclrtMemPool, min_bytes_to_keep: usize) -> aclError;

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{offset_of, size_of};

    #[test]
    fn the_props_have_the_headers_layout() {
        assert_eq!(size_of::<aclrtMemPoolProps>(), 56);
        assert_eq!(offset_of!(aclrtMemPoolProps, location), 8);
        assert_eq!(offset_of!(aclrtMemPoolProps, max_size), 16);
        assert_eq!(offset_of!(aclrtMemPoolProps, reserved), 24);
        assert_eq!(size_of::<aclrtMemManagedLocation>(), 8);
        assert_eq!(offset_of!(aclrtMemManagedLocation, id), 4);
    }
}
