//! The memory timeline: with `ACLMEM_SANITIZER_TRACE=file`, every
//! interposed call is one JSON line: time (µs of the monotonic clock),
//! process, thread, call, device, size, result, and the device's physical
//! and mapped bytes after it. `aclmem timeline` turns the file into a
//! Perfetto trace and an HTML page.
//!
//! Several processes may trace into one file (a program and the children
//! it forks or runs): the file is opened to append, and lines are written
//! in whole-line blocks, so one process's lines never split another's.

use std::fs::File;
use std::io::Write;
use std::sync::OnceLock;

use aclmem_fork::KeptMutex;

use aclmem_formats::trace::{Device, Record};

use crate::report::Site;

struct Trace {
    out: File,
    /// Complete lines not yet written (written in one `write` when large,
    /// and at flush).
    pending: Vec<u8>,
}

/// Lines are written once this much is pending.
const BLOCK: usize = 64 << 10;

static TRACE: KeptMutex<Option<Trace>> = KeptMutex::new(None);

/// The call sites the trace's records name (`"site"`: a number), described
/// once, at exit, in one `sites` record: the hot path writes a number.
struct Sites {
    ids: rustc_hash::FxHashMap<Site, u32>,
    all: Vec<Site>,
}

static SITES: KeptMutex<Option<Sites>> = KeptMutex::new(None);
static ENABLED: OnceLock<bool> = OnceLock::new();

/// Whether the process is traced (`ACLMEM_SANITIZER_TRACE`).
#[inline]
pub(crate) fn enabled() -> bool {
    *ENABLED.get_or_init(|| {
        let Some(path) = std::env::var_os("ACLMEM_SANITIZER_TRACE").filter(|p| !p.is_empty())
        else {
            return false;
        };
        match File::options().create(true).append(true).open(&path) {
            Ok(f) => {
                *TRACE.lock() = Some(Trace {
                    out: f,
                    pending: Vec::with_capacity(BLOCK),
                });
                true
            }
            Err(e) => {
                eprintln!(
                    "aclmem-sanitizer: cannot write the trace to {}: {e}",
                    std::path::Path::new(&path).display()
                );
                false
            }
        }
    })
}

/// The time in µs of the system's monotonic clock: one time base for
/// every process of a run (the timeline starts at the first record).
pub(crate) fn now_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the live `timespec` above.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000) + (ts.tv_nsec as u64) / 1_000
}

fn tid() -> i64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// One call. `device` is `u32::MAX` for host memory.
pub fn call(call: &str, totals: Option<(u32, usize, usize)>, size: usize, ret: i32) {
    call_with(call, totals, size, ret, |_| {});
}

/// One call, with the details `aclmem replay` needs to make it again
/// (`extra` fills them in: the handle, the address, the attribute and
/// location). Asked after every call: whether to trace is decided inline.
#[inline]
pub fn call_with<'a>(
    call: &'a str,
    totals: Option<(u32, usize, usize)>,
    size: usize,
    ret: i32,
    extra: impl FnOnce(&mut Record<'a>),
) {
    if enabled() {
        record_call(call, totals, size, ret, extra);
    }
}

#[inline(never)]
fn record_call<'a>(
    call: &'a str,
    totals: Option<(u32, usize, usize)>,
    size: usize,
    ret: i32,
    extra: impl FnOnce(&mut Record<'a>),
) {
    let mut record = Record {
        t: now_us(),
        pid: Some(u64::from(std::process::id())),
        tid: tid(),
        size: size as u64,
        ret: i64::from(ret),
        ..Record::of(call)
    };
    if let Some((d, phys, mapped)) = totals {
        record.device = Some(if d == u32::MAX {
            Device::HOST
        } else {
            Device::Id(d)
        });
        record.phys = Some(phys as u64);
        record.mapped = Some(mapped as u64);
    }
    extra(&mut record);
    if let Some(tr) = TRACE.lock().as_mut() {
        if serde_json::to_writer(&mut tr.pending, &record).is_ok() {
            tr.pending.push(b'\n');
        }
        if tr.pending.len() >= BLOCK {
            tr.write_pending();
        }
    }
}

impl Trace {
    /// Writes the pending lines in one `write` (appending: atomic against
    /// the other processes' writes to the file).
    fn write_pending(&mut self) {
        if !self.pending.is_empty() {
            let _ = self.out.write_all(&self.pending);
            self.pending.clear();
        }
    }
}

/// Before `fork`: pending lines go out, so that the child does not write
/// its parent's lines again; the trace stays locked across the fork
/// (`aclmem_fork::release_held` lets both go after it).
pub fn hold_for_fork() {
    aclmem_fork::hold(SITES.lock());
    let mut guard = TRACE.lock();
    if let Some(tr) = guard.as_mut() {
        tr.write_pending();
    }
    aclmem_fork::hold(guard);
}

/// The number of a call site in this process's trace (described at exit
/// by [`write_sites`]).
pub fn site_id(site: Site) -> u32 {
    let mut sites = SITES.lock();
    let s = sites.get_or_insert_with(|| Sites {
        ids: rustc_hash::FxHashMap::default(),
        all: Vec::new(),
    });
    if let Some(&id) = s.ids.get(&site) {
        return id;
    }
    s.all.push(site);
    let id = u32::try_from(s.all.len()).unwrap_or(u32::MAX);
    s.ids.insert(site, id);
    id
}

/// At exit: one `sites` record describing every call site the records
/// named (its frames, the call site first), for the timeline's tooltips.
pub fn write_sites() {
    if !enabled() {
        return;
    }
    let all: Vec<Site> = SITES
        .lock()
        .as_ref()
        .map(|s| s.all.clone())
        .unwrap_or_default();
    if all.is_empty() {
        return;
    }
    // In records of at most SITES_PER_RECORD sites, so that a line stays
    // far below what a reader takes (`aclmem_formats::jsonl::MAX_LINE`);
    // the readers merge the records.
    const SITES_PER_RECORD: usize = 256;
    for (c, chunk) in all.chunks(SITES_PER_RECORD).enumerate() {
        let described: std::collections::BTreeMap<String, Vec<String>> = chunk
            .iter()
            .enumerate()
            .map(|(i, site)| {
                let mut frames = site.frames();
                if frames.is_empty() {
                    frames.push(site.describe());
                }
                ((c * SITES_PER_RECORD + i + 1).to_string(), frames)
            })
            .collect();
        call_with("sites", None, 0, 0, |t| t.sites = Some(described));
    }
}

/// A non-call event (everything released at finalize or exit).
pub fn event(what: &str, device: u32, size: usize, phys: usize, mapped: usize) {
    call(what, Some((device, phys, mapped)), size, 0);
}

/// Flushes the file (at finalize and exit).
pub fn flush() {
    if let Some(tr) = TRACE.lock().as_mut() {
        tr.write_pending();
    }
}
