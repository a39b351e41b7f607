//! Physical handles: made (by malloc, import or retain), freed (and freed
//! while still mapped), used after a free; exports and imports of them,
//! and a process importing what it exported itself. Each handle is in the
//! handle shard its value hashes to (`shards`).

use super::*;

impl Owned {
    /// Whether `h`, which is not a live handle, was freed: freed while
    /// still mapped, or among the recent frees. (What a live handle is, is
    /// asked first: a value the library handed out again is live again.)
    fn was_freed(&self, h: usize) -> bool {
        (!self.lingering.is_empty() && self.lingering.contains_key(&h)) || self.freed.contains(h)
    }

    /// A handle that is not live (for map and export).
    pub(super) fn check_live(&self, call: &'static str, h: usize, site: Site) {
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
}

/// Where a live handle was made.
pub fn handle_site(h: usize) -> Option<Site> {
    owner(h).handles.get(&h).map(|hd| hd.site)
}

/// A handle made by malloc, import or retain (its shard locked once the
/// call that made it answered: no other call can name it before): the
/// totals of its device after (for the timeline).
pub fn handle_made(
    h: usize,
    size: usize,
    device: Option<u32>,
    site: Site,
    counts: bool,
) -> (u32, usize, usize) {
    {
        let mut o = owner(h);
        if !o.lingering.is_empty() {
            o.lingering.remove(&h);
        }
        o.handles.insert(
            h,
            Handle {
                size,
                device,
                maps: 0,
                site,
                cycle: totals::CYCLE
                    .wakes
                    .load(std::sync::atomic::Ordering::Relaxed),
            },
        );
    }
    if counts {
        totals::phys_add(device, size as isize)
    } else {
        totals(device)
    }
}

impl Locked {
    /// Before `aclrtFreePhysical(h)` (the handle shard of `h` held).
    pub fn check_free(&mut self, h: usize, site: Site) {
        let o = self.owned();
        let live = o.handles.get(&h);
        if live.is_none() && o.was_freed(h) {
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
        let o = self.owned();
        if !o.shared.is_empty() {
            o.shared.remove(&h);
        }
        o.freed.push(h);
        let Some(hd) = o.handles.remove(&h) else {
            return totals(None);
        };
        if hd.maps == 0 {
            return totals::phys_add(hd.device, -(hd.size as isize));
        }
        o.lingering.insert(
            h,
            Lingering {
                size: hd.size,
                device: hd.device,
                maps: hd.maps,
            },
        );
        totals(hd.device)
    }

    /// The shareable handle `h` was exported as or imported from, and
    /// whether it was imported.
    pub fn shared(&mut self, h: usize) -> Option<(String, bool)> {
        let o = self.owned();
        if o.shared.is_empty() {
            return None;
        }
        o.shared.get(&h).cloned()
    }
}

/// A handle that is not live (for export).
pub fn check_live(call: &'static str, h: usize, site: Site) {
    owner(h).check_live(call, h, site);
}

/// After a successful export of `h` as `shareable`.
pub fn exported(h: usize, shareable: u64, site: Site) {
    owner(h)
        .shared
        .insert(h, (crate::sharing::shareable(shareable), false));
    crate::platform::model().exports.insert(shareable, site);
}

/// After a successful import of `shareable` as `h`.
pub fn imported(h: usize, shareable: u64) {
    owner(h)
        .shared
        .insert(h, (crate::sharing::shareable(shareable), true));
}

impl Model {
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
}
