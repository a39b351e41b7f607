//! The registry of shareable handles and IPC keys: who exported what, who
//! may import it (the whitelist) and who holds it.

use std::sync::atomic::Ordering;

use aclmem_core::AclError;

use super::layout::*;
use super::pools::Pools;
use super::region::{Guard, Region};
use super::slots::sub;
use crate::errors::Situation;

/// A whitelist entry: the pid, and the low 32 bits of the start time.
fn whitelist_entry(pid: i32, started: u64) -> u64 {
    (started & 0xFFFF_FFFF) << 32 | u64::from(pid as u32)
}

/// An entry's kind before any export used it.
pub(crate) const NEVER_USED: u32 = 0;

/// Where export `id`'s entry may be, in order: from the entry its low bits
/// name (ids are random, so entries spread evenly) around the table.
fn probe(id: u64) -> impl Iterator<Item = usize> {
    let start = id as usize & (MAX_EXPORTS - 1);
    (0..MAX_EXPORTS).map(move |k| (start + k) & (MAX_EXPORTS - 1))
}

impl Region {
    /// Registers an export of `slot`'s memory. Its charge moves from the
    /// slot to the export (so it outlives the exporter while anyone holds
    /// it); the exporter is its first holder.
    #[allow(clippy::too_many_arguments)]
    pub fn export(
        &self,
        g: &Guard<'_>,
        kind: ExportKind,
        slot: u32,
        check_pid: bool,
        pools: Pools,
        info: ExportInfo,
    ) -> Result<u64, AclError> {
        let l = self.layout();
        // A random id: 64 bits no one guesses, and unique among the live
        // exports (the id is also where its entry is looked for first).
        let id = loop {
            let id = crate::os::sys::random_u64();
            if id != 0 && self.export_index(id).is_none() {
                break id;
            }
        };
        let index = probe(id)
            .find(|&i| l.exports[i].id.load(Ordering::Relaxed) == 0)
            .ok_or(Situation::TooManyExports.code())?;
        let e = &l.exports[index];
        let (exporter_pid, exporter_gen) = self.slot_owner(slot).ok_or(AclError::INTERNAL_ERROR)?;
        e.kind.store(kind as u32, Ordering::Relaxed);
        e.check_pid.store(u32::from(check_pid), Ordering::Relaxed);
        e.exporter_slot.store(slot, Ordering::Relaxed);
        e.exporter_pid.store(exporter_pid, Ordering::Relaxed);
        e.exporter_gen.store(exporter_gen, Ordering::Relaxed);
        e.pool.store(info.pool, Ordering::Relaxed);
        e.device.store(info.device, Ordering::Relaxed);
        e.offset.store(info.offset, Ordering::Relaxed);
        e.size.store(info.size, Ordering::Relaxed);
        e.attr.store(info.attr, Ordering::Relaxed);
        e.location.store(info.location.1, Ordering::Relaxed);
        e.location_id.store(info.location.0, Ordering::Relaxed);
        e.charge_pools.store(pools.word(), Ordering::Relaxed);
        e.withdrawn.store(0, Ordering::Relaxed);
        for w in &e.holders {
            w.store(0, Ordering::Relaxed);
        }
        e.holders[slot as usize / 64].fetch_or(1 << (slot % 64), Ordering::Relaxed);
        e.whitelist_len.store(0, Ordering::Relaxed);
        // The charge moves from the exporter to the export.
        let s = &l.slots[slot as usize];
        for p in pools.iter() {
            sub(&s.charged[p.index()], info.size);
        }
        e.id.store(id, Ordering::Release);
        let _ = g;
        Ok(id)
    }

    /// The entry of the live export `id`: found along its probe sequence,
    /// which ends at an entry never used (a freed entry keeps its kind, so
    /// a search goes on past it).
    fn export_index(&self, id: u64) -> Option<usize> {
        if id == 0 {
            return None;
        }
        let exports = &self.layout().exports;
        probe(id)
            .take_while(|&i| {
                exports[i].id.load(Ordering::Acquire) != 0
                    || exports[i].kind.load(Ordering::Relaxed) != NEVER_USED
            })
            .find(|&i| exports[i].id.load(Ordering::Acquire) == id)
    }

    /// What the registry knows of a live export.
    pub fn export_info(&self, _g: &Guard<'_>, id: u64) -> Option<ExportInfo> {
        let index = self.export_index(id)?;
        let e = &self.layout().exports[index];
        Some(ExportInfo {
            id,
            kind: ExportKind::from_raw(e.kind.load(Ordering::Relaxed)),
            check_pid: e.check_pid.load(Ordering::Relaxed) != 0,
            exporter: (
                e.exporter_slot.load(Ordering::Relaxed),
                e.exporter_gen.load(Ordering::Relaxed),
                e.exporter_pid.load(Ordering::Relaxed),
            ),
            pool: e.pool.load(Ordering::Relaxed),
            offset: e.offset.load(Ordering::Relaxed),
            size: e.size.load(Ordering::Relaxed),
            location: (
                e.location_id.load(Ordering::Relaxed),
                e.location.load(Ordering::Relaxed),
            ),
            attr: e.attr.load(Ordering::Relaxed),
            device: e.device.load(Ordering::Relaxed),
        })
    }

    /// Adds processes (pid, start time) to an export's whitelist;
    /// duplicates are ignored. Returns `false` if the whitelist would
    /// overflow (nothing is added then).
    pub fn add_to_whitelist(
        &self,
        _g: &Guard<'_>,
        id: u64,
        processes: &[(i32, u64)],
    ) -> Option<bool> {
        let e = &self.layout().exports[self.export_index(id)?];
        let len = e.whitelist_len.load(Ordering::Relaxed) as usize;
        let mut present: Vec<u64> = e.whitelist[..len.min(WHITELIST)]
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect();
        let mut new = Vec::new();
        for &(pid, started) in processes {
            let entry = whitelist_entry(pid, started);
            if !present.contains(&entry) {
                present.push(entry);
                new.push(entry);
            }
        }
        if present.len() > WHITELIST {
            return Some(false);
        }
        for (i, p) in new.iter().enumerate() {
            e.whitelist[len + i].store(*p, Ordering::Relaxed);
        }
        e.whitelist_len
            .store(present.len() as u32, Ordering::Release);
        Some(true)
    }

    /// Whether process `pid`, started at `started`, is on an export's
    /// whitelist: the pid and, when the whitelist knew the process, its
    /// start time (a later process with the same pid is not on it).
    pub fn whitelisted(&self, _g: &Guard<'_>, id: u64, pid: i32, started: u64) -> bool {
        let Some(index) = self.export_index(id) else {
            return false;
        };
        let e = &self.layout().exports[index];
        let len = e.whitelist_len.load(Ordering::Relaxed) as usize;
        e.whitelist[..len.min(WHITELIST)].iter().any(|p| {
            let p = p.load(Ordering::Relaxed);
            p == whitelist_entry(pid, started) || p == whitelist_entry(pid, 0)
        })
    }

    /// Stops an export from being imported any more (its holders keep it).
    pub fn withdraw(&self, _g: &Guard<'_>, id: u64) -> bool {
        match self.export_index(id) {
            Some(i) => {
                self.layout().exports[i]
                    .withdrawn
                    .store(1, Ordering::Release);
                true
            }
            None => false,
        }
    }

    /// Whether an export was withdrawn.
    pub fn withdrawn(&self, _g: &Guard<'_>, id: u64) -> bool {
        self.export_index(id)
            .is_some_and(|i| self.layout().exports[i].withdrawn.load(Ordering::Acquire) != 0)
    }

    /// The fork generation the region was mapped in.
    pub fn fork_generation(&self) -> u64 {
        self.fork_gen
    }

    /// Whether `slot` holds the export.
    pub fn holds(&self, _g: &Guard<'_>, id: u64, slot: u32) -> bool {
        self.export_index(id).is_some_and(|i| {
            self.layout().exports[i].holders[slot as usize / 64].load(Ordering::Relaxed)
                & (1 << (slot % 64))
                != 0
        })
    }

    /// Makes `slot` a holder of the export.
    pub fn add_holder(&self, _g: &Guard<'_>, id: u64, slot: u32) -> bool {
        match self.export_index(id) {
            Some(i) => {
                self.layout().exports[i].holders[slot as usize / 64]
                    .fetch_or(1 << (slot % 64), Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// `slot` no longer holds the export. Returns whether that was the last
    /// holder, in which case the export is gone and its charge given back;
    /// the caller gives its pages back.
    pub fn drop_holder(&self, g: &Guard<'_>, id: u64, slot: u32) -> bool {
        let Some(i) = self.export_index(id) else {
            return false;
        };
        if self.clear_holder(g, i, slot) {
            self.free_export(g, i, None);
            true
        } else {
            false
        }
    }

    /// Clears a holder bit; whether no holder is left.
    pub(super) fn clear_holder(&self, _g: &Guard<'_>, index: usize, slot: u32) -> bool {
        let e = &self.layout().exports[index];
        e.holders[slot as usize / 64].fetch_and(!(1 << (slot % 64)), Ordering::Relaxed);
        e.holders.iter().all(|w| w.load(Ordering::Relaxed) == 0)
    }

    /// Removes an export whose last holder went, giving its charge back.
    /// When that holder was a dead process (`reaped`), nobody gives the
    /// pages back now: the exporter is told through its orphan list, if it
    /// still lives.
    pub(super) fn free_export(&self, _g: &Guard<'_>, index: usize, reaped: Option<u32>) {
        let l = self.layout();
        let e = &l.exports[index];
        e.id.store(0, Ordering::Release);
        let size = e.size.load(Ordering::Relaxed);
        for p in Pools::from_word(e.charge_pools.load(Ordering::Relaxed)).iter() {
            sub(&l.header.used[p.index()], size);
        }
        let exporter = e.exporter_slot.load(Ordering::Relaxed);
        let exporter_gen = e.exporter_gen.load(Ordering::Relaxed);
        // An export with a file of its own leaves no extent behind: the
        // file goes with the last descriptor and mapping of it.
        if reaped.is_some_and(|dead| dead != exporter)
            && e.pool.load(Ordering::Relaxed) != OWN_FILE
            && let Some(s) = l.slots.get(exporter as usize)
            && s.state.load(Ordering::Relaxed) == LIVE
            && s.generation.load(Ordering::Relaxed) == exporter_gen
        {
            let n = s.orphan_count.load(Ordering::Relaxed) as usize;
            if n < ORPHANS {
                let pool = u64::from(e.pool.load(Ordering::Relaxed));
                s.orphans[2 * n].store(
                    pool << 56 | e.offset.load(Ordering::Relaxed),
                    Ordering::Relaxed,
                );
                s.orphans[2 * n + 1].store(size, Ordering::Relaxed);
                s.orphan_count.store(n as u32 + 1, Ordering::Release);
            }
        }
    }

    /// Live exports on the machine.
    pub fn export_count(&self) -> usize {
        let l = self.layout();
        l.exports
            .iter()
            .filter(|e| e.id.load(Ordering::Acquire) != 0)
            .count()
    }

    /// Whether `importer` (slot, pid) may import `id`, and if so, makes it a
    /// holder: the check the exporter side runs for every import.
    /// `lock_owner` is the slot of the process running the check (for the
    /// machine lock's liveness).
    pub fn admit(
        &self,
        lock_owner: u32,
        (importer_slot, importer_pid): (u32, i32),
        id: u64,
        kind: ExportKind,
    ) -> Result<ExportInfo, AclError> {
        let g = self.lock(lock_owner)?;
        let info = self
            .export_info(&g, id)
            .filter(|i| i.kind == kind && !self.withdrawn(&g, id))
            .ok_or(Situation::UnknownShareable.code())?;
        if info.exporter.0 == importer_slot {
            return Err(Situation::ImportOwnExport.code());
        }
        if !self.slot_alive(info.exporter.0) {
            // The exporter died before anyone imported: the memory went
            // with it (reaping frees the entry too).
            self.reap(&g);
            return Err(Situation::UnknownShareable.code());
        }
        let started = self.layout().slots[importer_slot as usize % MAX_PROCS]
            .start_time
            .load(Ordering::Acquire);
        if info.check_pid && !self.whitelisted(&g, id, importer_pid, started) {
            return Err(Situation::NotWhitelisted.code());
        }
        if self.holds(&g, id, importer_slot) {
            return Err(Situation::ImportTwice.code());
        }
        self.add_holder(&g, id, importer_slot);
        Ok(info)
    }
}
