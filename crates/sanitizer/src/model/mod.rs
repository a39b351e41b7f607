//! What the program holds, as the documented semantics define it, and the
//! checks against it. The model only ever follows what the library
//! answered: an object enters it when a call that makes it succeeded and
//! leaves it when a call that ends it succeeded.

use std::collections::{BTreeMap, VecDeque};

// Handles and addresses are keys the program does not choose: FxHash's
// one multiply is enough, SipHash's cost is not needed.
type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;
type HashSet<K> = rustc_hash::FxHashSet<K>;

use crate::report::{Class, Finding, Site, report};
use crate::trace;

mod cycles;
mod leaks;

/// A live physical handle.
#[derive(Debug, Clone)]
pub struct Handle {
    pub size: usize,
    pub device: Option<u32>,
    pub maps: u32,
    pub site: Site,
    /// The sleep/wake cycle it was made in (0: before the first wake).
    pub cycle: u32,
}

/// Sleep/wake cycles, as vllm-ascend's and sglang's memory savers make
/// them: a sleep unmaps (and frees the physical memory behind) ranges
/// whose addresses stay reserved; a wake maps memory at one of those same
/// addresses again. What the process still holds at the end of each sleep
/// is what it keeps across cycles: it must not grow.
#[derive(Default)]
struct Cycles {
    /// Addresses unmapped during the current sleep.
    gap: HashSet<usize>,
    /// Whether a sleep is under way (an unmap since the last wake).
    asleep: bool,
    /// The least physical memory held during the current sleep.
    low: usize,
    /// Completed sleeps, and the low point of the last (the first one's is
    /// `lows[0]`; constant memory however many cycles a program runs).
    sleeps: usize,
    last_low: usize,
    /// Whether the low point grew at every sleep after the first.
    growing: bool,
    /// The low point of the first [`LOWS_KEPT`] sleeps, for the report.
    lows: Vec<usize>,
    /// Wakes so far.
    wakes: u32,
    /// The program marks its phases itself (`aclmem_sanitizer_phase`):
    /// the heuristic is off.
    explicit: bool,
    /// What wakes had made and the process still held at the last wake:
    /// the place that made the most of it (for a program that frees it
    /// all at the end).
    held_at_wake: Option<Held>,
}

/// Memory made in wakes and still held, from one place.
#[derive(Clone)]
struct Held {
    site: Site,
    wakes: usize,
    count: usize,
    bytes: usize,
}

/// Fewest sleeps after which growth is reported.
const GROWTH_SLEEPS: usize = 3;

/// Sleeps whose low point the report lists (the rest: the last one).
const LOWS_KEPT: usize = 32;

/// A handle freed while mapped: its memory lives until the last unmap.
#[derive(Debug, Clone, Copy)]
struct Lingering {
    size: usize,
    device: Option<u32>,
    maps: u32,
}

#[derive(Debug, Clone, Copy)]
struct Map {
    size: usize,
    handle: usize,
    device: Option<u32>,
    site: Site,
}

/// The model.
#[derive(Default)]
pub struct Model {
    handles: HashMap<usize, Handle>,
    lingering: HashMap<usize, Lingering>,
    /// Recently freed handle values (bounded), for double frees and uses
    /// after free. A value the library hands out again leaves it.
    freed: HashSet<usize>,
    freed_order: VecDeque<usize>,
    resvs: BTreeMap<usize, (usize, Site)>,
    /// Recently released reservation addresses (bounded), for double
    /// releases; an address reserved again leaves it.
    released: HashSet<usize>,
    released_order: VecDeque<usize>,
    maps: BTreeMap<usize, Map>,
    device_allocs: BTreeMap<usize, (usize, Option<u32>, Site)>,
    host_allocs: BTreeMap<usize, (usize, Site)>,
    /// Device ranges this process may copy to or from that it did not
    /// allocate (IPC imports).
    foreign: BTreeMap<usize, usize>,
    /// Shareable handles this process exported, and where.
    exports: HashMap<u64, Site>,
    /// Handles this process exported or imported: the shareable handle's
    /// text and whether it was imported (their frees, and the maps and
    /// unmaps of imports, are sharing events).
    shared: HashMap<usize, (String, bool)>,
    /// Physical and mapped bytes per device (index 64: host), for the
    /// timeline.
    phys: BTreeMap<u32, usize>,
    mapped: BTreeMap<u32, usize>,
    /// The sum of `phys`.
    phys_total: usize,
    cycles: Cycles,
}

/// How many freed handle values are remembered for double frees and uses
/// after free (the most recent ones).
const FREED_MEMORY: usize = 4096;
const HOST: u32 = u32::MAX;

fn dev_key(device: Option<u32>) -> u32 {
    device.unwrap_or(HOST)
}

impl Model {
    fn remember_freed(&mut self, h: usize) {
        if self.freed.insert(h) {
            self.freed_order.push_back(h);
            if self.freed_order.len() > FREED_MEMORY
                && let Some(old) = self.freed_order.pop_front()
            {
                self.freed.remove(&old);
            }
        }
    }

    fn phys_add(&mut self, device: Option<u32>, bytes: isize) -> usize {
        let v = self.phys.entry(dev_key(device)).or_default();
        let before = *v;
        *v = v.saturating_add_signed(bytes);
        let now = *v;
        self.phys_total = (self.phys_total + now).saturating_sub(before);
        if self.cycles.asleep {
            self.cycles.low = self.cycles.low.min(self.phys_total);
        }
        now
    }

    fn mapped_add(&mut self, device: Option<u32>, bytes: isize) -> usize {
        let v = self.mapped.entry(dev_key(device)).or_default();
        *v = v.saturating_add_signed(bytes);
        *v
    }

    /// Where a live handle was made.
    pub fn handle_site(&self, h: usize) -> Option<Site> {
        self.handles.get(&h).map(|hd| hd.site)
    }

    /// The device a live handle is on.
    pub fn device_of(&self, h: usize) -> Option<u32> {
        self.handles.get(&h).and_then(|hd| hd.device)
    }

    /// (device key, physical bytes, mapped bytes) for the timeline.
    pub fn totals(&self, device: Option<u32>) -> (u32, usize, usize) {
        self.trace_totals(device)
    }

    fn trace_totals(&self, device: Option<u32>) -> (u32, usize, usize) {
        let d = dev_key(device);
        (
            d,
            self.phys.get(&d).copied().unwrap_or(0),
            self.mapped.get(&d).copied().unwrap_or(0),
        )
    }

    /// A handle made by malloc, import or retain.
    pub fn handle_made(
        &mut self,
        h: usize,
        size: usize,
        device: Option<u32>,
        site: Site,
        counts: bool,
    ) {
        self.freed.remove(&h);
        self.lingering.remove(&h);
        self.handles.insert(
            h,
            Handle {
                size,
                device,
                maps: 0,
                site,
                cycle: self.cycles.wakes,
            },
        );
        if counts {
            self.phys_add(device, size as isize);
        }
    }

    /// Before `aclrtFreePhysical(h)`.
    pub fn check_free(&self, h: usize, site: Site) {
        if self.freed.contains(&h) || self.lingering.contains_key(&h) {
            report(Finding {
                class: Class::DoubleFree,
                call: "aclrtFreePhysical",
                args: format!("{h:#x}"),
                message: "the handle was freed already".into(),
                code: Some(aclmem_core::AclError::RT_INVALID_HANDLE.code()),
                site,
            });
        } else if let Some(hd) = self.handles.get(&h)
            && hd.maps > 0
        {
            report(Finding {
                class: Class::FreeWhileMapped,
                call: "aclrtFreePhysical",
                args: format!("{h:#x}"),
                message: format!(
                    "the handle is still mapped {} time(s): its memory stays in use until the last aclrtUnmapMem",
                    hd.maps
                ),
                code: None,
                site,
            });
        }
    }

    /// After a successful `aclrtFreePhysical(h)`.
    pub fn handle_freed(&mut self, h: usize) {
        self.shared.remove(&h);
        if let Some(hd) = self.handles.remove(&h) {
            if hd.maps == 0 {
                let p = self.phys_add(hd.device, -(hd.size as isize));
                let _ = p;
            } else {
                self.lingering.insert(
                    h,
                    Lingering {
                        size: hd.size,
                        device: hd.device,
                        maps: hd.maps,
                    },
                );
            }
        }
        self.remember_freed(h);
    }

    /// A handle that is not live (for map and export).
    pub fn check_live(&self, call: &'static str, h: usize, site: Site) {
        if self.freed.contains(&h) || self.lingering.contains_key(&h) {
            report(Finding {
                class: Class::UseAfterFree,
                call,
                args: format!("{h:#x}"),
                message: "the handle was freed".into(),
                code: Some(aclmem_core::AclError::RT_INVALID_HANDLE.code()),
                site,
            });
        }
    }

    pub fn resv_made(&mut self, addr: usize, size: usize, site: Site) {
        self.released.remove(&addr);
        self.resvs.insert(addr, (size, site));
    }

    pub fn check_release(&self, addr: usize, site: Site) {
        if !self.resvs.contains_key(&addr) {
            let message = if self.released.contains(&addr) {
                "the range was released already (a double release)"
            } else {
                "no reservation of this process starts at this address"
            };
            report(Finding {
                class: Class::ReleaseUnreserved,
                call: "aclrtReleaseMemAddress",
                args: format!("{addr:#x}"),
                message: message.into(),
                code: Some(aclmem_core::AclError::RT_PARAM_INVALID.code()),
                site,
            });
        }
        if let Some(&(size, _)) = self.resvs.get(&addr) {
            let inside = self.maps.range(addr..addr.saturating_add(size)).count();
            if inside > 0 {
                report(Finding {
                    class: Class::ReleaseWhileMapped,
                    call: "aclrtReleaseMemAddress",
                    args: format!("{addr:#x}"),
                    message: format!("{inside} mapping(s) are still inside the range"),
                    code: Some(aclmem_core::AclError::RT_PARAM_INVALID.code()),
                    site,
                });
            }
        }
    }

    pub fn resv_released(&mut self, addr: usize) {
        self.resvs.remove(&addr);
        if self.released.insert(addr) {
            self.released_order.push_back(addr);
            if self.released_order.len() > FREED_MEMORY
                && let Some(old) = self.released_order.pop_front()
            {
                self.released.remove(&old);
            }
        }
    }

    /// Before `aclrtMapMem`: a freed handle, an overlap.
    pub fn check_map(&self, addr: usize, size: usize, h: usize, site: Site) {
        self.check_live("aclrtMapMem", h, site);
        let end = addr.saturating_add(size);
        let before = self.maps.range(..=addr).next_back();
        let overlapping = before.is_some_and(|(&a, m)| a + m.size > addr)
            || self.maps.range(addr..end).next().is_some();
        if overlapping {
            report(Finding {
                class: Class::OverlappingMap,
                call: "aclrtMapMem",
                args: format!("{addr:#x}, {size:#x}, 0, {h:#x}"),
                message: "the range overlaps a live mapping".into(),
                code: Some(aclmem_core::AclError::RT_PARAM_INVALID.code()),
                site,
            });
        }
    }

    pub fn mapped(
        &mut self,
        addr: usize,
        size: usize,
        h: usize,
        site: Site,
    ) -> (u32, usize, usize) {
        let device = self.handles.get(&h).and_then(|hd| hd.device);
        if let Some(hd) = self.handles.get_mut(&h) {
            hd.maps += 1;
        }
        if !self.cycles.explicit && self.cycles.asleep && self.cycles.gap.contains(&addr) {
            // A wake: memory mapped again where a sleep unmapped it.
            self.wake();
        }
        self.maps.insert(
            addr,
            Map {
                size,
                handle: h,
                device,
                site,
            },
        );
        self.mapped_add(device, size as isize);
        self.trace_totals(device)
    }

    pub fn check_unmap(&self, addr: usize, site: Site) {
        if !self.maps.contains_key(&addr) {
            report(Finding {
                class: Class::UnmapUnmapped,
                call: "aclrtUnmapMem",
                args: format!("{addr:#x}"),
                message: "no mapping starts at this address".into(),
                code: Some(aclmem_core::AclError::RT_PARAM_INVALID.code()),
                site,
            });
        }
    }

    pub fn unmapped(&mut self, addr: usize) -> Option<(u32, usize, usize)> {
        let m = self.maps.remove(&addr)?;
        if !self.cycles.explicit {
            if !self.cycles.asleep {
                self.cycles.asleep = true;
                self.cycles.low = self.phys_total;
            }
            self.cycles.gap.insert(addr);
        }
        self.mapped_add(m.device, -(m.size as isize));
        if let Some(hd) = self.handles.get_mut(&m.handle) {
            hd.maps = hd.maps.saturating_sub(1);
        } else if let Some(l) = self.lingering.get_mut(&m.handle) {
            l.maps = l.maps.saturating_sub(1);
            if l.maps == 0 {
                let l = *l;
                self.lingering.remove(&m.handle);
                self.phys_add(l.device, -(l.size as isize));
            }
        }
        Some(self.trace_totals(m.device))
    }

    /// After a successful export of `h` as `shareable`.
    pub fn exported(&mut self, h: usize, shareable: u64, site: Site) {
        self.exports.insert(shareable, site);
        self.shared
            .insert(h, (crate::sharing::shareable(shareable), false));
    }

    /// After a successful import of `shareable` as `h`.
    pub fn imported(&mut self, h: usize, shareable: u64) {
        self.shared
            .insert(h, (crate::sharing::shareable(shareable), true));
    }

    /// The shareable handle `h` was exported as or imported from, and
    /// whether it was imported.
    pub fn shared(&self, h: usize) -> Option<&(String, bool)> {
        self.shared.get(&h)
    }

    /// The shareable handle behind the mapping at `addr`, if it maps an
    /// imported handle.
    pub fn imported_mapping(&self, addr: usize) -> Option<(usize, &str)> {
        let m = self.maps.get(&addr)?;
        match self.shared.get(&m.handle) {
            Some((id, true)) => Some((m.handle, id)),
            _ => None,
        }
    }

    /// The mapping of physical memory that holds `addr`: its start, the
    /// handle and where it was made.
    /// The size of the mapping that starts at `addr`, if one does.
    pub fn mapping_size(&self, addr: usize) -> Option<usize> {
        self.maps.get(&addr).map(|m| m.size)
    }

    pub fn mapping_containing(&self, addr: usize) -> Option<(usize, usize, Site)> {
        let (&start, m) = self.maps.range(..=addr).next_back()?;
        (addr < start.saturating_add(m.size)).then_some((start, m.handle, m.site))
    }

    pub fn check_import(&self, call: &'static str, shareable: u64, site: Site) {
        if let Some(exported) = self.exports.get(&shareable) {
            report(Finding {
                class: Class::ImportOwnExport,
                call,
                args: format!("{shareable:#x}"),
                message: format!(
                    "a process cannot import what it exported itself (it exported {shareable:#x} at {})",
                    exported.describe()
                ),
                code: Some(aclmem_core::AclError::RT_FEATURE_NOT_SUPPORT.code()),
                site,
            });
        }
    }

    pub fn device_alloc(
        &mut self,
        p: usize,
        size: usize,
        device: Option<u32>,
        site: Site,
    ) -> (u32, usize, usize) {
        self.device_allocs.insert(p, (size, device, site));
        self.phys_add(device, size as isize);
        self.trace_totals(device)
    }

    /// The size of the `aclrtMalloc` block at `p`, if it is one.
    pub fn device_alloc_size(&self, p: usize) -> Option<usize> {
        self.device_allocs.get(&p).map(|(s, _, _)| *s)
    }

    pub fn device_freed(&mut self, p: usize) -> Option<(u32, usize, usize)> {
        let (size, device, _) = self.device_allocs.remove(&p)?;
        self.phys_add(device, -(size as isize));
        Some(self.trace_totals(device))
    }

    pub fn host_alloc(&mut self, p: usize, size: usize, site: Site) {
        self.host_allocs.insert(p, (size, site));
    }

    pub fn host_freed(&mut self, p: usize) {
        self.host_allocs.remove(&p);
    }

    pub fn foreign_range(&mut self, p: usize, size: usize) {
        self.foreign.insert(p, size);
    }

    /// Whether mappings cover `addr..end` without a gap: a copy may span
    /// adjacent mappings (an expandable segment is mapped handle by handle
    /// and used as one range).
    fn maps_cover(&self, addr: usize, end: usize) -> bool {
        let Some((&first, m)) = self.maps.range(..=addr).next_back() else {
            return false;
        };
        let mut covered = first.saturating_add(m.size);
        if covered <= addr {
            return false;
        }
        while covered < end {
            match self.maps.get(&covered) {
                Some(next) => covered = covered.saturating_add(next.size),
                None => return false,
            }
        }
        true
    }

    /// Whether `addr..addr + count` lies in device memory of this process.
    pub fn device_range(&self, addr: usize, count: usize) -> bool {
        let end = addr.saturating_add(count);
        let within =
            |m: Option<(&usize, usize)>| m.is_some_and(|(&a, s)| a <= addr && end <= a + s);
        self.maps_cover(addr, end)
            || within(
                self.device_allocs
                    .range(..=addr)
                    .next_back()
                    .map(|(a, (s, _, _))| (a, *s + 64)),
            )
            || within(
                self.foreign
                    .range(..=addr)
                    .next_back()
                    .map(|(a, s)| (a, *s)),
            )
    }

    /// Before a copy or memset: the device side must be mapped.
    pub fn check_copy(
        &self,
        call: &'static str,
        dst: usize,
        src: usize,
        count: usize,
        kind: Option<u32>,
        site: Site,
    ) {
        if count == 0 {
            return;
        }
        // 1 host to device, 2 device to host, 3 device to device; None:
        // memset (device or ACL host memory).
        let (check_dst, check_src) = match kind {
            Some(1) => (true, false),
            Some(2) => (false, true),
            Some(3) => (true, true),
            None => (!self.host_range(dst, count), false),
            _ => (false, false),
        };
        for (check, addr, side) in [(check_dst, dst, "destination"), (check_src, src, "source")] {
            if check && !self.device_range(addr, count) {
                report(Finding {
                    class: Class::CopyUnmapped,
                    call,
                    args: match kind {
                        Some(k) => format!("{dst:#x}, _, {src:#x}, {count:#x}, {k}"),
                        None => format!("{dst:#x}, _, _, {count:#x}"),
                    },
                    message: format!("the {side} is not mapped device memory of this process"),
                    code: Some(aclmem_core::AclError::RT_PARAM_INVALID.code()),
                    site,
                });
                return;
            }
        }
    }

    fn host_range(&self, addr: usize, count: usize) -> bool {
        self.host_allocs
            .range(..=addr)
            .next_back()
            .is_some_and(|(&a, (s, _))| a <= addr && addr.saturating_add(count) <= a + s)
    }
}
