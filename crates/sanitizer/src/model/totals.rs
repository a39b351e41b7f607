//! Physical and mapped bytes per device (and the host), and the state of
//! the sleep/wake heuristic that every map and unmap reads: atomics in
//! fixed tables, so that the calls of any shard update them without a
//! lock and without allocating.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::Relaxed};

use super::dev_key;

/// Devices (and the host) counted apart; a process uses a few. Past them,
/// the rest share the last slot.
const SLOTS: usize = 64;

/// A slot not yet used.
const EMPTY: u32 = u32::MAX - 1;

struct Slot {
    device: AtomicU32,
    phys: AtomicUsize,
    mapped: AtomicUsize,
}

struct Totals {
    /// Claimed in order of first use, from the first.
    slots: [Slot; SLOTS],
    /// The sum of the physical bytes of `slots`.
    phys_total: AtomicUsize,
}

static TOTALS: Totals = Totals {
    slots: [const {
        Slot {
            device: AtomicU32::new(EMPTY),
            phys: AtomicUsize::new(0),
            mapped: AtomicUsize::new(0),
        }
    }; SLOTS],
    phys_total: AtomicUsize::new(0),
};

/// The slot of `device`, claimed when first used.
fn slot(device: Option<u32>) -> &'static Slot {
    let d = dev_key(device);
    for s in &TOTALS.slots[..SLOTS - 1] {
        match s.device.load(Relaxed) {
            v if v == d => return s,
            EMPTY => match s.device.compare_exchange(EMPTY, d, Relaxed, Relaxed) {
                Ok(_) => return s,
                Err(v) if v == d => return s,
                Err(_) => {}
            },
            _ => {}
        }
    }
    &TOTALS.slots[SLOTS - 1]
}

/// Adds `bytes` to `at`: its value after. One atomic add (the model takes
/// away only what it added, so it never goes below 0).
fn add(at: &AtomicUsize, bytes: isize) -> usize {
    let before = at.fetch_add(bytes as usize, Relaxed);
    before.wrapping_add(bytes as usize)
}

/// Adds `bytes` to `device`'s physical bytes: (device key, physical bytes,
/// mapped bytes) after, as the timeline takes them.
pub(super) fn phys_add(device: Option<u32>, bytes: isize) -> (u32, usize, usize) {
    let s = slot(device);
    let phys = add(&s.phys, bytes);
    let total = add(&TOTALS.phys_total, bytes);
    if CYCLE.asleep.load(Relaxed) {
        CYCLE.low.fetch_min(total, Relaxed);
    }
    (dev_key(device), phys, s.mapped.load(Relaxed))
}

/// Adds `bytes` to `device`'s mapped bytes: its totals after.
pub(super) fn mapped_add(device: Option<u32>, bytes: isize) -> (u32, usize, usize) {
    let s = slot(device);
    let mapped = add(&s.mapped, bytes);
    (dev_key(device), s.phys.load(Relaxed), mapped)
}

/// (device key, physical bytes, mapped bytes) for the timeline.
pub fn totals(device: Option<u32>) -> (u32, usize, usize) {
    let s = slot(device);
    (
        dev_key(device),
        s.phys.load(Relaxed),
        s.mapped.load(Relaxed),
    )
}

/// The physical bytes of every device and the host.
pub(super) fn phys_total() -> usize {
    TOTALS.phys_total.load(Relaxed)
}

/// The devices (and the host, `HOST`) this process used, in the order
/// first used.
pub(super) fn devices_used() -> impl Iterator<Item = u32> {
    TOTALS
        .slots
        .iter()
        .map(|s| s.device.load(Relaxed))
        .take_while(|&d| d != EMPTY)
}

/// The sleep/wake heuristic's state that maps and unmaps read (the rest is
/// the model's, under its lock: `Cycles`).
pub(super) struct CycleNow {
    /// Whether a sleep is under way (an unmap since the last wake).
    pub(super) asleep: AtomicBool,
    /// The least physical memory held during the current sleep.
    pub(super) low: AtomicUsize,
    /// The program marks its phases itself (`aclmem_sanitizer_phase`):
    /// the heuristic is off.
    pub(super) explicit: AtomicBool,
    /// Wakes so far.
    pub(super) wakes: AtomicU32,
    /// The current sleep (an address shard's gap of another is empty).
    pub(super) epoch: AtomicU32,
}

pub(super) static CYCLE: CycleNow = CycleNow {
    asleep: AtomicBool::new(false),
    low: AtomicUsize::new(0),
    explicit: AtomicBool::new(false),
    wakes: AtomicU32::new(0),
    epoch: AtomicU32::new(0),
};

/// Everything back to zero (a fork's child, the end).
pub(super) fn reset() {
    for s in &TOTALS.slots {
        s.device.store(EMPTY, Relaxed);
        s.phys.store(0, Relaxed);
        s.mapped.store(0, Relaxed);
    }
    TOTALS.phys_total.store(0, Relaxed);
    CYCLE.asleep.store(false, Relaxed);
    CYCLE.low.store(0, Relaxed);
    CYCLE.explicit.store(false, Relaxed);
    CYCLE.wakes.store(0, Relaxed);
    CYCLE.epoch.fetch_add(1, Relaxed);
}
