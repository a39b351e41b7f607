//! What the program holds, as the documented semantics define it, and the
//! checks against it. The model only ever follows what the library
//! answered: an object enters it when a call that makes it succeeded and
//! leaves it when a call that ends it succeeded.
//!
//! The model is sharded (`shards`: address shards and handle shards, each
//! behind its own lock, and the lock order); each device's totals are
//! atomics (`totals`); this module holds what only the cold calls touch
//! ([`Model`], behind `platform::model`'s lock). The checks and updates
//! are by object: `handles` (physical handles and their sharing),
//! `mappings` (reservations and mappings), `blocks` (`aclrtMalloc` and
//! host blocks, copies), `cycles` (sleep/wake cycles) and `leaks` (what is
//! held at the end).

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
mod shards;
mod totals;

pub use blocks::{Freeing, check_copy, device_alloc, device_range, host_range};
pub use cycles::phase;
use ended::Ended;
pub use handles::{check_live, exported, handle_made, handle_site, imported};
pub use leaks::report_leaks;
pub use mappings::{mapping_containing, resv_made};
pub(crate) use shards::{Locked, busy, whole};
use shards::{Owned, Spaces, owner, space_of, spaces_of};
pub use totals::totals;

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
///
/// What maps and unmaps read of it is in `totals::CYCLE` (atomics) and in
/// each address shard (the addresses unmapped during the current sleep);
/// this is the record of the completed sleeps.
#[derive(Default)]
struct Cycles {
    /// Completed sleeps, and the low point of the last (the first one's is
    /// `lows[0]`; constant memory however many cycles a program runs).
    sleeps: usize,
    last_low: usize,
    /// Whether the low point grew at every sleep after the first.
    growing: bool,
    /// The low point of the first [`LOWS_KEPT`] sleeps, for the report.
    lows: Vec<usize>,
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

/// The model's part that only the cold calls touch (the rest is in the
/// shards).
#[derive(Default)]
pub struct Model {
    host_allocs: BTreeMap<usize, (usize, Site)>,
    /// Device ranges this process may copy to or from that it did not
    /// allocate (IPC imports).
    foreign: BTreeMap<usize, usize>,
    /// Shareable handles this process exported, and where.
    exports: HashMap<u64, Site>,
    cycles: Cycles,
}

const HOST: u32 = u32::MAX;

fn dev_key(device: Option<u32>) -> u32 {
    device.unwrap_or(HOST)
}

/// Empties the whole model (a fork's child starts from nothing): the
/// shards, then the rest (the lock order).
pub(crate) fn reset() {
    whole().clear();
    totals::reset();
    *crate::platform::model() = Model::default();
}
