//! `aclmem timeline trace.jsonl`: the sanitizer's memory trace as a
//! Perfetto / Chrome trace (`<out>.json`) and a self-contained HTML page
//! (`<out>.html`) plotting each device's physical and mapped bytes, per
//! process when several processes traced into the file, with the phases
//! the program marked (`aclmem_sanitizer_phase`).
//!
//! The trace is streamed: it is read line by line and the Perfetto events
//! are written as they come, so memory does not grow with the trace. The
//! page gets at most [`POINTS`] points per track: when a track has more,
//! each group of four consecutive points is replaced by its lowest and its
//! highest (in time order), so that peaks and troughs (a sleep's low, an
//! out-of-memory high) survive any amount of downsampling. Peaks and the
//! sequence of levels in the summary are computed from every record.

use aclmem_formats::trace::{Device, Record};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The most points a track keeps for the page.
pub const POINTS: usize = 4000;
/// Levels listed per track in the summary (the first ones).
const LEVELS: usize = 64;

/// One point of a track: time, physical and mapped bytes, and the call.
#[derive(Debug, Clone)]
struct Point {
    t: u64,
    phys: u64,
    mapped: u64,
    /// The call's name, as an index into [`Calls`].
    call: u32,
    size: u64,
    /// The call site's number in its process's `sites` record (0: none).
    site: u32,
}

/// A process's device (or host memory).
#[derive(Debug, Default)]
struct Track {
    points: Vec<Point>,
    peak_phys: u64,
    peak_mapped: u64,
    /// Physical bytes each time they changed (the first [`LEVELS`]).
    levels: Vec<u64>,
    more_levels: bool,
    records: u64,
}

impl Track {
    fn push(&mut self, p: Point) {
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

/// Exports and imports drawn as arrows on the page (the first ones).
const FLOWS: usize = 2000;

/// What lives between two records: a reservation, a physical handle or a
/// mapping (a slice of its process's track in Perfetto, from the call that
/// made it to the one that ended it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Reservation,
    Handle,
    Mapping,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Reservation => "reservations",
            Kind::Handle => "physical handles",
            Kind::Mapping => "mappings",
        }
    }

    /// The Perfetto thread its slices are drawn on (one per kind, below
    /// the process's calls).
    fn tid(self) -> u64 {
        match self {
            Kind::Reservation => 1 << 40,
            Kind::Handle => (1 << 40) + 1,
            Kind::Mapping => (1 << 40) + 2,
        }
    }
}

/// The objects that live between records, for their slices, and each
/// process's reserved address space.
#[derive(Default)]
struct Lifetimes {
    /// Live objects and their slices' names (JSON strings).
    live: FxHashMap<(u64, Kind, u64), String>,
    /// The processes' slice tracks named so far.
    named: rustc_hash::FxHashSet<(u64, Kind)>,
    /// (pid, address) -> reserved bytes.
    resv: FxHashMap<(u64, u64), u64>,
    reserved: BTreeMap<u64, u64>,
    /// (pid, device track) -> mapped bytes, summed per process.
    mapped: FxHashMap<(u64, usize), u64>,
    /// Exports by shareable handle: pid, thread and time.
    exports: std::collections::HashMap<String, (u64, i64, u64)>,
    /// Imports (the first [`IMPORTS`]): shareable handle, pid, thread,
    /// time and answer. Joined with the exports at the end: processes
    /// write their records in blocks, so an import may come first in the
    /// file.
    imports: Vec<(String, u64, i64, u64, i64)>,
}

/// Imports kept for arrows in the Perfetto trace.
const IMPORTS: usize = 100_000;

impl Lifetimes {
    /// The Perfetto events of a record (slices begun or ended, flows), and
    /// whether the process's address space changed.
    fn events(&mut self, r: &Record, pid: u64, call: &str, out: &mut String) -> bool {
        use std::fmt::Write as _;
        // The name is made only for an object not already live: a second
        // begin of a live key (a map over a live mapping) keeps its slice
        // and its first name, so that the slice's end names it as its
        // beginning did.
        let begin = |this: &mut Self,
                     out: &mut String,
                     kind: Kind,
                     key: u64,
                     name: &dyn Fn() -> String| {
            if this.named.insert((pid, kind)) {
                let _ = write!(
                    out,
                    ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}",
                    kind.tid(),
                    kind.name()
                );
            }
            if let std::collections::hash_map::Entry::Vacant(slot) =
                this.live.entry((pid, kind, key))
            {
                let name = serde_json::Value::from(name()).to_string();
                let _ = write!(
                    out,
                    ",\n{{\"name\":{name},\"cat\":\"{}\",\"ph\":\"b\",\"id\":\"{pid}:{key:#x}\",\"ts\":{},\"pid\":{pid},\"tid\":{}}}",
                    kind.name(),
                    r.t,
                    kind.tid()
                );
                slot.insert(name);
            }
        };
        let end = |this: &mut Self, out: &mut String, kind: Kind, key: u64| {
            if let Some(name) = this.live.remove(&(pid, kind, key)) {
                let _ = write!(
                    out,
                    ",\n{{\"name\":{name},\"cat\":\"{}\",\"ph\":\"e\",\"id\":\"{pid}:{key:#x}\",\"ts\":{},\"pid\":{pid},\"tid\":{}}}",
                    kind.name(),
                    r.t,
                    kind.tid()
                );
            }
        };
        let mib = |b: u64| format!("{:.1} MiB", b as f64 / f64::from(1u32 << 20));
        if let Some(share) = r.share.as_deref() {
            if call.starts_with("aclrtMemExport") || call == "aclrtIpcMemGetExportKey" {
                self.exports.insert(share.to_owned(), (pid, r.tid, r.t));
            } else if self.imports.len() < IMPORTS {
                self.imports
                    .push((share.to_owned(), pid, r.tid, r.t, r.ret));
            }
        }
        if r.ret != 0 {
            return false;
        }
        match (call, r.va, r.h) {
            ("aclrtReserveMemAddress", Some(va), _) => {
                begin(self, out, Kind::Reservation, va, &|| {
                    format!("reservation {va:#x} ({})", mib(r.size))
                });
                self.resv.insert((pid, va), r.size);
                *self.reserved.entry(pid).or_default() += r.size;
                true
            }
            ("aclrtReleaseMemAddress", Some(va), _) => {
                end(self, out, Kind::Reservation, va);
                if let Some(size) = self.resv.remove(&(pid, va)) {
                    let v = self.reserved.entry(pid).or_default();
                    *v = v.saturating_sub(size);
                }
                true
            }
            ("aclrtMallocPhysical", _, Some(h)) => {
                begin(self, out, Kind::Handle, h, &|| {
                    format!("handle {h:#x} ({})", mib(r.size))
                });
                false
            }
            (c, _, Some(h)) if c.starts_with("aclrtMemImport") => {
                begin(self, out, Kind::Handle, h, &|| {
                    format!("imported handle {h:#x}")
                });
                false
            }
            ("aclrtFreePhysical", _, Some(h)) => {
                end(self, out, Kind::Handle, h);
                false
            }
            ("aclrtMapMem", Some(va), h) => {
                begin(self, out, Kind::Mapping, va, &|| {
                    format!(
                        "mapping {va:#x} ({}) of handle {:#x}",
                        mib(r.size),
                        h.unwrap_or(0)
                    )
                });
                true
            }
            ("aclrtUnmapMem", Some(va), _) => {
                end(self, out, Kind::Mapping, va);
                true
            }
            ("release-all", _, _) if self.reserved.contains_key(&pid) => {
                let ended: Vec<(Kind, u64)> = self
                    .live
                    .keys()
                    .filter(|(p, _, _)| *p == pid)
                    .map(|&(_, k, key)| (k, key))
                    .collect();
                for (k, key) in ended {
                    end(self, out, k, key);
                }
                self.resv.retain(|(p, _), _| *p != pid);
                self.reserved.insert(pid, 0);
                true
            }
            _ => false,
        }
    }

    /// The arrows from exports to imports, as Perfetto flow events (a
    /// slice of a microsecond at each end), and the first [`FLOWS`] for
    /// the page: shareable handle, exporter pid and time (when the export
    /// is in the trace), importer pid and time, the import's answer.
    #[allow(clippy::type_complexity)]
    fn flows(
        &self,
        json: &mut impl Write,
    ) -> std::io::Result<Vec<(String, Option<(u64, u64)>, u64, u64, i64)>> {
        let mut page = Vec::new();
        for (id, (share, pid, tid, t, ret)) in self.imports.iter().enumerate() {
            let from = self.exports.get(share).copied();
            if let Some((fpid, ftid, ft)) = from {
                write!(
                    json,
                    ",\n{{\"name\":\"share\",\"cat\":\"share\",\"ph\":\"s\",\"id\":{id},\"ts\":{ft},\"pid\":{fpid},\"tid\":{ftid}}},\n{{\"name\":\"share\",\"cat\":\"share\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{id},\"ts\":{t},\"pid\":{pid},\"tid\":{tid}}}"
                )?;
            }
            if page.len() < FLOWS {
                page.push((share.clone(), from.map(|(p, _, t)| (p, t)), *pid, *t, *ret));
            }
        }
        Ok(page)
    }

    /// A process's address space: reserved and mapped bytes.
    fn space(&self, pid: u64) -> (u64, u64) {
        let mapped = self
            .mapped
            .iter()
            .filter(|((p, _), _)| *p == pid)
            .map(|(_, v)| *v)
            .sum();
        (self.reserved.get(&pid).copied().unwrap_or(0), mapped)
    }
}

/// The track of a process's address space: reserved bytes (drawn where
/// the other tracks draw physical bytes) and mapped bytes.
const SPACE: &str = "address space";

/// `ACL_ERROR_RT_MEMORY_ALLOCATION`: an allocation refused for lack of
/// memory.
const OUT_OF_MEMORY: i64 = 207_001;

/// Phase markers kept per process (the first ones).
const MARKERS: usize = 1000;

/// How the timeline names a record's device.
trait DeviceExt {
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
enum DeviceKey {
    Id(u32),
    Named(String),
    /// The process's address space.
    Space,
}

/// The tracks, in the order they were met, each with its process and
/// name, and the JSON of its Perfetto counter's name.
#[derive(Default)]
struct Tracks {
    index: FxHashMap<(u64, DeviceKey), usize>,
    all: Vec<(u64, String, String, Track)>,
}

impl Tracks {
    /// The track of `pid`'s `key`, made at its first use.
    fn of(&mut self, pid: u64, key: DeviceKey, name: impl FnOnce() -> String) -> usize {
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

/// The Perfetto file's bytes, handed in chunks to a thread that writes
/// them (the conversion goes on while the kernel copies).
struct Chunks {
    buf: Vec<u8>,
    tx: std::sync::mpsc::SyncSender<Vec<u8>>,
}

/// The size of a chunk.
const CHUNK: usize = 1 << 20;

impl Chunks {
    /// Appends a number.
    fn num(&mut self, n: impl itoa::Integer) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    /// Appends bytes.
    fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Hands a full chunk to the writer.
    fn send_full(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> std::io::Result<()> {
        let full = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK + (CHUNK >> 2)));
        self.tx
            .send(full)
            .map_err(|_| std::io::Error::other("the writer of the Perfetto file stopped"))
    }
}

impl Write for Chunks {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// The calls' names, each kept once (with its JSON), by index.
#[derive(Default)]
struct Calls {
    index: FxHashMap<String, u32>,
    all: Vec<(String, String)>,
}

impl Calls {
    fn of(&mut self, call: &str) -> u32 {
        if let Some(&i) = self.index.get(call) {
            return i;
        }
        let i = u32::try_from(self.all.len()).unwrap_or(u32::MAX);
        self.all
            .push((call.to_owned(), serde_json::Value::from(call).to_string()));
        self.index.insert(call.to_owned(), i);
        i
    }

    fn name(&self, i: u32) -> &str {
        self.all.get(i as usize).map_or("?", |(n, _)| n.as_str())
    }

    fn json(&self, i: u32) -> &str {
        self.all
            .get(i as usize)
            .map_or("\"?\"", |(_, j)| j.as_str())
    }
}

/// Reads the trace; writes `<out>.json` and `<out>.html`. Returns the
/// number of records and the tracks' names.
pub fn run(trace: &Path, out: &Path) -> Result<(usize, Vec<String>), String> {
    let mut lines = aclmem_formats::jsonl::open(trace)?;
    let json_path = out.with_extension("json");
    let file =
        std::fs::File::create(&json_path).map_err(|e| format!("{}: {e}", json_path.display()))?;
    let io = |e: std::io::Error| format!("{}: {e}", json_path.display());
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        let mut file = file;
        for chunk in rx {
            file.write_all(&chunk)?;
        }
        file.flush()
    });
    let mut json = Chunks {
        buf: Vec::with_capacity(CHUNK + (CHUNK >> 2)),
        tx,
    };
    json.raw(b"{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    let mut first_event = true;
    let mut tracks = Tracks::default();
    let mut calls = Calls::default();
    let mut lifetimes = Lifetimes::default();
    // (pid, site number) -> its frames, one per line.
    let mut sites: FxHashMap<(u64, u32), String> = FxHashMap::default();
    let mut extra = String::new();
    let mut markers: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    let mut records = 0usize;
    let mut t0 = u64::MAX;
    // The trace is parsed on a thread of its own, in batches, while this
    // one converts: the two halves of the work take about as long.
    let (records_tx, batches) =
        std::sync::mpsc::sync_channel::<Result<Vec<Record<'static>>, String>>(8);
    let trace_path = trace.to_owned();
    std::thread::spawn(move || {
        const BATCH: usize = 4096;
        let mut batch = Vec::with_capacity(BATCH);
        while let Some(line) = lines.next_str() {
            let parsed = line.and_then(|(number, line)| {
                if line.trim().is_empty() {
                    return Ok(None);
                }
                serde_json::from_str::<Record>(line)
                    .map(|r| Some(r.into_owned()))
                    .map_err(|e| format!("{}:{number}: {e}", trace_path.display()))
            });
            match parsed {
                Ok(Some(r)) => batch.push(r),
                Ok(None) => {}
                Err(e) => {
                    let _ = records_tx.send(Err(e));
                    return;
                }
            }
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if records_tx.send(Ok(full)).is_err() {
                    return; // the converter stopped
                }
            }
        }
        let _ = records_tx.send(Ok(batch));
    });
    for batch in batches {
        for r in batch? {
            records += 1;
            t0 = t0.min(r.t);
            let pid = r.pid.unwrap_or(1);
            let call = r.call.as_deref().unwrap_or("?");
            if let Some(described) = &r.sites {
                for (n, frames) in described {
                    if let Ok(n) = n.parse::<u32>() {
                        sites.insert((pid, n), frames.join("\n"));
                    }
                }
            }
            // Phases the program marked, allocations refused for lack of memory
            // (the sanitizer's out-of-memory reports), the mstx heaps and
            // regions, and HCCL's collectives, as markers.
            let marker = if call == "phase" {
                Some(r.name.as_deref().unwrap_or("?").to_owned())
            } else if r.ret == OUT_OF_MEMORY && call.starts_with("aclrtMalloc") {
                Some(format!("out of memory: {call} of {} bytes", r.size))
            } else if let Some(what) = call.strip_prefix("mstxMem") {
                // The pools the program described (the mstx memory API).
                let at = r.va.map(|va| format!(" at {va:#x}")).unwrap_or_default();
                Some(match what {
                    "HeapRegister" => format!("mstx heap of {} bytes{at}", r.size),
                    "HeapUnregister" => format!("mstx heap{at} unregistered"),
                    "RegionsRegister" => format!("mstx regions of {} bytes{at}", r.size),
                    _ => format!("mstx regions of {} bytes{at} unregistered", r.size),
                })
            } else if call.starts_with("Hccl") {
                // A collective or transfer: its bytes, and its code if it failed.
                Some(match r.ret {
                    0 => format!("{call} of {} bytes", r.size),
                    code => format!("{call} of {} bytes answered {code}", r.size),
                })
            } else {
                None
            };
            if let Some(name) = marker {
                let m = markers.entry(pid).or_default();
                if m.len() < MARKERS {
                    m.push((r.t, name));
                }
            }
            let call_id = calls.of(call);
            if !first_event {
                json.raw(b",\n");
            }
            first_event = false;
            // Exports and imports are slices of a microsecond, for their arrows
            // to bind to.
            json.raw(b"{\"name\":");
            json.raw(calls.json(call_id).as_bytes());
            json.raw(if r.share.is_some() {
                b",\"ph\":\"X\",\"dur\":1,\"ts\":"
            } else {
                b",\"ph\":\"i\",\"s\":\"t\",\"ts\":"
            });
            json.num(r.t);
            json.raw(b",\"pid\":");
            json.num(pid);
            json.raw(b",\"tid\":");
            json.num(r.tid);
            json.raw(b",\"args\":{\"size\":");
            json.num(r.size);
            json.raw(b",\"ret\":");
            json.num(r.ret);
            json.raw(b",\"device\":");
            match &r.device {
                None => json.raw(b"null"),
                Some(Device::Id(n)) => json.num(*n),
                Some(Device::Named(d)) => {
                    serde_json::to_writer(&mut json, d.as_ref()).map_err(|e| e.to_string())?;
                }
            }
            if let Some(share) = r.share.as_deref() {
                json.raw(b",\"share\":");
                serde_json::to_writer(&mut json, share).map_err(|e| e.to_string())?;
            }
            json.raw(b"}}");
            extra.clear();
            let space_changed = lifetimes.events(&r, pid, call, &mut extra);
            json.raw(extra.as_bytes());
            if let (Some(phys), Some(mapped), Some(d)) = (r.phys, r.mapped, &r.device) {
                let i = tracks.of(pid, d.key(), || d.track());
                let (_, _, counter, track) = &mut tracks.all[i];
                json.raw(b",\n{\"name\":");
                json.raw(counter.as_bytes());
                json.raw(b",\"ph\":\"C\",\"ts\":");
                json.num(r.t);
                json.raw(b",\"pid\":");
                json.num(pid);
                json.raw(b",\"args\":{\"physical\":");
                json.num(phys);
                json.raw(b",\"mapped\":");
                json.num(mapped);
                json.raw(b"}}");
                track.push(Point {
                    t: r.t,
                    phys,
                    mapped,
                    call: call_id,
                    size: r.size,
                    site: r.site.unwrap_or(0),
                });
                lifetimes.mapped.insert((pid, i), mapped);
            }
            if space_changed {
                let (reserved, mapped) = lifetimes.space(pid);
                let i = tracks.of(pid, DeviceKey::Space, || SPACE.to_owned());
                tracks.all[i].3.push(Point {
                    t: r.t,
                    phys: reserved,
                    mapped,
                    call: call_id,
                    size: r.size,
                    site: r.site.unwrap_or(0),
                });
            }
            if let Err(e) = json.send_full() {
                // The writer stopped: its own error says why (a full disk).
                drop(json);
                return Err(match writer.join() {
                    Ok(Err(cause)) => io(cause),
                    _ => io(e),
                });
            }
        }
    }
    let flows = lifetimes.flows(&mut json).map_err(io)?;
    json.raw(b"]}\n");
    json.flush().map_err(io)?;
    drop(json);
    writer
        .join()
        .map_err(|_| "the writer of the Perfetto file panicked".to_owned())?
        .map_err(io)?;

    // Tracks by process, then name, as the page lists them.
    let mut tracks = tracks.all;
    tracks.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let pids: std::collections::BTreeSet<u64> = tracks.iter().map(|(p, ..)| *p).collect();
    let name = |pid: u64, device: &str| {
        if pids.len() > 1 {
            format!("process {pid}, {device}")
        } else {
            device.to_owned()
        }
    };
    let t0 = if t0 == u64::MAX { 0 } else { t0 };
    let mut names = Vec::new();
    let mut page_tracks = Vec::new();
    for (pid, device, _, track) in &tracks {
        let n = name(*pid, device);
        names.push(n.clone());
        let points: Vec<serde_json::Value> = track
            .points
            .iter()
            .map(|p| {
                serde_json::json!([
                    p.t - t0.min(p.t),
                    p.phys,
                    p.mapped,
                    calls.name(p.call),
                    p.size,
                    p.site
                ])
            })
            .collect();
        // The stacks of the calls the page shows.
        let track_sites: serde_json::Map<String, serde_json::Value> = track
            .points
            .iter()
            .filter(|p| p.site != 0)
            .filter_map(|p| {
                sites
                    .get(&(*pid, p.site))
                    .map(|text| (p.site.to_string(), text.clone().into()))
            })
            .collect();
        let marks: Vec<serde_json::Value> = markers
            .get(pid)
            .map(|m| {
                m.iter()
                    .map(|(t, name)| serde_json::json!([t - t0.min(*t), name]))
                    .collect()
            })
            .unwrap_or_default();
        page_tracks.push(serde_json::json!({
            "name": n,
            "markers": marks,
            "points": points,
            "records": track.records,
            "peak_phys": track.peak_phys,
            "peak_mapped": track.peak_mapped,
            "levels": track.levels,
            "more_levels": track.more_levels,
            "space": device == SPACE,
            "sites": track_sites,
        }));
    }
    let flows: Vec<serde_json::Value> = flows
        .iter()
        .map(|(share, from, pid, t, ret)| {
            serde_json::json!({
                "share": share,
                "from": from.map(|(p, ft)| serde_json::json!([p, ft - t0.min(ft)])),
                "to": [pid, t - t0.min(*t)],
                "ret": ret,
            })
        })
        .collect();
    let html = PAGE
        .replace(
            "/*DATA*/",
            &serde_json::Value::from(page_tracks).to_string(),
        )
        .replace("/*FLOWS*/", &serde_json::Value::from(flows).to_string())
        .replace(
            "/*TITLE*/",
            &trace.display().to_string().replace('<', "&lt;"),
        );
    std::fs::write(out.with_extension("html"), html).map_err(io)?;
    Ok((records, names))
}

/// This process's peak resident memory in KiB (`VmHWM`), where the system
/// says it.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

const PAGE: &str = include_str!("timeline/page.html");

#[cfg(test)]
mod tests;
