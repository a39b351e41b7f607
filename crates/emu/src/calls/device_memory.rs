//! Memory the runtime places: `aclrtMalloc`, `aclrtMallocAlign32`,
//! `aclrtFree`, `aclrtMallocHost`, `aclrtFreeHost`.

use aclmem_core::{AclError, GIB, Location, MIB, MemAttr, Verdict};

use crate::machine::PoolId;
use crate::os::pool::PAGE;
use crate::process::Result;
use crate::process::charge::Pools;
use crate::process::handles::Origin;
use crate::process::physical::Placement;
use std::num::NonZeroUsize;

use aclmem_sys::{MallocPolicy, PagePolicy};

use crate::Target;
use crate::args::{self, Checked};
use crate::errors::Situation;
use crate::{Emulator, Op};

/// `aclrtMalloc`'s page choice for a policy and a size: the attribute and
/// the page size the memory is rounded to.
fn plain_pages(policy: MallocPolicy, rounded: usize) -> (MemAttr, usize) {
    match policy.pages() {
        PagePolicy::Huge1G => (MemAttr::HbmMemHuge1G, GIB),
        PagePolicy::Normal => (MemAttr::HbmMemNormal, PAGE as usize),
        PagePolicy::BySize | PagePolicy::HugeOnly if rounded <= MIB => {
            (MemAttr::HbmMemNormal, PAGE as usize)
        }
        PagePolicy::BySize | PagePolicy::HugeOnly => (MemAttr::HbmMemHuge, 2 * MIB),
    }
}

impl Emulator {
    /// `aclrtMalloc` (or, with `align32_only`, `aclrtMallocAlign32`) on
    /// `device`: the address of `size` bytes of device memory. The size is
    /// rounded up to 32 bytes (plus 32 of padding unless `align32_only` or
    /// a 1 GiB policy, as the runtime documents), and the memory to whole
    /// pages (2 MiB pages above 1 MiB).
    pub fn malloc_device(
        &self,
        device: impl Into<Target>,
        size: usize,
        policy: MallocPolicy,
        align32_only: bool,
    ) -> Result<usize> {
        self.malloc_device_checked(device, args::malloc(size)?, policy, align32_only)
    }

    /// `aclrtMalloc` with a size the ACL layer accepted ([`args::malloc`]).
    pub fn malloc_device_checked(
        &self,
        device: impl Into<Target>,
        size: Checked<NonZeroUsize>,
        policy: MallocPolicy,
        align32_only: bool,
    ) -> Result<usize> {
        self.process.enter(Op::MallocDevice)?;
        self.place_device(device.into(), size, policy, align32_only)
    }

    /// The work of `aclrtMalloc` without its call: device memory the
    /// runtime allocates for itself (a graph's condition values), which a
    /// fault armed on `aclrtMalloc` never reaches.
    pub(crate) fn place_device(
        &self,
        device: Target,
        size: Checked<NonZeroUsize>,
        policy: MallocPolicy,
        align32_only: bool,
    ) -> Result<usize> {
        let p = &self.process;
        let device = p.target(device)?;
        p.on_device()?;
        let size = size.into_inner().get();
        let huge1g = policy.pages() == PagePolicy::Huge1G;
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
        self.free_device_checked(args::address(addr)?)
    }

    /// `aclrtFree` of an address the ACL layer accepted
    /// ([`args::address`]).
    pub fn free_device_checked(&self, addr: Checked<NonZeroUsize>) -> Result<()> {
        let p = &self.process;
        let addr = addr.into_inner().get();
        p.enter_rt(Op::FreeDevice)?;
        // A memory pool's block in use leaves its pool and is freed (the
        // runtime frees it and returns it to its pool); anything else
        // inside a pool is not an allocation.
        match p.pool_owns(addr) {
            Some(_) => p.pool_free_now(addr, Situation::NotAllocated.code()),
            None => {
                p.free_device(addr)?;
                p.managed_forget(addr);
                Ok(())
            }
        }
    }

    /// `aclrtMallocHost`: page-locked host memory (plain anonymous memory
    /// here), not charged to any device.
    pub fn malloc_host(&self, size: usize) -> Result<usize> {
        self.malloc_host_checked(args::malloc(size)?)
    }

    /// `aclrtMallocHost` with a size the ACL layer accepted
    /// ([`args::malloc`]).
    pub fn malloc_host_checked(&self, size: Checked<NonZeroUsize>) -> Result<usize> {
        let p = &self.process;
        p.enter_rt(Op::MallocHost)?;
        let len = size
            .into_inner()
            .get()
            .checked_next_multiple_of(PAGE as usize)
            .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
        p.add_host_block(len)
    }

    /// `aclrtFreeHost`.
    pub fn free_host(&self, addr: usize) -> Result<()> {
        self.free_host_checked(args::address(addr)?)
    }

    /// `aclrtFreeHost` of an address the ACL layer accepted
    /// ([`args::address`]).
    pub fn free_host_checked(&self, addr: Checked<NonZeroUsize>) -> Result<()> {
        let p = &self.process;
        let addr = addr.into_inner().get();
        p.enter(Op::FreeHost)?;
        p.remove_host_block(addr)
    }
}
