//! Virtual memory: `aclrtReserveMemAddress`, `aclrtReleaseMemAddress`,
//! `aclrtMapMem`, `aclrtUnmapMem`, and CANN 9.x's additions
//! (`aclrtReserveMemAddressNoUCMemory`, `aclrtMemMapNoAccess`,
//! `aclrtMemMapSelectedLink`).

use std::num::NonZeroUsize;

use aclmem_core::{AclError, GIB};
use aclmem_hal::{PhysicalAllocator, RawHandle, VirtAddr, VirtualMemory};
use aclmem_sys::{AccessDesc, AccessFlags, LocationType};

use crate::args::{self, Checked, MapRequest, ReserveRequest};
use crate::errors::Situation;
use crate::process::Result;
use crate::process::handles::HandleId;
use crate::{Emulator, Op};

impl Emulator {
    /// `aclrtReserveMemAddress` with arguments the ACL layer accepted
    /// ([`args::reserve`]).
    pub fn reserve_checked(
        &self,
        request: Checked<ReserveRequest>,
        alignment: usize,
        expected: Option<VirtAddr>,
    ) -> Result<VirtAddr> {
        let p = &self.process;
        // No device needed on the thread: an address range is the
        // process's, not a device's. torch_npu reserves (and releases) a
        // probe range after aclInit and before any aclrtSetDevice, and
        // treats a failure as fatal; it runs so on NPUs
        // (docs/catalogue.md, "Before a device is set").
        p.enter(Op::Reserve)?;
        p.machine().vmm_api()?;
        let size = request.get().size;
        let addr = p.reserve_range(size, alignment, expected.map(VirtAddr::get), false)?;
        NonZeroUsize::new(addr)
            .map(VirtAddr)
            .ok_or(AclError::INTERNAL_ERROR)
    }

    /// `aclrtReserveMemAddressNoUCMemory(&virPtr, size, alignment,
    /// expectPtr, flags)` after the ACL layer's checks (flags 0 or 1): a
    /// reservation as `aclrtReserveMemAddress`'s, at the caller's address,
    /// which must be given (NULL: 207000, as the header says) and 1 GiB
    /// aligned; `size` a multiple of 1 GiB (documented; 107000); alignment
    /// 0. Its addresses are outside the release's window rule (documented:
    /// 40–224 TiB suggested).
    pub fn reserve_no_uc(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
    ) -> Result<VirtAddr> {
        let p = &self.process;
        p.enter(Op::Reserve)?;
        p.machine().vmm_api()?;
        let want = expected.ok_or(AclError::RT_FEATURE_NOT_SUPPORT)?;
        if alignment != 0 {
            return Err(Situation::ReserveAlignment.code());
        }
        if size == 0 || !size.is_multiple_of(GIB) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let addr = p.reserve_range_at(size, want.get())?;
        NonZeroUsize::new(addr)
            .map(VirtAddr)
            .ok_or(AclError::INTERNAL_ERROR)
    }

    /// `aclrtMemMapNoAccess(virPtr, size, offset, handle, flags)` after the
    /// ACL layer's checks: mapped as `aclrtMapMem` maps, with no access
    /// until `aclrtMemSetAccess` (`aclrtMemGetAccess` answers NONE; the
    /// emulator's own copies still reach it).
    pub fn map_no_access(&self, request: Checked<MapRequest>, offset: usize) -> Result<()> {
        let MapRequest { addr, size, .. } = *request.get();
        self.map_checked(request, offset)?;
        let none = AccessDesc {
            flags: AccessFlags::None,
            location: LocationType::Device,
            id: 0,
        };
        self.process.set_access(addr.get(), size, &[none])
    }

    /// `aclrtMemMapSelectedLink(virPtrDst, size, virPtrSrc, linkIdx)` after
    /// the ACL layer's checks: the physical memory mapped from `src` (one
    /// or more mappings of `aclrtMallocPhysical` memory starting there and
    /// covering `size` bytes exactly) mapped again at `dst`, in a
    /// reservation, at the same offsets, one mapping each (each needs its
    /// own `aclrtUnmapMem`). Anything else is 107000; a failure part-way
    /// unmaps what was mapped. The link (SIO or HCCS) changes nothing here.
    pub fn map_selected_link(&self, dst: usize, size: usize, src: usize) -> Result<()> {
        let p = &self.process;
        p.enter_vmm(Op::Map)?;
        let mut pieces = Vec::new();
        let mut off = 0;
        while off < size {
            let at = src.checked_add(off).ok_or(AclError::RT_PARAM_INVALID)?;
            match p.mapping_range(at) {
                Some((start, len)) if start == at => pieces.push((off, len)),
                _ => return Err(AclError::RT_PARAM_INVALID),
            }
            off += pieces.last().map_or(0, |&(_, len)| len);
        }
        if off != size {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let mut done = Vec::new();
        for &(off, len) in &pieces {
            let mapped = self.retain_allocation_handle(src + off).and_then(|h| {
                let target = NonZeroUsize::new(dst.wrapping_add(off))
                    .map(VirtAddr)
                    .ok_or(AclError::RT_PARAM_INVALID);
                let r = target.and_then(|t| self.map(t, len, 0, h, 0).map(|()| t));
                let _ = self.free_physical(h);
                r
            });
            match mapped {
                Ok(t) => done.push(t),
                Err(e) => {
                    for t in done {
                        let _ = self.unmap(t);
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// `aclrtMapMem` with arguments the ACL layer accepted
    /// ([`args::map`]).
    pub fn map_checked(&self, request: Checked<MapRequest>, offset: usize) -> Result<()> {
        let p = &self.process;
        let MapRequest { addr, size, handle } = request.into_inner();
        p.enter_vmm(Op::Map)?;
        if offset != 0 {
            return Err(Situation::MapOffset.code());
        }
        let id = HandleId::decode(handle.0.get())?;
        p.map_handle(addr.get(), Some(size), id, false)
    }
}

impl VirtualMemory for Emulator {
    fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
        flags: u64,
    ) -> Result<VirtAddr> {
        self.reserve_checked(args::reserve(size, flags)?, alignment, expected)
    }

    fn release(&self, addr: VirtAddr) -> Result<()> {
        // As reserve: no device needed on the thread.
        self.process.enter(Op::Release)?;
        self.process.machine().vmm_api()?;
        self.process.release_range(addr.get(), false)
    }

    fn map(
        &self,
        addr: VirtAddr,
        size: usize,
        offset: usize,
        handle: RawHandle,
        flags: u64,
    ) -> Result<()> {
        self.map_checked(args::map(addr.get(), size, handle.0.get(), flags)?, offset)
    }

    fn unmap(&self, addr: VirtAddr) -> Result<()> {
        self.process.enter_vmm(Op::Unmap)?;
        self.process.unmap_at(addr.get(), false)
    }
}
