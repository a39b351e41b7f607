//! `aclrtMalloc` and host blocks, device ranges imported by IPC, and the
//! copies and memsets, whose device side must be memory of this process.
//! An `aclrtMalloc` block is kept in the address shard of each granule it
//! touches, with the 64 bytes past its end a copy may reach (`shards`).

use super::*;

/// The bytes past an `aclrtMalloc` block's end that a copy may reach.
const SLACK: usize = 64;

/// After a successful `aclrtMalloc` of `size` bytes at `p`: the totals of
/// its device after.
pub fn device_alloc(p: usize, size: usize, device: Option<u32>, site: Site) -> (u32, usize, usize) {
    let mut spaces = Spaces::lock(spaces_of(p, size.saturating_add(SLACK)));
    for s in spaces.each() {
        s.device_allocs.insert(p, (size, device, site));
    }
    drop(spaces);
    totals::phys_add(device, size as isize)
}

/// An `aclrtFree(p)` under way: the shards of the block at `p` held from
/// the look at it to the model's update, so that a block the library hands
/// another thread at the same address meanwhile enters the model after
/// this one left it.
pub struct Freeing {
    spaces: Spaces,
    p: usize,
}

impl Freeing {
    pub fn lock(p: usize) -> Freeing {
        let spaces = Spaces::holding(p, |s| {
            s.device_allocs.get(&p).map(|b| b.0.saturating_add(SLACK))
        });
        Freeing { spaces, p }
    }

    /// The size of the `aclrtMalloc` block at `p`, if it is one.
    pub fn size(&self) -> Option<usize> {
        let p = self.p;
        self.spaces.get(p).device_allocs.get(&p).map(|(s, _, _)| *s)
    }

    /// After a successful `aclrtFree(p)`: the totals of its device after,
    /// if `p` was a block of the model.
    pub fn freed(mut self) -> Option<(u32, usize, usize)> {
        let p = self.p;
        let (size, device, _) = self.spaces.get(p).device_allocs.get(&p).copied()?;
        for s in self.spaces.each() {
            s.device_allocs.remove(&p);
        }
        drop(self);
        Some(totals::phys_add(device, -(size as isize)))
    }
}

impl Model {
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

    fn host_range(&self, addr: usize, count: usize) -> bool {
        self.host_allocs
            .range(..=addr)
            .next_back()
            .is_some_and(|(&a, (s, _))| a <= addr && addr.saturating_add(count) <= a + s)
    }
}

/// Whether mappings cover `addr..end` without a gap (the shards of the
/// range held): a copy may span adjacent mappings (an expandable segment
/// is mapped handle by handle and used as one range).
fn maps_cover(spaces: &Spaces, addr: usize, end: usize) -> bool {
    let Some((&first, m)) = spaces.get(addr).maps.range(..=addr).next_back() else {
        return false;
    };
    let mut covered = first.saturating_add(m.size);
    if covered <= addr {
        return false;
    }
    while covered < end {
        match spaces.get(covered).maps.get(&covered) {
            Some(next) => covered = covered.saturating_add(next.size),
            None => return false,
        }
    }
    true
}

/// Whether `addr..addr + count` lies in device memory of this process.
pub fn device_range(addr: usize, count: usize) -> bool {
    let end = addr.saturating_add(count);
    let within = |m: Option<(&usize, usize)>| m.is_some_and(|(&a, s)| a <= addr && end <= a + s);
    {
        let spaces = Spaces::lock(spaces_of(addr, count));
        if maps_cover(&spaces, addr, end)
            || within(
                spaces
                    .get(addr)
                    .device_allocs
                    .range(..=addr)
                    .next_back()
                    .map(|(a, (s, _, _))| (a, *s + SLACK)),
            )
        {
            return true;
        }
    }
    let rest = crate::platform::model();
    within(
        rest.foreign
            .range(..=addr)
            .next_back()
            .map(|(a, s)| (a, *s)),
    )
}

/// Whether `addr..addr + count` lies in an `aclrtMallocHost` block.
pub fn host_range(addr: usize, count: usize) -> bool {
    crate::platform::model().host_range(addr, count)
}

/// Before a copy or memset: the device side must be mapped.
pub fn check_copy(
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
        None => (!host_range(dst, count), false),
        _ => (false, false),
    };
    for (check, addr, side) in [(check_dst, dst, "destination"), (check_src, src, "source")] {
        if check && !device_range(addr, count) {
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
