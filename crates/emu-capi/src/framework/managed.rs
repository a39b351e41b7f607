//! Managed (unified) memory and peers: `aclrtMemAllocManaged`,
//! `aclrtMemP2PMap` (CANN 9.0), `aclrtMemManagedAdvise`,
//! `aclrtMemManagedGetAttr(s)`, `aclrtMemManagedPrefetch(Batch)Async`
//! (9.1), and `aclrtDevicePeerAccessStatus`.
//!
//! Marshalling only: the ACL layer's checks (100000) here, the runtime's
//! and the memory in the engine (`calls/managed.rs`).

use std::ffi::c_void;

use aclmem_core::AclError;
use aclmem_sys::aclrtStream;

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `aclrtMemManagedLocation`: the one Rust copy of its layout,
/// `aclmem_sys`'s.
pub use aclmem_sys::pools::aclrtMemManagedLocation;

// The prototypes the driver resolves by name.
const _: aclmem_sys::pools::aclrtMemManagedAdvise_t = aclrtMemManagedAdvise;
const _: aclmem_sys::pools::aclrtMemManagedPrefetchAsync_t = aclrtMemManagedPrefetchAsync;

/// `ACL_RT_MEM_ATTACH_GLOBAL`.
const ATTACH_GLOBAL: u32 = 0x01;

/// The most entries read from one array (more is 100000).
const MAX_ENTRIES: usize = 1 << 24;

// The prototype the driver and the Python module resolve by name.
const _: aclmem_sys::pools::aclrtMemAllocManaged_t = aclrtMemAllocManaged;

/// `aclError aclrtMemAllocManaged(void** ptr, uint64_t size, uint32_t
/// flag)`: ptr NULL or a flag other than `ACL_RT_MEM_ATTACH_GLOBAL`
/// 100000; `size` 0 107000 (the runtime's); memory both the host and the
/// device reach, rounded up to 2 MiB, freed with `aclrtFree`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemAllocManaged(
    ptr: *mut *mut c_void,
    size: u64,
    flag: u32,
) -> AclErrorCode {
    guard("aclrtMemAllocManaged", || {
        shared::in_release("aclrtMemAllocManaged")?;
        if ptr.is_null() || flag != ATTACH_GLOBAL {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            let addr = g.emu.malloc_managed(size)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(ptr, addr as *mut c_void, || {
                    let _ = g.emu.free_device(addr);
                })
            }
        })
    })
}

/// `aclError aclrtMemManagedAdvise(const void* const ptr, uint64_t size,
/// aclrtMemManagedAdviseType advise, aclrtMemManagedLocation location)`:
/// ptr NULL or size 0 100000; recorded for `aclrtMemManagedGetAttr(s)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemManagedAdvise(
    ptr: *const c_void,
    size: u64,
    advise: u32,
    location: aclrtMemManagedLocation,
) -> AclErrorCode {
    guard("aclrtMemManagedAdvise", || {
        shared::in_release("aclrtMemManagedAdvise")?;
        if ptr.is_null() || size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let size = usize::try_from(size).map_err(|_| AclError::RT_PARAM_INVALID)?;
        with_global(|g| {
            g.emu
                .managed_advise(ptr as usize, size, advise, (location.type_, location.id))
        })
    })
}

/// One attribute written into the caller's `data` of `data_size` bytes.
fn get_attr(
    attribute: u32,
    ptr: usize,
    size: usize,
    data: *mut c_void,
    data_size: usize,
) -> Result<(), AclError> {
    let bytes = with_global(|g| g.emu.managed_attr(attribute, ptr, size, data_size))?;
    for (i, chunk) in bytes.chunks_exact(4).enumerate() {
        let word = i32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        // SAFETY: the C caller's buffer of `data_size` bytes, written
        // through the kernel-checked path.
        unsafe { cptr::write(data.cast::<i32>().wrapping_add(i), word)? };
    }
    Ok(())
}

/// `aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute
/// attribute, const void* ptr, size_t size, void* data, size_t
/// dataSize)`: ptr or data NULL, size 0 100000; the attribute of the range
/// (`aclmem_emu`'s `managed_attr`).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemManagedGetAttr(
    attribute: u32,
    ptr: *const c_void,
    size: usize,
    data: *mut c_void,
    data_size: usize,
) -> AclErrorCode {
    guard("aclrtMemManagedGetAttr", || {
        shared::in_release("aclrtMemManagedGetAttr")?;
        if ptr.is_null() || data.is_null() || size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        get_attr(attribute, ptr as usize, size, data, data_size)
    })
}

/// `aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute*
/// attributes, size_t numAttributes, const void* ptr, size_t size, void**
/// data, size_t* dataSizes)`: ptr, attributes, data or dataSizes NULL, size
/// 0 100000; an attribute outside 1..=8 107000 (all are checked first);
/// then each as `aclrtMemManagedGetAttr`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemManagedGetAttrs(
    attributes: *mut u32,
    num_attributes: usize,
    ptr: *const c_void,
    size: usize,
    data: *mut *mut c_void,
    data_sizes: *mut usize,
) -> AclErrorCode {
    guard("aclrtMemManagedGetAttrs", || {
        shared::in_release("aclrtMemManagedGetAttrs")?;
        if ptr.is_null()
            || attributes.is_null()
            || data.is_null()
            || data_sizes.is_null()
            || size == 0
        {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's arrays of `num_attributes` entries, read
        // through the kernel-checked path.
        let (attrs, outs, sizes) = unsafe {
            (
                cptr::read_array(
                    attributes.cast_const(),
                    num_attributes,
                    MAX_ENTRIES,
                    AclError::INVALID_PARAM,
                )?,
                cptr::read_array(
                    data.cast_const(),
                    num_attributes,
                    MAX_ENTRIES,
                    AclError::INVALID_PARAM,
                )?,
                cptr::read_array(
                    data_sizes.cast_const(),
                    num_attributes,
                    MAX_ENTRIES,
                    AclError::INVALID_PARAM,
                )?,
            )
        };
        if attrs.iter().any(|a| !(1..=8).contains(a)) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        for ((&a, &out), &n) in attrs.iter().zip(&outs).zip(&sizes) {
            if out.is_null() {
                return Err(AclError::INVALID_PARAM);
            }
            get_attr(a, ptr as usize, size, out, n)?;
        }
        Ok(())
    })
}

/// `aclError aclrtMemManagedPrefetchAsync(const void* ptr, size_t size,
/// aclrtMemManagedLocation location, uint32_t flags, aclrtStream stream)`:
/// ptr NULL, size 0 or flags not 0 100000; recorded as the range's last
/// prefetch (NULL stream: the default one).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemManagedPrefetchAsync(
    ptr: *const c_void,
    size: usize,
    location: aclrtMemManagedLocation,
    flags: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemManagedPrefetchAsync", || {
        shared::in_release("aclrtMemManagedPrefetchAsync")?;
        if ptr.is_null() || size == 0 || flags != 0 {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            g.emu.managed_prefetch(
                ptr as usize,
                size,
                (location.type_, location.id),
                stream as usize as u64,
            )
        })
    })
}

/// `aclError aclrtMemManagedPrefetchBatchAsync(const void** ptrs, size_t*
/// sizes, size_t count, aclrtMemManagedLocation* prefetchLocs, size_t*
/// prefetchLocIdxs, size_t numPrefetchLocs, uint64_t flags, aclrtStream
/// stream)`: ACL layer, 100000: an array NULL, count or numPrefetchLocs 0,
/// flags not 0, count below numPrefetchLocs. Runtime, 107000: the first
/// index not 0, an index not increasing or not below count, a NULL
/// pointer; `prefetchLocs[k]` applies from `prefetchLocIdxs[k]` to the
/// next index. Every prefetch is checked before any is recorded.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn aclrtMemManagedPrefetchBatchAsync(
    ptrs: *mut *const c_void,
    sizes: *mut usize,
    count: usize,
    prefetch_locs: *mut aclrtMemManagedLocation,
    prefetch_loc_idxs: *mut usize,
    num_prefetch_locs: usize,
    flags: u64,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemManagedPrefetchBatchAsync", || {
        shared::in_release("aclrtMemManagedPrefetchBatchAsync")?;
        if ptrs.is_null()
            || sizes.is_null()
            || prefetch_locs.is_null()
            || prefetch_loc_idxs.is_null()
            || count == 0
            || num_prefetch_locs == 0
            || flags != 0
            || count < num_prefetch_locs
        {
            return Err(AclError::INVALID_PARAM);
        }
        let over = AclError::INVALID_PARAM;
        // SAFETY: the C caller's arrays, read through the kernel-checked
        // path.
        let (ptrs, sizes, locs, idxs) = unsafe {
            (
                cptr::read_array(ptrs.cast_const(), count, MAX_ENTRIES, over)?,
                cptr::read_array(sizes.cast_const(), count, MAX_ENTRIES, over)?,
                cptr::read_array(
                    prefetch_locs.cast_const(),
                    num_prefetch_locs,
                    MAX_ENTRIES,
                    over,
                )?,
                cptr::read_array(
                    prefetch_loc_idxs.cast_const(),
                    num_prefetch_locs,
                    MAX_ENTRIES,
                    over,
                )?,
            )
        };
        let increasing = idxs.windows(2).all(|w| w[0] < w[1]);
        if idxs[0] != 0
            || !increasing
            || idxs.iter().any(|&i| i >= count)
            || ptrs.iter().any(|p| p.is_null())
        {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let location = |i: usize| locs[idxs.partition_point(|&start| start <= i) - 1];
        let all: Vec<_> = ptrs
            .iter()
            .zip(&sizes)
            .enumerate()
            .map(|(i, (&p, &n))| {
                let l = location(i);
                (p as usize, n, (l.type_, l.id))
            })
            .collect();
        with_global(|g| g.emu.managed_prefetch_all(&all, stream as usize as u64))
    })
}

/// `aclError aclrtMemP2PMap(void* devPtr, size_t size, int32_t dstDevId,
/// uint64_t flags)`: devPtr NULL, size 0 or flags not 0 100000; device
/// memory of the process mapped for `dstDevId`, which needs peer access
/// enabled first (documented).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemP2PMap(
    dev_ptr: *mut c_void,
    size: usize,
    dst_dev_id: i32,
    flags: u64,
) -> AclErrorCode {
    guard("aclrtMemP2PMap", || {
        shared::in_release("aclrtMemP2PMap")?;
        if dev_ptr.is_null() || size == 0 || flags != 0 {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| g.emu.mem_p2p_map(dev_ptr as usize, size, dst_dev_id))
    })
}

/// `aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t
/// peerDeviceId, int32_t* status)`: status NULL 100000; a device the
/// process lacks 107001; 1 when `aclrtDeviceEnablePeerAccess` enabled
/// access from `deviceId` to `peerDeviceId`, else 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDevicePeerAccessStatus(
    device_id: i32,
    peer_device_id: i32,
    status: *mut i32,
) -> AclErrorCode {
    guard("aclrtDevicePeerAccessStatus", || {
        shared::in_release("aclrtDevicePeerAccessStatus")?;
        if status.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let on = with_global(|g| g.emu.peer_access_status(device_id, peer_device_id))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(status, i32::from(on)) }
    })
}
