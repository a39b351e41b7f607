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
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
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
    call: String,
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
    /// Live objects and their slices' names.
    live: std::collections::HashMap<(u64, Kind, u64), String>,
    /// The processes' slice tracks named so far.
    named: std::collections::HashSet<(u64, Kind)>,
    /// (pid, address) -> reserved bytes.
    resv: std::collections::HashMap<(u64, u64), u64>,
    reserved: BTreeMap<u64, u64>,
    /// (pid, device) -> mapped bytes, and their sum per process.
    mapped: BTreeMap<(u64, String), u64>,
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
        let begin = |this: &mut Self, out: &mut String, kind: Kind, key: u64, name: String| {
            if this.named.insert((pid, kind)) {
                let _ = write!(
                    out,
                    ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}",
                    kind.tid(),
                    kind.name()
                );
            }
            let name = serde_json::Value::from(name).to_string();
            if this.live.insert((pid, kind, key), name.clone()).is_none() {
                let _ = write!(
                    out,
                    ",\n{{\"name\":{name},\"cat\":\"{}\",\"ph\":\"b\",\"id\":\"{pid}:{key:#x}\",\"ts\":{},\"pid\":{pid},\"tid\":{}}}",
                    kind.name(),
                    r.t,
                    kind.tid()
                );
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
                begin(
                    self,
                    out,
                    Kind::Reservation,
                    va,
                    format!("reservation {va:#x} ({})", mib(r.size)),
                );
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
                begin(
                    self,
                    out,
                    Kind::Handle,
                    h,
                    format!("handle {h:#x} ({})", mib(r.size)),
                );
                false
            }
            (c, _, Some(h)) if c.starts_with("aclrtMemImport") => {
                begin(
                    self,
                    out,
                    Kind::Handle,
                    h,
                    format!("imported handle {h:#x}"),
                );
                false
            }
            ("aclrtFreePhysical", _, Some(h)) => {
                end(self, out, Kind::Handle, h);
                false
            }
            ("aclrtMapMem", Some(va), h) => {
                begin(
                    self,
                    out,
                    Kind::Mapping,
                    va,
                    format!(
                        "mapping {va:#x} ({}) of handle {:#x}",
                        mib(r.size),
                        h.unwrap_or(0)
                    ),
                );
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
            .range((pid, String::new())..)
            .take_while(|((p, _), _)| *p == pid)
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

/// How the timeline names and writes a record's device.
trait DeviceExt {
    /// The track's name: `device N`, or `host`.
    fn track(&self) -> String;
    /// The device as JSON.
    fn json(&self) -> String;
}

impl DeviceExt for Device<'_> {
    fn track(&self) -> String {
        match self {
            Device::Id(n) => format!("device {n}"),
            Device::Named(s) => s.to_string(),
        }
    }

    fn json(&self) -> String {
        match self {
            Device::Id(n) => n.to_string(),
            Device::Named(s) => serde_json::to_string(s).unwrap_or_default(),
        }
    }
}

/// Reads the trace; writes `<out>.json` and `<out>.html`. Returns the
/// number of records and the tracks' names.
pub fn run(trace: &Path, out: &Path) -> Result<(usize, Vec<String>), String> {
    let lines = aclmem_formats::jsonl::open(trace)?;
    let json_path = out.with_extension("json");
    let json =
        std::fs::File::create(&json_path).map_err(|e| format!("{}: {e}", json_path.display()))?;
    let mut json = BufWriter::with_capacity(1 << 20, json);
    let io = |e: std::io::Error| e.to_string();
    json.write_all(b"{\"displayTimeUnit\":\"ms\",\"traceEvents\":[")
        .map_err(io)?;
    let mut first_event = true;
    // (pid, device) -> track.
    let mut tracks: BTreeMap<(u64, String), Track> = BTreeMap::new();
    let mut lifetimes = Lifetimes::default();
    // (pid, site number) -> its frames, one per line.
    let mut sites: std::collections::HashMap<(u64, u32), String> = std::collections::HashMap::new();
    let mut extra = String::new();
    let mut markers: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    let mut records = 0usize;
    let mut t0 = u64::MAX;
    for line in lines {
        let (number, line) = line?;
        if line.trim().is_empty() {
            continue;
        }
        let r: Record = serde_json::from_str(&line)
            .map_err(|e| format!("{}:{number}: {e}", trace.display()))?;
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
        let name = serde_json::to_string(call).map_err(|e| e.to_string())?;
        let device = r
            .device
            .as_ref()
            .map_or_else(|| "null".to_owned(), Device::json);
        if !first_event {
            json.write_all(b",\n").map_err(io)?;
        }
        first_event = false;
        // Exports and imports are slices of a microsecond, for their arrows
        // to bind to.
        let ph = if r.share.is_some() {
            "\"ph\":\"X\",\"dur\":1"
        } else {
            "\"ph\":\"i\",\"s\":\"t\""
        };
        let share = r
            .share
            .as_deref()
            .map(|s| format!(",\"share\":{}", serde_json::Value::from(s)))
            .unwrap_or_default();
        write!(
            json,
            "{{\"name\":{name},{ph},\"ts\":{},\"pid\":{pid},\"tid\":{},\"args\":{{\"size\":{},\"ret\":{},\"device\":{device}{share}}}}}",
            r.t, r.tid, r.size, r.ret
        )
        .map_err(io)?;
        extra.clear();
        let space_changed = lifetimes.events(&r, pid, call, &mut extra);
        json.write_all(extra.as_bytes()).map_err(io)?;
        if let (Some(phys), Some(mapped), Some(d)) = (r.phys, r.mapped, &r.device) {
            let track = d.track();
            let counter =
                serde_json::to_string(&format!("{track} memory")).map_err(|e| e.to_string())?;
            write!(
                json,
                ",\n{{\"name\":{counter},\"ph\":\"C\",\"ts\":{},\"pid\":{pid},\"args\":{{\"physical\":{phys},\"mapped\":{mapped}}}}}",
                r.t
            )
            .map_err(io)?;
            lifetimes.mapped.insert((pid, track.clone()), mapped);
            tracks.entry((pid, track)).or_default().push(Point {
                t: r.t,
                phys,
                mapped,
                call: call.to_owned(),
                size: r.size,
                site: r.site.unwrap_or(0),
            });
        }
        if space_changed {
            let (reserved, mapped) = lifetimes.space(pid);
            tracks
                .entry((pid, SPACE.to_owned()))
                .or_default()
                .push(Point {
                    t: r.t,
                    phys: reserved,
                    mapped,
                    call: call.to_owned(),
                    size: r.size,
                    site: r.site.unwrap_or(0),
                });
        }
    }
    let flows = lifetimes.flows(&mut json).map_err(io)?;
    json.write_all(b"]}\n")
        .and_then(|()| json.flush())
        .map_err(io)?;

    let pids: std::collections::BTreeSet<u64> = tracks.keys().map(|(p, _)| *p).collect();
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
    for ((pid, device), track) in &tracks {
        let n = name(*pid, device);
        names.push(n.clone());
        let points: Vec<serde_json::Value> = track
            .points
            .iter()
            .map(|p| {
                serde_json::json!([p.t - t0.min(p.t), p.phys, p.mapped, p.call, p.size, p.site])
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
