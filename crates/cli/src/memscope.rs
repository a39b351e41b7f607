//! `aclmem timeline TRACE --format msmemscope -o OUT`: the sanitizer's
//! trace as msMemScope's event file (`memscope_dump_{timestamp}.csv`), with
//! the columns its output file specification documents, so the scripts
//! and spreadsheets written for msMemScope's dumps read aclmem's.
//!
//! What each event is, in msMemScope's terms (docs/formats.md has the
//! sources and what is not done):
//!
//! * `aclInit`, `aclFinalize`: `SYSTEM` `ACL_INIT`, `ACL_FINI`;
//! * `aclrtMallocPhysical`, `aclrtFreePhysical`: `MALLOC`/`FREE` `HAL`
//!   with `alloc_type:create` and the handle as `Ptr` (a physical
//!   allocation is the driver's "create"), `page_type` from the memory
//!   attribute;
//! * `aclrtMalloc`, `aclrtMallocAlign32`, `aclrtFree`: `MALLOC`/`FREE`
//!   `HAL` with `alloc_type:alloc` and the address as `Ptr`;
//! * phases (`aclmem_sanitizer_phase`, mstx markers and ranges): `MSTX`
//!   `Mark`, named by their label.
//!
//! Mappings, reservations and copies have no msMemScope event and are left
//! out. `Attr` is written as msMemScope writes it
//! (`{allocation_id:1,addr:0x...,size:10}`), a `MALLOC` and its `FREE`
//! sharing an `allocation_id`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufWriter, Write as _};
use std::path::{Path, PathBuf};

use aclmem_formats::trace::Record;

/// The columns of `memscope_dump_{timestamp}.csv`, in order.
pub const COLUMNS: [&str; 12] = [
    "ID",
    "Event",
    "Event Type",
    "Name",
    "Timestamp(ns)",
    "Process Id",
    "Thread Id",
    "Device Id",
    "Ptr",
    "Attr",
    "Call Stack(Python)",
    "Call Stack(C)",
];

/// A field quoted as CSV needs it (RFC 4180).
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// msMemScope's page type of a memory attribute (`normal`, `huge`,
/// `giant` for 1 GiB pages).
fn page_type(attr: Option<u32>) -> &'static str {
    use aclmem_core::{MemAttr, PageClass};
    match attr.and_then(MemAttr::from_raw).map(MemAttr::page_class) {
        Some(PageClass::Huge1G) => "giant",
        Some(PageClass::Huge) => "huge",
        _ => "normal",
    }
}

/// A live allocation: its id, size and device.
struct Live {
    id: u64,
    size: u64,
    device: String,
}

#[derive(Default)]
struct Writer {
    rows: u64,
    next_id: u64,
    /// (pid, handle or address) -> the allocation.
    live: HashMap<(u64, u64), Live>,
    /// (pid, site) -> frames.
    sites: HashMap<(u64, u32), Vec<String>>,
}

impl Writer {
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        out: &mut String,
        r: &Record,
        pid: u64,
        event: &str,
        kind: &str,
        name: &str,
        device: &str,
        ptr: Option<u64>,
        attr: &str,
    ) {
        self.rows += 1;
        let frames = r
            .site
            .and_then(|s| self.sites.get(&(pid, s)))
            .cloned()
            .unwrap_or_default();
        let (python, native): (Vec<&String>, Vec<&String>) =
            frames.iter().partition(|f| f.contains(".py:"));
        let join = |v: Vec<&String>| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(";");
        let _ = writeln!(
            out,
            "{},{event},{kind},{},{},{pid},{},{},{},{},{},{}",
            self.rows,
            field(name),
            r.t.saturating_mul(1000),
            r.tid,
            field(device),
            ptr.map_or_else(|| "N/A".to_owned(), |p| format!("{p:#018x}")),
            field(attr),
            field(&join(python)),
            field(&join(native)),
        );
    }

    fn record(&mut self, r: &Record, out: &mut String) {
        let pid = r.pid.unwrap_or(1);
        let device = || {
            r.device_id()
                .map_or_else(|| "cpu".to_owned(), |d| d.to_string())
        };
        match r.call() {
            "phase" => {
                let name = r.name.as_deref().unwrap_or("");
                self.row(out, r, pid, "MSTX", "Mark", name, &device(), None, "");
            }
            call @ ("aclInit" | "aclFinalize") if r.ret == 0 => {
                let kind = if call == "aclInit" {
                    "ACL_INIT"
                } else {
                    "ACL_FINI"
                };
                self.row(out, r, pid, "SYSTEM", kind, "N/A", &device(), None, "");
            }
            call @ ("aclrtMallocPhysical" | "aclrtMalloc" | "aclrtMallocAlign32") if r.ret == 0 => {
                let physical = call == "aclrtMallocPhysical";
                let Some(key) = (if physical { r.h } else { r.va }) else {
                    return;
                };
                self.next_id += 1;
                let live = Live {
                    id: self.next_id,
                    size: r.size,
                    device: device(),
                };
                let attr = format!(
                    "{{allocation_id:{},addr:{key:#018x},size:{},page_type:{},alloc_type:{}}}",
                    live.id,
                    live.size,
                    page_type(r.attr),
                    if physical { "create" } else { "alloc" }
                );
                let d = live.device.clone();
                self.live.insert((pid, key), live);
                self.row(out, r, pid, "MALLOC", "HAL", "N/A", &d, Some(key), &attr);
            }
            call @ ("aclrtFreePhysical" | "aclrtFree") if r.ret == 0 => {
                let key = if call == "aclrtFreePhysical" {
                    r.h
                } else {
                    r.va
                };
                let Some(key) = key else { return };
                let Some(live) = self.live.remove(&(pid, key)) else {
                    return;
                };
                let attr = format!(
                    "{{allocation_id:{},addr:{key:#018x},size:{}}}",
                    live.id, live.size
                );
                self.row(
                    out,
                    r,
                    pid,
                    "FREE",
                    "HAL",
                    "N/A",
                    &live.device,
                    Some(key),
                    &attr,
                );
            }
            _ => {}
        }
    }
}

/// Every record of the trace, in order, to `each`.
fn each_record(trace: &Path, mut each: impl FnMut(&Record)) -> Result<(), String> {
    let input = std::fs::File::open(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    for (n, line) in std::io::BufReader::new(input).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", trace.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let r: Record = serde_json::from_str(&line)
            .map_err(|e| format!("{}:{}: {e}", trace.display(), n + 1))?;
        each(&r);
    }
    Ok(())
}

/// Writes `OUT.csv`; the file written and its number of events. Two passes
/// over the trace: its call sites are described at its end, the rows are
/// written as they are read.
pub fn write(trace: &Path, out: &Path) -> Result<(PathBuf, u64), String> {
    let mut w = Writer::default();
    each_record(trace, |r| {
        if r.call() == "sites" {
            let pid = r.pid.unwrap_or(1);
            for (k, frames) in r.sites.iter().flatten() {
                if let Ok(n) = k.parse() {
                    w.sites.insert((pid, n), frames.clone());
                }
            }
        }
    })?;
    let path = out.with_extension("csv");
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut csv = BufWriter::new(file);
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    writeln!(csv, "{}", COLUMNS.join(",")).map_err(io)?;
    let mut rows = String::new();
    let mut failed = None;
    each_record(trace, |r| {
        w.record(r, &mut rows);
        if rows.len() > 1 << 16 && failed.is_none() {
            failed = csv.write_all(rows.as_bytes()).err();
            rows.clear();
        }
    })?;
    if let Some(e) = failed {
        return Err(io(e));
    }
    csv.write_all(rows.as_bytes()).map_err(io)?;
    csv.flush().map_err(io)?;
    Ok((path, w.rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The columns are the ones msMemScope's output file specification
    /// lists for `memscope_dump_{timestamp}.csv` (docs/formats.md).
    #[test]
    fn the_columns_are_the_documented_ones() {
        assert_eq!(
            COLUMNS.join(","),
            "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
        );
    }

    /// A physical allocation and its free share an allocation id; an
    /// aclrtMalloc block is an `alloc`; phases are marks; failed calls and
    /// mappings are not events; fields with commas are quoted.
    #[test]
    fn allocations_frees_and_marks_are_msmemscope_events() {
        let records = [
            json!({"t": 1, "pid": 7, "tid": 3, "call": "sites", "size": 0, "ret": 0,
                   "sites": {"2": ["load (train.py:9)", "main (loader.c:4)"]}}),
            json!({"t": 2, "pid": 7, "tid": 3, "call": "aclInit", "size": 0, "ret": 0}),
            json!({"t": 5, "pid": 7, "tid": 3, "call": "aclrtMallocPhysical", "size": 2097152,
                   "ret": 0, "h": 0x51, "attr": 4, "device": 0, "site": 2}),
            json!({"t": 6, "pid": 7, "tid": 3, "call": "aclrtMallocPhysical", "size": 2097152,
                   "ret": 207001, "device": 0}),
            json!({"t": 7, "pid": 7, "tid": 3, "call": "aclrtMapMem", "size": 2097152, "ret": 0,
                   "va": 0x1000, "h": 0x51}),
            json!({"t": 8, "pid": 7, "tid": 3, "call": "aclrtMalloc", "size": 512, "ret": 0,
                   "va": 0x2000, "device": 1}),
            json!({"t": 9, "pid": 7, "tid": 3, "call": "phase", "size": 0, "ret": 0,
                   "name": "sleep, then wake"}),
            json!({"t": 10, "pid": 7, "tid": 3, "call": "aclrtFreePhysical", "size": 0, "ret": 0,
                   "h": 0x51}),
            json!({"t": 11, "pid": 7, "tid": 3, "call": "aclrtFree", "size": 0, "ret": 0,
                   "va": 0x2000}),
        ];
        let dir = std::env::temp_dir().join(format!("aclmem-memscope-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("t.jsonl");
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&trace, text).unwrap();
        let (path, rows) = write(&trace, &dir.join("t")).unwrap();
        let csv = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(rows, 6, "{csv}");
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], COLUMNS.join(","));
        assert_eq!(lines[1], "1,SYSTEM,ACL_INIT,N/A,2000,7,3,cpu,N/A,,,");
        assert_eq!(
            lines[2],
            "2,MALLOC,HAL,N/A,5000,7,3,0,0x0000000000000051,\"{allocation_id:1,addr:0x0000000000000051,size:2097152,page_type:huge,alloc_type:create}\",load (train.py:9),main (loader.c:4)"
        );
        assert_eq!(
            lines[3],
            "3,MALLOC,HAL,N/A,8000,7,3,1,0x0000000000002000,\"{allocation_id:2,addr:0x0000000000002000,size:512,page_type:normal,alloc_type:alloc}\",,"
        );
        assert_eq!(
            lines[4],
            "4,MSTX,Mark,\"sleep, then wake\",9000,7,3,cpu,N/A,,,"
        );
        assert_eq!(
            lines[5],
            "5,FREE,HAL,N/A,10000,7,3,0,0x0000000000000051,\"{allocation_id:1,addr:0x0000000000000051,size:2097152}\",,"
        );
        assert!(
            lines[6]
                .starts_with("6,FREE,HAL,N/A,11000,7,3,1,0x0000000000002000,\"{allocation_id:2,")
        );
    }
}
