//! One process of an emulated machine: its handles, reservations and
//! mappings (never shared, never a round trip), and the semantics of every
//! call.
//!
//! Locks: one per device shard (handles, allocations, the device's pool
//! file), one for the address space (reservations, mappings), and the
//! machine's shared lock for capacity and sharing. None is held across a
//! system call: `mmap`, hole punches and copies happen between a
//! "claim" and a "commit" step, and the machine's lock is never taken while
//! a process lock is held.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use aclmem_core::{
    AclError, CannVersion, ExpectedAddress, GIB, Location, MIB, MemAttr, PageClass, Product,
    RawPhysicalMemProp, Verdict, check_platform, is_aligned,
};

use crate::arena::{Arenas, Taken};
use crate::config::EmuConfig;
use crate::errors::Situation;
use crate::pool::{Extents, PAGE, PoolFile};
use crate::shm::{ExportInfo, ExportKind, PoolId, Region};
use crate::{LeakReport, LeakedHandle, LeakedRange, MemKind, Op, args, sys};

pub(crate) type Result<T> = std::result::Result<T, AclError>;

/// The machine as this process sees it: the shared region and what every
/// process agrees on.
pub(crate) struct Machine {
    pub(crate) region: Region,
    pub(crate) config: EmuConfig,
    pub(crate) product: Product,
    /// `None` for a private in-process machine.
    pub(crate) name: Option<String>,
    /// The processes of this OS process on the machine, by slot (imports on
    /// a private machine are served by looking the exporter up here instead
    /// of over a socket; listeners find their process here).
    pub(crate) local: Mutex<Vec<std::sync::Weak<Process>>>,
    /// The next simulated pid of a private machine.
    pub(crate) next_pid: std::sync::atomic::AtomicI32,
    /// The path of a named machine's file, to remove it when the last
    /// process of the machine leaves.
    pub(crate) lock_file: Mutex<Option<std::path::PathBuf>>,
}

impl Drop for Machine {
    fn drop(&mut self) {
        if self.name.is_some() && !crate::fork::forked_since(self.region.fork_generation()) {
            crate::machine::leave_named(self);
        }
    }
}

impl Machine {
    /// 207000 where the physical-memory API does not exist.
    pub(crate) fn vmm_api(&self) -> Result<()> {
        check_platform(self.product, self.config.run_mode, self.config.cann).map_err(|d| d.code())
    }

    pub(crate) fn cann(&self) -> CannVersion {
        self.config.cann
    }

    fn kind(&self) -> MemKind {
        if self.product.has_hbm() {
            MemKind::Hbm
        } else {
            MemKind::Ddr
        }
    }
}

/// Where an allocation's pages are.
#[derive(Debug, Clone)]
enum Source {
    /// This process's pool of the shard.
    Local,
    /// Another process's pool, imported.
    Imported(Arc<PoolFile>),
}

/// One piece of physical memory. Held by its handles and its mappings;
/// released when the last of them goes.
#[derive(Debug)]
struct Alloc {
    source: Source,
    offset: u64,
    size: u64,
    attr: MemAttr,
    location: Location,
    location_id: u32,
    /// Capacity pools charged (index + 1, 0 = none).
    charged: [u8; 2],
    refs: u32,
    /// The shareable handle or IPC key it was exported or imported as.
    export: Option<u64>,
    /// Made by `aclrtMalloc` (not a physical-memory handle).
    plain: bool,
    /// A handle of it was exported (a handle is exported once).
    exported_handle: bool,
}

#[derive(Debug, Clone, Copy)]
struct HandleEntry {
    generation: u32,
    alloc: u32,
    imported: bool,
    exported: bool,
}

/// A slab: stable indices, a free list, no allocation in steady state.
#[derive(Debug)]
struct Slab<T> {
    items: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    fn insert(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = Some(value);
                i
            }
            None => {
                self.items.push(Some(value));
                (self.items.len() - 1) as u32
            }
        }
    }
    fn get(&self, i: u32) -> Option<&T> {
        self.items.get(i as usize)?.as_ref()
    }
    fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        self.items.get_mut(i as usize)?.as_mut()
    }
    fn remove(&mut self, i: u32) -> Option<T> {
        let v = self.items.get_mut(i as usize)?.take();
        if v.is_some() {
            self.free.push(i);
        }
        v
    }
    fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (i as u32, v)))
    }
    fn len(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

/// A device's (or the host's) share of the process.
#[derive(Debug, Default)]
struct Shard {
    file: Option<Arc<PoolFile>>,
    extents: Extents,
    allocs: Slab<Alloc>,
    handles: Slab<HandleEntry>,
}

/// A handle value: generation (24 bits), shard (8 bits), index + 1 (32
/// bits). Zero and values of other processes or of before `aclFinalize`
/// are not live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HandleId {
    generation: u32,
    shard: u8,
    index: u32,
}

impl HandleId {
    fn encode(self) -> u64 {
        u64::from(self.generation & 0xFF_FFFF) << 40
            | u64::from(self.shard) << 32
            | u64::from(self.index + 1)
    }
    fn decode(raw: u64) -> Option<HandleId> {
        let index = (raw & 0xFFFF_FFFF) as u32;
        Some(HandleId {
            generation: (raw >> 40) as u32,
            shard: (raw >> 32) as u8,
            index: index.checked_sub(1)?,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MapState {
    /// Being mapped (the `mmap` runs without the lock).
    Pending,
    Ready,
    /// Being unmapped.
    Unmapping,
}

#[derive(Debug, Clone, Copy)]
struct MapEntry {
    size: usize,
    resv: usize,
    shard: u8,
    alloc: u32,
    state: MapState,
    pins: u32,
    /// `aclrtMemSetAccess` / `aclrtMemGetAccess`: flags, location type, id.
    access: (u64, u32, u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Binding {
    location: Location,
    id: u32,
    imported: bool,
}

#[derive(Debug)]
struct Resv {
    size: usize,
    span: usize,
    mappings: u32,
    binding: Option<Binding>,
    /// Made by `aclrtMalloc` / `aclrtIpcMemImportByKey` around their one
    /// mapping.
    plain: bool,
}

#[derive(Debug, Default)]
struct Va {
    arenas: Arenas,
    resvs: BTreeMap<usize, Resv>,
    maps: BTreeMap<usize, MapEntry>,
}

impl Va {
    fn containing_resv(&self, addr: usize) -> Option<(usize, &Resv)> {
        let (&start, r) = self.resvs.range(..=addr).next_back()?;
        (addr < start + r.size.max(1)).then_some((start, r))
    }
}

/// Streams and contexts (no work runs on them: copies are synchronous).
#[derive(Debug, Default)]
struct Runtime {
    /// Contexts made by `aclrtCreateContext`: handle → device.
    contexts: BTreeMap<u64, u32>,
    /// Streams: handle → device.
    streams: BTreeMap<u64, u32>,
    next: u64,
}

/// What an importer remembers of a received pool file, so that importing
/// many handles of one exporter needs one descriptor.
struct ImportedPool {
    exporter: (u32, u64),
    pool: u32,
    file: std::sync::Weak<PoolFile>,
}

/// A piece of a device range: (address, pool file, offset in the file,
/// length).
pub(crate) type Segment = (usize, Arc<PoolFile>, u64, usize);

/// An injected fault: the `remaining`-th call of `op` fails with `code`.
#[derive(Debug, Clone, Copy)]
struct Fault {
    op: Op,
    remaining: u64,
    code: AclError,
}

/// One process of a machine.
pub(crate) struct Process {
    pub(crate) machine: Arc<Machine>,
    pub(crate) slot: u32,
    pub(crate) generation: u64,
    pub(crate) pid: i32,
    fork_gen: u64,
    shards: Box<[Padded<Mutex<Shard>>]>,
    va: Mutex<Va>,
    hosts: Mutex<BTreeMap<usize, usize>>,
    runtime: Mutex<Runtime>,
    imported: Mutex<Vec<ImportedPool>>,
    /// Handle generations, one counter per shard (device), so threads on
    /// different devices do not share a cache line per call.
    handle_gens: Box<[Padded<AtomicU32>]>,
    /// Call counts, striped by thread (summed when read).
    calls: [Padded<[AtomicU64; Op::ALL.len()]>; STRIPES],
    faults: Mutex<Vec<Fault>>,
    faults_armed: AtomicBool,
    /// Mappings this process may have alive at once: its share of
    /// `vm.max_map_count`, each mapping counted as the two VMAs it may add.
    map_budget: usize,
    live_maps: AtomicUsize,
    scratch: OnceLock<Option<OwnedFd>>,
    pub(crate) listener: OnceLock<crate::share::Listener>,
    left: AtomicBool,
}

/// A value alone on its cache line(s), so counters that different threads
/// update do not share one.
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Stripes of the call counters.
const STRIPES: usize = 8;

/// This thread's stripe of striped counters.
fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|s| *s)
}

/// How many VMAs the rest of the program may use: the process stops
/// mapping before `vm.max_map_count - RESERVED_VMAS`, so unmapping always
/// works and the program's own `mmap` keeps working.
const RESERVED_VMAS: usize = 4096;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every mutation completes before anything that could panic, so a
    // poisoned lock holds consistent data.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Once per process: a message on stderr naming a kernel limit.
fn warn_once(flag: &AtomicBool, message: &str) {
    if !flag.swap(true, Ordering::AcqRel) && std::env::var_os("ACLMEM_EMU_QUIET").is_none() {
        eprintln!("aclmem-emu: {message}");
    }
}
static WARNED_MAPS: AtomicBool = AtomicBool::new(false);
static WARNED_FDS: AtomicBool = AtomicBool::new(false);

fn fd_error(e: rustix::io::Errno) -> AclError {
    if e == rustix::io::Errno::MFILE || e == rustix::io::Errno::NFILE {
        warn_once(
            &WARNED_FDS,
            "out of file descriptors (RLIMIT_NOFILE); the emulator needs one per device and pool in use",
        );
        Situation::FdLimit.code()
    } else {
        AclError::RT_MEMORY_ALLOCATION
    }
}

impl Process {
    /// The fork generation the process was made in.
    pub(crate) fn fork_generation(&self) -> u64 {
        self.fork_gen
    }

    /// Whether the process left its machine (`aclFinalize`, drop).
    pub(crate) fn has_left(&self) -> bool {
        self.left.load(Ordering::Acquire)
    }

    pub(crate) fn new(machine: Arc<Machine>, slot: u32, generation: u64, pid: i32) -> Process {
        let devices = machine.config.devices;
        let shards = (0..=devices)
            .map(|_| Padded(Mutex::new(Shard::default())))
            .collect();
        Process {
            machine,
            slot,
            generation,
            pid,
            fork_gen: crate::fork::generation(),
            shards,
            va: Mutex::new(Va::default()),
            hosts: Mutex::new(BTreeMap::new()),
            runtime: Mutex::new(Runtime::default()),
            imported: Mutex::new(Vec::new()),
            handle_gens: (0..=devices)
                .map(|_| Padded(AtomicU32::new(sys::random_u64() as u32)))
                .collect(),
            calls: [const { Padded([const { AtomicU64::new(0) }; Op::ALL.len()]) }; STRIPES],
            faults: Mutex::new(Vec::new()),
            faults_armed: AtomicBool::new(false),
            map_budget: sys::max_map_count().saturating_sub(RESERVED_VMAS) / 2,
            live_maps: AtomicUsize::new(0),
            scratch: OnceLock::new(),
            listener: OnceLock::new(),
            left: AtomicBool::new(false),
        }
    }

    fn host_shard(&self) -> u8 {
        self.machine.config.devices as u8
    }

    fn shard_of(&self, location: Location, id: u32) -> u8 {
        match location {
            Location::Device => id as u8,
            Location::Host | Location::HostNuma => self.host_shard(),
        }
    }

    /// Every call's prologue: refused in a forked child or after the
    /// process left; counted; an injected fault fires.
    pub(crate) fn enter(&self, op: Op) -> Result<()> {
        if crate::fork::forked_since(self.fork_gen) || self.left.load(Ordering::Acquire) {
            return Err(Situation::ForkedChild.code());
        }
        self.calls[stripe()].0[op as usize].fetch_add(1, Ordering::Relaxed);
        if self.faults_armed.load(Ordering::Acquire) {
            let mut faults = lock(&self.faults);
            if let Some(i) = faults.iter().position(|f| f.op == op) {
                faults[i].remaining -= 1;
                if faults[i].remaining == 0 {
                    let code = faults.remove(i).code;
                    self.faults_armed
                        .store(!faults.is_empty(), Ordering::Release);
                    return Err(code);
                }
            }
        }
        Ok(())
    }

    /// The next handle generation of a shard (random start, so a handle of
    /// another process or of an earlier `aclInit` is not live by accident).
    fn next_generation(&self, shard: u8) -> u32 {
        self.handle_gens[shard as usize]
            .0
            .fetch_add(1, Ordering::Relaxed)
            & 0xFF_FFFF
    }

    /// Gives back the pages of extents a dead importer left (see
    /// `Region::take_orphans`). Cheap when there are none.
    fn collect_orphans(&self) {
        if !self.machine.region.has_orphans(self.slot) {
            return;
        }
        let orphans = {
            let g = self.machine.region.lock(self.slot);
            self.machine.region.take_orphans(&g, self.slot)
        };
        for (pool, offset, size) in orphans {
            let file = lock(&self.shards[pool as usize % self.shards.len()])
                .file
                .clone();
            if let Some(file) = file {
                file.punch(offset, size);
            }
        }
    }

    // ----- physical memory -------------------------------------------------

    fn validate_prop(
        &self,
        prop: &RawPhysicalMemProp,
    ) -> Result<(Location, u32, MemAttr, Verdict)> {
        let m = &self.machine;
        let valid = prop.validate(m.product, m.config.run_mode, m.config.cann)?;
        match valid.location {
            Location::Device if valid.location_id >= m.config.devices => {
                return Err(AclError::RT_INVALID_DEVICEID);
            }
            Location::HostNuma if valid.location_id >= m.config.numa_nodes => {
                return Err(Situation::UnknownNumaNode.code());
            }
            _ => {}
        }
        let id = if valid.location == Location::Host {
            0
        } else {
            valid.location_id
        };
        Ok((valid.location, id, valid.attr, valid.verdict))
    }

    pub(crate) fn granularity(&self, prop: &RawPhysicalMemProp) -> Result<usize> {
        args::granularity(prop)?;
        self.enter(Op::Granularity)?;
        self.machine.vmm_api()?;
        // The runtime layer validates the device id first (107001).
        if prop.location.type_ == Location::Device.raw()
            && prop.location.id >= self.machine.config.devices
        {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        let (_, _, attr, _) = self.validate_prop(prop)?;
        if !self.machine.cann().granularity_answers(attr) {
            return Err(AclError::INVALID_PARAM);
        }
        // Minimum and recommended are the documented granularities (the
        // recommended value is UNCONFIRMED).
        Ok(attr.granularity())
    }

    pub(crate) fn malloc_physical(
        &self,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> Result<u64> {
        args::malloc_physical(size, prop, flags)?;
        self.enter(Op::Malloc)?;
        self.machine.vmm_api()?;
        if prop.location.type_ == Location::Device.raw()
            && prop.location.id >= self.machine.config.devices
        {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        let (location, id, attr, verdict) = self.validate_prop(prop)?;
        if !is_aligned(size, attr.granularity()) {
            return Err(Situation::UnalignedSize.code());
        }
        if verdict == Verdict::AllowedIfDeviceConfirms && !self.machine.config.p2p_huge1g_confirmed
        {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        // At most two pools; no allocation on this path.
        let (pools, n) = match location {
            Location::Device if attr.page_class() == PageClass::Huge1G => {
                ([PoolId::Device(id), PoolId::Huge1G(id)], 2)
            }
            Location::Device => ([PoolId::Device(id), PoolId::Device(id)], 1),
            Location::Host | Location::HostNuma if verdict == Verdict::SizeLimitedByPlatform => {
                ([PoolId::Host, PoolId::HostNumaP2p], 2)
            }
            Location::Host | Location::HostNuma => ([PoolId::Host, PoolId::Host], 1),
        };
        let alloc = self.new_alloc(location, id, attr, size as u64, &pools[..n], false)?;
        Ok(alloc)
    }

    /// Charges the capacity, takes an extent and makes a handle: the part
    /// of `aclrtMallocPhysical` and `aclrtMalloc` after the checks.
    fn new_alloc(
        &self,
        location: Location,
        id: u32,
        attr: MemAttr,
        size: u64,
        pools: &[PoolId],
        plain: bool,
    ) -> Result<u64> {
        self.collect_orphans();
        self.charge(pools, size)?;
        let shard_index = self.shard_of(location, id);
        let made = (|| {
            let mut shard = lock(&self.shards[shard_index as usize]);
            if shard.file.is_none() {
                let name = format!(
                    "aclmem-emu-{}-{}",
                    self.machine.name.as_deref().unwrap_or("private"),
                    shard_index
                );
                shard.file = Some(Arc::new(PoolFile::create(&name).map_err(fd_error)?));
            }
            let offset = shard
                .extents
                .take(size.next_multiple_of(PAGE))
                .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
            let mut charged = [0u8; 2];
            for (c, p) in charged.iter_mut().zip(pools) {
                *c = p.index() as u8 + 1;
            }
            let generation = self.next_generation(shard_index);
            let alloc = shard.allocs.insert(Alloc {
                source: Source::Local,
                offset,
                size,
                attr,
                location,
                location_id: id,
                charged,
                refs: 1,
                export: None,
                plain,
                exported_handle: false,
            });
            let index = shard.handles.insert(HandleEntry {
                generation,
                alloc,
                imported: false,
                exported: false,
            });
            Ok(HandleId {
                generation,
                shard: shard_index,
                index,
            }
            .encode())
        })();
        if made.is_err() {
            self.uncharge(pools, size);
        }
        made
    }

    fn charge(&self, pools: &[PoolId], size: u64) -> Result<()> {
        let region = &self.machine.region;
        {
            let g = region.lock(self.slot);
            if region.charge(&g, self.slot, pools, size).is_ok() {
                return Ok(());
            }
            // Out of room: a killed process's memory comes back first.
            if region.reap(&g) == 0 {
                return Err(AclError::RT_MEMORY_ALLOCATION);
            }
            region.charge(&g, self.slot, pools, size)
        }
    }

    fn uncharge(&self, pools: &[PoolId], size: u64) {
        let region = &self.machine.region;
        let g = region.lock(self.slot);
        region.uncharge(&g, self.slot, pools, size);
    }

    fn handle(&self, raw: u64) -> Result<HandleId> {
        let id = HandleId::decode(raw).ok_or(Situation::StaleHandle.code())?;
        let shard = lock(
            self.shards
                .get(id.shard as usize)
                .ok_or(Situation::StaleHandle.code())?,
        );
        match shard.handles.get(id.index) {
            Some(h) if h.generation == id.generation => Ok(id),
            _ => Err(Situation::StaleHandle.code()),
        }
    }

    pub(crate) fn free_physical(&self, raw: u64) -> Result<()> {
        args::free_physical(raw)?;
        self.enter(Op::Free)?;
        self.machine.vmm_api()?;
        let id = self.handle(raw)?;
        let released = {
            let mut shard = lock(&self.shards[id.shard as usize]);
            let h = match shard.handles.get(id.index) {
                Some(h) if h.generation == id.generation => *h,
                _ => return Err(Situation::StaleHandle.code()),
            };
            if shard.allocs.get(h.alloc).is_some_and(|a| a.plain) {
                // aclrtMalloc memory is freed with aclrtFree.
                return Err(Situation::StaleHandle.code());
            }
            shard.handles.remove(id.index);
            // Mappings hold their own reference: freeing a mapped handle kills
            // the handle now and releases the memory at the last unmap.
            Self::unref(&mut shard, h.alloc)
        };
        self.finish_release(id.shard, released);
        Ok(())
    }

    /// Drops one reference; returns the allocation if that was the last.
    fn unref(shard: &mut Shard, alloc: u32) -> Option<Alloc> {
        let a = shard.allocs.get_mut(alloc)?;
        a.refs -= 1;
        if a.refs == 0 {
            shard.allocs.remove(alloc)
        } else {
            None
        }
    }

    /// The last reference of an allocation went: give its pages back, then
    /// its extent, then its capacity (or its hold on an export). Runs
    /// without any process lock held.
    fn finish_release(&self, shard_index: u8, released: Option<Alloc>) {
        let Some(a) = released else {
            return;
        };
        let region = &self.machine.region;
        let last_holder = match a.export {
            Some(id) => {
                let g = region.lock(self.slot);
                region.drop_holder(&g, id, self.slot)
            }
            None => true,
        };
        match &a.source {
            Source::Imported(file) => {
                if last_holder {
                    file.punch(a.offset, a.size.next_multiple_of(PAGE));
                }
            }
            Source::Local => {
                let file = lock(&self.shards[shard_index as usize]).file.clone();
                if last_holder {
                    if let Some(file) = &file {
                        file.punch(a.offset, a.size.next_multiple_of(PAGE));
                    }
                    lock(&self.shards[shard_index as usize])
                        .extents
                        .give(a.offset, a.size.next_multiple_of(PAGE));
                }
                // Otherwise an importer still maps the extent: its offsets
                // are never handed out again, and the last holder punches.
            }
        }
        if a.export.is_none() {
            let pools: Vec<PoolId> = a
                .charged
                .iter()
                .filter(|&&c| c != 0)
                .map(|&c| pool_from_index(c as usize - 1))
                .collect();
            self.uncharge(&pools, a.size);
        }
    }

    // ----- virtual memory --------------------------------------------------

    pub(crate) fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<usize>,
        flags: u64,
    ) -> Result<usize> {
        args::reserve(size, flags)?;
        self.enter(Op::Reserve)?;
        self.machine.vmm_api()?;
        self.reserve_range(size, alignment, expected, false)
    }

    fn reserve_range(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<usize>,
        plain: bool,
    ) -> Result<usize> {
        if alignment != 0 && self.machine.cann().reserve_alignment_must_be_zero() {
            return Err(Situation::ReserveAlignment.code());
        }
        // Reservations are 2 MiB aligned, 1 GiB aligned from 1 GiB on, so
        // that every page size can be mapped; sizes below a page (torch_npu
        // probes with 512 bytes) take a page.
        let align = if size >= GIB { GIB } else { 2 * MIB };
        let span = size
            .checked_next_multiple_of(2 * MIB)
            .ok_or(Situation::ExpectedAddress.code())?;
        if let Some(want) = expected {
            let ok = match self.machine.cann().expected_address() {
                ExpectedAddress::NullOnly => false,
                ExpectedAddress::Aligned1G => want.is_multiple_of(GIB),
                ExpectedAddress::Window16To24TiB => {
                    self.machine.product != Product::Atlas350
                        && want.is_multiple_of(if size < GIB {
                            size.next_power_of_two().max(2 * MIB)
                        } else {
                            GIB
                        })
                        && crate::arena::WINDOW.contains(&want)
                        && want
                            .checked_add(span)
                            .is_some_and(|end| end <= crate::arena::WINDOW.end)
                }
            };
            if !ok {
                return Err(Situation::ExpectedAddress.code());
            }
        }
        let mut va = lock(&self.va);
        let addr = va.arenas.take(span, align, expected).map_err(|t| match t {
            Taken::InUse => Situation::ExpectedAddressTaken.code(),
            Taken::Invalid => Situation::ExpectedAddress.code(),
            Taken::NoSpace => AclError::RT_MEMORY_ALLOCATION,
        })?;
        va.resvs.insert(
            addr,
            Resv {
                size,
                span,
                mappings: 0,
                binding: None,
                plain,
            },
        );
        Ok(addr)
    }

    pub(crate) fn release(&self, addr: usize) -> Result<()> {
        args::address(addr)?;
        self.enter(Op::Release)?;
        self.machine.vmm_api()?;
        self.release_range(addr, false)
    }

    fn release_range(&self, addr: usize, plain: bool) -> Result<()> {
        let mut va = lock(&self.va);
        match va.resvs.get(&addr) {
            Some(r) if r.plain != plain => return Err(Situation::NotReserved.code()),
            Some(r) if r.mappings > 0 => return Err(Situation::ReleaseWhileMapped.code()),
            Some(_) => {}
            None => return Err(Situation::NotReserved.code()),
        }
        let r = va.resvs.remove(&addr).expect("checked above");
        va.arenas.give(addr, r.span);
        Ok(())
    }

    pub(crate) fn map(
        &self,
        addr: usize,
        size: usize,
        offset: usize,
        raw: u64,
        flags: u64,
    ) -> Result<()> {
        args::map(addr, size, raw, flags)?;
        self.enter(Op::Map)?;
        self.machine.vmm_api()?;
        if offset != 0 {
            return Err(Situation::MapOffset.code());
        }
        let id = self.handle(raw)?;
        self.map_handle(addr, Some(size), id, false)
    }

    /// Maps the allocation behind `id` at `addr` (the whole of it; `size`,
    /// if given, must be its size).
    fn map_handle(
        &self,
        addr: usize,
        size: Option<usize>,
        id: HandleId,
        plain: bool,
    ) -> Result<()> {
        // Claim: take a reference and mark the range, under the locks (the
        // address space's, then the shard's: the order every call uses).
        let (file, offset, len) = {
            let mut va = lock(&self.va);
            let mut shard = lock(&self.shards[id.shard as usize]);
            let h = match shard.handles.get(id.index) {
                Some(h) if h.generation == id.generation => *h,
                _ => return Err(Situation::StaleHandle.code()),
            };
            let a = shard
                .allocs
                .get(h.alloc)
                .ok_or(Situation::StaleHandle.code())?;
            let len = a.size as usize;
            let page = a.attr.granularity().min(2 * MIB).max(PAGE as usize);
            if size.is_some_and(|s| s != len) || !addr.is_multiple_of(page) {
                return Err(Situation::PartialMap.code());
            }
            let binding = Binding {
                location: a.location,
                id: a.location_id,
                imported: h.imported,
            };
            let file = match &a.source {
                Source::Local => shard.file.clone().ok_or(AclError::INTERNAL_ERROR)?,
                Source::Imported(f) => Arc::clone(f),
            };
            let offset = a.offset;
            let (start, r) = va
                .containing_resv(addr)
                .ok_or(Situation::NotReserved.code())?;
            if r.plain != plain {
                return Err(Situation::NotReserved.code());
            }
            let end = addr
                .checked_add(len)
                .ok_or(Situation::OutsideReservation.code())?;
            if end > start + r.size.next_multiple_of(PAGE as usize) {
                return Err(Situation::OutsideReservation.code());
            }
            if r.binding.is_some_and(|b| r.mappings > 0 && b != binding) {
                return Err(Situation::MixedReservation.code());
            }
            let before = va.maps.range(..=addr).next_back();
            let after = va.maps.range(addr..end).next();
            if before.is_some_and(|(&s, e)| s + e.size > addr) || after.is_some() {
                return Err(Situation::Overlap.code());
            }
            if self.live_maps.load(Ordering::Acquire) >= self.map_budget {
                warn_once(
                    &WARNED_MAPS,
                    &format!(
                        "refusing a mapping: this process would exceed its share of vm.max_map_count ({}); raise the sysctl or map fewer, larger handles",
                        sys::max_map_count()
                    ),
                );
                return Err(Situation::MapCountLimit.code());
            }
            let r = va.resvs.get_mut(&start).expect("found above");
            r.mappings += 1;
            r.binding = Some(binding);
            va.maps.insert(
                addr,
                MapEntry {
                    size: len,
                    resv: start,
                    shard: id.shard,
                    alloc: h.alloc,
                    state: MapState::Pending,
                    pins: 0,
                    access: (
                        3,
                        if binding.location == Location::Device {
                            1
                        } else {
                            0
                        },
                        binding.id,
                    ),
                },
            );
            shard.allocs.get_mut(h.alloc).expect("checked").refs += 1;
            (file, offset, len)
        };
        self.live_maps.fetch_add(1, Ordering::AcqRel);
        // SAFETY: `addr..addr + len` lies in a reservation of this process
        // (checked above), so inside one of its arenas; it is marked Pending,
        // so no other call maps, reads or writes it until the commit below.
        let mapped = unsafe { sys::map_fixed(addr, len, file.fd(), offset) };
        // Commit, or roll back.
        let mut va = lock(&self.va);
        match mapped {
            Ok(()) => {
                if let Some(e) = va.maps.get_mut(&addr) {
                    e.state = MapState::Ready;
                }
                Ok(())
            }
            Err(e) => {
                let entry = va.maps.remove(&addr).expect("claimed above");
                if let Some(r) = va.resvs.get_mut(&entry.resv) {
                    r.mappings -= 1;
                }
                drop(va);
                self.live_maps.fetch_sub(1, Ordering::AcqRel);
                let released = Self::unref(&mut lock(&self.shards[id.shard as usize]), entry.alloc);
                self.finish_release(id.shard, released);
                Err(if e == rustix::io::Errno::NOMEM {
                    Situation::MapCountLimit.code()
                } else {
                    AclError::RT_MEMORY_ALLOCATION
                })
            }
        }
    }

    pub(crate) fn unmap(&self, addr: usize) -> Result<()> {
        args::address(addr)?;
        self.enter(Op::Unmap)?;
        self.machine.vmm_api()?;
        self.unmap_at(addr, false)
    }

    fn unmap_at(&self, addr: usize, plain: bool) -> Result<()> {
        let len = {
            let mut va = lock(&self.va);
            let (_, r) = va
                .containing_resv(addr)
                .ok_or(Situation::NotReserved.code())?;
            if r.plain != plain {
                return Err(Situation::NotReserved.code());
            }
            let e = va.maps.get_mut(&addr).ok_or(Situation::NotMapped.code())?;
            match (e.state, e.pins) {
                (MapState::Ready, 0) => {}
                (MapState::Ready, _) => return Err(Situation::MappingInUse.code()),
                _ => return Err(Situation::NotMapped.code()),
            }
            e.state = MapState::Unmapping;
            e.size
        };
        // SAFETY: the mapping was made by `map_fixed` in our arena and is
        // marked Unmapping: no copy reads or writes it (pins are 0 and new
        // pins skip it).
        let unmapped = unsafe { sys::unmap_fixed(addr, len) };
        let mut va = lock(&self.va);
        if unmapped.is_err() {
            // The mapping stays; a later unmap retries.
            if let Some(e) = va.maps.get_mut(&addr) {
                e.state = MapState::Ready;
            }
            return Err(AclError::RT_DRV_INTERNAL_ERROR);
        }
        let e = va.maps.remove(&addr).expect("marked above");
        if let Some(r) = va.resvs.get_mut(&e.resv) {
            r.mappings -= 1;
        }
        drop(va);
        self.live_maps.fetch_sub(1, Ordering::AcqRel);
        let released = Self::unref(&mut lock(&self.shards[e.shard as usize]), e.alloc);
        self.finish_release(e.shard, released);
        Ok(())
    }

    // ----- sharing ---------------------------------------------------------

    pub(crate) fn export(&self, raw: u64, flags: u64, kind: ExportKind) -> Result<u64> {
        self.enter(Op::Export)?;
        if kind == ExportKind::Vmm {
            self.machine.vmm_api()?;
        }
        // The runtime layer refuses flags above DISABLE_PID_VALIDATION.
        if flags > 1 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let id = self.handle(raw)?;
        let info = {
            let mut shard = lock(&self.shards[id.shard as usize]);
            let h = *shard
                .handles
                .get(id.index)
                .ok_or(Situation::StaleHandle.code())?;
            if h.exported {
                return Err(Situation::ExportTwice.code());
            }
            if h.imported {
                return Err(Situation::ExportImported.code());
            }
            let a = shard
                .allocs
                .get(h.alloc)
                .ok_or(Situation::StaleHandle.code())?;
            if a.location != Location::Device {
                return Err(Situation::ExportHostMemory.code());
            }
            if a.exported_handle || a.export.is_some() {
                return Err(Situation::ExportTwice.code());
            }
            let info = ExportInfo {
                id: 0,
                kind,
                check_pid: flags == 0,
                exporter: (self.slot, self.generation, self.pid),
                pool: u32::from(id.shard),
                offset: a.offset,
                size: a.size,
                location: (a.location_id, a.location.raw()),
                attr: a.attr.raw(),
                device: a.location_id,
            };
            let pools: Vec<PoolId> = a
                .charged
                .iter()
                .filter(|&&c| c != 0)
                .map(|&c| pool_from_index(c as usize - 1))
                .collect();
            let export = {
                let region = &self.machine.region;
                let g = region.lock(self.slot);
                region.export(&g, kind, self.slot, flags == 0, &pools, info)?
            };
            let a = shard.allocs.get_mut(h.alloc).expect("present");
            a.export = Some(export);
            a.exported_handle = true;
            shard.handles.get_mut(id.index).expect("present").exported = true;
            ExportInfo { id: export, ..info }
        };
        if self.machine.name.is_some() {
            crate::share::ensure_listener(self)?;
        }
        Ok(info.id)
    }

    pub(crate) fn set_pids(&self, shareable: u64, pids: &[i32]) -> Result<()> {
        args::set_pids(pids.len())?;
        self.enter(Op::SetPids)?;
        self.machine.vmm_api()?;
        if pids.iter().any(|&p| p <= 0) {
            return Err(Situation::BadPid.code());
        }
        let region = &self.machine.region;
        let g = region.lock(self.slot);
        let info = region
            .export_info(&g, shareable)
            .ok_or(Situation::UnknownShareable.code())?;
        if (info.exporter.0, info.exporter.1) != (self.slot, self.generation) {
            return Err(Situation::NotExporter.code());
        }
        match region.add_to_whitelist(&g, shareable, pids) {
            Some(true) => Ok(()),
            Some(false) => Err(Situation::WhitelistFull.code()),
            None => Err(Situation::UnknownShareable.code()),
        }
    }

    /// Whether `importer` (slot, pid) may import `id`, and if so, makes it a
    /// holder: the check the exporter side runs for every import.
    /// `lock_owner` is the slot of the process running the check (for the
    /// machine lock's liveness).
    pub(crate) fn admit(
        region: &Region,
        lock_owner: u32,
        importer_slot: u32,
        importer_pid: i32,
        id: u64,
        kind: ExportKind,
    ) -> Result<ExportInfo> {
        let g = region.lock(lock_owner);
        let info = region
            .export_info(&g, id)
            .filter(|i| i.kind == kind && !region.withdrawn(&g, id))
            .ok_or(Situation::UnknownShareable.code())?;
        if info.exporter.0 == importer_slot {
            return Err(Situation::ImportOwnExport.code());
        }
        if !region.slot_alive(info.exporter.0) {
            // The exporter died before anyone imported: the memory went with
            // it (reaping frees the entry too).
            region.reap(&g);
            return Err(Situation::UnknownShareable.code());
        }
        if info.check_pid && !region.whitelisted(&g, id, importer_pid) {
            return Err(Situation::NotWhitelisted.code());
        }
        if region.holds(&g, id, importer_slot) {
            return Err(Situation::ImportTwice.code());
        }
        region.add_holder(&g, id, importer_slot);
        Ok(info)
    }

    pub(crate) fn import(&self, shareable: u64, device: u32, kind: ExportKind) -> Result<u64> {
        self.enter(Op::Import)?;
        if kind == ExportKind::Vmm {
            self.machine.vmm_api()?;
        }
        if device >= self.machine.config.devices {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        // Refuse what needs no exporter first.
        {
            let region = &self.machine.region;
            let g = region.lock(self.slot);
            match region.export_info(&g, shareable) {
                None => return Err(Situation::UnknownShareable.code()),
                Some(i) if i.kind != kind => return Err(Situation::UnknownShareable.code()),
                Some(i) if i.exporter.0 == self.slot => {
                    return Err(Situation::ImportOwnExport.code());
                }
                Some(_) if region.holds(&g, shareable, self.slot) => {
                    return Err(Situation::ImportTwice.code());
                }
                Some(_) => {}
            }
        }
        let (info, file) = self.fetch(shareable, kind)?;
        let attr = MemAttr::from_raw(info.attr).unwrap_or(MemAttr::HbmMemHuge);
        let shard_index = device as u8;
        let mut shard = lock(&self.shards[shard_index as usize]);
        let generation = self.next_generation(shard_index);
        let alloc = shard.allocs.insert(Alloc {
            source: Source::Imported(file),
            offset: info.offset,
            size: info.size,
            attr,
            location: Location::Device,
            location_id: device,
            charged: [0; 2],
            refs: 1,
            export: Some(shareable),
            plain: kind == ExportKind::Ipc,
            exported_handle: false,
        });
        let index = shard.handles.insert(HandleEntry {
            generation,
            alloc,
            imported: true,
            exported: false,
        });
        Ok(HandleId {
            generation,
            shard: shard_index,
            index,
        }
        .encode())
    }

    /// Gets the exporter's pool file for an admitted import: from the
    /// exporter's `Process` on a private machine, over its listener socket
    /// on a shared one.
    fn fetch(&self, id: u64, kind: ExportKind) -> Result<(ExportInfo, Arc<PoolFile>)> {
        if self.machine.name.is_none() {
            let info = Process::admit(
                &self.machine.region,
                self.slot,
                self.slot,
                self.pid,
                id,
                kind,
            )?;
            let exporter = lock(&self.machine.local)
                .get(info.exporter.0 as usize)
                .and_then(std::sync::Weak::upgrade)
                .filter(|p| p.generation == info.exporter.1);
            let file = exporter.and_then(|p| {
                lock(&p.shards[info.pool as usize % p.shards.len()])
                    .file
                    .clone()
            });
            return match file {
                Some(f) => Ok((info, f)),
                None => {
                    let region = &self.machine.region;
                    let g = region.lock(self.slot);
                    region.drop_holder(&g, id, self.slot);
                    Err(Situation::UnknownShareable.code())
                }
            };
        }
        let (info, fd) = crate::share::request(self, id, kind)?;
        Ok((info, self.adopt_pool(info, fd)))
    }

    /// Keeps one descriptor per exporter pool: a second import of the same
    /// pool reuses the first one's file and closes the new descriptor.
    fn adopt_pool(&self, info: ExportInfo, fd: OwnedFd) -> Arc<PoolFile> {
        let mut imported = lock(&self.imported);
        imported.retain(|p| p.file.strong_count() > 0);
        let identity = rustix::fs::fstat(&fd).map(|st| (st.st_dev, st.st_ino)).ok();
        if let Some(existing) = imported.iter().find_map(|p| {
            let f = p.file.upgrade()?;
            (p.exporter == (info.exporter.0, info.exporter.1)
                && p.pool == info.pool
                && Some(f.identity) == identity)
                .then_some(f)
        }) {
            return existing;
        }
        let f = Arc::new(PoolFile::adopt(fd));
        imported.push(ImportedPool {
            exporter: (info.exporter.0, info.exporter.1),
            pool: info.pool,
            file: Arc::downgrade(&f),
        });
        f
    }

    /// The pool file a listener sends for an export of this process.
    pub(crate) fn pool_file(&self, pool: u32) -> Option<Arc<PoolFile>> {
        lock(self.shards.get(pool as usize)?).file.clone()
    }

    // ----- plain memory (aclrtMalloc, aclrtMallocHost) ----------------------

    /// `aclrtMalloc`: device memory from the device's capacity, mapped at an
    /// address the runtime chooses. The size is rounded up to 32 bytes (plus
    /// 32 of padding unless `align32_only`, as the runtime documents), and
    /// the memory to whole pages (2 MiB pages above 1 MiB).
    pub(crate) fn malloc_device(
        &self,
        device: u32,
        size: usize,
        policy: u32,
        align32_only: bool,
    ) -> Result<usize> {
        args::malloc(size)?;
        self.enter(Op::MallocDevice)?;
        if device >= self.machine.config.devices {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        let huge1g = matches!(policy & 0xFF, 6 | 7);
        let padded = if align32_only || huge1g {
            size
        } else {
            size.checked_add(32).ok_or(AclError::RT_MEMORY_ALLOCATION)?
        };
        let rounded = padded
            .checked_next_multiple_of(32)
            .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
        let (attr, page) = match policy & 0xFF {
            6 | 7 => (MemAttr::HbmMemHuge1G, GIB),
            2 | 5 => (MemAttr::HbmMemNormal, PAGE as usize),
            _ if rounded <= MIB => (MemAttr::HbmMemNormal, PAGE as usize),
            _ => (MemAttr::HbmMemHuge, 2 * MIB),
        };
        let bytes = rounded
            .checked_next_multiple_of(page)
            .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
        let pools = [PoolId::Device(device), PoolId::Huge1G(device)];
        let n = if huge1g { 2 } else { 1 };
        let raw = self.new_alloc(
            Location::Device,
            device,
            attr,
            bytes as u64,
            &pools[..n],
            true,
        )?;
        let id = HandleId::decode(raw).expect("just made");
        self.map_internal(id, bytes)
    }

    /// Maps the allocation behind the internal handle `id` (`bytes` long)
    /// in a plain reservation of its own and drops the handle: from then on
    /// the mapping alone holds the memory (what `aclrtMalloc` and an IPC
    /// import hand out). On failure nothing is left.
    fn map_internal(&self, id: HandleId, bytes: usize) -> Result<usize> {
        let drop_handle = || {
            let released = {
                let mut shard = lock(&self.shards[id.shard as usize]);
                let h = shard.handles.remove(id.index).expect("just made");
                Self::unref(&mut shard, h.alloc)
            };
            self.finish_release(id.shard, released);
        };
        let addr = match self.reserve_range(bytes, 0, None, true) {
            Ok(a) => a,
            Err(e) => {
                drop_handle();
                return Err(e);
            }
        };
        if let Err(e) = self.map_handle(addr, None, id, true) {
            let _ = self.release_range(addr, true);
            drop_handle();
            return Err(e);
        }
        drop_handle();
        Ok(addr)
    }

    /// `aclrtFree`: only memory from `aclrtMalloc` (or an IPC import's own
    /// mapping is refused: that is `aclrtIpcMemClose`'s).
    pub(crate) fn free_device(&self, addr: usize) -> Result<()> {
        args::address(addr)?;
        self.enter(Op::FreeDevice)?;
        {
            let va = lock(&self.va);
            let ipc = va.maps.get(&addr).is_some_and(|e| {
                lock(&self.shards[e.shard as usize])
                    .allocs
                    .get(e.alloc)
                    .is_some_and(|a| matches!(a.source, Source::Imported(_)))
            });
            match va.resvs.get(&addr) {
                Some(r) if r.plain && !ipc => {}
                _ => return Err(Situation::NotAllocated.code()),
            }
        }
        self.unmap_at(addr, true)?;
        self.release_range(addr, true)
    }

    /// `aclrtMallocHost`: page-locked host memory (plain anonymous memory
    /// here), not charged to any device.
    pub(crate) fn malloc_host(&self, size: usize) -> Result<usize> {
        args::malloc(size)?;
        self.enter(Op::MallocHost)?;
        let len = size
            .checked_next_multiple_of(PAGE as usize)
            .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
        let addr = sys::map_anonymous(len).map_err(|_| AclError::RT_MEMORY_ALLOCATION)?;
        lock(&self.hosts).insert(addr, len);
        Ok(addr)
    }

    /// `aclrtFreeHost`.
    pub(crate) fn free_host(&self, addr: usize) -> Result<()> {
        args::address(addr)?;
        self.enter(Op::FreeHost)?;
        let len = lock(&self.hosts)
            .remove(&addr)
            .ok_or(Situation::NotAllocated.code())?;
        // SAFETY: `addr..addr + len` was mapped by `malloc_host` and handed to
        // the caller, who gives it back here; freeing host memory that is
        // still used is the caller's bug, as with `free`.
        let _ = unsafe { sys::unmap_region(addr, len) };
        Ok(())
    }

    // ----- copies ------------------------------------------------------------

    /// The device segments covering `addr..addr + len`: (address, pool file,
    /// offset in the file, length), pinned against unmapping until
    /// [`Process::unpin`]. The range must lie in one reservation (mappings
    /// back to back in it, as an expandable segment has them); running into
    /// the next reservation is an overrun, not a copy.
    pub(crate) fn pin_device_range(&self, addr: usize, len: usize) -> Result<Vec<Segment>> {
        let end = addr
            .checked_add(len)
            .ok_or(Situation::BadCopyAddress.code())?;
        let mut va = lock(&self.va);
        let mut segments = Vec::new();
        let mut at = addr;
        let mut resv = None;
        while at < end {
            let (&start, e) = va
                .maps
                .range(..=at)
                .next_back()
                .filter(|(s, e)| at < *s + e.size && e.state == MapState::Ready)
                .filter(|(_, e)| *resv.get_or_insert(e.resv) == e.resv)
                .ok_or(Situation::BadCopyAddress.code())?;
            let shard = lock(&self.shards[e.shard as usize]);
            let a = shard
                .allocs
                .get(e.alloc)
                .ok_or(Situation::BadCopyAddress.code())?;
            let file = match &a.source {
                Source::Local => shard.file.clone().ok_or(AclError::INTERNAL_ERROR)?,
                Source::Imported(f) => Arc::clone(f),
            };
            let n = (start + e.size).min(end) - at;
            segments.push((at, file, a.offset + (at - start) as u64, n));
            at += n;
        }
        for (seg, ..) in &segments {
            if let Some((_, e)) = va.maps.range_mut(..=*seg).next_back() {
                e.pins += 1;
            }
        }
        Ok(segments)
    }

    pub(crate) fn unpin(&self, segments: &[Segment]) {
        let mut va = lock(&self.va);
        for (seg, ..) in segments {
            if let Some((_, e)) = va.maps.range_mut(..=*seg).next_back() {
                e.pins = e.pins.saturating_sub(1);
            }
        }
    }

    /// Whether `addr` is device memory of this process (mapped, or
    /// reserved).
    pub(crate) fn is_device_address(&self, addr: usize) -> bool {
        lock(&self.va).containing_resv(addr).is_some()
    }

    fn is_host_allocation(&self, addr: usize, len: usize) -> bool {
        let hosts = lock(&self.hosts);
        hosts
            .range(..=addr)
            .next_back()
            .is_some_and(|(&s, &l)| addr.checked_add(len).is_some_and(|end| end <= s + l))
    }

    fn scratch(&self) -> Result<&OwnedFd> {
        self.scratch
            .get_or_init(|| sys::new_pool_file("aclmem-emu-scratch", 1 << 20).ok())
            .as_ref()
            .ok_or(Situation::FdLimit.code())
    }

    /// `aclrtMemcpy` after its argument checks: `kind` decides the
    /// direction (`ACL_MEMCPY_DEFAULT` from the addresses). Device ranges
    /// must be mapped; host ranges are checked by the kernel.
    pub(crate) fn memcpy(&self, dst: usize, src: usize, count: usize, kind: u32) -> Result<()> {
        self.enter(Op::Memcpy)?;
        let dst_dev = self.is_device_address(dst);
        let src_dev = self.is_device_address(src);
        let (to_dev, from_dev) = match kind {
            0 => (false, false),
            1 | 5 => (true, false),
            2 => (false, true),
            3 => (true, true),
            _ => (dst_dev, src_dev),
        };
        if to_dev != dst_dev || from_dev != src_dev {
            return Err(Situation::CopyKindMismatch.code());
        }
        let bad = |_| Situation::BadCopyAddress.code();
        match (to_dev, from_dev) {
            (false, false) => sys::copy_host_to_host(dst, src, count, self.scratch()?).map_err(bad),
            (true, false) => {
                let segs = self.pin_device_range(dst, count)?;
                let mut r = Ok(());
                for (at, file, off, n) in &segs {
                    r = sys::write_from_host(file.fd(), *off, src + (at - dst), *n).map_err(bad);
                    if r.is_err() {
                        break;
                    }
                }
                self.unpin(&segs);
                r
            }
            (false, true) => {
                let segs = self.pin_device_range(src, count)?;
                let mut r = Ok(());
                for (at, file, off, n) in &segs {
                    r = sys::read_to_host(file.fd(), *off, dst + (at - src), *n).map_err(bad);
                    if r.is_err() {
                        break;
                    }
                }
                self.unpin(&segs);
                r
            }
            (true, true) => {
                let d = self.pin_device_range(dst, count)?;
                let s = match self.pin_device_range(src, count) {
                    Ok(s) => s,
                    Err(e) => {
                        self.unpin(&d);
                        return Err(e);
                    }
                };
                // Both ranges are live mappings of ours, pinned: a plain
                // (overlap-safe) copy.
                // SAFETY: `src..src + count` and `dst..dst + count` are
                // covered by Ready mappings (checked by the pins), which
                // stay mapped read-write until unpinned.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count) };
                self.unpin(&d);
                self.unpin(&s);
                Ok(())
            }
        }
    }

    /// `aclrtMemset`: device memory of this process, or `aclrtMallocHost`
    /// memory.
    pub(crate) fn memset(&self, dst: usize, value: u8, count: usize) -> Result<()> {
        self.enter(Op::Memset)?;
        if self.is_device_address(dst) {
            let segs = self.pin_device_range(dst, count)?;
            // SAFETY: covered by pinned Ready mappings (read-write).
            unsafe { std::ptr::write_bytes(dst as *mut u8, value, count) };
            self.unpin(&segs);
            Ok(())
        } else if self.is_host_allocation(dst, count) {
            sys::fill_host(dst, value, count, self.scratch()?)
                .map_err(|_| Situation::BadCopyAddress.code())
        } else {
            Err(Situation::BadCopyAddress.code())
        }
    }

    // ----- introspection -------------------------------------------------

    /// `aclrtMemGetAddressRange`: the mapping (or `aclrtMallocHost` block)
    /// that contains `ptr`.
    pub(crate) fn address_range(&self, ptr: usize) -> Result<(usize, usize)> {
        self.enter(Op::Query)?;
        {
            let va = lock(&self.va);
            if let Some((&s, e)) = va.maps.range(..=ptr).next_back()
                && ptr < s + e.size
            {
                return Ok((s, e.size));
            }
        }
        let hosts = lock(&self.hosts);
        match hosts.range(..=ptr).next_back() {
            Some((&s, &l)) if ptr < s + l => Ok((s, l)),
            _ => Err(Situation::UnknownAddress.code()),
        }
    }

    /// `aclrtPointerGetAttributes`: (location type, id, page size).
    pub(crate) fn pointer_attributes(&self, ptr: usize) -> Result<(u32, u32, u32)> {
        self.enter(Op::Query)?;
        {
            let va = lock(&self.va);
            if let Some((&s, e)) = va.maps.range(..=ptr).next_back()
                && ptr < s + e.size
            {
                let shard = lock(&self.shards[e.shard as usize]);
                if let Some(a) = shard.allocs.get(e.alloc) {
                    let page = match a.attr.page_class() {
                        PageClass::Huge1G => GIB,
                        _ if a.plain && a.attr == MemAttr::HbmMemNormal => PAGE as usize,
                        _ => 2 * MIB,
                    } as u32;
                    let location = if a.location == Location::Device { 1 } else { 0 };
                    let id = if a.location == Location::Device {
                        a.location_id
                    } else {
                        0
                    };
                    return Ok((location, id, page));
                }
            }
        }
        if self.is_host_allocation(ptr, 1) {
            return Ok((0, 0, PAGE as u32));
        }
        // Not allocated through ACL: UNREGISTERED.
        Ok((2, 0, PAGE as u32))
    }

    /// `aclrtMemRetainAllocationHandle`: a new handle to what is mapped at
    /// `addr` (which must be where a mapping starts).
    pub(crate) fn retain_allocation_handle(&self, addr: usize) -> Result<u64> {
        self.enter(Op::Query)?;
        self.machine.vmm_api()?;
        let (shard_index, alloc) = {
            let va = lock(&self.va);
            let e = va
                .maps
                .get(&addr)
                .ok_or(Situation::NotAMappingStart.code())?;
            (e.shard, e.alloc)
        };
        let mut shard = lock(&self.shards[shard_index as usize]);
        let a = shard
            .allocs
            .get_mut(alloc)
            .ok_or(Situation::NotAMappingStart.code())?;
        if a.plain {
            return Err(Situation::NotAMappingStart.code());
        }
        a.refs += 1;
        let imported = matches!(a.source, Source::Imported(_));
        let generation = self.next_generation(shard_index);
        let index = shard.handles.insert(HandleEntry {
            generation,
            alloc,
            imported,
            exported: false,
        });
        Ok(HandleId {
            generation,
            shard: shard_index,
            index,
        }
        .encode())
    }

    /// `aclrtMemGetAllocationPropertiesFromHandle`.
    pub(crate) fn allocation_properties(&self, raw: u64) -> Result<RawPhysicalMemProp> {
        self.enter(Op::Query)?;
        let id = self.handle(raw)?;
        let shard = lock(&self.shards[id.shard as usize]);
        let h = shard
            .handles
            .get(id.index)
            .ok_or(Situation::StaleHandle.code())?;
        let a = shard
            .allocs
            .get(h.alloc)
            .ok_or(Situation::StaleHandle.code())?;
        let mut prop = RawPhysicalMemProp {
            mem_attr: a.attr.raw(),
            ..RawPhysicalMemProp::default()
        };
        prop.location.type_ = a.location.raw();
        prop.location.id = a.location_id;
        Ok(prop)
    }

    /// `aclrtMemSetAccess`: one descriptor per call is what the runtime
    /// supports for a mapping (READWRITE on the device or host).
    pub(crate) fn set_access(
        &self,
        addr: usize,
        size: usize,
        flags: u64,
        location: u32,
        id: u32,
    ) -> Result<()> {
        self.enter(Op::Query)?;
        if flags != 3 || !(location == 0 || location == 1) {
            return Err(Situation::BadAccessDesc.code());
        }
        let mut va = lock(&self.va);
        let e = va
            .maps
            .get_mut(&addr)
            .ok_or(Situation::NotAMappingStart.code())?;
        if e.size != size {
            return Err(Situation::NotAMappingStart.code());
        }
        e.access = (flags, location, if location == 0 { 0 } else { id });
        Ok(())
    }

    /// `aclrtMemGetAccess`: (flags, location type, id).
    pub(crate) fn get_access(&self, addr: usize) -> Result<(u64, u32, u32)> {
        self.enter(Op::Query)?;
        let va = lock(&self.va);
        Ok(va
            .maps
            .get(&addr)
            .ok_or(Situation::NotAMappingStart.code())?
            .access)
    }

    // ----- IPC keys ----------------------------------------------------------

    /// `aclrtIpcMemGetExportKey`: exports the `aclrtMalloc` block that
    /// starts at `addr` (the whole block: `size` must fit in it and be page
    /// aligned).
    pub(crate) fn ipc_export(&self, addr: usize, size: usize, flags: u64) -> Result<u64> {
        if self.machine.product == Product::Atlas200IA2
            || self.machine.config.run_mode == aclmem_core::RunMode::Rc
        {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        if flags > 1 || size == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let (shard_index, alloc) = {
            let va = lock(&self.va);
            let e = va.maps.get(&addr).ok_or(Situation::IpcRange.code())?;
            if !va.resvs.get(&addr).is_some_and(|r| r.plain)
                || size > e.size
                || !size.is_multiple_of(PAGE as usize)
            {
                return Err(Situation::IpcRange.code());
            }
            (e.shard, e.alloc)
        };
        // Export through a temporary internal handle of the block.
        let generation = self.next_generation(shard_index);
        let raw = {
            let mut shard = lock(&self.shards[shard_index as usize]);
            let a = shard
                .allocs
                .get_mut(alloc)
                .ok_or(Situation::IpcRange.code())?;
            if matches!(a.source, Source::Imported(_)) {
                return Err(Situation::ExportImported.code());
            }
            a.refs += 1;
            let index = shard.handles.insert(HandleEntry {
                generation,
                alloc,
                imported: false,
                exported: false,
            });
            HandleId {
                generation,
                shard: shard_index,
                index,
            }
            .encode()
        };
        let exported = self.export(raw, flags, ExportKind::Ipc);
        // The block's mapping keeps the memory; drop the temporary handle.
        let id = HandleId::decode(raw).expect("made above");
        let released = {
            let mut shard = lock(&self.shards[shard_index as usize]);
            shard.handles.remove(id.index);
            Self::unref(&mut shard, alloc)
        };
        self.finish_release(shard_index, released);
        exported
    }

    /// `aclrtIpcMemImportByKey`: maps the exported block at an address the
    /// runtime chooses.
    pub(crate) fn ipc_import(&self, key: u64, device: u32, flags: u64) -> Result<usize> {
        if flags > 1 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let raw = self.import(key, device, ExportKind::Ipc)?;
        let id = HandleId::decode(raw).expect("just made");
        let size = {
            let shard = lock(&self.shards[id.shard as usize]);
            let h = shard.handles.get(id.index).expect("just made");
            shard.allocs.get(h.alloc).expect("just made").size as usize
        };
        self.map_internal(id, size)
    }

    /// `aclrtIpcMemClose`: an importer unmaps its mapping of `key`; the
    /// exporter withdraws the key (no new imports; importers keep what they
    /// mapped, and its `aclrtFree` frees the block).
    pub(crate) fn ipc_close(&self, key: u64) -> Result<()> {
        let imported_at = {
            let va = lock(&self.va);
            va.maps.iter().find_map(|(&addr, e)| {
                let shard = lock(&self.shards[e.shard as usize]);
                shard
                    .allocs
                    .get(e.alloc)
                    .filter(|a| a.export == Some(key) && matches!(a.source, Source::Imported(_)))
                    .map(|_| addr)
            })
        };
        if let Some(addr) = imported_at {
            self.unmap_at(addr, true)?;
            return self.release_range(addr, true);
        }
        let region = &self.machine.region;
        let g = region.lock(self.slot);
        match region.export_info(&g, key) {
            Some(i)
                if i.kind == ExportKind::Ipc
                    && (i.exporter.0, i.exporter.1) == (self.slot, self.generation) =>
            {
                region.withdraw(&g, key);
                Ok(())
            }
            _ => Err(Situation::UnknownShareable.code()),
        }
    }

    // ----- contexts and streams ---------------------------------------------

    pub(crate) fn create_context(&self, device: u32) -> Result<u64> {
        self.enter(Op::Context)?;
        if device >= self.machine.config.devices {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        let mut rt = lock(&self.runtime);
        rt.next += 1;
        let handle = 0xC0_0000 + rt.next * 0x40;
        rt.contexts.insert(handle, device);
        Ok(handle)
    }

    pub(crate) fn destroy_context(&self, context: u64) -> Result<()> {
        self.enter(Op::Context)?;
        let mut rt = lock(&self.runtime);
        rt.contexts
            .remove(&context)
            .map(drop)
            .ok_or(Situation::BadContextOrStream.code())
    }

    pub(crate) fn context_device(&self, context: u64) -> Option<u32> {
        lock(&self.runtime).contexts.get(&context).copied()
    }

    pub(crate) fn create_stream(&self, device: u32) -> Result<u64> {
        self.enter(Op::Stream)?;
        let mut rt = lock(&self.runtime);
        let limit = match self.machine.product {
            Product::Atlas200IA2 => 511,
            Product::AtlasInference => 1023,
            _ => 1983,
        };
        if rt.streams.values().filter(|&&d| d == device).count() >= limit {
            return Err(Situation::StreamLimit.code());
        }
        rt.next += 1;
        let handle = 0x5_0000 + rt.next * 0x40;
        rt.streams.insert(handle, device);
        Ok(handle)
    }

    pub(crate) fn destroy_stream(&self, stream: u64) -> Result<()> {
        self.enter(Op::Stream)?;
        lock(&self.runtime)
            .streams
            .remove(&stream)
            .map(drop)
            .ok_or(Situation::BadContextOrStream.code())
    }

    pub(crate) fn stream_device(&self, stream: u64) -> Option<u32> {
        lock(&self.runtime).streams.get(&stream).copied()
    }

    /// Drops every stream of `device` (`aclrtResetDevice*`).
    pub(crate) fn reset_device_streams(&self, device: u32) {
        lock(&self.runtime).streams.retain(|_, d| *d != device);
    }

    // ----- queries, faults, reports --------------------------------------------

    /// `aclrtGetMemInfo` for `device`: (free, total) of the pool `attr` names.
    pub(crate) fn mem_info(&self, attr: MemAttr, device: u32) -> Result<(usize, usize)> {
        self.enter(Op::Query)?;
        if device >= self.machine.config.devices {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        let region = &self.machine.region;
        {
            let g = region.lock(self.slot);
            region.reap(&g);
        }
        let pool = match attr {
            MemAttr::HbmMem
            | MemAttr::HbmMemHuge
            | MemAttr::HbmMemNormal
            | MemAttr::MemNormal
            | MemAttr::MemHuge => PoolId::Device(device),
            MemAttr::HbmMemHuge1G | MemAttr::MemHuge1G => PoolId::Huge1G(device),
            MemAttr::DdrMem | MemAttr::DdrMemHuge | MemAttr::DdrMemNormal
                if !self.machine.product.has_hbm() =>
            {
                // On products without HBM the device's memory is DDR.
                PoolId::Device(device)
            }
            MemAttr::DdrMem | MemAttr::DdrMemHuge | MemAttr::DdrMemNormal => PoolId::Host,
            // Attributes that do not match the hardware: 0 / 0 (documented).
            _ => return Ok((0, 0)),
        };
        let (capacity, used) = region.pool(pool);
        Ok((capacity.saturating_sub(used) as usize, capacity as usize))
    }

    pub(crate) fn inject_fault(&self, op: Op, nth: u64, code: AclError) {
        let mut faults = lock(&self.faults);
        faults.retain(|f| f.op != op);
        faults.push(Fault {
            op,
            remaining: nth.max(1),
            code,
        });
        self.faults_armed.store(true, Ordering::Release);
    }

    pub(crate) fn calls(&self, op: Op) -> u64 {
        self.calls
            .iter()
            .map(|s| s.0[op as usize].load(Ordering::Relaxed))
            .sum()
    }

    pub(crate) fn counts(&self) -> (usize, usize, usize, usize) {
        let handles = self.shards.iter().map(|s| lock(s).handles.len()).sum();
        let allocs = self.shards.iter().map(|s| lock(s).allocs.len()).sum();
        let va = lock(&self.va);
        (handles, allocs, va.resvs.len(), va.maps.len())
    }

    pub(crate) fn leak_report(&self) -> LeakReport {
        let mut report = LeakReport::default();
        for (i, s) in self.shards.iter().enumerate() {
            let shard = lock(s);
            for (index, h) in shard.handles.iter() {
                let Some(a) = shard.allocs.get(h.alloc) else {
                    continue;
                };
                report.handles.push(LeakedHandle {
                    handle: HandleId {
                        generation: h.generation,
                        shard: i as u8,
                        index,
                    }
                    .encode(),
                    size: a.size as usize,
                    location: a.location,
                    location_id: a.location_id,
                    attr: a.attr,
                    kind: if a.location == Location::Device {
                        self.machine.kind()
                    } else {
                        MemKind::Ddr
                    },
                    imported: h.imported,
                });
            }
        }
        let va = lock(&self.va);
        for (&addr, r) in &va.resvs {
            if r.plain {
                report
                    .device_allocations
                    .push(LeakedRange { addr, size: r.size });
            } else {
                report.reservations.push(LeakedRange { addr, size: r.size });
            }
        }
        for (&addr, e) in &va.maps {
            if !va.resvs.get(&e.resv).is_some_and(|r| r.plain) {
                report.mappings.push(LeakedRange { addr, size: e.size });
            }
        }
        for (&addr, &size) in lock(&self.hosts).iter() {
            report.host_allocations.push(LeakedRange { addr, size });
        }
        report
    }

    /// Process exit: everything the process holds goes, as the driver tears
    /// a process down; its slot is released. Nothing on the machine is left
    /// charged to it.
    pub(crate) fn leave(&self) {
        if crate::fork::forked_since(self.fork_gen) || self.left.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(l) = self.listener.get() {
            l.stop();
        }
        // Exports this process holds lose it as a holder in `release_slot`;
        // the pages of its own pool go with the pool file.
        let exports: Vec<(u8, Alloc)> = self
            .shards
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                let mut shard = lock(s);
                shard.handles = Slab::default();
                let allocs = std::mem::take(&mut shard.allocs);
                allocs
                    .items
                    .into_iter()
                    .flatten()
                    .map(move |a| (i as u8, a))
                    .collect::<Vec<_>>()
            })
            .collect();
        {
            let mut va = lock(&self.va);
            let maps = std::mem::take(&mut va.maps);
            for (&addr, e) in &maps {
                // SAFETY: our mapping in our arena; the process is leaving,
                // nothing reads or writes it any more.
                let _ = unsafe { sys::unmap_fixed(addr, e.size) };
            }
            let resvs = std::mem::take(&mut va.resvs);
            for (&addr, r) in &resvs {
                va.arenas.give(addr, r.span);
            }
            va.arenas.release_all();
        }
        self.live_maps.store(0, Ordering::Release);
        for (&addr, &len) in lock(&self.hosts).iter() {
            // SAFETY: host allocations of a process that is leaving.
            let _ = unsafe { sys::unmap_region(addr, len) };
        }
        lock(&self.hosts).clear();
        let region = &self.machine.region;
        {
            let g = region.lock(self.slot);
            for (_, a) in &exports {
                if let Some(id) = a.export
                    && region.drop_holder(&g, id, self.slot)
                    && let Source::Imported(file) = &a.source
                {
                    file.punch(a.offset, a.size.next_multiple_of(PAGE));
                }
            }
            region.release_slot(&g, self.slot);
        }
        drop(exports);
        for s in self.shards.iter() {
            lock(s).file = None;
        }
    }

    pub(crate) fn arena_ranges(&self) -> Vec<(usize, usize)> {
        lock(&self.va).arenas.ranges()
    }

    /// Copies bytes into mapped memory (the emulator's host access).
    pub(crate) fn write(&self, addr: usize, data: &[u8]) -> Result<()> {
        let segs = self
            .pin_device_range(addr, data.len())
            .map_err(|_| AclError::INVALID_PARAM)?;
        // SAFETY: covered by pinned Ready mappings (read-write) for the whole
        // length, which cannot overlap `data` (Rust-owned memory outside
        // every arena).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
        self.unpin(&segs);
        Ok(())
    }

    /// Copies bytes out of mapped memory.
    pub(crate) fn read(&self, addr: usize, buf: &mut [u8]) -> Result<()> {
        let segs = self
            .pin_device_range(addr, buf.len())
            .map_err(|_| AclError::INVALID_PARAM)?;
        // SAFETY: as in `write`, with source and destination swapped.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, buf.as_mut_ptr(), buf.len()) };
        self.unpin(&segs);
        Ok(())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.leave();
    }
}

fn pool_from_index(i: usize) -> PoolId {
    let d = crate::config::MAX_DEVICES as usize;
    match i {
        i if i < d => PoolId::Device(i as u32),
        i if i < 2 * d => PoolId::Huge1G((i - d) as u32),
        i if i == 2 * d => PoolId::Host,
        _ => PoolId::HostNumaP2p,
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
        assert_eq!(HandleId::decode(h.encode()), Some(h));
        assert_eq!(HandleId::decode(0), None);
        assert_ne!(h.encode() & 0xFFFF_FFFF, 0);
    }
}
