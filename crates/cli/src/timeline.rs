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
        // Phases the program marked, and allocations refused for lack of
        // memory (the sanitizer's out-of-memory reports), as markers.
        let marker = if call == "phase" {
            Some(r.name.as_deref().unwrap_or("?").to_owned())
        } else if r.ret == OUT_OF_MEMORY && call.starts_with("aclrtMalloc") {
            Some(format!("out of memory: {call} of {} bytes", r.size))
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

const PAGE: &str = r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>aclmem memory timeline</title>
<style>
 body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
 h1 { font-size: 20px; margin: 0 0 4px; }
 .sub { color: #666; margin-bottom: 16px; }
 .device { margin: 18px 0; }
 .device h2 { font-size: 16px; margin: 0 0 6px; }
 svg { background: #fafafa; border: 1px solid #ddd; }
 .phys { fill: rgba(33,113,181,.18); stroke: #2171b5; stroke-width: 2; }
 .mapped { fill: none; stroke: #e6550d; stroke-width: 2; stroke-dasharray: 6 4; }
 .axis { stroke: #999; stroke-width: 1; }
 .grid { stroke: #e4e4e4; stroke-width: 1; }
 .label { fill: #555; font-size: 11px; }
 .hit { fill: transparent; }
 .mark { stroke: #31a354; stroke-width: 1.5; stroke-dasharray: 3 3; }
 .hit:hover { fill: rgba(0,0,0,.25); }
 .flow { stroke: #756bb1; stroke-width: 2; }
 .export { fill: #756bb1; }
 .import { fill: #9e9ac8; }
 .failed { stroke: #de2d26; fill: #de2d26; }
 .legend span { display: inline-block; width: 14px; height: 4px; margin: 0 6px 3px 12px; }
 #summary { white-space: pre; font-family: ui-monospace, monospace; background: #f4f4f4; padding: 8px; }
</style></head>
<body>
<h1>Device memory over time</h1>
<div class="sub">From <code>/*TITLE*/</code>, written by <code>aclmem timeline</code>.
 <span class="legend"><span style="background:#2171b5"></span>physical (allocated)
 <span style="background:#e6550d"></span>mapped</span>
 Hover over a step for its call.</div>
<div id="plots"></div>
<h2>Summary</h2>
<div id="summary">(the page's script did not run)</div>
<script>
const TRACKS = /*DATA*/;
const FLOWS = /*FLOWS*/;
const MIB = 1 << 20;
const fmt = b => (b / MIB).toFixed(b % MIB ? 1 : 0) + " MiB";
const ms = t => (t / 1000).toFixed(t < 10000 ? 2 : t < 1e6 ? 1 : 0) + " ms";
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
const W = 900, H = 190, L = 74, B = 30, TICKS = 5;
const tMax = Math.max(1, ...TRACKS.flatMap(tr => tr.points.map(p => p[0])));
const lines = [];
for (const tr of TRACKS) {
  const rows = tr.points;
  const yMax = Math.max(MIB, tr.peak_phys, tr.peak_mapped);
  const div = document.createElement("div"); div.className = "device";
  const shown = rows.length < tr.records ? ` (${rows.length} of ${tr.records} records shown: lows and highs kept)` : "";
  const what = tr.space ? "address space: reserved (filled) and mapped (dashed) bytes; " : "";
  div.innerHTML = `<h2>${esc(tr.name)}</h2><div class="label">${what}${tr.records} records${shown}</div>`;
  // Over time, and call by call (short-lived dips are wide there).
  for (const [mode, xOf, xEnd, xText] of [
      ["over time", r => r[0], tMax, ms],
      ["call by call", (r, i) => i + 1, rows.length + 1, v => `${Math.round(v)}`]]) {
    const x = v => L + (W - L - 14) * v / xEnd;
    const y = v => H - B - (H - B - 12) * v / yMax;
    const step = (k) => { let s = `M ${x(0)} ${y(0)}`; let last = 0;
      rows.forEach((r, i) => { s += ` L ${x(xOf(r, i))} ${y(last)} L ${x(xOf(r, i))} ${y(r[k])}`; last = r[k]; });
      return s + ` L ${x(xEnd)} ${y(last)}`; };
    let axes = `<line class="axis" x1="${L}" y1="${H - B}" x2="${W - 14}" y2="${H - B}"/>
      <line class="axis" x1="${L}" y1="12" x2="${L}" y2="${H - B}"/>`;
    let lastText = null;
    for (let i = 0; i <= TICKS; i++) {
      const yv = yMax * i / TICKS, xv = xEnd * i / TICKS;
      // A label once (few calls: ticks would repeat the same number).
      const xLabel = xText(xv) === lastText ? "" : xText(xv);
      lastText = xText(xv);
      axes += `<line class="grid" x1="${L}" y1="${y(yv)}" x2="${W - 14}" y2="${y(yv)}"/>
        <text class="label" x="4" y="${y(yv) + 4}">${fmt(Math.round(yv))}</text>
        <text class="label" text-anchor="${i === 0 ? "start" : i === TICKS ? "end" : "middle"}" x="${x(xv)}" y="${H - 10}">${xLabel}</text>`;
    }
    let hits = "";
    rows.forEach((r, i) => {
      const stack = tr.sites[r[5]] ? "\n" + esc(tr.sites[r[5]]) : "";
      hits += `<circle class="hit" cx="${x(xOf(r, i))}" cy="${y(r[1])}" r="4"><title>${esc(r[3])}(${fmt(r[4])}) at ${ms(r[0])}: ${tr.space ? "reserved" : "physical"} ${fmt(r[1])}, mapped ${fmt(r[2])}${stack}</title></circle>`;
    });
    let marks = "";
    if (mode === "over time") for (const [t, name] of tr.markers) {
      marks += `<line class="mark" x1="${x(t)}" y1="12" x2="${x(t)}" y2="${H - B}"><title>${esc(name)} at ${ms(t)}</title></line>
        <text class="label" x="${x(t) + 2}" y="22">${esc(name)}</text>`;
    }
    div.innerHTML += `<div class="label">${mode}</div><svg width="${W}" height="${H}">${axes}${marks}
      <path class="phys" d="${step(1)} L ${x(xEnd)} ${y(0)} Z"/>
      <path class="mapped" d="${step(2)}"/>${hits}</svg>`;
  }
  document.getElementById("plots").appendChild(div);
  const kind = tr.space ? "reserved" : "physical";
  lines.push(`${tr.name}: peak ${kind} ${fmt(tr.peak_phys)}, peak mapped ${fmt(tr.peak_mapped)}`);
  lines.push(`${tr.name}: ${kind} levels ${tr.levels.map(fmt).join(" → ")}${tr.more_levels ? " → …" : ""}`);
}
// Sharing across processes: one lane per process, an arrow from each
// export to each import of its shareable handle.
if (FLOWS.length) {
  const pids = [...new Set(FLOWS.flatMap(f => [f.to[0], ...(f.from ? [f.from[0]] : [])]))].sort((a, b) => a - b);
  const LANE = 44, SH = 24 + LANE * pids.length;
  const x = t => L + (W - L - 14) * t / tMax, y = p => 24 + LANE * pids.indexOf(p) + LANE / 2;
  let svg = `<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#756bb1"/></marker></defs>`;
  for (const p of pids) svg += `<line class="grid" x1="${L}" y1="${y(p)}" x2="${W - 14}" y2="${y(p)}"/><text class="label" x="4" y="${y(p) + 4}">pid ${p}</text>`;
  for (const f of FLOWS) {
    const [tp, tt] = f.to, ok = f.ret === 0;
    const tip = `${esc(f.share)}: ${f.from ? `exported by pid ${f.from[0]} at ${ms(f.from[1])}, ` : "exported outside the trace, "}imported by pid ${tp} at ${ms(tt)}${ok ? "" : ` (answered ${f.ret})`}`;
    if (f.from) svg += `<line class="flow${ok ? "" : " failed"}" x1="${x(f.from[1])}" y1="${y(f.from[0])}" x2="${x(tt)}" y2="${y(tp)}" marker-end="url(#arrow)"><title>${tip}</title></line>
      <circle class="export" cx="${x(f.from[1])}" cy="${y(f.from[0])}" r="5"><title>${tip}</title></circle>`;
    svg += `<rect class="import${ok ? "" : " failed"}" x="${x(tt) - 5}" y="${y(tp) - 5}" width="10" height="10"><title>${tip}</title></rect>`;
  }
  const div = document.createElement("div"); div.className = "device";
  div.innerHTML = `<h2>Sharing across processes</h2><div class="label">${FLOWS.length} import(s); an arrow from each export (circle) to its import (square); red: the import was refused. Hover for the handle.</div><svg width="${W}" height="${SH}">${svg}</svg>`;
  document.getElementById("plots").appendChild(div);
  lines.push(`sharing: ${FLOWS.length} import(s) among ${pids.length} process(es), ${FLOWS.filter(f => f.ret !== 0).length} refused`);
}
document.getElementById("summary").textContent = lines.join("\n") || "no memory events in the trace";
</script>
</body></html>
"##;

#[cfg(test)]
mod tests {
    use super::*;

    /// Two processes: the importer's records come first in the file (each
    /// process writes in blocks), yet the arrow joins the export to the
    /// import; reservations, handles and mappings are slices that begin
    /// and end at their calls; the address space track follows them.
    #[test]
    fn lifetimes_are_slices_and_exports_are_joined_to_later_records() {
        let dir = std::env::temp_dir().join(format!("aclmem-timeline-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("t.jsonl");
        let lines = [
            r#"{"t":50,"pid":2,"tid":2,"call":"aclrtMemImportFromShareableHandle","size":0,"ret":0,"h":9,"share":"0x5"}"#,
            r#"{"t":60,"pid":2,"tid":2,"call":"aclrtReserveMemAddress","size":4194304,"ret":0,"va":4096}"#,
            r#"{"t":70,"pid":2,"tid":2,"call":"aclrtMapMem","size":2097152,"ret":0,"va":4096,"h":9,"device":0,"phys":0,"mapped":2097152,"site":1}"#,
            r#"{"t":80,"pid":2,"tid":2,"call":"aclrtUnmapMem","size":0,"ret":0,"va":4096,"device":0,"phys":0,"mapped":0}"#,
            r#"{"t":90,"pid":2,"tid":2,"call":"aclrtReleaseMemAddress","size":0,"ret":0,"va":4096}"#,
            r#"{"t":10,"pid":1,"tid":1,"call":"aclrtMallocPhysical","size":2097152,"ret":0,"h":7,"device":0,"phys":2097152,"mapped":0}"#,
            r#"{"t":20,"pid":1,"tid":1,"call":"aclrtMemExportToShareableHandle","size":0,"ret":0,"h":7,"share":"0x5"}"#,
            r#"{"t":100,"pid":1,"tid":1,"call":"aclrtFreePhysical","size":0,"ret":0,"h":7,"device":0,"phys":0,"mapped":0}"#,
            r#"{"t":95,"pid":2,"tid":2,"call":"sites","size":0,"ret":0,"sites":{"1":["map_weights (w.c:12)","main (w.c:30)"]}}"#,
        ];
        std::fs::write(&trace, lines.join("\n")).unwrap();
        let (records, names) = run(&trace, &dir.join("t")).unwrap();
        assert_eq!(records, 9);
        assert!(
            names.contains(&"process 2, address space".to_owned()),
            "{names:?}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("t.json")).unwrap()).unwrap();
        let events = json["traceEvents"].as_array().unwrap();
        let ph = |p: &str| events.iter().filter(|e| e["ph"] == p).collect::<Vec<_>>();
        let (s, f) = (ph("s"), ph("f"));
        assert_eq!((s.len(), f.len()), (1, 1));
        assert_eq!(
            (s[0]["pid"].as_u64(), s[0]["ts"].as_u64()),
            (Some(1), Some(20))
        );
        assert_eq!(
            (f[0]["pid"].as_u64(), f[0]["ts"].as_u64()),
            (Some(2), Some(50))
        );
        let (b, e) = (ph("b"), ph("e"));
        // Handle 7, imported handle 9, the reservation and the mapping
        // begin; all but the imported handle (never freed) end.
        assert_eq!(b.len(), 4, "{b:?}");
        assert_eq!(e.len(), 3, "{e:?}");
        for end in &e {
            assert!(
                b.iter().any(|begin| begin["id"] == end["id"]
                    && begin["cat"] == end["cat"]
                    && begin["name"] == end["name"]),
                "{end}"
            );
        }
        let html = std::fs::read_to_string(dir.join("t.html")).unwrap();
        assert!(
            html.contains(r#""from":[1,10]"#),
            "the arrow starts at the export"
        );
        // The mapping's tooltip gets the stack its process described.
        assert!(
            html.contains(r#""sites":{"1":"map_weights (w.c:12)\nmain (w.c:30)"}"#),
            "the page carries the mapping's stack"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// An allocation refused for lack of memory is a marker of its
    /// process; one refused for another reason is not.
    #[test]
    fn out_of_memory_is_marked() {
        let dir = std::env::temp_dir().join(format!("aclmem-timeline-oom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("t.jsonl");
        let lines = [
            r#"{"t":10,"pid":3,"tid":3,"call":"aclrtMallocPhysical","size":2097152,"ret":0,"h":7,"device":0,"phys":2097152,"mapped":0}"#,
            r#"{"t":20,"pid":3,"tid":3,"call":"aclrtMallocPhysical","size":1099511627776,"ret":207001,"h":null}"#,
            r#"{"t":30,"pid":3,"tid":3,"call":"aclrtMalloc","size":0,"ret":100000}"#,
        ];
        std::fs::write(&trace, lines.join("\n")).unwrap();
        run(&trace, &dir.join("t")).unwrap();
        let html = std::fs::read_to_string(dir.join("t.html")).unwrap();
        assert!(
            html.contains(
                r#""markers":[[10,"out of memory: aclrtMallocPhysical of 1099511627776 bytes"]]"#
            ),
            "{}",
            &html[html.find("markers").unwrap_or(0)..][..200.min(html.len())]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
