//! Reservations and mappings: releases (of what is still mapped, of what
//! was never reserved), overlapping maps, unmaps, and what a mapping
//! holds; a sleep and a wake are seen here (`cycles`).

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

impl Model {
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
