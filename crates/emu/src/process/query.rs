//! Answers about a process's memory: what is mapped where, the placement
//! of an allocation behind a handle or an address, access descriptors,
//! and new handles of what is mapped.

use aclmem_core::{Location, MemAttr};
use aclmem_sys::AccessDesc;

use super::handles::{Alloc, HandleId, Origin};
use super::{Process, Result};
use crate::errors::Situation;

/// Where an allocation lies and what it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placed {
    pub(crate) attr: MemAttr,
    pub(crate) origin: Origin,
    pub(crate) location: Location,
    /// The machine's device id (or the host's NUMA node).
    pub(crate) location_id: u32,
}

impl Placed {
    fn of(a: &Alloc) -> Placed {
        Placed {
            attr: a.attr,
            origin: a.origin,
            location: a.location,
            location_id: a.location_id,
        }
    }
}

impl Process {
    /// (start, size) of the mapping that contains `ptr`.
    pub(crate) fn mapping_range(&self, ptr: usize) -> Option<(usize, usize)> {
        self.va
            .lock()
            .mapping_at(ptr)
            .map(|(start, e)| (start, e.size))
    }

    /// The allocation mapped at `ptr`, if any.
    pub(crate) fn placed_at(&self, ptr: usize) -> Option<Placed> {
        let va = self.va.lock();
        let (_, e) = va.mapping_at(ptr)?;
        let shard = self.shards.lock(e.shard);
        shard.allocs.get(e.alloc as usize).map(Placed::of)
    }

    /// The allocation behind a live handle.
    pub(crate) fn placed_of(&self, id: HandleId) -> Result<Placed> {
        let shard = self.shards.of(id)?;
        shard.resolve(id).map(|(_, a)| Placed::of(a))
    }

    /// The size of the allocation behind a live handle.
    pub(crate) fn handle_size(&self, id: HandleId) -> Result<usize> {
        let shard = self.shards.lock(id.shard);
        Ok(shard.resolve(id)?.1.size as usize)
    }

    /// Applies checked access descriptors to the mapping that starts at
    /// `addr` with `size` bytes (the last one for a location wins).
    pub(crate) fn set_access(&self, addr: usize, size: usize, descs: &[AccessDesc]) -> Result<()> {
        let mut va = self.va.lock();
        let e = va
            .maps
            .get_mut(&addr)
            .filter(|e| e.size == size)
            .ok_or(Situation::NotAMappingStart.code())?;
        for d in descs {
            e.access = *d;
        }
        Ok(())
    }

    /// The access descriptor of the mapping that starts at `addr`.
    pub(crate) fn access(&self, addr: usize) -> Result<AccessDesc> {
        let va = self.va.lock();
        Ok(va
            .maps
            .get(&addr)
            .ok_or(Situation::NotAMappingStart.code())?
            .access)
    }

    /// A new handle, with its own reference, to the allocation mapped at
    /// `addr` (where a mapping starts), made under the locks that found
    /// it; `check` may refuse the mapping's reservation size and
    /// allocation first. `missing` is the code when nothing is mapped
    /// there.
    pub(crate) fn new_handle_of_mapping(
        &self,
        addr: usize,
        missing: Situation,
        check: impl FnOnce(&MappedAlloc) -> Result<()>,
    ) -> Result<HandleId> {
        let va = self.va.lock();
        let e = va.maps.get(&addr).ok_or(missing.code())?;
        let mut shard = self.shards.lock(e.shard);
        let a = shard
            .allocs
            .get_mut(e.alloc as usize)
            .ok_or(missing.code())?;
        check(&MappedAlloc {
            plain: va.resvs.get(&addr).is_some_and(|r| r.plain),
            mapped: e.size,
            origin: a.origin,
            imported: a.is_imported(),
        })?;
        a.refs += 1;
        let imported = a.is_imported();
        Ok(self
            .shards
            .new_handle(&mut shard, e.shard, e.alloc, imported))
    }
}

/// What [`Process::new_handle_of_mapping`] shows its check.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MappedAlloc {
    /// The mapping is an `aclrtMalloc` block's (its reservation is plain).
    pub(crate) plain: bool,
    /// The mapping's size.
    pub(crate) mapped: usize,
    pub(crate) origin: Origin,
    pub(crate) imported: bool,
}
