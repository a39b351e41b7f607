//! Physical memory of one process: allocations (extents of a pool file)
//! and the handles that name them, per device shard.
//!
//! A handle is only ever resolved under its shard's guard
//! ([`Shard::entry`]): the generation check and every use of what it names
//! happen in one critical section, so a handle freed (and its slot reused)
//! by another thread is an error code, never another allocation.

use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use aclmem_core::{AclError, Location, MemAttr};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};
use slab::Slab;

use super::Result;
use crate::errors::Situation;
use crate::machine::Pools;
use crate::os::pool::{Extents, PoolFile};

/// Where an allocation's pages are (`F`: the file, or a reference to it).
#[derive(Debug, Clone)]
pub(crate) enum Source<F = Arc<PoolFile>> {
    /// This process's pool of the shard.
    Local,
    /// Another process's pool, imported.
    Imported(F),
    /// A file of its own, from offset 0: an allocation of this process
    /// that was exported (an importer receives those bytes, no others).
    Own(F),
}

/// How an allocation came to be, which decides who may free it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// `aclrtMallocPhysical` or an import of a shareable handle.
    Physical,
    /// `aclrtMalloc` or an IPC import: owned by its one mapping.
    Plain,
}

/// One piece of physical memory. Held by its handles and its mappings;
/// released when the last of them goes.
#[derive(Debug)]
pub(crate) struct Alloc {
    /// The file of an imported allocation or of one with a file of its
    /// own (`own`); `None` for the shard's pool. Kept as two fields rather
    /// than a [`Source`] so that an allocation stays 56 bytes: the
    /// per-handle memory goal of `docs/benchmarks.md`.
    file: Option<Arc<PoolFile>>,
    own: bool,
    pub(crate) offset: u64,
    pub(crate) size: u64,
    pub(crate) attr: MemAttr,
    pub(crate) location: Location,
    pub(crate) location_id: u32,
    /// Capacity pools charged (none for imports).
    pub(crate) charged: Pools,
    pub(crate) refs: u32,
    /// The shareable handle or IPC key it was exported or imported as
    /// (never 0).
    pub(crate) export: Option<NonZeroU64>,
    pub(crate) origin: Origin,
    /// A handle of it was exported, or an export is being registered (a
    /// handle is exported once).
    pub(crate) exported_handle: bool,
    /// Being moved into a file of its own (no new mapping meanwhile).
    pub(crate) moving: bool,
}

// The per-handle memory goal (`docs/benchmarks.md`, goal 7) counts on it.
const _: () = assert!(std::mem::size_of::<Alloc>() <= 56);

impl Alloc {
    /// A new allocation with one reference.
    pub(crate) fn new(
        source: Source,
        offset: u64,
        size: u64,
        (location, location_id, attr): (Location, u32, MemAttr),
        charged: Pools,
        origin: Origin,
    ) -> Alloc {
        let (file, own) = match source {
            Source::Local => (None, false),
            Source::Imported(f) => (Some(f), false),
            Source::Own(f) => (Some(f), true),
        };
        Alloc {
            file,
            own,
            offset,
            size,
            attr,
            location,
            location_id,
            charged,
            refs: 1,
            export: None,
            origin,
            exported_handle: false,
            moving: false,
        }
    }

    /// Where its pages are.
    pub(crate) fn source(&self) -> Source<&Arc<PoolFile>> {
        match (&self.file, self.own) {
            (None, _) => Source::Local,
            (Some(f), false) => Source::Imported(f),
            (Some(f), true) => Source::Own(f),
        }
    }

    /// Its pages are now in a file of its own, from offset 0.
    pub(crate) fn give_own_file(&mut self, file: Arc<PoolFile>) {
        self.file = Some(file);
        self.own = true;
        self.offset = 0;
    }

    pub(crate) fn is_imported(&self) -> bool {
        matches!(self.source(), Source::Imported(_))
    }

    /// The length its extent occupies in the pool file.
    pub(crate) fn extent_len(&self) -> u64 {
        self.size.next_multiple_of(crate::os::pool::PAGE)
    }
}

/// A live handle: which allocation it names.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HandleEntry {
    pub(crate) generation: u32,
    pub(crate) alloc: u32,
    pub(crate) imported: bool,
    pub(crate) exported: bool,
}

/// A handle value: generation (24 bits), shard (8 bits), index + 1 (32
/// bits). Zero and values of other processes or of before `aclFinalize`
/// are not live. Inside the engine a handle is a `HandleId`; the encoding
/// exists only at the API boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HandleId {
    pub(crate) generation: u32,
    pub(crate) shard: u8,
    pub(crate) index: u32,
}

const GENERATION_MASK: u32 = 0xFF_FFFF;

impl HandleId {
    pub(crate) fn encode(self) -> u64 {
        u64::from(self.generation & GENERATION_MASK) << 40
            | u64::from(self.shard) << 32
            | u64::from(self.index + 1)
    }

    /// The id a raw value names, if it could be one (liveness is checked
    /// under the shard's guard).
    pub(crate) fn decode(raw: u64) -> Result<HandleId> {
        let index = (raw & 0xFFFF_FFFF) as u32;
        Ok(HandleId {
            generation: (raw >> 40) as u32,
            shard: (raw >> 32) as u8,
            index: index.checked_sub(1).ok_or(Situation::StaleHandle.code())?,
        })
    }
}

/// A device's (or the host's) share of the process.
#[derive(Debug, Default)]
pub(crate) struct Shard {
    pub(crate) file: Option<Arc<PoolFile>>,
    pub(crate) extents: Extents,
    pub(crate) allocs: Slab<Alloc>,
    pub(crate) handles: Slab<HandleEntry>,
}

impl Shard {
    /// The live entry `id` names: the one generation-checked lookup.
    pub(crate) fn entry(&self, id: HandleId) -> Result<HandleEntry> {
        match self.handles.get(id.index as usize) {
            Some(h) if h.generation == id.generation => Ok(*h),
            _ => Err(Situation::StaleHandle.code()),
        }
    }

    /// The live entry `id` names and its allocation.
    pub(crate) fn resolve(&self, id: HandleId) -> Result<(HandleEntry, &Alloc)> {
        let h = self.entry(id)?;
        let a = self
            .allocs
            .get(h.alloc as usize)
            .ok_or(Situation::StaleHandle.code())?;
        Ok((h, a))
    }

    /// The pool file an allocation's pages are in.
    pub(crate) fn file_of(&self, a: &Alloc) -> Result<Arc<PoolFile>> {
        match a.source() {
            Source::Local => self.file.clone().ok_or(AclError::INTERNAL_ERROR),
            Source::Imported(f) | Source::Own(f) => Ok(Arc::clone(f)),
        }
    }

    /// Drops one reference; returns the allocation if that was the last.
    pub(crate) fn unref(&mut self, alloc: u32) -> Option<Alloc> {
        let a = self.allocs.get_mut(alloc as usize)?;
        a.refs -= 1;
        if a.refs == 0 {
            self.allocs.try_remove(alloc as usize)
        } else {
            None
        }
    }

    /// Removes the handle `id` (checked live) and drops its reference:
    /// the allocation if that was the last.
    pub(crate) fn remove_handle(&mut self, id: HandleId) -> Result<Option<Alloc>> {
        let h = self.entry(id)?;
        self.handles.remove(id.index as usize);
        Ok(self.unref(h.alloc))
    }
}

/// The shards of a process, one per device and one for the host, each on
/// its own cache line(s), with a handle-generation counter each.
pub(crate) struct Shards {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
    generations: Box<[CachePadded<AtomicU32>]>,
}

impl Shards {
    pub(crate) fn new(count: usize) -> Shards {
        Shards {
            shards: (0..count)
                .map(|_| CachePadded::new(Mutex::new(Shard::default())))
                .collect(),
            // A random start, so a handle of another process or of an
            // earlier `aclInit` is not live by accident.
            generations: (0..count)
                .map(|_| CachePadded::new(AtomicU32::new(crate::os::sys::random_u64() as u32)))
                .collect(),
        }
    }

    /// The guard of shard `index` (which exists: the caller computed it
    /// from the configuration or a live entry).
    pub(crate) fn lock(&self, index: u8) -> MutexGuard<'_, Shard> {
        self.shards[index as usize % self.shards.len()].lock()
    }

    /// The guard of the shard a handle value names (`StaleHandle` for a
    /// shard that does not exist).
    pub(crate) fn of(&self, id: HandleId) -> Result<MutexGuard<'_, Shard>> {
        self.shards
            .get(id.shard as usize)
            .map(|s| s.lock())
            .ok_or(Situation::StaleHandle.code())
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (u8, &Mutex<Shard>)> {
        self.shards.iter().enumerate().map(|(i, s)| (i as u8, &**s))
    }

    /// A new handle to `alloc` (whose reference the caller took) in the
    /// locked shard `index`.
    pub(crate) fn new_handle(
        &self,
        shard: &mut Shard,
        index: u8,
        alloc: u32,
        imported: bool,
    ) -> HandleId {
        let generation =
            self.generations[index as usize].fetch_add(1, Ordering::Relaxed) & GENERATION_MASK;
        let slot = shard.handles.insert(HandleEntry {
            generation,
            alloc,
            imported,
            exported: false,
        });
        HandleId {
            generation,
            shard: index,
            index: slot as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_ids_round_trip_and_zero_is_not_one() {
        let h = HandleId {
            generation: 0xAB_CDEF,
            shard: 7,
            index: 41,
        };
        assert_eq!(HandleId::decode(h.encode()), Ok(h));
        assert!(HandleId::decode(0).is_err());
        assert_ne!(h.encode() & 0xFFFF_FFFF, 0);
    }
}
