//! Managed (unified) memory of a process (`aclrtMemAllocManaged`): which
//! `aclrtMalloc`-style allocations are managed, and the advice and
//! prefetches recorded for each 2 MiB page of them.
//!
//! The memory itself is device memory mapped in the process, so the host
//! reaches it at the same address (every emulated device address is a
//! mapping of the process); advice and prefetches move nothing and are
//! kept only so that `aclrtMemManagedGetAttr(s)` reports them.

use std::collections::{BTreeMap, BTreeSet};

use aclmem_core::MIB;

use super::{Process, Result};

/// The granularity advice and prefetches are kept at: 2 MiB.
pub const MANAGED_PAGE: usize = 2 * MIB;

/// A managed location (`aclrtMemManagedLocation`): its type
/// (`ACL_MEM_LOCATIONTYPE_DEVICE` 1, `HOST` 2, `HOST_NUMA` 3,
/// `HOST_NUMA_CURRENT` 4) and id.
pub type ManagedLocation = (u32, i32);

/// What is recorded for one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageAdvice {
    /// `ACL_MEM_ADVISE_SET_READ_MOSTLY`.
    pub read_mostly: bool,
    /// `ACL_MEM_ADVISE_SET_PREFERRED_LOCATION`.
    pub preferred: Option<ManagedLocation>,
    /// `ACL_MEM_ADVISE_SET_ACCESSED_BY`.
    pub accessed_by: BTreeSet<ManagedLocation>,
    /// The last `aclrtMemManagedPrefetch(Batch)Async` destination.
    pub last_prefetch: Option<ManagedLocation>,
}

/// One managed allocation.
#[derive(Debug)]
pub(crate) struct Managed {
    /// The machine's device it was allocated on.
    pub(crate) device: u32,
    pages: Vec<PageAdvice>,
}

impl Process {
    /// Records the allocation at `addr` of `size` bytes (a multiple of
    /// [`MANAGED_PAGE`]) on `device` as managed.
    pub(crate) fn managed_add(&self, addr: usize, size: usize, device: u32) {
        let pages = vec![PageAdvice::default(); size / MANAGED_PAGE];
        self.managed.lock().insert(addr, Managed { device, pages });
    }

    /// The allocation at `addr` is no longer managed (freed).
    pub(crate) fn managed_forget(&self, addr: usize) {
        self.managed.lock().remove(&addr);
    }

    /// The device of the managed allocation that contains `addr`.
    pub(crate) fn managed_device(&self, addr: usize) -> Option<u32> {
        let m = self.managed.lock();
        let (&start, a) = m.range(..=addr).next_back()?;
        (addr < start + a.pages.len() * MANAGED_PAGE).then_some(a.device)
    }

    /// Runs `f` on the pages of `[addr, addr + size)`, which must lie in
    /// one managed allocation (`outside` otherwise); a partly covered page
    /// counts.
    pub(crate) fn managed_pages<R>(
        &self,
        addr: usize,
        size: usize,
        outside: aclmem_core::AclError,
        f: impl FnOnce(&mut [PageAdvice]) -> R,
    ) -> Result<R> {
        let mut m = self.managed.lock();
        let (&start, a) = m.range_mut(..=addr).next_back().ok_or(outside)?;
        let end = addr.checked_add(size).ok_or(outside)?;
        if size == 0 || end > start + a.pages.len() * MANAGED_PAGE {
            return Err(outside);
        }
        let first = (addr - start) / MANAGED_PAGE;
        let last = (end - 1 - start) / MANAGED_PAGE;
        Ok(f(&mut a.pages[first..=last]))
    }

    /// The process leaves: nothing is managed any more.
    pub(crate) fn managed_clear(&self) {
        self.managed.lock().clear();
    }
}

/// The managed allocations of a process, by address.
pub(crate) type ManagedTable = BTreeMap<usize, Managed>;
