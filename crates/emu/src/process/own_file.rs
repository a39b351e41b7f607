//! An exported allocation gets a file of its own, so that an importer
//! receives a descriptor of the exported bytes and of nothing else this
//! process holds.
//!
//! Allocations live as extents of one pool file per device (one descriptor
//! whatever the number of handles). At its export to other processes (or,
//! when it could not move then, at its first import) an allocation is
//! moved: its bytes are copied into a new sealed file, every mapping of it
//! is replaced, at the same address, by a mapping of that file, and its
//! extent of the pool is given back. While it moves, its mappings are
//! marked `Moving`: an unmap or a copy through them answers `MappingInUse`,
//! and no new mapping of it is made. Only writes through a device address
//! by the CPU itself, which ACL programs do not make (device memory is
//! reached with copies), could land in the old pages meanwhile.

use std::sync::Arc;

use aclmem_core::AclError;

use super::address_space::{MapEntry, MapState};
use super::handles::Source;
use super::{Process, Result};
use crate::errors::Situation;
use crate::os::pool::PoolFile;
use crate::os::sys;
use crate::os::window::Window;

impl Process {
    /// Moves allocation `alloc` of shard `index` (which the caller holds a
    /// reference of) into a file of its own, with its mappings. Nothing to
    /// do for one that has one already.
    pub(crate) fn give_own_file(&self, index: u8, alloc: u32) -> Result<()> {
        // Claim: its mappings, none in use, are marked; no new one is made.
        let (pool, offset, len, maps) = {
            let mut va = self.va.lock();
            let mut shard = self.shards.lock(index);
            let pool = shard.file.clone();
            let a = shard
                .allocs
                .get_mut(alloc as usize)
                .ok_or(Situation::StaleHandle.code())?;
            if !matches!(a.source(), Source::Local) {
                return Ok(());
            }
            // Another thread is moving it (two first imports at once):
            // one move only, or the pool's extent would be given twice.
            if a.moving {
                return Err(Situation::MappingInUse.code());
            }
            let pool = pool.ok_or(AclError::INTERNAL_ERROR)?;
            let ours = |e: &MapEntry| e.shard == index && e.alloc == alloc;
            let busy = va.maps.values().filter(|e| ours(e)).any(|e| {
                e.state != MapState::Ready || e.window.as_ref().is_none_or(Window::pinned)
            });
            if busy {
                return Err(Situation::MappingInUse.code());
            }
            // Out of their entries, marked Moving: no copy pins them.
            let maps: Vec<(usize, Window)> = va
                .maps
                .iter_mut()
                .filter(|(_, e)| ours(e))
                .filter_map(|(&at, e)| {
                    e.state = MapState::Moving;
                    Some((at, e.window.take()?))
                })
                .collect();
            a.moving = true;
            (pool, a.offset, a.extent_len(), maps)
        };
        // The copy and the new mappings, with no lock held.
        let moved = move_into_own_file(&pool, offset, len, &maps);
        // Commit, or roll back (the mappings are the pool's again then).
        {
            let mut va = self.va.lock();
            for (at, window) in maps {
                if let Some(e) = va.maps.get_mut(&at) {
                    e.state = MapState::Ready;
                    e.window = Some(window);
                }
            }
        }
        let mut shard = self.shards.lock(index);
        let a = shard.allocs.get_mut(alloc as usize);
        match (moved, a) {
            (Ok(file), Some(a)) => {
                a.give_own_file(file);
                a.moving = false;
                // The pool's extent is free: its pages go, then its offsets.
                pool.punch(offset, len);
                shard.extents.give(offset, len);
                Ok(())
            }
            (Err(e), a) => {
                if let Some(a) = a {
                    a.moving = false;
                }
                Err(e)
            }
            (Ok(_), None) => Err(AclError::INTERNAL_ERROR),
        }
    }
}

/// Copies `len` bytes at `offset` of `pool` into a new sealed file and maps
/// that file over each of the windows `maps` (by address); on failure the
/// windows already re-bound are put back on the pool.
fn move_into_own_file(
    pool: &PoolFile,
    offset: u64,
    len: u64,
    maps: &[(usize, Window)],
) -> Result<Arc<PoolFile>> {
    let fd = sys::new_pool_file("aclmem-emu-export", len).map_err(crate::env::fd_error)?;
    let file = Arc::new(PoolFile::adopt(fd));
    crate::os::transfer::copy_between(pool.fd(), offset, file.fd(), 0, len)
        .map_err(|_| AclError::RT_MEMORY_ALLOCATION)?;
    let frozen: Vec<_> = maps
        .iter()
        .map(|(_, w)| w.freeze())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Situation::MappingInUse.code())?;
    for (i, w) in frozen.iter().enumerate() {
        // The new file holds the same bytes.
        if let Err(e) = w.rebind(file.fd(), 0) {
            for back in &frozen[..i] {
                // The pool still holds the bytes.
                let _ = back.rebind(pool.fd(), offset);
            }
            return Err(if e == rustix::io::Errno::NOMEM {
                Situation::MapCountLimit.code()
            } else {
                AclError::RT_MEMORY_ALLOCATION
            });
        }
    }
    Ok(file)
}
