//! Reservations and mappings: releases (of what is still mapped, of what
//! was never reserved), overlapping maps, unmaps, and what a mapping
//! holds; a sleep and a wake are seen here (`cycles`).

use std::sync::atomic::Ordering::Relaxed;

use super::*;

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

/// After a successful reservation of `addr..addr + size`.
pub fn resv_made(addr: usize, size: usize, site: Site) {
    Spaces::lock(1 << space_of(addr))
        .at(addr)
        .resvs
        .insert(addr, (size, site));
}

/// The mapping of physical memory that holds `addr`: its start, the
/// handle and where it was made.
pub fn mapping_containing(addr: usize) -> Option<(usize, usize, Site)> {
    let spaces = Spaces::lock(1 << space_of(addr));
    let (&start, m) = spaces.get(addr).maps.range(..=addr).next_back()?;
    (addr < start.saturating_add(m.size)).then_some((start, m.handle, m.site))
}

impl Locked {
    /// Before `aclrtReleaseMemAddress(addr)` (the shards of its
    /// reservation held).
    pub fn check_release(&mut self, addr: usize, site: Site) {
        let spaces = self.spaces();
        let message = match spaces.get(addr).resvs.get(&addr) {
            Some(&(size, _)) => {
                // Each mapping inside once: in the shard of its start.
                let end = addr.saturating_add(size);
                let inside: usize = spaces
                    .each_ref()
                    .filter(|(_, s)| !s.maps.is_empty())
                    .map(|(i, s)| {
                        s.maps
                            .range(addr..end)
                            .filter(|(a, _)| space_of(**a) == i)
                            .count()
                    })
                    .sum();
                if inside > 0 {
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
            None if spaces.get(addr).released.contains(addr) => {
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
        let s = self.spaces().at(addr);
        s.resvs.remove(&addr);
        s.released.push(addr);
    }

    /// Before `aclrtMapMem`: a freed handle, an overlap (the shards of
    /// the range and of the handle held).
    pub fn check_map(&mut self, addr: usize, size: usize, h: usize, site: Site) {
        self.owned().check_live("aclrtMapMem", h, site);
        let overlapping = self
            .spaces()
            .each_ref()
            .any(|(_, s)| overlaps(&s.maps, addr, size));
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
        let device = self.owned().handles.get_mut(&h).and_then(|hd| {
            hd.maps += 1;
            hd.device
        });
        let c = &totals::CYCLE;
        if !c.explicit.load(Relaxed) && c.asleep.load(Relaxed) {
            let epoch = c.epoch.load(Relaxed);
            let s = self.spaces().at(addr);
            if s.gap_epoch == epoch && s.gap.contains(&addr) {
                // A wake: memory mapped again where a sleep unmapped it
                // (the first such map ends the sleep; recorded once the
                // shards are let go).
                let low = c.low.load(Relaxed);
                if c.asleep
                    .compare_exchange(true, false, Relaxed, Relaxed)
                    .is_ok()
                {
                    c.epoch.fetch_add(1, Relaxed);
                    self.woke = Some(low);
                }
            }
        }
        let map = Map {
            size,
            handle: h,
            device,
            site,
        };
        for s in self.spaces().each() {
            s.maps.insert(addr, map);
        }
        totals::mapped_add(device, size as isize)
    }

    /// Before `aclrtUnmapMem(addr)`: the mapping that starts at `addr` (its
    /// size, and the shareable handle it maps when it maps an import), or a
    /// finding.
    pub fn check_unmap(&mut self, addr: usize, site: Site) -> Option<(usize, Option<String>)> {
        let Some(m) = self.spaces().get(addr).maps.get(&addr).copied() else {
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
        Some((m.size, self.imported_mapping(m.handle)))
    }

    pub fn unmapped(&mut self, addr: usize) -> Option<(u32, usize, usize)> {
        let m = self.spaces().at(addr).maps.get(&addr).copied()?;
        for s in self.spaces().each() {
            s.maps.remove(&addr);
        }
        let c = &totals::CYCLE;
        if !c.explicit.load(Relaxed) {
            if !c.asleep.load(Relaxed) && !c.asleep.swap(true, Relaxed) {
                c.low.store(totals::phys_total(), Relaxed);
            }
            let epoch = c.epoch.load(Relaxed);
            let s = self.spaces().at(addr);
            if s.gap_epoch != epoch {
                s.gap.clear();
                s.gap_epoch = epoch;
            }
            s.gap.insert(addr);
        }
        let totals = totals::mapped_add(m.device, -(m.size as isize));
        let o = self.owned();
        if let Some(hd) = o.handles.get_mut(&m.handle) {
            hd.maps = hd.maps.saturating_sub(1);
        } else if let Some(l) = o.lingering.get_mut(&m.handle) {
            l.maps = l.maps.saturating_sub(1);
            if l.maps == 0 {
                let l = *l;
                o.lingering.remove(&m.handle);
                return Some(totals::phys_add(l.device, -(l.size as isize)));
            }
        }
        Some(totals)
    }

    /// The shareable handle `h` (whose shard is held) was imported from,
    /// if it is an import.
    pub fn imported_mapping(&mut self, h: usize) -> Option<String> {
        let o = self.owned();
        if o.shared.is_empty() {
            return None;
        }
        match o.shared.get(&h) {
            Some((id, true)) => Some(id.clone()),
            _ => None,
        }
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
