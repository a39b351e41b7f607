//! The page's tracks: each process's devices (and host memory) and its
//! address space, in the order they were met, each keeping at most
//! [`POINTS`] points by halving, and the peaks and levels of every record
//! for the summary.

use aclmem_formats::trace::Device;
use rustc_hash::FxHashMap;

use super::POINTS;

/// Levels listed per track in the summary (the first ones).
const LEVELS: usize = 64;

/// One point of a track: time, physical and mapped bytes, and the call.
#[derive(Debug, Clone)]
pub(super) struct Point {
    pub(super) t: u64,
    pub(super) phys: u64,
    pub(super) mapped: u64,
    /// The call's name, as an index into [`Calls`](super::perfetto::Calls).
    pub(super) call: u32,
    pub(super) size: u64,
    /// The call site's number in its process's `sites` record (0: none).
    pub(super) site: u32,
}

/// A process's device (or host memory).
#[derive(Debug, Default)]
pub(super) struct Track {
    pub(super) points: Vec<Point>,
    pub(super) peak_phys: u64,
    pub(super) peak_mapped: u64,
    /// Physical bytes each time they changed (the first [`LEVELS`]).
    pub(super) levels: Vec<u64>,
    pub(super) more_levels: bool,
    pub(super) records: u64,
}

impl Track {
    pub(super) fn push(&mut self, p: Point) {
        self.records += 1;
        self.peak_phys = self.peak_phys.max(p.phys);
        self.peak_mapped = self.peak_mapped.max(p.mapped);
        if self.levels.is_empty() {
            self.levels.push(0);
        }
        if self.levels.last() != Some(&p.phys) {
            if self.levels.len() < LEVELS {
                self.levels.push(p.phys);
            } else {
                self.more_levels = true;
            }
        }
        self.points.push(p);
        if self.points.len() >= 2 * POINTS {
            self.halve();
        }
    }

    /// Each group of four points becomes its lowest and highest, in time
    /// order.
    fn halve(&mut self) {
        let old = std::mem::take(&mut self.points);
        let mut out = Vec::with_capacity(old.len() / 2 + 2);
        for group in old.chunks(4) {
            let (mut lo, mut hi) = (0, 0);
            for (i, p) in group.iter().enumerate() {
                if p.phys < group[lo].phys {
                    lo = i;
                }
                if p.phys > group[hi].phys {
                    hi = i;
                }
            }
            let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
            out.push(group[a].clone());
            if b != a {
                out.push(group[b].clone());
            }
        }
        self.points = out;
    }
}

/// The track of a process's address space: reserved bytes (drawn where
/// the other tracks draw physical bytes) and mapped bytes.
pub(super) const SPACE: &str = "address space";

/// How the timeline names a record's device.
pub(super) trait DeviceExt {
    /// The track's name: `device N`, or `host`.
    fn track(&self) -> String;
    /// The key of its track in a process.
    fn key(&self) -> DeviceKey;
}

impl DeviceExt for Device<'_> {
    fn track(&self) -> String {
        match self {
            Device::Id(n) => format!("device {n}"),
            Device::Named(s) => s.to_string(),
        }
    }

    fn key(&self) -> DeviceKey {
        match self {
            Device::Id(n) => DeviceKey::Id(*n),
            Device::Named(s) => DeviceKey::Named(s.to_string()),
        }
    }
}

/// A track's device, as a key (a device by number needs no allocation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum DeviceKey {
    Id(u32),
    Named(String),
    /// The process's address space.
    Space,
}

/// The tracks, in the order they were met, each with its process and
/// name, and the JSON of its Perfetto counter's name.
#[derive(Default)]
pub(super) struct Tracks {
    index: FxHashMap<(u64, DeviceKey), usize>,
    pub(super) all: Vec<(u64, String, String, Track)>,
}

impl Tracks {
    /// The track of `pid`'s `key`, made at its first use.
    pub(super) fn of(&mut self, pid: u64, key: DeviceKey, name: impl FnOnce() -> String) -> usize {
        if let Some(&i) = self.index.get(&(pid, key.clone())) {
            return i;
        }
        let name = name();
        let counter = serde_json::Value::from(format!("{name} memory")).to_string();
        self.all.push((pid, name, counter, Track::default()));
        self.index.insert((pid, key), self.all.len() - 1);
        self.all.len() - 1
    }
}
