//! `aclmem timeline TRACE --format memory-viz -o OUT`: the sanitizer's
//! trace as memory snapshots in the format PyTorch's memory viewer reads
//! (`torch.cuda._memory_viz`: `segsum`, `trace`, `segment_plot`,
//! `trace_plot`, and the page at pytorch.org/memory_viz), one pickle per
//! process that used device memory: `OUT.pickle`, or `OUT.<pid>.pickle`
//! when several did.
//!
//! What the viewer shows, in aclmem's terms:
//!
//! * **segments** are what holds device address space at the end: each
//!   reservation (`aclrtReserveMemAddress`, `is_expandable`), and each
//!   `aclrtMalloc` block (a segment of one block). A reservation's blocks
//!   are its mappings (`active_allocated`, one per mapped physical handle)
//!   and the unmapped gaps between them (`inactive`); a mapping of an
//!   imported handle is marked with the exporting process, an exported one
//!   with its shareable handle (as its first frame).
//! * **device_traces** are every call over time, per device:
//!   `segment_alloc`/`segment_free` for reservations, `aclrtMalloc`
//!   blocks and stream-ordered pool blocks (`aclrtMemPoolMallocAsync`,
//!   `aclrtMemPoolFreeAsync`), `segment_map`/`segment_unmap` and `alloc`/`free_requested`/
//!   `free_completed` for mappings, `alloc`/`free_*` for `aclrtMalloc`
//!   blocks, with the call site's frames (native or Python) and the time.
//!
//! A reservation's device is the device of its first mapping (device 0
//! when it was never mapped).

use aclmem_formats::trace::Record;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A stack frame as the viewer reads it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Frame {
    /// The source file.
    pub filename: String,
    /// The line (0: unknown).
    pub line: u64,
    /// The function.
    pub name: String,
}

/// A block of a segment.
#[derive(Debug, Clone, Serialize)]
pub struct Block {
    /// Its address.
    pub address: u64,
    /// Its size.
    pub size: u64,
    /// The bytes asked for.
    pub requested_size: u64,
    /// `active_allocated` or `inactive`.
    pub state: &'static str,
    /// Where it was made.
    pub frames: Vec<Frame>,
}

/// A segment.
#[derive(Debug, Clone, Serialize)]
pub struct Segment {
    /// The device.
    pub device: u32,
    /// Its first address.
    pub address: u64,
    /// Its size.
    pub total_size: u64,
    /// Bytes in its active blocks.
    pub allocated_size: u64,
    /// Bytes in its active blocks.
    pub active_size: u64,
    /// Bytes asked for by its active blocks.
    pub requested_size: u64,
    /// Always 0 (the default stream).
    pub stream: u64,
    /// Always `large`.
    pub segment_type: &'static str,
    /// Always `(0, 0)` (no private pool).
    pub segment_pool_id: (u64, u64),
    /// A reservation (grown by mapping).
    pub is_expandable: bool,
    /// Where it was made.
    pub frames: Vec<Frame>,
    /// Its blocks, in address order, covering it.
    pub blocks: Vec<Block>,
}

/// An event of a device's trace (owned, for tests).
#[cfg(test)]
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// What happened.
    pub action: &'static str,
    /// Where.
    pub addr: u64,
    /// How many bytes.
    pub size: u64,
    /// Always 0.
    pub stream: u64,
    /// The call site.
    pub frames: Vec<Frame>,
    /// When (µs, from the trace's clock).
    pub time_us: u64,
}

/// One process's snapshot.
#[derive(Debug, Serialize)]
pub struct Snapshot {
    /// What holds address space at the end.
    pub segments: Vec<Segment>,
    /// Every event, per device.
    pub device_traces: DeviceTraces,
}

/// The actions of the viewer's events, by index.
const ACTIONS: [&str; 7] = [
    "segment_alloc",
    "segment_free",
    "segment_map",
    "segment_unmap",
    "alloc",
    "free_requested",
    "free_completed",
];

fn action_index(name: &'static str) -> u8 {
    ACTIONS.iter().position(|a| *a == name).unwrap_or(0) as u8
}

/// A process's events, kept compactly (48 bytes each, so that a trace of
/// ten million calls converts within a gigabyte) and serialized as the
/// viewer's `device_traces`, one list per device, each event built as it
/// is written, its frames borrowed from its call site's.
#[derive(Debug, Default)]
pub struct DeviceTraces {
    events: Vec<Pending>,
    devices: usize,
    sites: HashMap<u32, Vec<Frame>>,
}

/// An event as the viewer reads it, its frames borrowed.
#[derive(Serialize)]
struct EventRef<'a> {
    action: &'static str,
    addr: u64,
    size: u64,
    stream: u64,
    frames: &'a [Frame],
    time_us: u64,
}

impl DeviceTraces {
    /// How many devices have a list (the highest device seen, plus one).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.devices
    }

    /// Device `d`'s events, in order.
    #[cfg(test)]
    pub fn device(&self, d: u32) -> impl Iterator<Item = Event> + '_ {
        self.refs(d).map(|e| Event {
            action: e.action,
            addr: e.addr,
            size: e.size,
            stream: 0,
            frames: e.frames.to_vec(),
            time_us: e.time_us,
        })
    }

    fn refs(&self, d: u32) -> impl Iterator<Item = EventRef<'_>> + '_ {
        self.events
            .iter()
            .filter(move |e| e.device == d)
            .map(|e| EventRef {
                action: ACTIONS[usize::from(e.action)],
                addr: e.addr,
                size: e.size,
                stream: 0,
                frames: self.sites.get(&e.site).map_or(&[][..], Vec::as_slice),
                time_us: e.time,
            })
    }
}

impl Serialize for DeviceTraces {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        struct One<'a>(&'a DeviceTraces, u32);
        impl Serialize for One<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.refs(self.1))
            }
        }
        let mut seq = s.serialize_seq(Some(self.devices))?;
        for d in 0..self.devices {
            seq.serialize_element(&One(self, d as u32))?;
        }
        seq.end()
    }
}

/// A live object of a process.
#[derive(Debug, Clone)]
struct Live {
    size: u64,
    site: u32,
    device: Option<u32>,
}

/// A mapping: its handle and where it was made.
#[derive(Debug, Clone)]
struct Mapping {
    size: u64,
    site: u32,
    device: u32,
    handle: Option<u64>,
}

/// An event, in 40 bytes. Its device is unknown (`u32::MAX`) until the
/// end for a reservation's event, whose address is the reservation's: it
/// takes the device of the reservation's first mapping.
#[derive(Debug)]
struct Pending {
    /// Index into [`ACTIONS`].
    action: u8,
    device: u32,
    site: u32,
    addr: u64,
    size: u64,
    time: u64,
}

#[derive(Default)]
struct Process {
    resvs: BTreeMap<u64, Live>,
    /// A reservation's device: its first mapping's.
    resv_device: HashMap<u64, u32>,
    maps: BTreeMap<u64, Mapping>,
    mallocs: BTreeMap<u64, Live>,
    /// Handles this process exported (handle → shareable handle) and
    /// imported (handle → exporting process and shareable handle).
    exported: HashMap<u64, String>,
    imported: HashMap<u64, (Option<u64>, String)>,
    events: Vec<Pending>,
    sites: HashMap<u32, Vec<Frame>>,
}

impl Process {
    fn push(
        &mut self,
        action: &'static str,
        addr: u64,
        size: u64,
        r: &Record,
        device: Option<u32>,
    ) {
        self.events.push(Pending {
            action: action_index(action),
            addr,
            size,
            site: r.site.unwrap_or(0),
            time: r.t,
            device: device.unwrap_or(u32::MAX),
        });
    }

    /// The reservation that holds `va`.
    fn resv_of(&self, va: u64) -> Option<u64> {
        self.resvs
            .range(..=va)
            .next_back()
            .filter(|(start, l)| va < *start + l.size.max(1))
            .map(|(start, _)| *start)
    }

    fn record(&mut self, r: &Record, owner: &HashMap<String, u64>) {
        if r.ret != 0 {
            return;
        }
        let device = r.device_id();
        match (r.call(), r.va) {
            ("aclrtReserveMemAddress", Some(va)) => {
                self.resvs.insert(
                    va,
                    Live {
                        size: r.size,
                        site: r.site.unwrap_or(0),
                        device: None,
                    },
                );
                self.push("segment_alloc", va, r.size, r, None);
            }
            ("aclrtReleaseMemAddress", Some(va)) => {
                if let Some(l) = self.resvs.remove(&va) {
                    self.push("segment_free", va, l.size, r, None);
                }
            }
            ("aclrtMapMem", Some(va)) => {
                let d = device.unwrap_or(0);
                if let Some(resv) = self.resv_of(va) {
                    self.resv_device.entry(resv).or_insert(d);
                    if let Some(l) = self.resvs.get_mut(&resv) {
                        l.device.get_or_insert(d);
                    }
                }
                self.maps.insert(
                    va,
                    Mapping {
                        size: r.size,
                        site: r.site.unwrap_or(0),
                        device: d,
                        handle: r.h,
                    },
                );
                self.push("segment_map", va, r.size, r, Some(d));
                self.push("alloc", va, r.size, r, Some(d));
            }
            ("aclrtUnmapMem", Some(va)) => {
                if let Some(m) = self.maps.remove(&va) {
                    for action in ["free_requested", "free_completed", "segment_unmap"] {
                        self.push(action, va, m.size, r, Some(m.device));
                    }
                }
            }
            // A stream-ordered pool's block is a segment of one block too.
            ("aclrtMalloc" | "aclrtMallocAlign32" | "aclrtMemPoolMallocAsync", Some(va)) => {
                let d = device.unwrap_or(0);
                self.mallocs.insert(
                    va,
                    Live {
                        size: r.size,
                        site: r.site.unwrap_or(0),
                        device: Some(d),
                    },
                );
                self.push("segment_alloc", va, r.size, r, Some(d));
                self.push("alloc", va, r.size, r, Some(d));
            }
            ("aclrtFree" | "aclrtMemPoolFreeAsync", Some(va)) => {
                if let Some(l) = self.mallocs.remove(&va) {
                    for action in ["free_requested", "free_completed", "segment_free"] {
                        self.push(action, va, l.size, r, l.device);
                    }
                }
            }
            (call, _) if call.starts_with("aclrtMemExport") => {
                if let (Some(h), Some(share)) = (r.h, r.share.as_deref()) {
                    self.exported.insert(h, share.to_owned());
                }
            }
            (call, _) if call.starts_with("aclrtMemImport") => {
                if let (Some(h), Some(share)) = (r.h, r.share.as_deref()) {
                    self.imported
                        .insert(h, (owner.get(share).copied(), share.to_owned()));
                }
            }
            ("sites", _) => {
                if let Some(sites) = &r.sites {
                    for (k, frames) in sites {
                        if let Ok(id) = k.parse() {
                            self.sites
                                .insert(id, frames.iter().map(|f| frame(f)).collect());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn frames(&self, site: u32) -> Vec<Frame> {
        self.sites.get(&site).cloned().unwrap_or_default()
    }

    fn mapping_frames(&self, m: &Mapping) -> Vec<Frame> {
        let mut frames = Vec::new();
        if let Some(h) = m.handle {
            if let Some((exporter, share)) = self.imported.get(&h) {
                frames.push(note(match exporter {
                    Some(pid) => format!("imported from process {pid} (shareable handle {share})"),
                    None => format!("imported (shareable handle {share})"),
                }));
            } else if let Some(share) = self.exported.get(&h) {
                frames.push(note(format!("exported as shareable handle {share}")));
            }
        }
        frames.extend(self.frames(m.site));
        frames
    }

    fn snapshot(self) -> Snapshot {
        let mut segments = Vec::new();
        for (&start, l) in &self.resvs {
            let device = self.resv_device.get(&start).copied().unwrap_or(0);
            let mut blocks = Vec::new();
            let mut at = start;
            for (&va, m) in self.maps.range(start..start + l.size) {
                if va > at {
                    blocks.push(inactive(at, va - at));
                }
                let size = m.size.min(start + l.size - va);
                blocks.push(Block {
                    address: va,
                    size,
                    requested_size: size,
                    state: "active_allocated",
                    frames: self.mapping_frames(m),
                });
                at = va + size;
            }
            if at < start + l.size {
                blocks.push(inactive(at, start + l.size - at));
            }
            segments.push(segment(
                device,
                start,
                l.size,
                true,
                self.frames(l.site),
                blocks,
            ));
        }
        for (&va, l) in &self.mallocs {
            let block = Block {
                address: va,
                size: l.size,
                requested_size: l.size,
                state: "active_allocated",
                frames: self.frames(l.site),
            };
            segments.push(segment(
                l.device.unwrap_or(0),
                va,
                l.size,
                false,
                self.frames(l.site),
                vec![block],
            ));
        }
        // Each event's device: its own, else its reservation's, else 0.
        let mut events = self.events;
        let mut devices = 0usize;
        for e in &mut events {
            if e.device == u32::MAX {
                e.device = self.resv_device.get(&e.addr).copied().unwrap_or(0);
            }
            devices = devices.max(e.device as usize + 1);
        }
        let device_traces = DeviceTraces {
            events,
            devices,
            sites: self.sites,
        };
        Snapshot {
            segments,
            device_traces,
        }
    }
}

fn inactive(address: u64, size: u64) -> Block {
    Block {
        address,
        size,
        requested_size: 0,
        state: "inactive",
        frames: Vec::new(),
    }
}

fn segment(
    device: u32,
    address: u64,
    total_size: u64,
    is_expandable: bool,
    frames: Vec<Frame>,
    blocks: Vec<Block>,
) -> Segment {
    let active: u64 = blocks
        .iter()
        .filter(|b| b.state == "active_allocated")
        .map(|b| b.size)
        .sum();
    Segment {
        device,
        address,
        total_size,
        allocated_size: active,
        active_size: active,
        requested_size: active,
        stream: 0,
        segment_type: "large",
        segment_pool_id: (0, 0),
        is_expandable,
        frames,
        blocks,
    }
}

/// Reads the trace: one snapshot per process that used device memory, by
/// pid (processes that only asked questions, such as a tool reading
/// `aclrtGetMemInfo`, have none).
pub fn snapshots(trace: &Path) -> Result<BTreeMap<u64, Snapshot>, String> {
    // Two passes, streamed (a trace can be larger than memory): who
    // exported each shareable handle (records of several processes come in
    // blocks, so an import may precede its export in the file), then every
    // record in order.
    let each = |each: &mut dyn FnMut(&Record<'_>)| -> Result<(), String> {
        let mut lines = aclmem_formats::jsonl::open(trace)?;
        while let Some(line) = lines.next_str() {
            let (number, line) = line?;
            if line.trim().is_empty() {
                continue;
            }
            let r = serde_json::from_str::<Record<'_>>(line)
                .map_err(|e| format!("{}:{number}: {e}", trace.display()))?;
            each(&r);
        }
        Ok(())
    };
    let mut owner: HashMap<String, u64> = HashMap::new();
    each(&mut |r| {
        if r.ret == 0
            && r.call().starts_with("aclrtMemExport")
            && let Some(share) = r.share.as_deref()
        {
            owner.insert(share.to_owned(), r.pid.unwrap_or(0));
        }
    })?;
    let mut processes: BTreeMap<u64, Process> = BTreeMap::new();
    each(&mut |r| {
        processes
            .entry(r.pid.unwrap_or(0))
            .or_default()
            .record(r, &owner);
    })?;
    Ok(processes
        .into_iter()
        .filter(|(_, p)| !p.events.is_empty())
        .map(|(pid, p)| (pid, p.snapshot()))
        .collect())
}

/// Writes the snapshots of `trace` beside `out`; the files written.
pub fn write(trace: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let snapshots = snapshots(trace)?;
    let several = snapshots.len() > 1;
    let mut written = Vec::new();
    for (pid, snapshot) in &snapshots {
        let path = if several {
            out.with_extension(format!("{pid}.pickle"))
        } else {
            out.with_extension("pickle")
        };
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?,
        );
        serde_pickle::to_writer(&mut f, snapshot, serde_pickle::SerOptions::new())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

mod frames;
use frames::{frame, note};

#[cfg(test)]
mod tests;
