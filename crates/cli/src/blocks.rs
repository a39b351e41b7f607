//! `aclmem timeline TRACE --snapshot SNAP.pickle`: torch_npu's own memory
//! snapshot (`torch.npu.memory._dump_snapshot`, `OOM_SNAPSHOT_ENABLE`'s
//! pickle) joined with the sanitizer's trace of the same run, on one page:
//! each mapping of a physical handle (and each `aclrtMalloc` block) the
//! trace saw, with the allocator's blocks (tensors) that sit in it, and the
//! sleep that released it. `OUT.blocks.html` is the page, `OUT.blocks.json`
//! the same join for programs.
//!
//! **Which handle held a block at the snapshot.** An address can be mapped
//! by several handles over a run (a sleep unmaps one, the wake maps another
//! at the same address). The snapshot's active blocks were all mapped when
//! it was taken: the moment chosen is the earliest trace time at which every
//! active block (that any mapping of the trace covers) lies in a live
//! mapping, and the mapping live then is the
//! block's holder (`held_at_snapshot`). Every mapping that ever covered a
//! block lists it, so a page shows both the handle a sleep released and the
//! one the wake mapped in its place. The process is the trace's process
//! whose mappings cover most of the snapshot's blocks.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use aclmem_formats::trace::Record;
use serde::{Deserialize, Serialize};

/// A frame of torch's snapshot.
#[derive(Debug, Clone, Default, Deserialize)]
struct TorchFrame {
    #[serde(default)]
    filename: String,
    #[serde(default)]
    line: i64,
    #[serde(default)]
    name: String,
}

/// A block of torch's snapshot (`address` is absent in older releases:
/// it is then the segment's address plus the sizes before it).
#[derive(Debug, Clone, Deserialize)]
struct TorchBlock {
    #[serde(default)]
    address: Option<u64>,
    size: u64,
    #[serde(default)]
    requested_size: u64,
    #[serde(default)]
    state: String,
    #[serde(default)]
    frames: Vec<TorchFrame>,
}

#[derive(Debug, Clone, Deserialize)]
struct TorchSegment {
    address: u64,
    #[serde(default)]
    blocks: Vec<TorchBlock>,
}

#[derive(Debug, Clone, Deserialize)]
struct TorchSnapshot {
    #[serde(default)]
    segments: Vec<TorchSegment>,
}

/// An allocator block, as the page shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Block {
    /// Its address.
    pub address: u64,
    /// Its size.
    pub size: u64,
    /// The bytes the tensor asked for.
    pub requested_size: u64,
    /// `active_allocated`, `active_pending_free` or `inactive`.
    pub state: String,
    /// Where the tensor was made (`function (file:line)`: the program's
    /// innermost Python line torch recorded, else torch's, else any frame
    /// with a file), when torch recorded its history.
    pub made_at: Option<String>,
    /// Whether this mapping held it when the snapshot was taken.
    pub held_at_snapshot: bool,
}

/// A mapping of a physical handle, or an `aclrtMalloc` block, over its
/// life in the trace.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Mapping {
    /// `aclrtMapMem` or `aclrtMalloc`.
    pub kind: &'static str,
    /// Its first address.
    pub va: u64,
    /// Its size.
    pub size: u64,
    /// The physical handle mapped (`aclrtMapMem`).
    pub handle: Option<u64>,
    /// The call site that made it (frames).
    pub made_at: Vec<String>,
    /// The phase it was made in (`sleep 1`, `after wake 1`; none before
    /// the first sleep).
    pub made_in: Option<String>,
    /// Whether the trace saw it unmapped or freed.
    pub released: bool,
    /// The sleep that unmapped or freed it (`sleep 2`), if a sleep did.
    pub released_by: Option<String>,
    /// The snapshot's blocks that overlap it, in address order.
    pub blocks: Vec<Block>,
}

/// The join of one snapshot and one trace.
#[derive(Debug, Clone, Serialize)]
pub struct Joined {
    /// The process of the trace whose memory the snapshot describes.
    pub pid: u64,
    /// The trace time (µs) the snapshot is placed at, if one was found.
    pub snapshot_at: Option<u64>,
    /// Every mapping of that process that holds a block, in time order.
    pub mappings: Vec<Mapping>,
    /// The snapshot's blocks no mapping of the trace covers.
    pub unplaced: Vec<Block>,
    /// Mappings of the process that hold no block of the snapshot.
    pub empty_mappings: usize,
}

/// A mapping's life in the trace.
struct Span {
    mapping: Mapping,
    from: u64,
    until: u64,
}

impl Span {
    fn contains(&self, addr: u64) -> bool {
        self.mapping.va <= addr && addr < self.mapping.va.saturating_add(self.mapping.size)
    }

    fn overlaps(&self, addr: u64, len: u64) -> bool {
        self.mapping.va < addr.saturating_add(len.max(1))
            && addr < self.mapping.va.saturating_add(self.mapping.size)
    }

    fn live_at(&self, t: u64) -> bool {
        self.from <= t && t < self.until
    }
}

#[derive(Default)]
struct Process {
    spans: Vec<Span>,
    /// Open spans: address -> index in `spans`.
    open: BTreeMap<u64, usize>,
    sites: BTreeMap<u32, Vec<String>>,
    site_of: Vec<u32>,
    sleeps: u32,
    phase: Option<String>,
}

impl Process {
    fn record(&mut self, r: &Record) {
        match (r.call(), r.va) {
            ("phase", _) => {
                let name = r.name.as_deref().unwrap_or("").to_ascii_lowercase();
                let wake =
                    name.contains("wake") || (name.starts_with("end of") && name.contains("sleep"));
                if wake {
                    if self.sleeps > 0 {
                        self.phase = Some(format!("after wake {}", self.sleeps));
                    }
                } else if name.contains("sleep") {
                    self.sleeps += 1;
                    self.phase = Some(format!("sleep {}", self.sleeps));
                }
            }
            ("sites", _) => {
                for (k, frames) in r.sites.iter().flatten() {
                    if let Ok(n) = k.parse() {
                        self.sites.insert(n, frames.clone());
                    }
                }
            }
            (kind @ ("aclrtMapMem" | "aclrtMalloc" | "aclrtMallocAlign32"), Some(va))
                if r.ret == 0 =>
            {
                self.open.insert(va, self.spans.len());
                self.site_of.push(r.site.unwrap_or(0));
                self.spans.push(Span {
                    mapping: Mapping {
                        kind: if kind == "aclrtMapMem" {
                            "aclrtMapMem"
                        } else {
                            "aclrtMalloc"
                        },
                        va,
                        size: r.size,
                        handle: r.h.filter(|_| kind == "aclrtMapMem"),
                        made_at: Vec::new(),
                        made_in: self.phase.clone(),
                        released: false,
                        released_by: None,
                        blocks: Vec::new(),
                    },
                    from: r.t,
                    until: u64::MAX,
                });
            }
            ("aclrtUnmapMem" | "aclrtFree", Some(va)) if r.ret == 0 => {
                if let Some(i) = self.open.remove(&va) {
                    let s = &mut self.spans[i];
                    s.until = r.t;
                    s.mapping.released = true;
                    s.mapping.released_by = self.phase.clone().filter(|p| p.starts_with("sleep"));
                }
            }
            _ => {}
        }
    }
}

/// Reads torch's snapshot pickle: its blocks, with their addresses.
fn read_snapshot(path: &Path) -> Result<Vec<Block>, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let snap: TorchSnapshot = pickle::read(&data)
        .and_then(|v| serde_json::from_value(v).map_err(|e| e.to_string()))
        .map_err(|e| {
            format!(
                "{}: not a memory snapshot of torch (torch.npu.memory._dump_snapshot): {e}",
                path.display()
            )
        })?;
    let mut blocks = Vec::new();
    for seg in snap.segments {
        let mut next = seg.address;
        for b in seg.blocks {
            let address = b.address.unwrap_or(next);
            next = address.saturating_add(b.size);
            // The program's own Python line first (not torch's), then any
            // Python line, then any frame with a file.
            let python = |f: &&TorchFrame| f.filename.ends_with(".py");
            let made_at = b
                .frames
                .iter()
                .filter(python)
                .find(|f| !f.filename.contains("/site-packages/"))
                .or_else(|| b.frames.iter().find(python))
                .or_else(|| {
                    b.frames
                        .iter()
                        .find(|f| !f.filename.is_empty() && f.filename != "??")
                })
                .map(|f| format!("{} ({}:{})", f.name, f.filename, f.line));
            blocks.push(Block {
                address,
                size: b.size,
                requested_size: b.requested_size,
                state: b.state,
                made_at,
                held_at_snapshot: false,
            });
        }
    }
    blocks.sort_by_key(|b| b.address);
    Ok(blocks)
}

/// Reads the trace: each process's mappings over time.
fn read_trace(path: &Path) -> Result<BTreeMap<u64, Process>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut processes: BTreeMap<u64, Process> = BTreeMap::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let r: Record = serde_json::from_str(&line)
            .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        processes.entry(r.pid.unwrap_or(1)).or_default().record(&r);
    }
    Ok(processes)
}

/// The earliest time at which every active block that some span covers
/// lies in a live span (blocks no span covers are the page's "unplaced").
fn snapshot_time(spans: &[Span], blocks: &[Block]) -> Option<u64> {
    let active: Vec<u64> = blocks
        .iter()
        .filter(|b| b.state.starts_with("active"))
        .map(|b| b.address)
        .filter(|a| spans.iter().any(|s| s.contains(*a)))
        .collect();
    let mut candidates: Vec<u64> = spans
        .iter()
        .filter(|s| active.iter().any(|a| s.contains(*a)))
        .map(|s| s.from)
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    candidates.into_iter().find(|&t| {
        active
            .iter()
            .all(|a| spans.iter().any(|s| s.contains(*a) && s.live_at(t)))
    })
}

/// Joins the snapshot with the trace.
pub fn join(trace: &Path, snapshot: &Path) -> Result<Joined, String> {
    let blocks = read_snapshot(snapshot)?;
    let processes = read_trace(trace)?;
    let covered = |p: &Process| {
        blocks
            .iter()
            .filter(|b| p.spans.iter().any(|s| s.contains(b.address)))
            .count()
    };
    let (pid, process) = processes
        .into_iter()
        .max_by_key(|(pid, p)| (covered(p), std::cmp::Reverse(*pid)))
        .ok_or_else(|| format!("{}: the trace has no records", trace.display()))?;
    let Process {
        mut spans,
        sites,
        site_of,
        ..
    } = process;
    let at = snapshot_time(&spans, &blocks);
    let mut unplaced = Vec::new();
    for b in &blocks {
        let mut placed = false;
        // A block is in every mapping it overlaps: with expandable
        // segments a tensor often spans the handles of several.
        for s in spans.iter_mut().filter(|s| s.overlaps(b.address, b.size)) {
            placed = true;
            s.mapping.blocks.push(Block {
                held_at_snapshot: at.is_some_and(|t| s.live_at(t)),
                ..b.clone()
            });
        }
        if !placed {
            unplaced.push(b.clone());
        }
    }
    let empty_mappings = spans.iter().filter(|s| s.mapping.blocks.is_empty()).count();
    // The frames of the mappings the page shows (only those: a long trace
    // has millions of mappings).
    for (s, site) in spans.iter_mut().zip(&site_of) {
        if !s.mapping.blocks.is_empty() {
            s.mapping.made_at = sites.get(site).cloned().unwrap_or_default();
        }
    }
    Ok(Joined {
        pid,
        snapshot_at: at,
        mappings: spans
            .into_iter()
            .map(|s| s.mapping)
            .filter(|m| !m.blocks.is_empty())
            .collect(),
        unplaced,
        empty_mappings,
    })
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A block's offset in a mapping it overlaps (negative when it starts
/// before it).
fn offset(address: u64, va: u64) -> String {
    if address < va {
        format!("-{:#x}", va - address)
    } else {
        format!("{:#x}", address - va)
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / f64::from(1 << 20))
}

/// The page: one table per mapping, its blocks in rows.
pub fn page(j: &Joined, trace: &Path, snapshot: &Path) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html><meta charset=utf-8><title>aclmem: allocator blocks in device memory</title>\
         <style>body{{font:14px system-ui,sans-serif;margin:1.5em}}table{{border-collapse:collapse;margin:.3em 0 1.2em}}\
         td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}th{{background:#f3f3f3}}\
         .released{{color:#a00}}.held{{font-weight:bold}}code{{font-size:13px}}</style>\
         <h1>Allocator blocks in device memory</h1>\
         <p>torch's snapshot <code>{}</code> joined with the sanitizer's trace <code>{}</code>, process {}: \
         {} mappings hold the snapshot's blocks ({} hold none); {} blocks lie in no mapping of the trace. \
         Bold rows are the mapping that held the block when the snapshot was taken.</p>",
        escape(&snapshot.display().to_string()),
        escape(&trace.display().to_string()),
        j.pid,
        j.mappings.len(),
        j.empty_mappings,
        j.unplaced.len()
    );
    for m in &j.mappings {
        let what = match m.handle {
            Some(handle) => format!("physical handle {handle:#x} mapped"),
            None => "aclrtMalloc memory".to_owned(),
        };
        let life = match (&m.released, &m.released_by) {
            (true, Some(sleep)) => format!("<span class=released>released by {sleep}</span>"),
            (true, None) => "released".to_owned(),
            (false, _) => "held to the end".to_owned(),
        };
        let _ = write!(
            h,
            "<h2>{what} at {:#x}, {}</h2><p>made{} at <code>{}</code>; {life}</p>\
             <table><tr><th>block</th><th>offset</th><th>size</th><th>requested</th><th>state</th><th>tensor made at</th></tr>",
            m.va,
            mib(m.size),
            m.made_in
                .as_deref()
                .map(|p| format!(" in {p}"))
                .unwrap_or_default(),
            escape(
                m.made_at
                    .first()
                    .map_or("unknown call site", String::as_str)
            ),
        );
        for b in &m.blocks {
            let _ = write!(
                h,
                "<tr{}><td>{:#x}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                if b.held_at_snapshot {
                    " class=held"
                } else {
                    ""
                },
                b.address,
                offset(b.address, m.va),
                b.size,
                b.requested_size,
                escape(&b.state),
                escape(b.made_at.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</table>");
    }
    if !j.unplaced.is_empty() {
        h.push_str("<h2>Blocks in no mapping of the trace</h2><table><tr><th>block</th><th>size</th><th>state</th><th>tensor made at</th></tr>");
        for b in &j.unplaced {
            let _ = write!(
                h,
                "<tr><td>{:#x}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                b.address,
                b.size,
                escape(&b.state),
                escape(b.made_at.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</table>");
    }
    h
}

/// Writes `OUT.blocks.html` and `OUT.blocks.json`; the files written.
pub fn write(trace: &Path, snapshot: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let joined = join(trace, snapshot)?;
    let base = out.as_os_str().to_owned();
    let path = |ext: &str| {
        let mut p = base.clone();
        p.push(ext);
        PathBuf::from(p)
    };
    let (html, json) = (path(".blocks.html"), path(".blocks.json"));
    std::fs::write(&html, page(&joined, trace, snapshot))
        .map_err(|e| format!("{}: {e}", html.display()))?;
    let text = serde_json::to_string_pretty(&joined).map_err(|e| e.to_string())?;
    std::fs::write(&json, text).map_err(|e| format!("{}: {e}", json.display()))?;
    Ok(vec![html, json])
}

mod pickle;

#[cfg(test)]
mod tests;
