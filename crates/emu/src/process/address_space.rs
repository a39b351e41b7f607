//! The address space of one process: reservations carved from its arenas,
//! and the mappings in them. Mapping and unmapping run as claim (mark the
//! range under the lock), the system call (no lock), commit or roll back.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use aclmem_core::{AclError, ExpectedAddress, GIB, Location, MIB, MemAttr, PageClass, Product};

use aclmem_sys::{AccessDesc, AccessFlags, LocationType};

use super::handles::HandleId;
use super::{Process, Result};
use crate::errors::Situation;
use crate::os::arena::{Arenas, Taken};
use crate::os::pool::PAGE;
use crate::os::sys;
use crate::os::window::Window;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapState {
    /// Being mapped (the `mmap` runs without the lock).
    Pending,
    Ready,
    /// Being unmapped.
    Unmapping,
    /// Being moved into its allocation's own file (an export).
    Moving,
}

#[derive(Debug)]
pub(crate) struct MapEntry {
    pub(crate) size: usize,
    pub(crate) resv: usize,
    pub(crate) shard: u8,
    pub(crate) alloc: u32,
    pub(crate) state: MapState,
    /// The mapping itself, once made (`None` while `Pending` or
    /// `Unmapping`); in-flight copies pin it.
    pub(crate) window: Option<Window>,
    /// `aclrtMemSetAccess` / `aclrtMemGetAccess`.
    pub(crate) access: AccessDesc,
}

/// What a reservation's mappings are of: one location, local or imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) location: Location,
    pub(crate) id: u32,
    pub(crate) imported: bool,
}

#[derive(Debug)]
pub(crate) struct Resv {
    pub(crate) size: usize,
    pub(crate) span: usize,
    pub(crate) mappings: u32,
    pub(crate) binding: Option<Binding>,
    /// Made by `aclrtMalloc` / `aclrtIpcMemImportByKey` around their one
    /// mapping.
    pub(crate) plain: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Va {
    pub(crate) arenas: Arenas,
    pub(crate) resvs: BTreeMap<usize, Resv>,
    pub(crate) maps: BTreeMap<usize, MapEntry>,
}

impl Va {
    pub(crate) fn containing_resv(&self, addr: usize) -> Option<(usize, &Resv)> {
        let (&start, r) = self.resvs.range(..=addr).next_back()?;
        (addr < start + r.size.max(1)).then_some((start, r))
    }

    /// The mapping that contains `addr`.
    pub(crate) fn mapping_at(&self, addr: usize) -> Option<(usize, &MapEntry)> {
        let (&start, e) = self.maps.range(..=addr).next_back()?;
        (addr < start + e.size).then_some((start, e))
    }

    /// Unmaps and forgets everything (process exit): each window goes
    /// with its entry (after the last copy that pins it, if any).
    pub(crate) fn tear_down(&mut self) {
        self.maps.clear();
        for (&addr, r) in &std::mem::take(&mut self.resvs) {
            self.arenas.give(addr, r.span);
        }
        self.arenas.release_all();
    }
}

/// How many VMAs the rest of the program may use: the process stops
/// mapping before `vm.max_map_count - RESERVED_VMAS`, so unmapping always
/// works and the program's own `mmap` keeps working.
const RESERVED_VMAS: usize = 4096;

/// The mappings a process may have alive at once: its share of
/// `vm.max_map_count`, each mapping counted as the two VMAs it may add.
pub(crate) struct MapBudget {
    budget: usize,
    live: AtomicUsize,
}

static WARNED_MAPS: AtomicBool = AtomicBool::new(false);

impl MapBudget {
    pub(crate) fn new() -> MapBudget {
        MapBudget {
            budget: sys::max_map_count().saturating_sub(RESERVED_VMAS) / 2,
            live: AtomicUsize::new(0),
        }
    }

    fn check(&self) -> Result<()> {
        if self.live.load(Ordering::Acquire) < self.budget {
            return Ok(());
        }
        crate::env::warn_once(
            &WARNED_MAPS,
            &format!(
                "refusing a mapping: this process would exceed its share of vm.max_map_count ({}); raise the sysctl or map fewer, larger handles",
                sys::max_map_count()
            ),
        );
        Err(Situation::MapCountLimit.code())
    }

    pub(crate) fn reset(&self) {
        self.live.store(0, Ordering::Release);
    }
}

/// The alignment a mapping of memory with `attr` needs: a device MMU maps
/// a 1 GiB page only at a 1 GiB-aligned address (the documentation asks
/// for an address aligned to the granularity); smaller pages at 2 MiB.
pub(crate) fn map_alignment(attr: MemAttr) -> usize {
    match attr.page_class() {
        PageClass::Huge1G => GIB,
        PageClass::Huge | PageClass::Normal => attr.granularity().min(2 * MIB),
    }
    .max(PAGE as usize)
}

impl Process {
    /// Takes a reservation of `size` bytes (the address checks the release
    /// documents for `expected`).
    pub(crate) fn reserve_range(
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
        if let Some(want) = expected
            && !self.expected_address_ok(want, size, span)
        {
            return Err(Situation::ExpectedAddress.code());
        }
        self.take_range(size, span, align, expected, plain)
    }

    /// A reservation of `size` bytes at exactly `want` (1 GiB aligned),
    /// outside the release's window rule: `aclrtReserveMemAddressNoUCMemory`,
    /// whose addresses are the caller's (documented: 40–224 TiB suggested).
    pub(crate) fn reserve_range_at(&self, size: usize, want: usize) -> Result<usize> {
        if !want.is_multiple_of(GIB) {
            return Err(Situation::ExpectedAddress.code());
        }
        let span = size
            .checked_next_multiple_of(2 * MIB)
            .ok_or(Situation::ExpectedAddress.code())?;
        self.take_range(size, span, GIB, Some(want), false)
    }

    fn take_range(
        &self,
        size: usize,
        span: usize,
        align: usize,
        expected: Option<usize>,
        plain: bool,
    ) -> Result<usize> {
        let mut va = self.va.lock();
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

    /// The release's rule for a caller-chosen reservation address.
    fn expected_address_ok(&self, want: usize, size: usize, span: usize) -> bool {
        match self.machine.cann().expected_address() {
            ExpectedAddress::NullOnly => false,
            ExpectedAddress::Aligned1G => want.is_multiple_of(GIB),
            ExpectedAddress::Window16To24TiB => {
                let align = if size < GIB {
                    size.next_power_of_two().max(2 * MIB)
                } else {
                    GIB
                };
                self.machine.product != Product::Atlas350
                    && want.is_multiple_of(align)
                    && crate::os::arena::WINDOW.contains(&want)
                    && want
                        .checked_add(span)
                        .is_some_and(|end| end <= crate::os::arena::WINDOW.end)
            }
        }
    }

    /// Gives a reservation without mappings back.
    pub(crate) fn release_range(&self, addr: usize, plain: bool) -> Result<()> {
        let mut va = self.va.lock();
        match va.resvs.get(&addr) {
            Some(r) if r.plain != plain => return Err(Situation::NotReserved.code()),
            Some(r) if r.mappings > 0 => return Err(Situation::ReleaseWhileMapped.code()),
            Some(_) => {}
            None => return Err(Situation::NotReserved.code()),
        }
        if let Some(r) = va.resvs.remove(&addr) {
            va.arenas.give(addr, r.span);
        }
        Ok(())
    }

    /// Maps the allocation behind `id` at `addr` (the whole of it; `size`,
    /// if given, must be its size).
    pub(crate) fn map_handle(
        &self,
        addr: usize,
        size: Option<usize>,
        id: HandleId,
        plain: bool,
    ) -> Result<()> {
        // Claim: every check first, then the marks, under the address
        // space's lock and the shard's (the order every call uses).
        let (file, offset, len) = {
            let mut va = self.va.lock();
            let mut shard = self.shards.of(id)?;
            let (h, a) = shard.resolve(id)?;
            if a.moving {
                return Err(Situation::MappingInUse.code());
            }
            let len = a.size as usize;
            let page = map_alignment(a.attr);
            if size.is_some_and(|s| s != len) || !addr.is_multiple_of(page) {
                return Err(Situation::PartialMap.code());
            }
            let binding = Binding {
                location: a.location,
                id: a.location_id,
                imported: h.imported,
            };
            let file = shard.file_of(a)?;
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
            self.maps.check()?;
            let (Some(r), Some(a)) = (
                va.resvs.get_mut(&start),
                shard.allocs.get_mut(h.alloc as usize),
            ) else {
                return Err(AclError::INTERNAL_ERROR);
            };
            r.mappings += 1;
            r.binding = Some(binding);
            a.refs += 1;
            va.maps.insert(
                addr,
                MapEntry {
                    size: len,
                    resv: start,
                    shard: id.shard,
                    alloc: h.alloc,
                    state: MapState::Pending,
                    window: None,
                    access: AccessDesc {
                        flags: AccessFlags::ReadWrite,
                        location: if binding.location == Location::Device {
                            LocationType::Device
                        } else {
                            LocationType::Host
                        },
                        id: binding.id,
                    },
                },
            );
            (file, offset, len)
        };
        self.maps.live.fetch_add(1, Ordering::AcqRel);
        // The range lies in a reservation of this process (checked above)
        // and is marked Pending: no other call maps it until the commit.
        let mapped = Window::map(addr, len, file.fd(), offset);
        // Commit, or roll back.
        let mut va = self.va.lock();
        match mapped {
            Ok(window) => {
                if let Some(e) = va.maps.get_mut(&addr) {
                    e.state = MapState::Ready;
                    e.window = Some(window);
                }
                Ok(())
            }
            Err(e) => {
                self.forget_mapping(va, addr);
                Err(if e == rustix::io::Errno::NOMEM {
                    Situation::MapCountLimit.code()
                } else {
                    AclError::RT_MEMORY_ALLOCATION
                })
            }
        }
    }

    /// Removes a claimed mapping's entry and drops its reference.
    fn forget_mapping(&self, mut va: parking_lot::MutexGuard<'_, Va>, addr: usize) {
        let Some(e) = va.maps.remove(&addr) else {
            return;
        };
        if let Some(r) = va.resvs.get_mut(&e.resv) {
            r.mappings -= 1;
        }
        drop(va);
        self.maps.live.fetch_sub(1, Ordering::AcqRel);
        let released = self.shards.lock(e.shard).unref(e.alloc);
        self.finish_release(e.shard, released);
    }

    /// Unmaps the mapping that starts at `addr`.
    pub(crate) fn unmap_at(&self, addr: usize, plain: bool) -> Result<()> {
        let window = {
            let mut va = self.va.lock();
            let (_, r) = va
                .containing_resv(addr)
                .ok_or(Situation::NotReserved.code())?;
            if r.plain != plain {
                return Err(Situation::NotReserved.code());
            }
            let e = va.maps.get_mut(&addr).ok_or(Situation::NotMapped.code())?;
            match (e.state, e.window.as_ref().is_some_and(Window::pinned)) {
                (MapState::Ready, false) => {}
                (MapState::Ready | MapState::Moving, _) => {
                    return Err(Situation::MappingInUse.code());
                }
                _ => return Err(Situation::NotMapped.code()),
            }
            e.state = MapState::Unmapping;
            e.window.take().ok_or(AclError::INTERNAL_ERROR)?
        };
        // Marked Unmapping, the window out of its entry: no copy pins it
        // any more (and the window refuses if one still does).
        let unmapped = window.unmap();
        let mut va = self.va.lock();
        if let Err((window, why)) = unmapped {
            // The mapping stays; a later unmap retries.
            if let Some(e) = va.maps.get_mut(&addr) {
                e.state = MapState::Ready;
                e.window = Some(window);
            }
            return Err(match why {
                None => Situation::MappingInUse.code(),
                Some(_) => AclError::RT_DRV_INTERNAL_ERROR,
            });
        }
        self.forget_mapping(va, addr);
        Ok(())
    }

    /// Whether `addr` is device memory of this process, as a copy's kind
    /// sees it: in a reservation, unless the reservation's mappings are of
    /// host memory (`aclrtMallocPhysical` at a host location, mapped into
    /// device address space, is host memory to a copy: torch_npu's
    /// expandable pinned memory copies from it with `HOST_TO_DEVICE`).
    pub(crate) fn is_device_address(&self, addr: usize) -> bool {
        self.va.lock().containing_resv(addr).is_some_and(|(_, r)| {
            r.binding
                .is_none_or(|b| b.location == aclmem_core::Location::Device)
        })
    }

    /// The arenas (start, length) this process reserved.
    pub(crate) fn arenas(&self) -> Vec<(usize, usize)> {
        self.va.lock().arenas.ranges()
    }

    /// Whether `addr` lies in a reservation of this process.
    pub(crate) fn is_reserved(&self, addr: usize) -> bool {
        self.va.lock().containing_resv(addr).is_some()
    }
}
