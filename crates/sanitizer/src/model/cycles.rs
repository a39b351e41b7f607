//! Sleep/wake cycles: where a wake starts, what a sleep leaves held, and the growth across cycles.

use std::sync::atomic::Ordering::Relaxed;

use super::*;
use totals::CYCLE;

/// Of the handles made in a wake and still held, the place that made
/// them in most wakes (then the most bytes).
fn held_from_wakes<'a>(handles: impl Iterator<Item = &'a Handle>) -> Option<Held> {
    let mut by_site: HashMap<usize, (Site, HashSet<u32>, usize, usize)> = HashMap::default();
    for hd in handles.filter(|hd| hd.cycle > 0) {
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

/// The end of a sleep whose least physical memory was `low` (the call
/// that ended it let every shard go): what the process held at its lowest
/// is kept, and what wakes had made of it.
pub(super) fn woke(low: usize) {
    let look = {
        let mut m = crate::platform::model();
        let c = &mut m.cycles;
        c.growing = match c.sleeps {
            0 => true,
            _ => c.growing && low > c.last_low,
        };
        c.last_low = low;
        if c.lows.len() < LOWS_KEPT {
            c.lows.push(low);
        }
        c.sleeps += 1;
        // What wakes made and still hold matters only while memory grows
        // (and looking is a walk over the handles).
        c.growing && c.sleeps >= 2
    };
    if look {
        let mut handles = Vec::new();
        shards::each_owner(|o| handles.extend(o.handles.values().filter(|h| h.cycle > 0).cloned()));
        let held = held_from_wakes(handles.iter());
        let mut m = crate::platform::model();
        m.cycles.held_at_wake = held.or(m.cycles.held_at_wake.take());
    }
    CYCLE.wakes.fetch_add(1, Relaxed);
}

/// A phase the program marked (`aclmem_sanitizer_phase`): `sleep` and
/// `wake` bound the cycles from now on, instead of the heuristic.
pub fn phase(name: &str) {
    match name {
        "sleep" => {
            CYCLE.explicit.store(true, Relaxed);
            CYCLE.epoch.fetch_add(1, Relaxed);
            CYCLE.low.store(totals::phys_total(), Relaxed);
            CYCLE.asleep.store(true, Relaxed);
        }
        "wake" if CYCLE.asleep.swap(false, Relaxed) => {
            CYCLE.explicit.store(true, Relaxed);
            woke(CYCLE.low.load(Relaxed));
        }
        _ => {}
    }
}

impl Model {
    /// Growth across sleep/wake cycles: when what the process holds at the
    /// end of each sleep grew at every one of the last sleeps (at least
    /// [`GROWTH_SLEEPS`]), the finding names the growth per cycle and the
    /// place that made, in most wakes, memory still held (`handles`: every
    /// live handle).
    pub(super) fn report_cycle_growth<'a>(
        &self,
        when: &str,
        handles: impl Iterator<Item = &'a Handle>,
    ) {
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
        }) = held_from_wakes(handles).or_else(|| self.cycles.held_at_wake.clone())
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
