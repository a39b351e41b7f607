//! The part of an emulated machine that its processes share: configuration,
//! capacity per pool, the process table and the registry of shareable
//! handles.
//!
//! It lives in one file mapped by every process of the machine
//! (`/dev/shm/aclmem-emu.<uid>.<name>`), or, for a private in-process
//! machine, in an anonymous memfd. Every field is an atomic, so processes
//! never race on plain memory. Mutations happen under one lock word
//! ([`Region::lock`]): a compare-and-swap from 0 to the owner's slot, a
//! futex to sleep on, and, if the owner is found dead, a takeover followed by
//! recomputing the derived counters from the per-process ones, so a process
//! killed inside the critical section leaves nothing inconsistent.
//!
//! Liveness: a real process holds an open-file-description lock on byte
//! `slot` of the file for as long as it lives; the kernel drops it at exit,
//! SIGKILL included, and it never outlives the process (a forked child closes
//! its copy). Simulated processes of a private machine are alive until they
//! are dropped.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use aclmem_core::{AclError, CannVersion, RunMode};

use crate::config::{EmuConfig, MAX_DEVICES};
use crate::sys;

/// Process slots per machine.
pub const MAX_PROCS: usize = 256;
/// Shareable handles (and IPC keys) alive on a machine at once.
pub const MAX_EXPORTS: usize = 16384;
/// Pids one shareable handle's whitelist holds.
pub const WHITELIST: usize = 128;
/// Capacity pools: device memory and the 1 GiB pool of each device, host
/// memory, and the platform's host-NUMA P2P limit.
pub const MAX_POOLS: usize = 2 * MAX_DEVICES as usize + 2;
/// Extents a dead importer left for their exporter to give back.
const ORPHANS: usize = 16;

const MAGIC: u64 = 0x6163_6c6d_656d_7534; // "aclmemu4"
const CONFIG_WORDS: usize = 24;
const SOC_BYTES: usize = 64;
const EXPORT_INDEX_BITS: u32 = 14;
const _: () = assert!(1 << EXPORT_INDEX_BITS == MAX_EXPORTS);

/// A capacity pool of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolId {
    /// Device memory of one device.
    Device(u32),
    /// The pre-allocated 1 GiB page pool of one device.
    Huge1G(u32),
    /// Host DDR (plain and NUMA).
    Host,
    /// The platform's limit on host-NUMA P2P memory (A3 super-nodes).
    HostNumaP2p,
}

impl PoolId {
    pub(crate) fn index(self) -> usize {
        match self {
            PoolId::Device(d) => d as usize,
            PoolId::Huge1G(d) => MAX_DEVICES as usize + d as usize,
            PoolId::Host => 2 * MAX_DEVICES as usize,
            PoolId::HostNumaP2p => 2 * MAX_DEVICES as usize + 1,
        }
    }

    fn from_index(i: usize) -> PoolId {
        let d = MAX_DEVICES as usize;
        match i {
            i if i < d => PoolId::Device(i as u32),
            i if i < 2 * d => PoolId::Huge1G((i - d) as u32),
            i if i == 2 * d => PoolId::Host,
            _ => PoolId::HostNumaP2p,
        }
    }
}

const FREE: u32 = 0;
const LIVE: u32 = 1;
const REAL: u32 = 1;
const SIMULATED: u32 = 2;

/// What kind of export an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// `aclrtMemExportToShareableHandle(V2)`.
    Vmm = 1,
    /// `aclrtIpcMemGetExportKey`.
    Ipc = 2,
}

#[repr(C)]
struct Header {
    magic: AtomicU64,
    lock: AtomicU32,
    waiters: AtomicU32,
    config: [AtomicU64; CONFIG_WORDS],
    next_seq: AtomicU64,
    exports_hwm: AtomicU32,
    _pad: AtomicU32,
    capacity: [AtomicU64; MAX_POOLS],
    used: [AtomicU64; MAX_POOLS],
}

#[repr(C)]
struct Slot {
    state: AtomicU32,
    kind: AtomicU32,
    pid: AtomicI32,
    _pad: AtomicU32,
    generation: AtomicU64,
    listener: AtomicU64,
    charged: [AtomicU64; MAX_POOLS],
    orphan_count: AtomicU32,
    _pad2: AtomicU32,
    orphans: [AtomicU64; 2 * ORPHANS],
}

#[repr(C)]
struct Export {
    id: AtomicU64,
    kind: AtomicU32,
    check_pid: AtomicU32,
    exporter_slot: AtomicU32,
    exporter_pid: AtomicI32,
    exporter_gen: AtomicU64,
    pool: AtomicU32,
    device: AtomicU32,
    offset: AtomicU64,
    size: AtomicU64,
    attr: AtomicU32,
    location: AtomicU32,
    location_id: AtomicU32,
    charge_pools: AtomicU32,
    withdrawn: AtomicU32,
    holders: [AtomicU64; MAX_PROCS / 64],
    whitelist_len: AtomicU32,
    whitelist: [AtomicI32; WHITELIST],
}

#[repr(C)]
struct Layout {
    header: Header,
    slots: [Slot; MAX_PROCS],
    exports: [Export; MAX_EXPORTS],
}

/// The size of a machine file.
pub const REGION_BYTES: usize = std::mem::size_of::<Layout>().next_multiple_of(4096);

/// A shareable handle as the registry records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportInfo {
    /// The shareable handle value.
    pub id: u64,
    /// VMM handle or IPC key.
    pub kind: ExportKind,
    /// Whether the whitelist is enforced.
    pub check_pid: bool,
    /// The exporting process's slot, generation and pid.
    pub exporter: (u32, u64, i32),
    /// The exporter's pool the memory is in, and where.
    pub pool: u32,
    /// Offset of the memory in that pool.
    pub offset: u64,
    /// Its size.
    pub size: u64,
    /// The device (or NUMA node) and location type, and the attribute.
    pub location: (u32, u32),
    /// The raw `aclrtMemAttr`.
    pub attr: u32,
    /// The device the memory belongs to (for IPC keys: the exporting
    /// device).
    pub device: u32,
}

/// The mapped shared state of one machine.
pub struct Region {
    base: usize,
    /// The fork generation the region was mapped in (see `crate::fork`).
    fork_gen: u64,
    /// The file (or memfd) behind the mapping, opened by this process; it
    /// is also the descriptor through which liveness is probed.
    file: OwnedFd,
    /// Held only by a real process: the open file description whose byte
    /// locks say this process's slots are alive.
    holder: Option<OwnedFd>,
}

// SAFETY: the mapping is shared memory accessed only through atomics; the
// descriptors are plain file descriptors.
unsafe impl Send for Region {}
// SAFETY: as above; every access through `&Region` is an atomic operation.
unsafe impl Sync for Region {}

impl Drop for Region {
    fn drop(&mut self) {
        if crate::fork::forked_since(self.fork_gen) {
            // A forked child's copy: the child handler already gave the
            // mapping and the descriptors up (see `crate::fork`).
            std::mem::forget(self.holder.take());
            return;
        }
        // SAFETY: the mapping was made by `map_shared_region` with this
        // size; nothing borrows the region once its owner drops it.
        let _ = unsafe { sys::unmap_region(self.base, REGION_BYTES) };
    }
}

/// The lock on the region; unlocks when dropped.
pub struct Guard<'a> {
    region: &'a Region,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let h = &self.region.layout().header;
        h.lock.store(0, Ordering::Release);
        if h.waiters.load(Ordering::Acquire) > 0 {
            let _ = rustix::thread::futex::wake(&h.lock, rustix::thread::futex::Flags::empty(), 1);
        }
    }
}

impl Region {
    fn layout(&self) -> &Layout {
        // SAFETY: `base` is a live mapping of `REGION_BYTES >= size_of
        // Layout` bytes, page aligned, owned by `self`; `Layout` consists of
        // atomics only, for which every bit pattern (zero included) is valid
        // and shared mutation through `&` is sound.
        unsafe { &*(self.base as *const Layout) }
    }

    /// Maps `file` (at least `REGION_BYTES` long).
    pub fn map(file: OwnedFd, holder: Option<OwnedFd>) -> Result<Region, rustix::io::Errno> {
        let base = sys::map_shared_region(file.as_fd(), REGION_BYTES)?;
        crate::fork::register_mapping(base, REGION_BYTES);
        crate::fork::register_fd(&file);
        if let Some(h) = &holder {
            crate::fork::register_fd(h);
        }
        Ok(Region {
            base,
            fork_gen: crate::fork::generation(),
            file,
            holder,
        })
    }

    /// Whether the region holds an initialised machine.
    pub fn initialised(&self) -> bool {
        self.layout().header.magic.load(Ordering::Acquire) == MAGIC
    }

    /// Writes a fresh machine: `config`, capacities, an empty process table
    /// and registry. The caller makes sure no live process uses it.
    pub fn initialise(&self, config: &EmuConfig) {
        let l = self.layout();
        let h = &l.header;
        h.magic.store(0, Ordering::Release);
        h.lock.store(0, Ordering::Relaxed);
        h.waiters.store(0, Ordering::Relaxed);
        for (w, v) in h.config.iter().zip(encode_config(config)) {
            w.store(v, Ordering::Relaxed);
        }
        // A random start: shareable handles of one machine never repeat,
        // not even across its re-creations.
        h.next_seq
            .store((sys::random_u64() >> 24) | 1, Ordering::Relaxed);
        h.exports_hwm.store(0, Ordering::Relaxed);
        for i in 0..MAX_POOLS {
            h.capacity[i].store(
                initial_capacity(config, PoolId::from_index(i)),
                Ordering::Relaxed,
            );
            h.used[i].store(0, Ordering::Relaxed);
        }
        for s in &l.slots {
            s.state.store(FREE, Ordering::Relaxed);
            s.generation.store(0, Ordering::Relaxed);
            s.listener.store(0, Ordering::Relaxed);
            s.orphan_count.store(0, Ordering::Relaxed);
            for c in &s.charged {
                c.store(0, Ordering::Relaxed);
            }
        }
        for e in &l.exports {
            e.id.store(0, Ordering::Relaxed);
        }
        h.magic.store(MAGIC, Ordering::Release);
    }

    /// The configuration the machine was created with.
    pub fn config(&self) -> Option<EmuConfig> {
        let words: Vec<u64> = self
            .layout()
            .header
            .config
            .iter()
            .map(|w| w.load(Ordering::Acquire))
            .collect();
        decode_config(&words)
    }

    /// Takes the lock for the process in slot `me`. A lock left behind by a
    /// killed process is taken over (and the derived counters recomputed)
    /// instead of waited for forever.
    pub fn lock(&self, me: u32) -> Guard<'_> {
        let h = &self.layout().header;
        let want = me + 1;
        let mut spins = 0u32;
        loop {
            match h
                .lock
                .compare_exchange(0, want, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return Guard { region: self },
                Err(_) if spins < 200 => {
                    spins += 1;
                    std::hint::spin_loop();
                }
                Err(owner) => {
                    h.waiters.fetch_add(1, Ordering::AcqRel);
                    let timeout = rustix::thread::futex::Timespec {
                        tv_sec: 0,
                        tv_nsec: 20_000_000,
                    };
                    let _ = rustix::thread::futex::wait(
                        &h.lock,
                        rustix::thread::futex::Flags::empty(),
                        owner,
                        Some(&timeout),
                    );
                    h.waiters.fetch_sub(1, Ordering::AcqRel);
                    if owner != 0
                        && h.lock.load(Ordering::Acquire) == owner
                        && !self.slot_alive(owner - 1)
                    {
                        // The owner died holding the lock: take it over.
                        if h.lock
                            .compare_exchange(owner, want, Ordering::Acquire, Ordering::Relaxed)
                            .is_ok()
                        {
                            let g = Guard { region: self };
                            self.recompute_used(&g);
                            return g;
                        }
                    }
                }
            }
        }
    }

    /// `used` of every pool from the per-process charges and the charges of
    /// the live exports: what a dead lock owner may have left half-done.
    fn recompute_used(&self, _g: &Guard<'_>) {
        let l = self.layout();
        let mut used = vec![0u64; MAX_POOLS];
        for s in &l.slots {
            if s.state.load(Ordering::Relaxed) == LIVE {
                for (u, c) in used.iter_mut().zip(&s.charged) {
                    *u += c.load(Ordering::Relaxed);
                }
            }
        }
        let hwm = l.header.exports_hwm.load(Ordering::Relaxed) as usize;
        for e in &l.exports[..hwm.min(MAX_EXPORTS)] {
            if e.id.load(Ordering::Relaxed) != 0 {
                for p in charge_pools(e.charge_pools.load(Ordering::Relaxed)) {
                    used[p.index()] += e.size.load(Ordering::Relaxed);
                }
            }
        }
        for (u, v) in l.header.used.iter().zip(used) {
            u.store(v, Ordering::Relaxed);
        }
    }

    // ----- process table ------------------------------------------------

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
            s.listener.store(0, Ordering::Relaxed);
            s.orphan_count.store(0, Ordering::Relaxed);
            for c in &s.charged {
                c.store(0, Ordering::Relaxed);
            }
            return Ok((i as u32, generation));
        }
        Err(AclError::RT_RESOURCE_ALLOC_FAIL)
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
            _ => sys::byte_locked_elsewhere(self.file.as_fd(), u64::from(slot)).unwrap_or(true),
        }
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
        let hwm = l.header.exports_hwm.load(Ordering::Relaxed) as usize;
        for (i, e) in l.exports[..hwm.min(MAX_EXPORTS)].iter().enumerate() {
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
        pools: &[PoolId],
        size: u64,
    ) -> Result<(), AclError> {
        let h = &self.layout().header;
        for p in pools {
            let i = p.index();
            let free = h.capacity[i]
                .load(Ordering::Relaxed)
                .saturating_sub(h.used[i].load(Ordering::Relaxed));
            if free < size {
                return Err(AclError::RT_MEMORY_ALLOCATION);
            }
        }
        let s = &self.layout().slots[slot as usize];
        for p in pools {
            h.used[p.index()].fetch_add(size, Ordering::Relaxed);
            s.charged[p.index()].fetch_add(size, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Gives back what [`Region::charge`] took.
    pub fn uncharge(&self, _g: &Guard<'_>, slot: u32, pools: &[PoolId], size: u64) {
        let h = &self.layout().header;
        let s = &self.layout().slots[slot as usize];
        for p in pools {
            let i = p.index();
            sub(&s.charged[i], size);
            sub(&h.used[i], size);
        }
    }

    /// (capacity, used) of a pool.
    pub fn pool(&self, pool: PoolId) -> (u64, u64) {
        let h = &self.layout().header;
        (
            h.capacity[pool.index()].load(Ordering::Acquire),
            h.used[pool.index()].load(Ordering::Acquire),
        )
    }

    /// Sets a pool's capacity (fault injection; what is allocated stays).
    pub fn set_capacity(&self, pool: PoolId, bytes: u64) {
        self.layout().header.capacity[pool.index()].store(bytes, Ordering::Release);
    }

    // ----- exports --------------------------------------------------------

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
        pools: &[PoolId],
        info: ExportInfo,
    ) -> Result<u64, AclError> {
        let l = self.layout();
        let h = &l.header;
        // The first free entry below the high-water mark, else the next one
        // (entries above it were never touched: the file stays sparse).
        let hwm = h.exports_hwm.load(Ordering::Relaxed) as usize;
        let index = l.exports[..hwm.min(MAX_EXPORTS)]
            .iter()
            .position(|e| e.id.load(Ordering::Relaxed) == 0)
            .or((hwm < MAX_EXPORTS).then_some(hwm))
            .ok_or(crate::errors::Situation::TooManyExports.code())?;
        let e = &l.exports[index];
        let seq = h.next_seq.fetch_add(1, Ordering::Relaxed);
        let id = (seq << EXPORT_INDEX_BITS) | index as u64;
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
        e.charge_pools.store(encode_pools(pools), Ordering::Relaxed);
        e.withdrawn.store(0, Ordering::Relaxed);
        for w in &e.holders {
            w.store(0, Ordering::Relaxed);
        }
        e.holders[slot as usize / 64].fetch_or(1 << (slot % 64), Ordering::Relaxed);
        e.whitelist_len.store(0, Ordering::Relaxed);
        // The charge moves from the exporter to the export.
        let s = &l.slots[slot as usize];
        for p in pools {
            sub(&s.charged[p.index()], info.size);
        }
        if hwm <= index {
            h.exports_hwm.store(index as u32 + 1, Ordering::Relaxed);
        }
        e.id.store(id, Ordering::Release);
        let _ = g;
        Ok(id)
    }

    fn export_index(&self, id: u64) -> Option<usize> {
        let index = (id & (MAX_EXPORTS as u64 - 1)) as usize;
        (id != 0 && self.layout().exports[index].id.load(Ordering::Acquire) == id).then_some(index)
    }

    /// What the registry knows of a live export.
    pub fn export_info(&self, _g: &Guard<'_>, id: u64) -> Option<ExportInfo> {
        let index = self.export_index(id)?;
        let e = &self.layout().exports[index];
        Some(ExportInfo {
            id,
            kind: if e.kind.load(Ordering::Relaxed) == ExportKind::Ipc as u32 {
                ExportKind::Ipc
            } else {
                ExportKind::Vmm
            },
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

    /// Adds pids to an export's whitelist; duplicates are ignored. Returns
    /// `false` if the whitelist would overflow (nothing is added then).
    pub fn add_to_whitelist(&self, _g: &Guard<'_>, id: u64, pids: &[i32]) -> Option<bool> {
        let e = &self.layout().exports[self.export_index(id)?];
        let len = e.whitelist_len.load(Ordering::Relaxed) as usize;
        let mut present: Vec<i32> = e.whitelist[..len.min(WHITELIST)]
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect();
        let mut new = Vec::new();
        for &p in pids {
            if !present.contains(&p) {
                present.push(p);
                new.push(p);
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

    /// Whether `pid` is on an export's whitelist.
    pub fn whitelisted(&self, _g: &Guard<'_>, id: u64, pid: i32) -> bool {
        let Some(index) = self.export_index(id) else {
            return false;
        };
        let e = &self.layout().exports[index];
        let len = e.whitelist_len.load(Ordering::Relaxed) as usize;
        e.whitelist[..len.min(WHITELIST)]
            .iter()
            .any(|p| p.load(Ordering::Relaxed) == pid)
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
    fn clear_holder(&self, _g: &Guard<'_>, index: usize, slot: u32) -> bool {
        let e = &self.layout().exports[index];
        e.holders[slot as usize / 64].fetch_and(!(1 << (slot % 64)), Ordering::Relaxed);
        e.holders.iter().all(|w| w.load(Ordering::Relaxed) == 0)
    }

    /// Removes an export whose last holder went, giving its charge back.
    /// When that holder was a dead process (`reaped`), nobody gives the
    /// pages back now: the exporter is told through its orphan list, if it
    /// still lives.
    fn free_export(&self, _g: &Guard<'_>, index: usize, reaped: Option<u32>) {
        let l = self.layout();
        let e = &l.exports[index];
        e.id.store(0, Ordering::Release);
        let size = e.size.load(Ordering::Relaxed);
        for p in charge_pools(e.charge_pools.load(Ordering::Relaxed)) {
            sub(&l.header.used[p.index()], size);
        }
        let exporter = e.exporter_slot.load(Ordering::Relaxed);
        let exporter_gen = e.exporter_gen.load(Ordering::Relaxed);
        if reaped.is_some_and(|dead| dead != exporter)
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

    /// Live exports on the machine.
    pub fn export_count(&self) -> usize {
        let l = self.layout();
        let hwm = l.header.exports_hwm.load(Ordering::Acquire) as usize;
        l.exports[..hwm.min(MAX_EXPORTS)]
            .iter()
            .filter(|e| e.id.load(Ordering::Acquire) != 0)
            .count()
    }

    /// The descriptor of the machine file (for liveness probes and
    /// listeners' names).
    pub fn file(&self) -> &OwnedFd {
        &self.file
    }
}

fn sub(a: &AtomicU64, v: u64) {
    let _ = a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| {
        Some(x.saturating_sub(v))
    });
}

fn encode_pools(pools: &[PoolId]) -> u32 {
    // Up to two pools, each index + 1 in 16 bits.
    pools
        .iter()
        .take(2)
        .enumerate()
        .fold(0, |acc, (k, p)| acc | ((p.index() as u32 + 1) << (16 * k)))
}

fn charge_pools(word: u32) -> impl Iterator<Item = PoolId> {
    [word & 0xFFFF, word >> 16]
        .into_iter()
        .filter(|&v| v != 0 && (v as usize) <= MAX_POOLS)
        .map(|v| PoolId::from_index(v as usize - 1))
}

fn initial_capacity(config: &EmuConfig, pool: PoolId) -> u64 {
    match pool {
        PoolId::Device(d) if d < config.devices => config.device_memory as u64,
        PoolId::Huge1G(d) if d < config.devices => config.huge1g_pool as u64,
        PoolId::Host => config.host_memory as u64,
        PoolId::HostNumaP2p => config.host_numa_p2p_limit as u64,
        _ => 0,
    }
}

/// The configuration as fixed words: what every joining process compares.
fn encode_config(c: &EmuConfig) -> [u64; CONFIG_WORDS] {
    let mut w = [0u64; CONFIG_WORDS];
    let soc = c.soc_name.as_bytes();
    w[0] = soc.len().min(SOC_BYTES) as u64;
    for (i, chunk) in soc.chunks(8).take(SOC_BYTES / 8).enumerate() {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        w[1 + i] = u64::from_le_bytes(b);
    }
    w[9] = match c.run_mode {
        RunMode::Ep => 1,
        RunMode::Rc => 2,
    };
    w[10] = c.cann as u64 + 1;
    w[11] = u64::from(c.devices);
    w[12] = c.device_memory as u64;
    w[13] = c.host_memory as u64;
    w[14] = u64::from(c.numa_nodes);
    w[15] = c.huge1g_pool as u64;
    w[16] = u64::from(c.p2p_huge1g_confirmed);
    w[17] = c.host_numa_p2p_limit as u64;
    w
}

fn decode_config(w: &[u64]) -> Option<EmuConfig> {
    let len = (*w.first()? as usize).min(SOC_BYTES);
    let mut soc = Vec::with_capacity(SOC_BYTES);
    for word in &w[1..9] {
        soc.extend_from_slice(&word.to_le_bytes());
    }
    soc.truncate(len);
    Some(EmuConfig {
        soc_name: String::from_utf8(soc).ok()?,
        run_mode: match w[9] {
            1 => RunMode::Ep,
            2 => RunMode::Rc,
            _ => return None,
        },
        cann: *CannVersion::ALL.get((w[10] as usize).checked_sub(1)?)?,
        devices: u32::try_from(w[11]).ok()?,
        device_memory: usize::try_from(w[12]).ok()?,
        host_memory: usize::try_from(w[13]).ok()?,
        numa_nodes: u32::try_from(w[14]).ok()?,
        huge1g_pool: usize::try_from(w[15]).ok()?,
        p2p_huge1g_confirmed: w[16] != 0,
        host_numa_p2p_limit: usize::try_from(w[17]).ok()?,
    })
}

/// How long an importer waits for an exporter's answer before giving up.
pub const IMPORT_TIMEOUT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;
    use aclmem_core::Product;

    #[test]
    fn configurations_survive_the_round_trip() {
        for p in Product::ALL {
            let mut c = EmuConfig::preset(p);
            c.cann = CannVersion::V8_3;
            assert_eq!(decode_config(&encode_config(&c)), Some(c));
        }
    }

    #[test]
    fn pool_ids_round_trip() {
        for p in [
            PoolId::Device(0),
            PoolId::Device(63),
            PoolId::Huge1G(5),
            PoolId::Host,
            PoolId::HostNumaP2p,
        ] {
            assert_eq!(PoolId::from_index(p.index()), p);
        }
        let w = encode_pools(&[PoolId::Device(3), PoolId::Huge1G(3)]);
        assert_eq!(
            charge_pools(w).collect::<Vec<_>>(),
            [PoolId::Device(3), PoolId::Huge1G(3)]
        );
        assert_eq!(charge_pools(0).count(), 0);
    }

    // The machine file is a few megabytes (sparse: pages are touched only
    // as slots and exports are used).
    const _: () = assert!(REGION_BYTES < 16 << 20);
}
