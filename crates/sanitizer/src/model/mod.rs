//! What the program holds, as the documented semantics define it, and the
//! checks against it. The model only ever follows what the library
//! answered: an object enters it when a call that makes it succeeded and
//! leaves it when a call that ends it succeeded.

use std::collections::BTreeMap;

// Handles and addresses are keys the program does not choose: FxHash's
// one multiply is enough, SipHash's cost is not needed.
type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;
type HashSet<K> = rustc_hash::FxHashSet<K>;

use crate::report::{Class, Finding, Site, report, report_cold};
use crate::trace;

mod cycles;
mod ended;
mod leaks;

use ended::Ended;

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

/// Physical and mapped bytes of a device (or of the host), for the
/// timeline.
#[derive(Debug, Clone, Copy)]
struct Totals {
    device: u32,
    phys: usize,
    mapped: usize,
}

impl Totals {
    /// (device key, physical bytes, mapped bytes), as the timeline takes
    /// them.
    fn traced(self) -> (u32, usize, usize) {
        (self.device, self.phys, self.mapped)
    }
}

/// Whether `addr..addr + size` overlaps a mapping of `maps`: one starting
/// inside it, or the last one starting below it running into it. The last
/// mapping starting below the range's end is the one to look at for both:
/// one lookup.
fn overlaps(maps: &BTreeMap<usize, Map>, addr: usize, size: usize) -> bool {
    // No mapping at all (a program that maps one range at a time): a
    // range lookup in an empty tree costs more than the rest of the check.
    if maps.is_empty() {
        return false;
    }
    let end = addr.saturating_add(size);
    maps.range(..end.max(addr.saturating_add(1)))
        .next_back()
        .is_some_and(|(&a, m)| (addr..end).contains(&a) || a.saturating_add(m.size) > addr)
}

/// The model.
#[derive(Default)]
pub struct Model {
    handles: HashMap<usize, Handle>,
    /// Handles freed while mapped (in `freed` too).
    lingering: HashMap<usize, Lingering>,
    /// Recently freed handle values, for double frees and uses after free
    /// (asked only of a value that is not a live handle).
    freed: Ended,
    /// Reservations by start address (size, site). Asked by address only;
    /// the reports that walk them sort them.
    resvs: HashMap<usize, (usize, Site)>,
    /// Recently released reservation addresses, for double releases (asked
    /// only of an address that starts no reservation).
    released: Ended,
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
    /// Per device (and the host), in the order first used: a process uses
    /// a few, and a scan of them is cheaper than a map.
    totals: Vec<Totals>,
    /// The sum of the physical bytes of `totals`.
    phys_total: usize,
    cycles: Cycles,
}

const HOST: u32 = u32::MAX;

fn dev_key(device: Option<u32>) -> u32 {
    device.unwrap_or(HOST)
}

impl Model {
    /// The totals of `device`, made when first used.
    fn totals_of(&mut self, device: Option<u32>) -> &mut Totals {
        let d = dev_key(device);
        let i = match self.totals.iter().position(|t| t.device == d) {
            Some(i) => i,
            None => {
                self.totals.push(Totals {
                    device: d,
                    phys: 0,
                    mapped: 0,
                });
                self.totals.len() - 1
            }
        };
        &mut self.totals[i]
    }

    /// Adds `bytes` to `device`'s physical bytes: its totals after.
    fn phys_add(&mut self, device: Option<u32>, bytes: isize) -> (u32, usize, usize) {
        let t = self.totals_of(device);
        let before = t.phys;
        t.phys = t.phys.saturating_add_signed(bytes);
        let after = *t;
        self.phys_total = (self.phys_total + after.phys).saturating_sub(before);
        if self.cycles.asleep {
            self.cycles.low = self.cycles.low.min(self.phys_total);
        }
        after.traced()
    }

    /// Adds `bytes` to `device`'s mapped bytes: its totals after.
    fn mapped_add(&mut self, device: Option<u32>, bytes: isize) -> (u32, usize, usize) {
        let t = self.totals_of(device);
        t.mapped = t.mapped.saturating_add_signed(bytes);
        t.traced()
    }

    /// The devices (and the host, [`HOST`]) this process used.
    fn devices_used(&self) -> impl Iterator<Item = u32> + '_ {
        self.totals.iter().map(|t| t.device)
    }

    /// Where a live handle was made.
    pub fn handle_site(&self, h: usize) -> Option<Site> {
        self.handles.get(&h).map(|hd| hd.site)
    }

    /// (device key, physical bytes, mapped bytes) for the timeline.
    pub fn totals(&self, device: Option<u32>) -> (u32, usize, usize) {
        let d = dev_key(device);
        self.totals
            .iter()
            .find(|t| t.device == d)
            .map_or((d, 0, 0), |t| t.traced())
    }

    /// Whether `h`, which is not a live handle, was freed: freed while
    /// still mapped, or among the recent frees. (What a live handle is, is
    /// asked first: a value the library handed out again is live again.)
    fn was_freed(&self, h: usize) -> bool {
        (!self.lingering.is_empty() && self.lingering.contains_key(&h)) || self.freed.contains(h)
    }

    /// A handle made by malloc, import or retain: the totals of its device
    /// after (for the timeline).
    pub fn handle_made(
        &mut self,
        h: usize,
        size: usize,
        device: Option<u32>,
        site: Site,
        counts: bool,
    ) -> (u32, usize, usize) {
        if !self.lingering.is_empty() {
            self.lingering.remove(&h);
        }
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
            self.phys_add(device, size as isize)
        } else {
            self.totals(device)
        }
    }

    /// Before `aclrtFreePhysical(h)`.
    pub fn check_free(&self, h: usize, site: Site) {
        let live = self.handles.get(&h);
        if live.is_none() && self.was_freed(h) {
            report_cold(|| Finding {
                class: Class::DoubleFree,
                call: "aclrtFreePhysical",
                args: format!("{h:#x}"),
                message: "the handle was freed already".into(),
                code: Some(aclmem_core::AclError::RT_INVALID_HANDLE.code()),
                site,
            });
        } else if let Some(hd) = live
            && hd.maps > 0
        {
            report_cold(|| Finding {
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

    /// After a successful `aclrtFreePhysical(h)`: the totals of its device
    /// after (of the host's, for a handle the model does not hold).
    pub fn handle_freed(&mut self, h: usize) -> (u32, usize, usize) {
        if !self.shared.is_empty() {
            self.shared.remove(&h);
        }
        self.freed.push(h);
        let Some(hd) = self.handles.remove(&h) else {
            return self.totals(None);
        };
        if hd.maps == 0 {
            return self.phys_add(hd.device, -(hd.size as isize));
        }
        self.lingering.insert(
            h,
            Lingering {
                size: hd.size,
                device: hd.device,
                maps: hd.maps,
            },
        );
        self.totals(hd.device)
    }

    /// A handle that is not live (for map and export).
    pub fn check_live(&self, call: &'static str, h: usize, site: Site) {
        if !self.handles.contains_key(&h) && self.was_freed(h) {
            report_cold(|| Finding {
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
        self.resvs.insert(addr, (size, site));
    }

    pub fn check_release(&self, addr: usize, site: Site) {
        let message = match self.resvs.get(&addr) {
            // No mapping at all: none inside (and no range lookup).
            Some(_) if self.maps.is_empty() => return,
            Some(&(size, _)) => {
                let mut inside = self.maps.range(addr..addr.saturating_add(size));
                if inside.next().is_some() {
                    let inside = 1 + inside.count();
                    report_cold(|| Finding {
                        class: Class::ReleaseWhileMapped,
                        call: "aclrtReleaseMemAddress",
                        args: format!("{addr:#x}"),
                        message: format!("{inside} mapping(s) are still inside the range"),
                        code: Some(aclmem_core::AclError::RT_PARAM_INVALID.code()),
                        site,
                    });
                }
                return;
            }
            None if self.released.contains(addr) => {
                "the range was released already (a double release)"
            }
            None => "no reservation of this process starts at this address",
        };
        report_cold(|| Finding {
            class: Class::ReleaseUnreserved,
            call: "aclrtReleaseMemAddress",
            args: format!("{addr:#x}"),
            message: message.into(),
            code: Some(aclmem_core::AclError::RT_PARAM_INVALID.code()),
            site,
        });
    }

    pub fn resv_released(&mut self, addr: usize) {
        self.resvs.remove(&addr);
        self.released.push(addr);
    }

    /// Before `aclrtMapMem`: a freed handle, an overlap.
    pub fn check_map(&self, addr: usize, size: usize, h: usize, site: Site) {
        self.check_live("aclrtMapMem", h, site);
        let overlapping = overlaps(&self.maps, addr, size);
        if overlapping {
            report_cold(|| Finding {
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
        let device = self.handles.get_mut(&h).and_then(|hd| {
            hd.maps += 1;
            hd.device
        });
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
        self.mapped_add(device, size as isize)
    }

    /// Before `aclrtUnmapMem(addr)`: the mapping that starts at `addr` (its
    /// size, and the shareable handle it maps when it maps an import), or a
    /// finding.
    pub fn check_unmap(&self, addr: usize, site: Site) -> Option<(usize, Option<&str>)> {
        let Some(m) = self.maps.get(&addr) else {
            report_cold(|| Finding {
                class: Class::UnmapUnmapped,
                call: "aclrtUnmapMem",
                args: format!("{addr:#x}"),
                message: "no mapping starts at this address".into(),
                code: Some(aclmem_core::AclError::RT_PARAM_INVALID.code()),
                site,
            });
            return None;
        };
        Some((m.size, self.import_mapped(m)))
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
        let totals = self.mapped_add(m.device, -(m.size as isize));
        if let Some(hd) = self.handles.get_mut(&m.handle) {
            hd.maps = hd.maps.saturating_sub(1);
        } else if let Some(l) = self.lingering.get_mut(&m.handle) {
            l.maps = l.maps.saturating_sub(1);
            if l.maps == 0 {
                let l = *l;
                self.lingering.remove(&m.handle);
                return Some(self.phys_add(l.device, -(l.size as isize)));
            }
        }
        Some(totals)
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
    pub fn imported_mapping(&self, addr: usize) -> Option<&str> {
        if self.shared.is_empty() {
            return None;
        }
        self.import_mapped(self.maps.get(&addr)?)
    }

    /// The shareable handle `m` maps, if it maps an import.
    fn import_mapped(&self, m: &Map) -> Option<&str> {
        if self.shared.is_empty() {
            return None;
        }
        match self.shared.get(&m.handle) {
            Some((id, true)) => Some(id),
            _ => None,
        }
    }

    /// The mapping of physical memory that holds `addr`: its start, the
    /// handle and where it was made.
    pub fn mapping_containing(&self, addr: usize) -> Option<(usize, usize, Site)> {
        let (&start, m) = self.maps.range(..=addr).next_back()?;
        (addr < start.saturating_add(m.size)).then_some((start, m.handle, m.site))
    }

    pub fn check_import(&self, call: &'static str, shareable: u64, site: Site) {
        if let Some(exported) = self.exports.get(&shareable) {
            report_cold(|| Finding {
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
        self.phys_add(device, size as isize)
    }

    /// The size of the `aclrtMalloc` block at `p`, if it is one.
    pub fn device_alloc_size(&self, p: usize) -> Option<usize> {
        self.device_allocs.get(&p).map(|(s, _, _)| *s)
    }

    pub fn device_freed(&mut self, p: usize) -> Option<(u32, usize, usize)> {
        let (size, device, _) = self.device_allocs.remove(&p)?;
        Some(self.phys_add(device, -(size as isize)))
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
                report_cold(|| Finding {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlap_is_found_however_the_ranges_meet() {
        let map = |size| Map {
            size,
            handle: 1,
            device: Some(0),
            site: Site::default(),
        };
        // Mappings at 0x1000..0x2000 and 0x4000..0x6000.
        let maps: BTreeMap<usize, Map> = [(0x1000, map(0x1000)), (0x4000, map(0x2000))].into();
        let cases = [
            // (start, size, overlaps)
            (0x1000, 0x1000, true),  // the same range
            (0x0800, 0x1000, true),  // running into the first
            (0x1800, 0x0100, true),  // inside the first
            (0x1800, 0x1000, true),  // from inside the first out of it
            (0x0000, 0x8000, true),  // around both
            (0x3000, 0x2000, true),  // running into the second
            (0x2000, 0x2000, false), // between them, touching both
            (0x0000, 0x1000, false), // just below the first
            (0x6000, 0x1000, false), // just above the second
            (0x1000, 0x0000, true),  // empty, at a mapping's start
            (0x2000, 0x0000, false), // empty, at a mapping's end
        ];
        for (addr, size, want) in cases {
            assert_eq!(overlaps(&maps, addr, size), want, "{addr:#x}+{size:#x}");
        }
        assert!(!overlaps(&BTreeMap::new(), 0x1000, 0x1000));
    }
}
