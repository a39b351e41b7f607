//! [`Streams`], [`MemPools`] and [`ManagedMemoryApi`] of [`Driver`]:
//! `aclrtCreateStream`, the stream-ordered pools (`acl_rt_memory_soma.h`)
//! and managed memory, whose symbols are resolved by name
//! (`aclmem_sys::pools`): a library without them (before CANN 9.0 or 9.1)
//! answers 207000, as a missing symbol does.

use std::ffi::c_void;
use std::num::{NonZeroU64, NonZeroUsize};
use std::ptr;

use aclmem_core::AclError;
use aclmem_hal::{
    ManagedAdvice, ManagedLocation, ManagedMemoryApi, MemPools, PoolAttr, RawPool, RawStream,
    Streams, VirtAddr,
};
use aclmem_sys::pools::{
    aclrtMemAllocManaged_t, aclrtMemManagedAdvise_t, aclrtMemManagedLocation,
    aclrtMemManagedPrefetchAsync_t, aclrtMemPool, aclrtMemPoolAttr_t, aclrtMemPoolCreate_t,
    aclrtMemPoolDestroy_t, aclrtMemPoolFreeAsync_t, aclrtMemPoolMallocAsync_t, aclrtMemPoolProps,
    aclrtMemPoolTrimTo_t,
};

use super::addr_ptr;
use crate::Driver;
use crate::sys;

fn stream_ptr(s: RawStream) -> sys::aclrtStream {
    s.0.get() as usize as sys::aclrtStream
}

fn pool_ptr(p: RawPool) -> aclrtMemPool {
    p.0.get() as usize as aclrtMemPool
}

/// A handle a successful call returned: NULL breaks the API contract.
fn nonzero(p: *mut c_void) -> Result<NonZeroU64, AclError> {
    NonZeroU64::new(p as usize as u64).ok_or(AclError::RT_INTERNAL_ERROR)
}

impl Streams for Driver {
    fn create_stream(&self) -> Result<RawStream, AclError> {
        let f = self.enter()?.aclrtCreateStream()?;
        let mut s: sys::aclrtStream = ptr::null_mut();
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut s) })?;
        nonzero(s).map(RawStream)
    }

    fn destroy_stream(&self, stream: RawStream) -> Result<(), AclError> {
        let f = self.enter()?.aclrtDestroyStream()?;
        // SAFETY: documented prototype; the runtime validates the handle.
        AclError::check(unsafe { f(stream_ptr(stream)) })
    }

    fn synchronize_stream(&self, stream: RawStream) -> Result<(), AclError> {
        let f = self.enter()?.aclrtSynchronizeStream()?;
        // SAFETY: documented prototype; the runtime validates the handle.
        AclError::check(unsafe { f(stream_ptr(stream)) })
    }
}

impl MemPools for Driver {
    fn pool_create(&self, device_id: u32, max_size: usize) -> Result<RawPool, AclError> {
        let cl = self.enter()?;
        // SAFETY: `aclrtMemPoolCreate_t` is the documented prototype; the
        // pointer is called below, while `cl` (this driver's library) lives.
        let f: aclrtMemPoolCreate_t = unsafe { cl.by_name(b"aclrtMemPoolCreate\0")? };
        let mut props = aclrtMemPoolProps {
            max_size,
            ..aclrtMemPoolProps::default()
        };
        props.location.type_ = sys::ACL_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = device_id;
        let mut pool: aclrtMemPool = ptr::null_mut();
        // SAFETY: documented prototype; both pointers are live locals.
        AclError::check(unsafe { f(&mut pool, &props) })?;
        nonzero(pool).map(RawPool)
    }

    fn pool_destroy(&self, pool: RawPool) -> Result<(), AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemPoolDestroy_t = unsafe { cl.by_name(b"aclrtMemPoolDestroy\0")? };
        // SAFETY: documented prototype; the runtime validates the handle.
        AclError::check(unsafe { f(pool_ptr(pool)) })
    }

    fn pool_set_attr(&self, pool: RawPool, attr: PoolAttr, value: u64) -> Result<(), AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemPoolAttr_t = unsafe { cl.by_name(b"aclrtMemPoolSetAttr\0")? };
        let mut wide = value;
        let mut narrow = if attr.is_u32() {
            u32::try_from(value).map_err(|_| AclError::INVALID_PARAM)?
        } else {
            0
        };
        let value: *mut c_void = if attr.is_u32() {
            (&raw mut narrow).cast()
        } else {
            (&raw mut wide).cast()
        };
        // SAFETY: documented prototype; `value` points at a live local of
        // the attribute's C type (`uint32_t` for the switches).
        AclError::check(unsafe { f(pool_ptr(pool), attr.raw(), value) })
    }

    fn pool_get_attr(&self, pool: RawPool, attr: PoolAttr) -> Result<u64, AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemPoolAttr_t = unsafe { cl.by_name(b"aclrtMemPoolGetAttr\0")? };
        // Room for a `uint64_t`; a `uint32_t` attribute fills the first 4
        // bytes (read back as such).
        let mut out = 0u64;
        // SAFETY: documented prototype; `out` is a live local of 8 bytes.
        AclError::check(unsafe { f(pool_ptr(pool), attr.raw(), (&raw mut out).cast()) })?;
        Ok(if attr.is_u32() {
            u64::from(u32::from_ne_bytes(
                out.to_ne_bytes()[..4].try_into().unwrap_or_default(),
            ))
        } else {
            out
        })
    }

    fn pool_malloc_async(
        &self,
        pool: RawPool,
        size: usize,
        stream: RawStream,
    ) -> Result<VirtAddr, AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemPoolMallocAsync_t = unsafe { cl.by_name(b"aclrtMemPoolMallocAsync\0")? };
        let mut p: *mut c_void = ptr::null_mut();
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut p, size, pool_ptr(pool), stream_ptr(stream)) })?;
        // A size of 0 succeeds without memory: no typed allocation.
        NonZeroUsize::new(p as usize)
            .map(VirtAddr)
            .ok_or(AclError::INVALID_PARAM)
    }

    fn pool_free_async(&self, ptr: VirtAddr, stream: RawStream) -> Result<(), AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemPoolFreeAsync_t = unsafe { cl.by_name(b"aclrtMemPoolFreeAsync\0")? };
        // SAFETY: documented prototype; the runtime validates both values.
        AclError::check(unsafe { f(addr_ptr(ptr), stream_ptr(stream)) })
    }

    fn pool_trim_to(&self, pool: RawPool, keep: usize) -> Result<(), AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemPoolTrimTo_t = unsafe { cl.by_name(b"aclrtMemPoolTrimTo\0")? };
        // SAFETY: documented prototype; plain values.
        AclError::check(unsafe { f(pool_ptr(pool), keep) })
    }
}

/// `ACL_RT_MEM_ATTACH_GLOBAL`.
const ATTACH_GLOBAL: u32 = 0x1;

fn managed_location(l: ManagedLocation) -> aclrtMemManagedLocation {
    let (type_, id) = l.raw();
    aclrtMemManagedLocation { type_, id }
}

impl ManagedMemoryApi for Driver {
    fn malloc_managed(&self, size: usize) -> Result<VirtAddr, AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemAllocManaged_t = unsafe { cl.by_name(b"aclrtMemAllocManaged\0")? };
        let mut p: *mut c_void = ptr::null_mut();
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(&mut p, size as u64, ATTACH_GLOBAL) })?;
        NonZeroUsize::new(p as usize)
            .map(VirtAddr)
            .ok_or(AclError::RT_INTERNAL_ERROR)
    }

    fn free_managed(&self, addr: VirtAddr) -> Result<(), AclError> {
        let f = self.enter()?.aclrtFree()?;
        // SAFETY: documented prototype; the runtime validates the address.
        AclError::check(unsafe { f(addr_ptr(addr)) })
    }

    fn managed_advise(
        &self,
        addr: VirtAddr,
        size: usize,
        advice: ManagedAdvice,
        location: ManagedLocation,
    ) -> Result<(), AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemManagedAdvise_t = unsafe { cl.by_name(b"aclrtMemManagedAdvise\0")? };
        let location = managed_location(location);
        // SAFETY: documented prototype; plain values (the location by value).
        AclError::check(unsafe { f(addr_ptr(addr), size as u64, advice.raw(), location) })
    }

    fn managed_prefetch_async(
        &self,
        addr: VirtAddr,
        size: usize,
        location: ManagedLocation,
        stream: RawStream,
    ) -> Result<(), AclError> {
        let cl = self.enter()?;
        // SAFETY: the documented prototype, called while `cl` lives.
        let f: aclrtMemManagedPrefetchAsync_t =
            unsafe { cl.by_name(b"aclrtMemManagedPrefetchAsync\0")? };
        let location = managed_location(location);
        // SAFETY: documented prototype; plain values, the stream validated
        // by the runtime.
        AclError::check(unsafe { f(addr_ptr(addr), size, location, 0, stream_ptr(stream)) })
    }
}
