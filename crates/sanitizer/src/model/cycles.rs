//! Sleep/wake cycles: where a wake starts, what a sleep leaves held, and the growth across cycles.

use super::*;

impl Model {
    /// Of the handles made in a wake and still held, the place that made
    /// them in most wakes (then the most bytes).
    pub(super) fn held_from_wakes(&self) -> Option<Held> {
        let mut by_site: HashMap<usize, (Site, HashSet<u32>, usize, usize)> = HashMap::default();
        for hd in self.handles.values().filter(|hd| hd.cycle > 0) {
            let e = by_site
                .entry(hd.site.key())
                .or_insert_with(|| (hd.site, HashSet::default(), 0, 0));
            e.1.insert(hd.cycle);
            e.2 += 1;
            e.3 += hd.size;
        }
        by_site
            .into_values()
            .max_by_key(|(_, wakes, _, bytes)| (wakes.len(), *bytes))
            .map(|(site, wakes, count, bytes)| Held {
                site,
                wakes: wakes.len(),
                count,
                bytes,
            })
    }

    /// The end of a sleep: what the process held at its lowest is kept,
    /// and what wakes had made of it.
    pub(super) fn wake(&mut self) {
        let c = &mut self.cycles;
        c.asleep = false;
        c.gap.clear();
        c.growing = match c.sleeps {
            0 => true,
            _ => c.growing && c.low > c.last_low,
        };
        c.last_low = c.low;
        if c.lows.len() < LOWS_KEPT {
            c.lows.push(c.low);
        }
        c.sleeps += 1;
        // What wakes made and still hold matters only while memory grows
        // (and looking is a walk over the handles).
        if self.cycles.growing && self.cycles.sleeps >= 2 {
            self.cycles.held_at_wake = self.held_from_wakes().or(self.cycles.held_at_wake.take());
        }
        self.cycles.wakes += 1;
    }

    /// A phase the program marked (`aclmem_sanitizer_phase`): `sleep` and
    /// `wake` bound the cycles from now on, instead of the heuristic.
    pub fn phase(&mut self, name: &str) {
        match name {
            "sleep" => {
                self.cycles.explicit = true;
                self.cycles.asleep = true;
                self.cycles.gap.clear();
                self.cycles.low = self.phys_total;
            }
            "wake" if self.cycles.asleep => {
                self.cycles.explicit = true;
                self.wake();
            }
            _ => {}
        }
    }

    /// Growth across sleep/wake cycles: when what the process holds at the
    /// end of each sleep grew at every one of the last sleeps (at least
    /// [`GROWTH_SLEEPS`]), the finding names the growth per cycle and the
    /// place that made, in most wakes, memory still held.
    pub(super) fn report_cycle_growth(&self, when: &str) {
        let c = &self.cycles;
        if c.sleeps < GROWTH_SLEEPS || !c.growing {
            return;
        }
        let (first, last) = (c.lows.first().copied().unwrap_or(0), c.last_low);
        let per_cycle = (last - first) / (c.sleeps - 1);
        // Handles made in wakes and held now; or, when the program let them
        // go at the end, at the last wake.
        let Some(Held {
            site,
            wakes,
            count,
            bytes,
        }) = self
            .held_from_wakes()
            .or_else(|| self.cycles.held_at_wake.clone())
        else {
            return;
        };
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        let mut levels: Vec<String> = c.lows.iter().map(|&l| format!("{:.1}", mib(l))).collect();
        if c.sleeps > c.lows.len() {
            levels.push(format!("… {:.1}", mib(last)));
        }
        report(Finding {
            class: Class::CycleGrowth,
            call: "aclrtMallocPhysical",
            args: String::new(),
            message: format!(
                "memory held at the end of each sleep grew by +{:.1} MiB per cycle over {} cycles (held after each sleep: {} MiB, until {when}); \
                 {count} handle(s) of {:.1} MiB made in {} of the wakes are still held, made",
                mib(per_cycle),
                c.sleeps,
                levels.join(", "),
                mib(bytes),
                wakes,
            ),
            code: None,
            site,
        });
    }
}
