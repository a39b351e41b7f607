//! `aclrtMalloc` and host blocks, device ranges imported by IPC, and the
//! copies and memsets, whose device side must be memory of this process.

use super::*;

impl Model {
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

    /// The size of the `aclrtMallocHost` block at `p`, if there is one.
    pub fn host_alloc_size(&self, p: usize) -> Option<usize> {
        self.host_allocs.get(&p).map(|(s, _)| *s)
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

    pub fn host_range(&self, addr: usize, count: usize) -> bool {
        self.host_allocs
            .range(..=addr)
            .next_back()
            .is_some_and(|(&a, (s, _))| a <= addr && addr.saturating_add(count) <= a + s)
    }
}
