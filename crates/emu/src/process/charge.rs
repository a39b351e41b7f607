//! What a process is charged on the machine, and how memory goes back:
//! capacity is taken before an allocation exists and given back after its
//! last reference went, always without a process lock held.

use super::handles::{Alloc, Source};
use super::{Process, Result};
pub(crate) use crate::machine::Pools;
use crate::{Op, Target};
use aclmem_core::AclError;

impl Process {
    /// Charges `size` bytes to `pools`, all or nothing; a killed process's
    /// memory comes back first when there is no room.
    pub(crate) fn charge(&self, pools: Pools, size: u64) -> Result<()> {
        let region = &self.machine.region;
        let g = region.lock(self.slot)?;
        if region.charge(&g, self.slot, pools, size).is_ok() {
            return Ok(());
        }
        if region.reap(&g) == 0 {
            return Err(AclError::RT_MEMORY_ALLOCATION);
        }
        region.charge(&g, self.slot, pools, size)
    }

    /// Gives back what [`Process::charge`] took.
    pub(crate) fn uncharge(&self, pools: Pools, size: u64) {
        let region = &self.machine.region;
        // Without the machine's lock (a stuck holder) the charge stays with
        // this process's slot, given back when the slot is released.
        if let Ok(g) = region.lock(self.slot) {
            region.uncharge(&g, self.slot, pools, size);
        }
    }

    /// The last reference of an allocation went: give its pages back, then
    /// its extent, then its capacity (or its hold on an export). Runs
    /// without any process lock held.
    pub(crate) fn finish_release(&self, shard_index: u8, released: Option<Alloc>) {
        let Some(a) = released else {
            return;
        };
        let region = &self.machine.region;
        let last_holder = match a.export {
            Some(id) => {
                // Without the machine's lock this process stays a holder (the
                // extent is kept) until its slot is released.
                region
                    .lock(self.slot)
                    .is_ok_and(|g| region.drop_holder(&g, id.get(), self.slot))
            }
            None => true,
        };
        match a.source() {
            Source::Imported(file) => {
                if last_holder {
                    file.punch(a.offset, a.extent_len());
                }
            }
            // Otherwise an importer still maps the extent: its offsets are
            // never handed out again, and the last holder punches.
            Source::Local if last_holder => {
                let file = self.shards.lock(shard_index).file.clone();
                if let Some(file) = &file {
                    file.punch(a.offset, a.extent_len());
                }
                self.shards
                    .lock(shard_index)
                    .extents
                    .give(a.offset, a.extent_len());
            }
            Source::Local => {}
            // The file goes with the last descriptor and mapping of it.
            Source::Own(_) => {}
        }
        if a.export.is_none() {
            self.uncharge(a.charged, a.size);
        }
    }

    /// Drops an internal handle (a live one; a stale one is nothing to
    /// drop), releasing its allocation if that was the last reference.
    pub(crate) fn drop_handle(&self, id: super::handles::HandleId) {
        let released = self
            .shards
            .lock(id.shard)
            .remove_handle(id)
            .unwrap_or_default();
        self.finish_release(id.shard, released);
    }

    /// Gives back the pages of extents a dead importer left (see
    /// `Region::take_orphans`). Cheap when there are none.
    pub(crate) fn collect_orphans(&self) {
        if !self.machine.region.has_orphans(self.slot) {
            return;
        }
        let orphans = {
            let Ok(g) = self.machine.region.lock(self.slot) else {
                return;
            };
            self.machine.region.take_orphans(&g, self.slot)
        };
        for (pool, offset, size) in orphans {
            let file = self.shards.lock(pool as u8).file.clone();
            if let Some(file) = file {
                file.punch(offset, size);
            }
        }
    }
}

impl Process {
    /// The prologue of a question about a device's pools: counted, the
    /// device `target` names (107001) and the thread's (107002), then the
    /// pools of dead processes given back, so that the answer counts only
    /// what live processes hold.
    pub(crate) fn enter_pool_query(&self, target: Target) -> Result<u32> {
        self.enter(Op::Query)?;
        let device = self.target(target)?;
        self.on_device()?;
        let g = self.machine.region.lock(self.slot)?;
        self.machine.region.reap(&g);
        Ok(device)
    }
}
