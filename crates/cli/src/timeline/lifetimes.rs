//! What lives between two records (reservations, physical handles and
//! mappings) as Perfetto slices, each process's reserved and mapped
//! address space, and the arrows from exports to imports.

use aclmem_formats::trace::Record;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::io::Write;

/// Exports and imports drawn as arrows on the page (the first ones).
const FLOWS: usize = 2000;

/// An arrow of the page ([`Lifetimes::flows`]): shareable handle, exporter
/// pid and time (when the export is in the trace), importer pid and time,
/// the import's answer.
pub(super) type Flow = (String, Option<(u64, u64)>, u64, u64, i64);

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
pub(super) struct Lifetimes {
    /// Live objects and their slices' names (JSON strings).
    live: FxHashMap<(u64, Kind, u64), String>,
    /// The processes' slice tracks named so far.
    named: rustc_hash::FxHashSet<(u64, Kind)>,
    /// (pid, address) -> reserved bytes.
    resv: FxHashMap<(u64, u64), u64>,
    reserved: BTreeMap<u64, u64>,
    /// (pid, device track) -> mapped bytes, summed per process.
    pub(super) mapped: FxHashMap<(u64, usize), u64>,
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
    pub(super) fn events(&mut self, r: &Record, pid: u64, call: &str, out: &mut String) -> bool {
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
    pub(super) fn flows(&self, json: &mut impl Write) -> std::io::Result<Vec<Flow>> {
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
    pub(super) fn space(&self, pid: u64) -> (u64, u64) {
        let mapped = self
            .mapped
            .iter()
            .filter(|((p, _), _)| *p == pid)
            .map(|(_, v)| *v)
            .sum();
        (self.reserved.get(&pid).copied().unwrap_or(0), mapped)
    }
}
