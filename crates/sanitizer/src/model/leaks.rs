//! What a process holds: by call site for an out-of-memory report, its address space, and the leaks at `aclFinalize` and exit.

use super::*;
use shards::Whole;

impl Whole {
    /// What holds device `device`'s memory in this process, grouped by the
    /// call site that made it, largest first: (site, bytes, count).
    /// Physical handles (mapped or not, imports included) and `aclrtMalloc`
    /// blocks count.
    pub fn holders(&self, device: u32) -> Vec<(Site, usize, usize)> {
        let mut by_site: HashMap<Site, (usize, usize)> = HashMap::default();
        let handles = self
            .handles()
            .map(|(_, h)| h)
            .filter(|h| h.device == Some(device))
            .map(|h| (h.site, h.size));
        let blocks = self.device_allocs();
        let allocs = blocks
            .values()
            .filter(|(_, d, _)| *d == Some(device))
            .map(|(size, _, site)| (*site, *size));
        for (site, size) in handles.chain(allocs) {
            let e = by_site.entry(site).or_default();
            e.0 += size;
            e.1 += 1;
        }
        let mut out: Vec<_> = by_site.into_iter().map(|(s, (b, c))| (s, b, c)).collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)));
        out
    }

    /// This process's reserved address space: (reserved bytes, mapped
    /// bytes in it, the largest unmapped run in one reservation).
    pub fn address_space(&self) -> (usize, usize, usize) {
        let mut reserved = 0;
        let mut mapped = 0;
        let mut largest_gap = 0;
        let maps = self.maps();
        for (start, (size, _)) in self.resvs() {
            reserved += size;
            let mut at = start;
            for (&va, m) in maps.range(start..start.saturating_add(size)) {
                largest_gap = largest_gap.max(va.saturating_sub(at));
                mapped += m.size;
                at = va + m.size;
            }
            largest_gap = largest_gap.max((start + size).saturating_sub(at));
        }
        (reserved, mapped, largest_gap)
    }
}

/// Reports every object still held, then forgets them (what `aclFinalize`
/// and exit release). `finalized_by`: the framework library that called
/// `aclFinalize`, if one did.
pub fn report_leaks(when: &str, finalized_by: Option<&'static str>) {
    // The shards, then the rest: the lock order.
    let mut w = shards::whole();
    let mut rest = crate::platform::model();
    rest.report_leaks(&w, when, finalized_by);
    w.clear();
    *rest = Model::default();
    totals::reset();
}

impl Model {
    /// What is still held at `aclFinalize` or exit (`w`: the shards):
    /// leaks.
    fn report_leaks(&self, w: &Whole, when: &str, finalized_by: Option<&'static str>) {
        self.report_cycle_growth(when, w.handles().map(|(_, h)| h));
        let call: &'static str = "aclFinalize";
        let mut findings = Vec::new();
        // Under `aclmem sanitize`, imports still held are reported from the
        // sharing events of every process, with the exporter named.
        let by_run = crate::sharing::enabled();
        let imported = |h: &usize| by_run && matches!(w.shared(*h), Some((_, true)));
        // Exported handles too: whether another process still maps one
        // decides what the run reports.
        let shared = |h: &usize| by_run && w.shared(*h).is_some();
        let maps = w.maps();
        for (&a, m) in maps.iter().filter(|(_, m)| !imported(&m.handle)) {
            findings.push((
                m.site,
                format!("a mapping of {:#x} bytes at {a:#x}", m.size),
                m.size,
            ));
        }
        for (a, (size, site)) in w.resvs() {
            // A reservation that holds an import's mapping is reported with
            // the import.
            let holds_import = maps
                .range(a..a.saturating_add(size))
                .any(|(_, m)| imported(&m.handle));
            if !holds_import {
                findings.push((
                    site,
                    format!("a reservation of {size:#x} bytes at {a:#x}"),
                    0,
                ));
            }
        }
        for (&h, hd) in w.handles().filter(|(h, _)| !shared(h)) {
            findings.push((
                hd.site,
                format!("physical handle {h:#x} ({} bytes)", hd.size),
                hd.size,
            ));
        }
        for (&p, (size, _, site)) in &w.device_allocs() {
            findings.push((
                *site,
                format!("aclrtMalloc memory at {p:#x} ({size} bytes)"),
                *size,
            ));
        }
        for (&p, (size, site)) in &self.host_allocs {
            findings.push((
                *site,
                format!("aclrtMallocHost memory at {p:#x} ({size} bytes)"),
                *size,
            ));
        }
        let check = crate::config::config().leak_check;
        if check == crate::config::LeakCheck::None {
            findings.clear();
        }
        // A framework's cache: summed up, not reported.
        let mut cached: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
        if check == crate::config::LeakCheck::Program
            && let Some(lib) = finalized_by
        {
            // A framework finalizes the runtime at the interpreter's exit,
            // when the program's objects (tensors, a memory pool) still
            // hold their memory: held, not lost.
            let (count, bytes) = (findings.len(), findings.iter().map(|f| f.2).sum::<usize>());
            findings.clear();
            if count > 0 {
                eprintln!(
                    "aclmem-sanitizer: {count} object(s) ({:.1} MiB) were still held when {lib} finalized the runtime at exit, while the program's objects still held them: not findings (--leak-check full reports each)",
                    bytes as f64 / f64::from(1u32 << 20)
                );
            }
        }
        if check == crate::config::LeakCheck::Program {
            findings.retain(|(site, _, bytes)| match site.framework_allocator() {
                Some(lib) => {
                    let c = cached.entry(lib).or_default();
                    c.0 += 1;
                    c.1 += bytes;
                    false
                }
                None => true,
            });
        }
        for (lib, (count, bytes)) in cached {
            eprintln!(
                "aclmem-sanitizer: {count} object(s) ({:.1} MiB) made by the caching allocator in {lib} were still held at {when}: the framework's cache, which the runtime releases with the device; not findings (--leak-check full reports each)",
                bytes as f64 / f64::from(1u32 << 20)
            );
        }
        for (site, what, _) in findings {
            report(Finding {
                class: Class::Leak,
                call,
                args: String::new(),
                message: format!("{what} never released before {when}; made"),
                code: None,
                site,
            });
        }
        for d in totals::devices_used() {
            trace::event("release-all", d, 0, 0, 0);
        }
    }
}
