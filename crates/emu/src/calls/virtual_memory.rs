//! Virtual memory: `aclrtReserveMemAddress`, `aclrtReleaseMemAddress`,
//! `aclrtMapMem`, `aclrtUnmapMem`.

use std::num::NonZeroUsize;

use aclmem_core::AclError;
use aclmem_hal::{RawHandle, VirtAddr, VirtualMemory};

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
