//! The emulated machine's state and the semantics of every call.
//!
//! Error codes (see the reference, section 3). Where the runtime's exact code
//! is UNCONFIRMED we follow one consistent, conservative scheme:
//!
//! | what | code |
//! |---|---|
//! | the API does not exist (RC form, Atlas 200/300/500) | 207000 `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` |
//! | argument shape: flags, size 0, unaligned size, offset, partial map, bad prop, outside the reservation, mixed devices/origins | 100000 `ACL_ERROR_INVALID_PARAM` |
//! | state: address not reserved / not mapped, overlap, release while mapped, export twice | 107000 `ACL_ERROR_RT_PARAM_INVALID` |
//! | a handle that is not live (stale, freed, forged) | 107017 `ACL_ERROR_RT_INVALID_HANDLE` |
//! | device id out of range | 107001 `ACL_ERROR_RT_INVALID_DEVICEID` |
//! | capacity exhausted | 207001 `ACL_ERROR_RT_MEMORY_ALLOCATION` |
//! | import not whitelisted | 207006 `ACL_ERROR_RT_NO_PERMISSION` |

use std::collections::{BTreeMap, HashMap};
use std::os::fd::OwnedFd;

use aclmem_core::{
    AclError, GIB, Location, MIB, MemAttr, PageClass, Product, RawPhysicalMemProp, Verdict,
    check_platform, is_aligned,
};

use crate::config::EmuConfig;
use crate::sys;
use crate::{LeakReport, LeakedHandle, LeakedRange, MemKind, Op, PoolId, PoolStats, Stats};

pub(crate) type R<T> = Result<T, AclError>;

const INVALID_PARAM: AclError = AclError::INVALID_PARAM;
const STATE: AclError = AclError::RT_PARAM_INVALID;
const BAD_HANDLE: AclError = AclError::RT_INVALID_HANDLE;
const BAD_DEVICE: AclError = AclError::RT_INVALID_DEVICEID;
const OOM: AclError = AclError::RT_MEMORY_ALLOCATION;
const NOT_SUPPORTED: AclError = AclError::RT_FEATURE_NOT_SUPPORT;

/// The window CANN documents for a caller-chosen reservation address.
const EXPECT_WINDOW: std::ops::Range<usize> = (16 << 40)..(24 << 40);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pool {
    capacity: usize,
    used: usize,
}

impl Pool {
    fn new(capacity: usize) -> Pool {
        Pool { capacity, used: 0 }
    }
    fn free(&self) -> usize {
        self.capacity.saturating_sub(self.used)
    }
}

/// One piece of physical memory. Shared by the handles of every process that
/// holds it and by its mappings; released when the last of them goes.
struct Allocation {
    fd: OwnedFd,
    size: usize,
    location: Location,
    location_id: u32,
    attr: MemAttr,
    kind: MemKind,
    charged: Vec<PoolId>,
    refs: u32,
}

struct HandleEntry {
    pid: i32,
    alloc: u64,
    imported: bool,
    /// The device the handle is bound to (import may choose another).
    location: (Location, u32),
    exported: Option<u64>,
}

struct Slot {
    generation: u32,
    entry: Option<HandleEntry>,
}

struct MapEntry {
    size: usize,
    alloc: u64,
    binding: (Location, u32, bool),
}

struct Resv {
    pid: i32,
    size: usize,
    span: usize,
    mappings: BTreeMap<usize, MapEntry>,
}

struct Shared {
    alloc: u64,
    exporter: i32,
    check_pid: bool,
    whitelist: Vec<i32>,
    importers: Vec<i32>,
}

struct Fault {
    remaining: u64,
    code: AclError,
}

pub(crate) struct State {
    device: Vec<Pool>,
    huge1g: Vec<Pool>,
    host: Pool,
    numa_p2p: Pool,
    allocs: HashMap<u64, Allocation>,
    next_alloc: u64,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    resvs: BTreeMap<usize, Resv>,
    shared: HashMap<u64, Shared>,
    next_shared: u64,
    faults: HashMap<Op, Fault>,
    calls: [u64; Op::ALL.len()],
}

pub(crate) struct Machine {
    pub(crate) config: EmuConfig,
    pub(crate) product: Product,
}

impl Machine {
    /// Whether the physical-memory API exists on this machine's product and
    /// run mode (207000 otherwise).
    fn api(&self) -> R<()> {
        check_platform(self.product, self.config.run_mode, self.config.cann).map_err(|d| d.code())
    }
}

impl State {
    pub(crate) fn new(config: &EmuConfig) -> State {
        let n = config.devices as usize;
        State {
            device: vec![Pool::new(config.device_memory); n],
            huge1g: vec![Pool::new(config.huge1g_pool); n],
            host: Pool::new(config.host_memory),
            numa_p2p: Pool::new(config.host_numa_p2p_limit),
            allocs: HashMap::new(),
            next_alloc: 1,
            slots: Vec::new(),
            free_slots: Vec::new(),
            resvs: BTreeMap::new(),
            shared: HashMap::new(),
            // Shareable handles look nothing like small integers, so a
            // forged one is unlikely to hit by accident.
            next_shared: 0x5a5a_0000_0000_0001,
            faults: HashMap::new(),
            calls: [0; Op::ALL.len()],
        }
    }

    fn pool_mut(&mut self, id: PoolId) -> Option<&mut Pool> {
        match id {
            PoolId::Device(d) => self.device.get_mut(d as usize),
            PoolId::Huge1G(d) => self.huge1g.get_mut(d as usize),
            PoolId::Host => Some(&mut self.host),
            PoolId::HostNumaP2p => Some(&mut self.numa_p2p),
        }
    }

    pub(crate) fn set_capacity(&mut self, id: PoolId, bytes: usize) -> R<()> {
        self.pool_mut(id).ok_or(BAD_DEVICE)?.capacity = bytes;
        Ok(())
    }

    pub(crate) fn inject_fault(&mut self, op: Op, nth: u64, code: AclError) {
        self.faults.insert(
            op,
            Fault {
                remaining: nth.max(1),
                code,
            },
        );
    }

    /// Every call's prologue: 207000 where the API does not exist (before
    /// anything else, as on the runtime), then count the call and fire an
    /// injected fault if this is its call.
    fn enter(&mut self, m: &Machine, op: Op) -> R<()> {
        m.api()?;
        self.calls[op as usize] += 1;
        if let Some(f) = self.faults.get_mut(&op) {
            f.remaining -= 1;
            if f.remaining == 0 {
                let code = f.code;
                self.faults.remove(&op);
                return Err(code);
            }
        }
        Ok(())
    }

    // ----- handles ---------------------------------------------------------

    fn new_handle(&mut self, entry: HandleEntry) -> u64 {
        let index = match self.free_slots.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    entry: None,
                });
                (self.slots.len() - 1) as u32
            }
        };
        let slot = &mut self.slots[index as usize];
        slot.generation = slot.generation.wrapping_add(1).max(1);
        slot.entry = Some(entry);
        u64::from(slot.generation) << 32 | u64::from(index + 1)
    }

    fn decode(&self, handle: u64, pid: i32) -> R<usize> {
        let index = (handle & 0xFFFF_FFFF) as usize;
        let generation = (handle >> 32) as u32;
        let slot = index
            .checked_sub(1)
            .and_then(|i| self.slots.get(i).map(|s| (i, s)));
        match slot {
            Some((i, s)) if s.generation == generation => match &s.entry {
                Some(e) if e.pid == pid => Ok(i),
                _ => Err(BAD_HANDLE),
            },
            _ => Err(BAD_HANDLE),
        }
    }

    fn entry(&self, handle: u64, pid: i32) -> R<&HandleEntry> {
        let i = self.decode(handle, pid)?;
        Ok(self.slots[i]
            .entry
            .as_ref()
            .expect("decode checked the entry"))
    }

    fn drop_handle(&mut self, index: usize) {
        if let Some(entry) = self.slots[index].entry.take() {
            self.free_slots.push(index as u32);
            self.unref(entry.alloc);
        }
    }

    fn unref(&mut self, alloc: u64) {
        let a = self.allocs.get_mut(&alloc).expect("live allocation");
        a.refs -= 1;
        if a.refs == 0 {
            let a = self.allocs.remove(&alloc).expect("live allocation");
            for id in &a.charged {
                if let Some(p) = self.pool_mut(*id) {
                    p.used -= a.size;
                }
            }
            // Nothing can import memory that is gone.
            self.shared.retain(|_, s| s.alloc != alloc);
        }
    }

    // ----- physical memory -------------------------------------------------

    fn validate_prop(
        &self,
        m: &Machine,
        prop: &RawPhysicalMemProp,
    ) -> R<(Location, u32, MemAttr, Verdict)> {
        let valid = prop.validate(m.product, m.config.run_mode, m.config.cann)?;
        match valid.location {
            Location::Device if valid.location_id >= m.config.devices => return Err(BAD_DEVICE),
            // An unknown NUMA node: UNCONFIRMED code; the runtime layer's
            // "invalid value" is the conservative guess.
            Location::HostNuma if valid.location_id >= m.config.numa_nodes => return Err(STATE),
            _ => {}
        }
        let id = if valid.location == Location::Host {
            0
        } else {
            valid.location_id
        };
        Ok((valid.location, id, valid.attr, valid.verdict))
    }

    pub(crate) fn granularity(&mut self, m: &Machine, prop: &RawPhysicalMemProp) -> R<usize> {
        self.enter(m, Op::Granularity)?;
        let (_, _, attr, _) = self.validate_prop(m, prop)?;
        // Minimum and recommended are the same here: the documented
        // granularities (the recommended value is UNCONFIRMED).
        Ok(attr.granularity())
    }

    pub(crate) fn malloc(
        &mut self,
        m: &Machine,
        pid: i32,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> R<u64> {
        self.enter(m, Op::Malloc)?;
        if flags != 0 || size == 0 {
            return Err(INVALID_PARAM);
        }
        let (location, id, attr, verdict) = self.validate_prop(m, prop)?;
        // Whether the driver rejects or rounds an unaligned size is
        // UNCONFIRMED; we reject it, so code that passes here passes there.
        if !is_aligned(size, attr.granularity()) {
            return Err(INVALID_PARAM);
        }
        if verdict == Verdict::AllowedIfDeviceConfirms && !m.config.p2p_huge1g_confirmed {
            return Err(NOT_SUPPORTED);
        }
        let mut charged = Vec::with_capacity(2);
        let kind = match location {
            Location::Device => {
                charged.push(PoolId::Device(id));
                if attr.page_class() == PageClass::Huge1G {
                    charged.push(PoolId::Huge1G(id));
                }
                // No HBM on the device: HBM requests are served from DDR.
                if m.product.has_hbm() {
                    MemKind::Hbm
                } else {
                    MemKind::Ddr
                }
            }
            Location::Host | Location::HostNuma => {
                charged.push(PoolId::Host);
                if verdict == Verdict::SizeLimitedByPlatform {
                    charged.push(PoolId::HostNumaP2p);
                }
                MemKind::Ddr
            }
        };
        for pool in &charged {
            let p = self.pool_mut(*pool).expect("validated location");
            if p.free() < size {
                return Err(OOM);
            }
        }
        let fd = sys::new_memfd(size).map_err(|_| OOM)?;
        for pool in &charged {
            self.pool_mut(*pool).expect("validated location").used += size;
        }
        let alloc = self.next_alloc;
        self.next_alloc += 1;
        self.allocs.insert(
            alloc,
            Allocation {
                fd,
                size,
                location,
                location_id: id,
                attr,
                kind,
                charged,
                refs: 1,
            },
        );
        Ok(self.new_handle(HandleEntry {
            pid,
            alloc,
            imported: false,
            location: (location, id),
            exported: None,
        }))
    }

    pub(crate) fn free(&mut self, m: &Machine, pid: i32, handle: u64) -> R<()> {
        self.enter(m, Op::Free)?;
        if handle == 0 {
            return Err(INVALID_PARAM);
        }
        let index = self.decode(handle, pid)?;
        // Mappings hold their own reference: freeing a mapped handle kills
        // the handle now and releases the memory at the last unmap.
        self.drop_handle(index);
        Ok(())
    }

    // ----- virtual memory --------------------------------------------------

    pub(crate) fn reserve(
        &mut self,
        m: &Machine,
        pid: i32,
        size: usize,
        alignment: usize,
        expected: Option<usize>,
        flags: u64,
    ) -> R<usize> {
        self.enter(m, Op::Reserve)?;
        // `alignment` is reserved and must be 0 per the docs; the ACL layer
        // passes it to the driver unchecked, so the driver's reaction is
        // UNCONFIRMED: we refuse non-zero values.
        if size == 0 || flags > 1 || alignment != 0 {
            return Err(INVALID_PARAM);
        }
        // Reservations are 2 MiB aligned, 1 GiB aligned from 1 GiB on, so
        // that every page size can be mapped.
        let align = if size >= GIB { GIB } else { 2 * MIB };
        let span = size
            .checked_next_multiple_of(2 * MIB)
            .ok_or(INVALID_PARAM)?;
        let addr = match expected {
            None => sys::reserve_placeholder(span, align, None).map_err(|_| OOM)?,
            Some(want) => {
                if m.product == Product::Atlas350 {
                    return Err(NOT_SUPPORTED); // only NULL on 950 / Atlas 350
                }
                if !EXPECT_WINDOW.contains(&want) || !want.is_multiple_of(align) {
                    return Err(STATE);
                }
                sys::reserve_placeholder(span, align, Some(want)).map_err(|_| OOM)?
            }
        };
        self.resvs.insert(
            addr,
            Resv {
                pid,
                size,
                span,
                mappings: BTreeMap::new(),
            },
        );
        Ok(addr)
    }

    pub(crate) fn release(&mut self, m: &Machine, pid: i32, addr: usize) -> R<()> {
        self.enter(m, Op::Release)?;
        match self.resvs.get(&addr) {
            Some(r) if r.pid == pid && r.mappings.is_empty() => {}
            _ => return Err(STATE),
        }
        let r = self.resvs.remove(&addr).expect("checked above");
        sys::release_placeholder(addr, r.span).map_err(|_| STATE)
    }

    fn containing_resv(&self, pid: i32, addr: usize) -> R<usize> {
        match self.resvs.range(..=addr).next_back() {
            Some((&start, r)) if r.pid == pid && addr < start + r.size => Ok(start),
            _ => Err(STATE),
        }
    }

    // The five arguments of `aclrtMapMem` plus the caller's machine and pid.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn map(
        &mut self,
        m: &Machine,
        pid: i32,
        addr: usize,
        size: usize,
        offset: usize,
        handle: u64,
        flags: u64,
    ) -> R<()> {
        self.enter(m, Op::Map)?;
        if size == 0 || offset != 0 || flags != 0 || handle == 0 {
            return Err(INVALID_PARAM);
        }
        let start = self.containing_resv(pid, addr)?;
        let entry = self.entry(handle, pid)?;
        let alloc_id = entry.alloc;
        let binding = (entry.location.0, entry.location.1, entry.imported);
        let alloc = &self.allocs[&alloc_id];
        // Whole-handle mappings only, at an address aligned for its pages.
        if size != alloc.size || !addr.is_multiple_of(alloc.attr.granularity()) {
            return Err(INVALID_PARAM);
        }
        let resv = &self.resvs[&start];
        let end = addr.checked_add(size).ok_or(INVALID_PARAM)?;
        if end > start + resv.size {
            return Err(INVALID_PARAM);
        }
        if resv
            .mappings
            .values()
            .next()
            .is_some_and(|first| first.binding != binding)
        {
            return Err(INVALID_PARAM);
        }
        let before = resv.mappings.range(..=addr).next_back();
        let after = resv.mappings.range(addr..).next();
        if before.is_some_and(|(&s, e)| s + e.size > addr) || after.is_some_and(|(&s, _)| s < end) {
            return Err(STATE);
        }
        sys::map_shared_fixed(addr, size, &alloc.fd).map_err(|_| OOM)?;
        self.allocs.get_mut(&alloc_id).expect("live").refs += 1;
        self.resvs
            .get_mut(&start)
            .expect("checked above")
            .mappings
            .insert(
                addr,
                MapEntry {
                    size,
                    alloc: alloc_id,
                    binding,
                },
            );
        Ok(())
    }

    pub(crate) fn unmap(&mut self, m: &Machine, pid: i32, addr: usize) -> R<()> {
        self.enter(m, Op::Unmap)?;
        let start = self.containing_resv(pid, addr)?;
        let size = match self.resvs[&start].mappings.get(&addr) {
            Some(e) => e.size,
            None => return Err(STATE),
        };
        sys::restore_placeholder(addr, size).map_err(|_| STATE)?;
        let e = self
            .resvs
            .get_mut(&start)
            .expect("checked above")
            .mappings
            .remove(&addr)
            .expect("checked above");
        self.unref(e.alloc);
        Ok(())
    }

    // ----- sharing ---------------------------------------------------------

    pub(crate) fn export(&mut self, m: &Machine, pid: i32, handle: u64, flags: u64) -> R<u64> {
        self.enter(m, Op::Export)?;
        if handle == 0 {
            return Err(INVALID_PARAM);
        }
        let index = self.decode(handle, pid)?;
        let entry = self.slots[index].entry.as_ref().expect("decoded");
        if flags > 1 || entry.exported.is_some() || entry.imported {
            return Err(STATE);
        }
        if self.allocs[&entry.alloc].location != Location::Device {
            return Err(NOT_SUPPORTED);
        }
        let alloc = entry.alloc;
        let id = self.next_shared;
        self.next_shared += 0x9e37; // spread the ids
        self.shared.insert(
            id,
            Shared {
                alloc,
                exporter: pid,
                check_pid: flags == 0,
                whitelist: Vec::new(),
                importers: Vec::new(),
            },
        );
        self.slots[index].entry.as_mut().expect("decoded").exported = Some(id);
        Ok(id)
    }

    pub(crate) fn set_pids(
        &mut self,
        m: &Machine,
        pid: i32,
        shareable: u64,
        pids: &[i32],
    ) -> R<()> {
        self.enter(m, Op::SetPids)?;
        if pids.is_empty() {
            return Err(INVALID_PARAM);
        }
        let s = self.shared.get_mut(&shareable).ok_or(STATE)?;
        if s.exporter != pid {
            return Err(AclError::RT_NO_PERMISSION);
        }
        s.whitelist.extend_from_slice(pids);
        Ok(())
    }

    pub(crate) fn import(&mut self, m: &Machine, pid: i32, shareable: u64, device: u32) -> R<u64> {
        self.enter(m, Op::Import)?;
        if device >= m.config.devices {
            return Err(BAD_DEVICE);
        }
        let s = self.shared.get_mut(&shareable).ok_or(STATE)?;
        if s.exporter == pid {
            // Export and import in the same process are not supported.
            return Err(NOT_SUPPORTED);
        }
        if s.check_pid && !s.whitelist.contains(&pid) {
            return Err(AclError::RT_NO_PERMISSION);
        }
        if s.importers.contains(&pid) {
            return Err(STATE); // one handle per shareable handle per process
        }
        s.importers.push(pid);
        let alloc = s.alloc;
        self.allocs
            .get_mut(&alloc)
            .expect("shared memory is live")
            .refs += 1;
        Ok(self.new_handle(HandleEntry {
            pid,
            alloc,
            imported: true,
            location: (Location::Device, device),
            exported: None,
        }))
    }

    // ----- queries -----------------------------------------------------------

    pub(crate) fn mem_info(&self, m: &Machine, attr: MemAttr, device: u32) -> R<(usize, usize)> {
        m.api()?;
        let pool = match attr {
            MemAttr::HbmMem
            | MemAttr::HbmMemHuge
            | MemAttr::HbmMemNormal
            | MemAttr::HbmMemHuge1G => self.device.get(device as usize).ok_or(BAD_DEVICE)?,
            MemAttr::DdrMem | MemAttr::DdrMemHuge | MemAttr::DdrMemNormal => &self.host,
            // Unsupported attributes yield 0/0 (CANN docs).
            _ => return Ok((0, 0)),
        };
        Ok((pool.free(), pool.capacity))
    }

    /// Checks that `addr..addr+len` is covered by live mappings of `pid`
    /// (one, or several back to back in one reservation).
    pub(crate) fn mapped_range(&self, pid: i32, addr: usize, len: usize) -> R<()> {
        let start = self.containing_resv(pid, addr).map_err(|_| INVALID_PARAM)?;
        let end = addr.checked_add(len).ok_or(INVALID_PARAM)?;
        let mappings = &self.resvs[&start].mappings;
        let mut covered = match mappings.range(..=addr).next_back() {
            Some((&s, e)) if addr < s + e.size => s + e.size,
            _ => return Err(INVALID_PARAM),
        };
        while covered < end {
            match mappings.get(&covered) {
                Some(e) => covered += e.size,
                None => return Err(INVALID_PARAM),
            }
        }
        Ok(())
    }

    pub(crate) fn stats(&self, m: &Machine) -> Stats {
        let kind = if m.product.has_hbm() {
            MemKind::Hbm
        } else {
            MemKind::Ddr
        };
        let stat = |p: &Pool, kind| PoolStats {
            capacity: p.capacity,
            used: p.used,
            kind,
        };
        Stats {
            device: self.device.iter().map(|p| stat(p, kind)).collect(),
            huge1g: self.huge1g.iter().map(|p| stat(p, kind)).collect(),
            host: stat(&self.host, MemKind::Ddr),
            live_allocations: self.allocs.len(),
            live_handles: self.slots.iter().filter(|s| s.entry.is_some()).count(),
            reservations: self.resvs.len(),
            mappings: self.resvs.values().map(|r| r.mappings.len()).sum(),
            shareable_handles: self.shared.len(),
            calls: Op::ALL
                .iter()
                .map(|op| (*op, self.calls[*op as usize]))
                .collect(),
        }
    }

    pub(crate) fn leak_report(&self, pid: i32) -> LeakReport {
        let mut report = LeakReport::default();
        for (i, slot) in self.slots.iter().enumerate() {
            if let Some(e) = slot.entry.as_ref().filter(|e| e.pid == pid) {
                let a = &self.allocs[&e.alloc];
                report.handles.push(LeakedHandle {
                    handle: u64::from(slot.generation) << 32 | (i as u64 + 1),
                    size: a.size,
                    location: a.location,
                    location_id: a.location_id,
                    attr: a.attr,
                    kind: a.kind,
                    imported: e.imported,
                });
            }
        }
        for (&addr, r) in self.resvs.iter().filter(|(_, r)| r.pid == pid) {
            report.reservations.push(LeakedRange { addr, size: r.size });
            for (&maddr, e) in &r.mappings {
                report.mappings.push(LeakedRange {
                    addr: maddr,
                    size: e.size,
                });
            }
        }
        report
    }

    /// Process exit: the runtime tears down what the process still holds.
    pub(crate) fn exit_process(&mut self, pid: i32) {
        let addrs: Vec<usize> = self
            .resvs
            .iter()
            .filter(|(_, r)| r.pid == pid)
            .map(|(a, _)| *a)
            .collect();
        for addr in addrs {
            let r = self.resvs.remove(&addr).expect("listed above");
            for e in r.mappings.values() {
                self.unref(e.alloc);
            }
            // Failure would leave an inaccessible placeholder behind, which
            // is harmless; there is no caller to report it to.
            let _ = sys::release_placeholder(addr, r.span);
        }
        let mine: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].entry.as_ref().is_some_and(|e| e.pid == pid))
            .collect();
        for i in mine {
            self.drop_handle(i);
        }
        for s in self.shared.values_mut() {
            s.importers.retain(|p| *p != pid);
        }
    }
}
