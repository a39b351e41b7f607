//! Memory the runtime places: `aclrtMalloc`, `aclrtMallocAlign32`,
//! `aclrtFree`, `aclrtMallocHost`, `aclrtFreeHost`.

use aclmem_core::{AclError, GIB, Location, MIB, MemAttr, Verdict};

use crate::calls::physical::Placement;
use crate::errors::Situation;
use crate::machine::PoolId;
use crate::os::pool::PAGE;
use crate::os::sys;
use crate::process::charge::Pools;
use crate::process::handles::{HandleId, Origin};
use crate::process::{Process, Result};
use crate::{Emulator, Op, args};

impl Process {
    /// Maps the allocation behind the internal handle `id` (`bytes` long)
    /// in a plain reservation of its own and drops the handle: from then on
    /// the mapping alone holds the memory (what `aclrtMalloc` and an IPC
    /// import hand out). On failure nothing is left.
    pub(crate) fn map_internal(&self, id: HandleId, bytes: usize) -> Result<usize> {
        let mapped = self.reserve_range(bytes, 0, None, true).and_then(|addr| {
            self.map_handle(addr, None, id, true)
                .inspect_err(|_| {
                    let _ = self.release_range(addr, true);
                })
                .map(|()| addr)
        });
        self.drop_handle(id);
        mapped
    }
}

/// `aclrtMalloc`'s page choice for a policy and a size: the attribute and
/// the page size the memory is rounded to.
fn plain_pages(policy: u32, rounded: usize) -> (MemAttr, usize) {
    match policy & 0xFF {
        6 | 7 => (MemAttr::HbmMemHuge1G, GIB),
        2 | 5 => (MemAttr::HbmMemNormal, PAGE as usize),
        _ if rounded <= MIB => (MemAttr::HbmMemNormal, PAGE as usize),
        _ => (MemAttr::HbmMemHuge, 2 * MIB),
    }
}

impl Emulator {
    /// `aclrtMalloc` (or, with `align32_only`, `aclrtMallocAlign32`) on
    /// `device`: the address of `size` bytes of device memory. The size is
    /// rounded up to 32 bytes (plus 32 of padding unless `align32_only`, as
    /// the runtime documents), and the memory to whole pages (2 MiB pages
    /// above 1 MiB).
    pub fn malloc_device(
        &self,
        device: u32,
        size: usize,
        policy: u32,
        align32_only: bool,
    ) -> Result<usize> {
        let p = &self.process;
        args::malloc(size)?;
        p.enter(Op::MallocDevice)?;
        p.device(device)?;
        let huge1g = matches!(policy & 0xFF, 6 | 7);
        let padded = if align32_only || huge1g {
            size
        } else {
            size.checked_add(32).ok_or(AclError::RT_MEMORY_ALLOCATION)?
        };
        let rounded = padded
            .checked_next_multiple_of(32)
            .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
        let (attr, page) = plain_pages(policy, rounded);
        let bytes = rounded
            .checked_next_multiple_of(page)
            .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
        let pools = if huge1g {
            Pools::two(PoolId::Device(device), PoolId::Huge1G(device))
        } else {
            Pools::one(PoolId::Device(device))
        };
        let placement = Placement {
            location: Location::Device,
            id: device,
            attr,
            verdict: Verdict::Allowed,
        };
        let id = p.new_alloc(&placement, bytes as u64, pools, Origin::Plain)?;
        p.map_internal(id, bytes)
    }

    /// `aclrtFree`: only memory from `aclrtMalloc` (an IPC import's own
    /// mapping is refused: that is `aclrtIpcMemClose`'s).
    pub fn free_device(&self, addr: usize) -> Result<()> {
        let p = &self.process;
        args::address(addr)?;
        p.enter(Op::FreeDevice)?;
        {
            let va = p.va.lock();
            let ipc = va.maps.get(&addr).is_some_and(|e| {
                p.shards
                    .lock(e.shard)
                    .allocs
                    .get(e.alloc as usize)
                    .is_some_and(|a| a.is_imported())
            });
            match va.resvs.get(&addr) {
                Some(r) if r.plain && !ipc => {}
                _ => return Err(Situation::NotAllocated.code()),
            }
        }
        p.unmap_at(addr, true)?;
        p.release_range(addr, true)
    }

    /// `aclrtMallocHost`: page-locked host memory (plain anonymous memory
    /// here), not charged to any device.
    pub fn malloc_host(&self, size: usize) -> Result<usize> {
        let p = &self.process;
        args::malloc(size)?;
        p.enter(Op::MallocHost)?;
        let len = size
            .checked_next_multiple_of(PAGE as usize)
            .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
        let addr = sys::map_anonymous(len).map_err(|_| AclError::RT_MEMORY_ALLOCATION)?;
        p.hosts.lock().insert(addr, len);
        Ok(addr)
    }

    /// `aclrtFreeHost`.
    pub fn free_host(&self, addr: usize) -> Result<()> {
        let p = &self.process;
        args::address(addr)?;
        p.enter(Op::FreeHost)?;
        let len = p
            .hosts
            .lock()
            .remove(&addr)
            .ok_or(Situation::NotAllocated.code())?;
        // SAFETY: `addr..addr + len` was mapped by `malloc_host` and handed to
        // the caller, who gives it back here; freeing host memory that is
        // still used is the caller's bug, as with `free`.
        let _ = unsafe { sys::unmap_region(addr, len) };
        Ok(())
    }
}
