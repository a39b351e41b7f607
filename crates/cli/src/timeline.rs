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

mod lifetimes;
mod page;
mod perfetto;
mod tracks;

use lifetimes::Lifetimes;
use perfetto::{CHUNK, Calls, Chunks};
use tracks::{DeviceExt, DeviceKey, Point, SPACE, Tracks};

/// `ACL_ERROR_RT_MEMORY_ALLOCATION`: an allocation refused for lack of
/// memory.
const OUT_OF_MEMORY: i64 = 207_001;

/// Phase markers kept per process (the first ones).
const MARKERS: usize = 1000;

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

    let (html, names) = page::page(trace, tracks, &calls, &sites, &markers, &flows, t0);
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

#[cfg(test)]
mod tests;
