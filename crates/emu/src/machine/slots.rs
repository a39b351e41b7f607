//! The process table and the capacity every process charges.

use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};

use aclmem_core::AclError;

use super::layout::*;
use super::pools::{PoolId, Pools};
use super::region::{Guard, Region};
use crate::os::sys;

impl Region {
    /// Claims a free slot for a process. A real process's slot is bound to
    /// this file's open description by a byte lock (see the module docs).
    pub fn claim_slot(&self, pid: i32, simulated: bool) -> Result<(u32, u64), AclError> {
        let l = self.layout();
        for (i, s) in l.slots.iter().enumerate() {
            if s.state.load(Ordering::Acquire) != FREE {
                continue;
            }
            if !simulated {
                let holder = self.holder.as_ref().ok_or(AclError::INTERNAL_ERROR)?;
                match sys::lock_byte(holder.as_fd(), i as u64) {
                    Ok(true) => {}
                    // Another process still holds this byte (it is joining).
                    Ok(false) => continue,
                    Err(_) => return Err(AclError::RT_RESOURCE_ALLOC_FAIL),
                }
            }
            if s.state
                .compare_exchange(FREE, LIVE, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            let generation = s.generation.fetch_add(1, Ordering::AcqRel) + 1;
            s.kind
                .store(if simulated { SIMULATED } else { REAL }, Ordering::Relaxed);
            s.pid.store(pid, Ordering::Relaxed);
            let started = if simulated {
                0
            } else {
                sys::start_time(pid).unwrap_or(0)
            };
            s.start_time.store(started, Ordering::Relaxed);
            s.listener.store(0, Ordering::Relaxed);
            s.orphan_count.store(0, Ordering::Relaxed);
            for c in &s.charged {
                c.store(0, Ordering::Relaxed);
            }
            return Ok((i as u32, generation));
        }
        if !simulated && self.release_a_dead_slot() {
            return self.claim_slot(pid, simulated);
        }
        Err(AclError::RT_RESOURCE_ALLOC_FAIL)
    }

    /// Every slot is taken: frees one whose process died (its byte lock is
    /// free to take), holding that byte while it is released so that the
    /// machine's lock is taken as a live slot. Whether one was freed.
    fn release_a_dead_slot(&self) -> bool {
        let Some(holder) = self.holder.as_ref() else {
            return false;
        };
        for (i, s) in self.layout().slots.iter().enumerate() {
            if s.state.load(Ordering::Acquire) != LIVE || s.kind.load(Ordering::Acquire) != REAL {
                continue;
            }
            if sys::lock_byte(holder.as_fd(), i as u64) == Ok(true) {
                let released = self.lock(i as u32).map(|g| self.release_slot(&g, i as u32));
                let _ = sys::unlock_byte(holder.as_fd(), i as u64);
                return released.is_ok();
            }
        }
        false
    }

    /// Whether slot `slot` belongs to a live process: for a real process,
    /// whether its byte lock is still held by some open file; for a
    /// simulated one, whether it is marked live.
    pub fn slot_alive(&self, slot: u32) -> bool {
        let Some(s) = self.layout().slots.get(slot as usize) else {
            return false;
        };
        if s.state.load(Ordering::Acquire) != LIVE {
            return false;
        }
        match s.kind.load(Ordering::Acquire) {
            SIMULATED => true,
            // A probe that cannot be made counts as alive: never reap a
            // process that may still run.
            _ => sys::byte_locked_elsewhere(self.liveness(), u64::from(slot)).unwrap_or(true),
        }
    }

    /// Whether the process in `slot` is the live process `pid` that started
    /// at the time its slot records: who a peer on a socket really is, even
    /// if a process that left had the same pid.
    pub fn is_member(&self, slot: u32, pid: i32, generation: u64) -> bool {
        let Some(s) = self.layout().slots.get(slot as usize) else {
            return false;
        };
        self.slot_owner(slot) == Some((pid, generation))
            && self.slot_alive(slot)
            && sys::start_time(pid).is_ok_and(|t| t == s.start_time.load(Ordering::Acquire))
    }

    /// The pid and generation of a live slot.
    pub fn slot_owner(&self, slot: u32) -> Option<(i32, u64)> {
        let s = self.layout().slots.get(slot as usize)?;
        (s.state.load(Ordering::Acquire) == LIVE).then(|| {
            (
                s.pid.load(Ordering::Acquire),
                s.generation.load(Ordering::Acquire),
            )
        })
    }

    /// Number of live slots.
    pub fn live_slots(&self) -> usize {
        (0..MAX_PROCS as u32)
            .filter(|&i| self.slot_alive(i))
            .count()
    }

    /// Sets the listener nonce of a slot (0 = none).
    pub fn set_listener(&self, slot: u32, nonce: u64) {
        self.layout().slots[slot as usize]
            .listener
            .store(nonce, Ordering::Release);
    }

    /// The listener nonce of a slot, if it listens.
    pub fn listener(&self, slot: u32) -> Option<u64> {
        let n = self
            .layout()
            .slots
            .get(slot as usize)?
            .listener
            .load(Ordering::Acquire);
        (n != 0).then_some(n)
    }

    /// Releases a slot whose process left (or was found dead): its charges,
    /// its holds on exports, its own exports nobody else holds. Returns the
    /// extents that nobody will give back now, by exporter slot.
    pub fn release_slot(&self, g: &Guard<'_>, slot: u32) {
        let l = self.layout();
        let s = &l.slots[slot as usize];
        if s.state.load(Ordering::Acquire) != LIVE {
            return;
        }
        for (u, c) in l.header.used.iter().zip(&s.charged) {
            let v = c.swap(0, Ordering::Relaxed);
            u.fetch_sub(v.min(u.load(Ordering::Relaxed)), Ordering::Relaxed);
        }
        for (i, e) in l.exports.iter().enumerate() {
            if e.id.load(Ordering::Relaxed) == 0 {
                continue;
            }
            if self.clear_holder(g, i, slot) {
                self.free_export(g, i, Some(slot));
            }
        }
        s.listener.store(0, Ordering::Relaxed);
        s.state.store(FREE, Ordering::Release);
    }

    /// This process leaves `slot` for good: released, and its byte lock
    /// dropped, so that the kernel no longer counts it alive even while the
    /// machine file stays open here.
    pub fn leave_slot(&self, g: &Guard<'_>, slot: u32) {
        self.release_slot(g, slot);
        self.unlock_slot_byte(slot);
    }

    /// Drops this process's byte lock on `slot`: the kernel no longer
    /// counts it alive.
    pub fn unlock_slot_byte(&self, slot: u32) {
        if let Some(holder) = &self.holder {
            let _ = sys::unlock_byte(holder.as_fd(), u64::from(slot));
        }
    }

    /// Finds and releases every slot whose process died. Returns how many.
    pub fn reap(&self, g: &Guard<'_>) -> usize {
        let mut reaped = 0;
        for i in 0..MAX_PROCS as u32 {
            let s = &self.layout().slots[i as usize];
            if s.state.load(Ordering::Acquire) == LIVE
                && s.kind.load(Ordering::Acquire) == REAL
                && !self.slot_alive(i)
            {
                self.release_slot(g, i);
                reaped += 1;
            }
        }
        reaped
    }

    // ----- capacity -----------------------------------------------------

    /// Charges `size` bytes to every pool of `pools`, for `slot`: all or
    /// nothing, 207001 if any pool lacks room.
    pub fn charge(
        &self,
        _g: &Guard<'_>,
        slot: u32,
        pools: Pools,
        size: u64,
    ) -> Result<(), AclError> {
        let h = &self.layout().header;
        for p in pools.iter() {
            let i = p.index();
            let free = self
                .capacity(i)
                .saturating_sub(h.used[i].load(Ordering::Relaxed));
            if free < size {
                return Err(AclError::RT_MEMORY_ALLOCATION);
            }
        }
        let s = &self.layout().slots[slot as usize];
        for p in pools.iter() {
            let now = h.used[p.index()].fetch_add(size, Ordering::Relaxed) + size;
            h.peak[p.index()].fetch_max(now, Ordering::Relaxed);
            s.charged[p.index()].fetch_add(size, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Gives back what [`Region::charge`] took.
    pub fn uncharge(&self, _g: &Guard<'_>, slot: u32, pools: Pools, size: u64) {
        let h = &self.layout().header;
        let s = &self.layout().slots[slot as usize];
        for p in pools.iter() {
            let i = p.index();
            sub(&s.charged[i], size);
            sub(&h.used[i], size);
        }
    }

    /// (capacity, used) of a pool.
    pub fn pool(&self, pool: PoolId) -> (u64, u64) {
        let i = pool.index();
        (
            self.capacity(i),
            self.layout().header.used[i].load(Ordering::Acquire),
        )
    }

    /// Counts one more call for the `index`-th `@machine` fault (every
    /// process of the machine together) and gives the count, from 1.
    pub fn count_fault_call(&self, index: usize) -> u64 {
        self.layout().header.fault_calls[index % crate::faults::MACHINE_FAULTS]
            .fetch_add(1, Ordering::AcqRel)
            + 1
    }

    /// The most a pool has held at once since the machine was made.
    pub fn peak(&self, pool: PoolId) -> u64 {
        self.layout().header.peak[pool.index()].load(Ordering::Acquire)
    }

    /// A pool's capacity: the shared word, never above what the
    /// configuration gives the pool.
    fn capacity(&self, i: usize) -> u64 {
        self.layout().header.capacity[i]
            .load(Ordering::Acquire)
            .min(self.limits[i])
    }

    /// Sets a pool's capacity (fault injection; what is allocated stays).
    pub fn set_capacity(&self, pool: PoolId, bytes: u64) {
        self.layout().header.capacity[pool.index()].store(bytes, Ordering::Release);
    }

    /// Whether `slot` has orphaned extents to give back (a cheap check).
    pub fn has_orphans(&self, slot: u32) -> bool {
        self.layout().slots[slot as usize]
            .orphan_count
            .load(Ordering::Acquire)
            > 0
    }

    /// Takes `slot`'s orphaned extents: (pool, offset, size).
    pub fn take_orphans(&self, _g: &Guard<'_>, slot: u32) -> Vec<(u32, u64, u64)> {
        let s = &self.layout().slots[slot as usize];
        let n = s.orphan_count.swap(0, Ordering::AcqRel) as usize;
        (0..n.min(ORPHANS))
            .map(|i| {
                let word = s.orphans[2 * i].load(Ordering::Relaxed);
                (
                    (word >> 56) as u32,
                    word & ((1 << 56) - 1),
                    s.orphans[2 * i + 1].load(Ordering::Relaxed),
                )
            })
            .collect()
    }
}

pub(super) fn sub(a: &AtomicU64, v: u64) {
    let _ = a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| {
        Some(x.saturating_sub(v))
    });
}
