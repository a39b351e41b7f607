//! What the program holds, as the documented semantics define it, and the
//! checks against it. The model only ever follows what the library
//! answered: an object enters it when a call that makes it succeeded and
//! leaves it when a call that ends it succeeded.
//!
//! This module holds the model's state and each device's totals; the
//! checks and updates are by object: `handles` (physical handles and
//! their sharing), `mappings` (reservations and mappings), `blocks`
//! (`aclrtMalloc` and host blocks, copies), `cycles` (sleep/wake cycles)
//! and `leaks` (what is held at the end).

use std::collections::BTreeMap;

// Handles and addresses are keys the program does not choose: FxHash's
// one multiply is enough, SipHash's cost is not needed.
type HashMap<K, V> = rustc_hash::FxHashMap<K, V>;
type HashSet<K> = rustc_hash::FxHashSet<K>;

use crate::report::{Class, Finding, Site, report, report_cold};
use crate::trace;

mod blocks;
mod cycles;
mod ended;
mod handles;
mod leaks;
mod mappings;

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

    /// (device key, physical bytes, mapped bytes) for the timeline.
    pub fn totals(&self, device: Option<u32>) -> (u32, usize, usize) {
        let d = dev_key(device);
        self.totals
            .iter()
            .find(|t| t.device == d)
            .map_or((d, 0, 0), |t| t.traced())
    }
}
