//! Every `aclmem-hal` trait of [`Driver`], over the ACL calls: physical
//! memory, virtual addresses and mappings, and sharing between processes.

use std::ffi::c_void;
use std::num::{NonZeroU64, NonZeroUsize};
use std::ptr;

use aclmem_core::{AclError, CannVersion, GranularityOption, Product, RawPhysicalMemProp, RunMode};
use aclmem_hal::{
    DeviceInfo, ErrorType, PhysicalAllocator, RawHandle, ShareHandleType, ShareableHandle,
    ShareableHandleV2, ShareableMemory, VirtAddr, VirtualMemory,
};

use crate::Driver;
use crate::driver::CURRENT;
use crate::sys;

fn handle_ptr(h: RawHandle) -> sys::aclrtDrvMemHandle {
    h.0.get() as usize as sys::aclrtDrvMemHandle
}

fn handle_from(p: sys::aclrtDrvMemHandle) -> Result<RawHandle, AclError> {
    // A successful call that returns NULL breaks the API contract.
    NonZeroU64::new(p as usize as u64)
        .map(RawHandle)
        .ok_or(AclError::RT_INTERNAL_ERROR)
}

fn addr_ptr(a: VirtAddr) -> *mut c_void {
    a.get() as *mut c_void
}

mod pools;

impl ErrorType for Driver {
    type Error = AclError;
}

impl DeviceInfo for Driver {
    fn platform(&self) -> Result<(Product, RunMode), AclError> {
        self.runtime().platform()
    }
    fn cann(&self) -> Result<CannVersion, AclError> {
        self.runtime().cann()?.rules_or_err()
    }
    fn device_count(&self) -> Result<u32, AclError> {
        self.runtime().device_count()
    }
}

impl PhysicalAllocator for Driver {
    fn granularity(
        &self,
        prop: &RawPhysicalMemProp,
        option: GranularityOption,
    ) -> Result<usize, AclError> {
        let f = self.enter()?.aclrtMemGetAllocationGranularity()?;
        // The C prototype takes a non-const pointer: hand it a copy.
        let mut prop = *prop;
        let mut g = 0usize;
        // SAFETY: documented prototype; both pointers are live locals.
        AclError::check(unsafe { f(&mut prop, option as u32, &mut g) })?;
        Ok(g)
    }

    fn malloc_physical(
        &self,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> Result<RawHandle, AclError> {
        let f = self.enter()?.aclrtMallocPhysical()?;
        let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
        // SAFETY: documented prototype; `prop` is a valid 32-byte
        // `aclrtPhysicalMemProp` (same layout) and the out pointer is live.
        AclError::check(unsafe { f(&mut h, size, prop, flags) })?;
        handle_from(h)
    }

    fn free_physical(&self, handle: RawHandle) -> Result<(), AclError> {
        let f = self.enter()?.aclrtFreePhysical()?;
        // SAFETY: documented prototype; the runtime validates the handle.
        AclError::check(unsafe { f(handle_ptr(handle)) })
    }
}

impl VirtualMemory for Driver {
    fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
        flags: u64,
    ) -> Result<VirtAddr, AclError> {
        let f = self.enter()?.aclrtReserveMemAddress()?;
        let mut p: *mut c_void = ptr::null_mut();
        let want = expected.map_or(ptr::null_mut(), addr_ptr);
        // SAFETY: documented prototype; the out pointer is live; `want` is
        // only an address hint, never dereferenced by us.
        AclError::check(unsafe { f(&mut p, size, alignment, want, flags) })?;
        NonZeroUsize::new(p as usize)
            .map(VirtAddr)
            .ok_or(AclError::RT_INTERNAL_ERROR)
    }

    fn release(&self, addr: VirtAddr) -> Result<(), AclError> {
        let f = self.enter()?.aclrtReleaseMemAddress()?;
        // SAFETY: documented prototype; the runtime validates the address.
        AclError::check(unsafe { f(addr_ptr(addr)) })
    }

    fn map(
        &self,
        addr: VirtAddr,
        size: usize,
        offset: usize,
        handle: RawHandle,
        flags: u64,
    ) -> Result<(), AclError> {
        let f = self.enter()?.aclrtMapMem()?;
        // SAFETY: documented prototype; the runtime validates every value.
        AclError::check(unsafe { f(addr_ptr(addr), size, offset, handle_ptr(handle), flags) })
    }

    fn unmap(&self, addr: VirtAddr) -> Result<(), AclError> {
        let f = self.enter()?.aclrtUnmapMem()?;
        // SAFETY: documented prototype; the runtime validates the address.
        AclError::check(unsafe { f(addr_ptr(addr)) })
    }
}

impl ShareableMemory for Driver {
    fn export(&self, handle: RawHandle, flags: u64) -> Result<ShareableHandle, AclError> {
        let f = self.enter()?.aclrtMemExportToShareableHandle()?;
        let mut out = 0u64;
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe {
            f(
                handle_ptr(handle),
                sys::ACL_MEM_HANDLE_TYPE_NONE,
                flags,
                &mut out,
            )
        })?;
        Ok(ShareableHandle(out))
    }

    fn set_pids(&self, shareable: ShareableHandle, pids: &[i32]) -> Result<(), AclError> {
        let f = self.enter()?.aclrtMemSetPidToShareableHandle()?;
        // The prototype takes a non-const pointer: hand it a copy.
        let mut pids = pids.to_vec();
        let ptr = sys::pid_list_ptr(&mut pids);
        // SAFETY: documented prototype; `ptr` is NULL (count 0, which the
        // runtime rejects) or points at `pids.len()` live integers.
        AclError::check(unsafe { f(shareable.0, ptr, pids.len()) })
    }

    fn import(&self, shareable: ShareableHandle, device_id: u32) -> Result<RawHandle, AclError> {
        let f = self.enter()?.aclrtMemImportFromShareableHandle()?;
        let device = i32::try_from(device_id).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
        // SAFETY: documented prototype; the out pointer is a live local.
        AclError::check(unsafe { f(shareable.0, device, &mut h) })?;
        handle_from(h)
    }

    fn export_v2(
        &self,
        handle: RawHandle,
        flags: u64,
        kind: ShareHandleType,
    ) -> Result<ShareableHandleV2, AclError> {
        let f = self.enter()?.aclrtMemExportToShareableHandleV2()?;
        let mut out = [0u8; 128];
        // SAFETY: documented prototype; `out` is a live buffer of 128 bytes,
        // the size of the larger handle type (`aclrtMemFabricHandle`).
        AclError::check(unsafe {
            f(
                handle_ptr(handle),
                flags,
                kind.raw(),
                out.as_mut_ptr().cast(),
            )
        })?;
        Ok(ShareableHandleV2::from_c_buffer(kind, &out))
    }

    fn set_pids_v2(&self, shareable: &ShareableHandleV2, pids: &[i32]) -> Result<(), AclError> {
        let f = self.enter()?.aclrtMemSetPidToShareableHandleV2()?;
        let mut buffer = shareable.to_c_buffer();
        let mut pids = pids.to_vec();
        let ptr = sys::pid_list_ptr(&mut pids);
        // SAFETY: documented prototype; `buffer` holds the handle in the
        // layout of its type, `ptr` is NULL (count 0) or `pids.len()` live
        // integers.
        AclError::check(unsafe {
            f(
                buffer.as_mut_ptr().cast(),
                shareable.kind().raw(),
                ptr,
                pids.len(),
            )
        })
    }

    fn import_v2(
        &self,
        shareable: &ShareableHandleV2,
        device_id: u32,
    ) -> Result<RawHandle, AclError> {
        let cl = self.enter()?;
        let f = cl.aclrtMemImportFromShareableHandleV2()?;
        let device = i32::try_from(device_id).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        if device != self.device {
            // The C call imports onto the thread's current device.
            let set = cl.aclrtSetDevice()?;
            // SAFETY: documented prototype; plain integer argument.
            AclError::check(unsafe { set(device) })?;
            CURRENT.with(|c| c.set((self.rt.id, device)));
        }
        let mut buffer = shareable.to_c_buffer();
        let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
        // SAFETY: documented prototype; `buffer` holds the handle in the
        // layout of its type and the out pointer is a live local.
        AclError::check(unsafe {
            f(
                buffer.as_mut_ptr().cast(),
                shareable.kind().raw(),
                0,
                &mut h,
            )
        })?;
        handle_from(h)
    }
}
