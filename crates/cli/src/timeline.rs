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

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
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

/// A record of the trace, as far as the timeline reads it.
#[derive(serde::Deserialize)]
struct Record<'a> {
    #[serde(default)]
    t: u64,
    #[serde(default)]
    pid: Option<u64>,
    #[serde(default)]
    tid: i64,
    #[serde(borrow, default)]
    call: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    size: u64,
    #[serde(default)]
    ret: i64,
    #[serde(default)]
    device: Option<Device<'a>>,
    #[serde(default)]
    phys: Option<u64>,
    #[serde(default)]
    mapped: Option<u64>,
    /// A phase marker's name (`aclmem_sanitizer_phase`).
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
}

/// Phase markers kept per process (the first ones).
const MARKERS: usize = 1000;

/// A device number, or `"host"`.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Device<'a> {
    Number(u64),
    #[serde(borrow)]
    Name(std::borrow::Cow<'a, str>),
}

impl Device<'_> {
    fn track(&self) -> String {
        match self {
            Device::Number(n) => format!("device {n}"),
            Device::Name(s) => s.to_string(),
        }
    }

    fn json(&self) -> String {
        match self {
            Device::Number(n) => n.to_string(),
            Device::Name(s) => serde_json::to_string(s).unwrap_or_default(),
        }
    }
}

/// Reads the trace; writes `<out>.json` and `<out>.html`. Returns the
/// number of records and the tracks' names.
pub fn run(trace: &Path, out: &Path) -> Result<(usize, Vec<String>), String> {
    let file = std::fs::File::open(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
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
    let mut markers: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    let mut records = 0usize;
    let mut t0 = u64::MAX;
    let mut line = String::new();
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut number = 0usize;
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(io)? == 0 {
            break;
        }
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        let r: Record = serde_json::from_str(&line)
            .map_err(|e| format!("{}:{number}: {e}", trace.display()))?;
        records += 1;
        t0 = t0.min(r.t);
        let pid = r.pid.unwrap_or(1);
        let call = r.call.as_deref().unwrap_or("?");
        if call == "phase" {
            let m = markers.entry(pid).or_default();
            if m.len() < MARKERS {
                m.push((r.t, r.name.as_deref().unwrap_or("?").to_owned()));
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
        write!(
            json,
            "{{\"name\":{name},\"ph\":\"i\",\"s\":\"t\",\"ts\":{},\"pid\":{pid},\"tid\":{},\"args\":{{\"size\":{},\"ret\":{},\"device\":{device}}}}}",
            r.t, r.tid, r.size, r.ret
        )
        .map_err(io)?;
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
            tracks.entry((pid, track)).or_default().push(Point {
                t: r.t,
                phys,
                mapped,
                call: call.to_owned(),
                size: r.size,
            });
        }
    }
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
            .map(|p| serde_json::json!([p.t - t0.min(p.t), p.phys, p.mapped, p.call, p.size]))
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
        }));
    }
    let html = PAGE
        .replace(
            "/*DATA*/",
            &serde_json::Value::from(page_tracks).to_string(),
        )
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
  div.innerHTML = `<h2>${esc(tr.name)}</h2><div class="label">${tr.records} records${shown}</div>`;
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
    for (let i = 0; i <= TICKS; i++) {
      const yv = yMax * i / TICKS, xv = xEnd * i / TICKS;
      axes += `<line class="grid" x1="${L}" y1="${y(yv)}" x2="${W - 14}" y2="${y(yv)}"/>
        <text class="label" x="4" y="${y(yv) + 4}">${fmt(Math.round(yv))}</text>
        <text class="label" text-anchor="${i === 0 ? "start" : i === TICKS ? "end" : "middle"}" x="${x(xv)}" y="${H - 10}">${xText(xv)}</text>`;
    }
    let hits = "";
    rows.forEach((r, i) => {
      hits += `<circle class="hit" cx="${x(xOf(r, i))}" cy="${y(r[1])}" r="4"><title>${esc(r[3])}(${fmt(r[4])}) at ${ms(r[0])}: physical ${fmt(r[1])}, mapped ${fmt(r[2])}</title></circle>`;
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
  lines.push(`${tr.name}: peak physical ${fmt(tr.peak_phys)}, peak mapped ${fmt(tr.peak_mapped)}`);
  lines.push(`${tr.name}: physical levels ${tr.levels.map(fmt).join(" → ")}${tr.more_levels ? " → …" : ""}`);
}
document.getElementById("summary").textContent = lines.join("\n") || "no memory events in the trace";
</script>
</body></html>
"##;
