//! Virtual memory: `aclrtReserveMemAddress`, `aclrtReleaseMemAddress`,
//! `aclrtMapMem`, `aclrtUnmapMem`.

use std::num::NonZeroUsize;

use aclmem_core::AclError;
use aclmem_hal::{RawHandle, VirtAddr, VirtualMemory};

use crate::errors::Situation;
use crate::process::Result;
use crate::process::handles::HandleId;
use crate::{Emulator, Op, args};

impl VirtualMemory for Emulator {
    fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
        flags: u64,
    ) -> Result<VirtAddr> {
        let p = &self.process;
        args::reserve(size, flags)?;
        p.enter_vmm(Op::Reserve)?;
        let addr = p.reserve_range(size, alignment, expected.map(VirtAddr::get), false)?;
        NonZeroUsize::new(addr)
            .map(VirtAddr)
            .ok_or(AclError::INTERNAL_ERROR)
    }

    fn release(&self, addr: VirtAddr) -> Result<()> {
        args::address(addr.get())?;
        self.process.enter_vmm(Op::Release)?;
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
        let p = &self.process;
        args::map(addr.get(), size, handle.0.get(), flags)?;
        p.enter_vmm(Op::Map)?;
        if offset != 0 {
            return Err(Situation::MapOffset.code());
        }
        let id = HandleId::decode(handle.0.get())?;
        p.map_handle(addr.get(), Some(size), id, false)
    }

    fn unmap(&self, addr: VirtAddr) -> Result<()> {
        args::address(addr.get())?;
        self.process.enter_vmm(Op::Unmap)?;
        self.process.unmap_at(addr.get(), false)
    }
}
