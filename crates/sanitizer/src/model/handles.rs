//! Physical handles: made (by malloc, import or retain), freed (and freed
//! while still mapped), used after a free; exports and imports of them,
//! and a process importing what it exported itself.

use super::*;

impl Model {
    /// Where a live handle was made.
    pub fn handle_site(&self, h: usize) -> Option<Site> {
        self.handles.get(&h).map(|hd| hd.site)
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
