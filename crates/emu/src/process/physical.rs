//! Physical memory of the process: making, freeing and placing it.

use std::sync::Arc;

use aclmem_core::{AclError, Location, MemAttr, RawPhysicalMemProp, Verdict};

use super::handles::{Alloc, HandleId, Origin, Source};
use super::{Process, Result};
use crate::Op;
use crate::errors::Situation;
use crate::machine::Pools;
use crate::os::pool::{PAGE, PoolFile};

/// What a validated prop asks for.
pub(crate) struct Placement {
    pub(crate) location: Location,
    pub(crate) id: u32,
    pub(crate) attr: MemAttr,
    pub(crate) verdict: Verdict,
}

impl Process {
    /// Frees the `aclrtMalloc` block at `addr` (not an IPC import of one,
    /// which `aclrtIpcMemClose` ends).
    pub(crate) fn free_device(&self, addr: usize) -> Result<()> {
        {
            let va = self.va.lock();
            let ipc = va.maps.get(&addr).is_some_and(|e| {
                self.shards
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
        self.unmap_at(addr, true)?;
        self.release_range(addr, true)
    }

    /// Frees a physical handle (not an `aclrtMalloc` block's). Mappings
    /// hold their own reference: freeing a mapped handle kills the handle
    /// now and releases the memory at the last unmap.
    pub(crate) fn free_handle(&self, id: HandleId) -> Result<()> {
        let released = {
            let mut shard = self.shards.of(id)?;
            let (_, a) = shard.resolve(id)?;
            if a.origin == Origin::Plain {
                // aclrtMalloc memory is freed with aclrtFree.
                return Err(Situation::StaleHandle.code());
            }
            shard.remove_handle(id)?
        };
        self.finish_release(id.shard, released);
        Ok(())
    }

    /// The rules table's verdict on `prop` for this machine, and the device
    /// or NUMA node it names (the device id was checked by `enter_prop`).
    pub(crate) fn placement(&self, prop: &RawPhysicalMemProp) -> Result<Placement> {
        let m = &self.machine;
        let valid = prop.validate(m.product, m.config.run_mode, m.config.cann)?;
        if valid.location == Location::HostNuma && valid.location_id >= m.config.numa_nodes {
            return Err(Situation::UnknownNumaNode.code());
        }
        Ok(Placement {
            location: valid.location,
            id: if valid.location == Location::Host {
                0
            } else {
                valid.location_id
            },
            attr: valid.attr,
            verdict: valid.verdict,
        })
    }

    /// Charges the capacity, takes an extent and makes a handle: the part
    /// of `aclrtMallocPhysical` and `aclrtMalloc` after the checks.
    pub(crate) fn new_alloc(
        &self,
        placement: &Placement,
        size: u64,
        pools: Pools,
        origin: Origin,
    ) -> Result<HandleId> {
        self.collect_orphans();
        self.charge(pools, size)?;
        let index = self.shard_of(placement.location, placement.id);
        let made = self.ensure_pool_file(index).and_then(|()| {
            let mut shard = self.shards.lock(index);
            let offset = shard
                .extents
                .take(size.next_multiple_of(PAGE))
                .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
            let alloc = shard.allocs.insert(Alloc::new(
                Source::Local,
                offset,
                size,
                (placement.location, placement.id, placement.attr),
                pools,
                origin,
            ));
            Ok(self
                .shards
                .new_handle(&mut shard, index, alloc as u32, false))
        });
        if made.is_err() {
            self.uncharge(pools, size);
        }
        made
    }

    /// Creates the shard's pool file if it has none yet (outside the
    /// shard's lock: `memfd_create` is a system call).
    pub(crate) fn ensure_pool_file(&self, index: u8) -> Result<()> {
        if self.shards.lock(index).file.is_some() {
            return Ok(());
        }
        let name = format!(
            "aclmem-emu-{}-{index}",
            self.machine.name.as_deref().unwrap_or("private")
        );
        let file = Arc::new(PoolFile::create(&name).map_err(crate::env::fd_error)?);
        // Another thread may have made one meanwhile: the first one stays.
        self.shards.lock(index).file.get_or_insert(file);
        Ok(())
    }
}

impl Process {
    /// The prologue of the calls that take a prop: counted, then the
    /// runtime layer's device id (107001), the thread's device (107002),
    /// the platform (207000). The prop comes back with the machine's device
    /// id for the user's.
    pub(crate) fn enter_prop(
        &self,
        op: Op,
        mut prop: RawPhysicalMemProp,
    ) -> Result<RawPhysicalMemProp> {
        self.enter(op)?;
        if prop.location.type_ == Location::Device.raw() {
            prop.location.id = self.device(prop.location.id)?;
        }
        self.on_device()?;
        self.machine.vmm_api()?;
        Ok(prop)
    }
}

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
