//! The sharing events of every process of a run, for the checks no single
//! process can make: an import after the exporter freed, a whitelisted pid
//! that never imports, an import still held when its process ends, an
//! exporter that exits while another process maps its memory.
//!
//! With `ACLMEM_SANITIZER_SHARING=file` (`aclmem sanitize` sets it), each
//! process appends one JSON line per event to the file: its start and
//! exit, each export (shareable handle or legacy IPC key), pid whitelist,
//! import (whatever it answered), and the maps, unmaps and frees of the
//! handles it exported or imported. Each line is one `write` to a file
//! opened to append, so the lines of several processes never interleave.
//! Events name their call site and stack, described at once: they are rare
//! (one per export or import, never one per copy), and the process that
//! could describe them may be gone when the run ends. After the run,
//! `aclmem sanitize` joins the processes' events by shareable handle and
//! reports what it finds with both sides named.

use std::fs::File;
use std::io::Write;
use std::sync::OnceLock;

use aclmem_formats::sharing::{Event, Kind};

use crate::report::Site;

fn file() -> Option<&'static File> {
    static FILE: OnceLock<Option<File>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::var_os("ACLMEM_SANITIZER_SHARING").filter(|p| !p.is_empty())?;
        File::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| {
                eprintln!(
                    "aclmem-sanitizer: cannot write sharing events to {}: {e}",
                    std::path::Path::new(&path).display()
                )
            })
            .ok()
    })
    .as_ref()
}

/// Whether the run collects sharing events (then imports held at exit are
/// reported from them, with the exporter named, instead of as leaks).
pub fn enabled() -> bool {
    file().is_some()
}

pub use aclmem_formats::sharing::shareable;

/// One event: `what` of `call`, with the process, the time and, when
/// `site` is given, the call's site and stack; `fill` adds what the event
/// carries. Only calls on shared handles (exports, imports, what maps
/// them) make events: out of line, away from the hooks' common path.
#[cold]
#[inline(never)]
pub fn event(what: Kind, call: &str, site: Option<Site>, fill: impl FnOnce(&mut Event)) {
    let Some(mut out) = file() else { return };
    if what == Kind::Export {
        EXPORTED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let mut e = Event::new(what, call, std::process::id(), crate::trace::now_us());
    if let Some(site) = site {
        let site = site.with_stack();
        e.site = Some(site.describe());
        e.stack = site.frames();
    }
    fill(&mut e);
    let Ok(mut text) = serde_json::to_string(&e) else {
        return;
    };
    text.push('\n');
    // One write per event, appended: whole against other processes'.
    let _ = out.write_all(text.as_bytes());
}

/// Whether this process exported a handle: its exit's event then names the
/// line that ended it (for `exporter-exited-while-mapped`); another's exit
/// needs no site, and finding one (an unwind and a symbol lookup) is not
/// free.
static EXPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process exported a handle (see [`EXPORTED`]).
pub fn exported() -> bool {
    EXPORTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The start of a process: at `aclInit`, and in a child forked by a
/// process that initialised (`parent` is then its pid).
pub fn started(parent: Option<u32>) {
    if parent.is_some() {
        // A forked child: its parent's exports are not its own.
        EXPORTED.store(false, std::sync::atomic::Ordering::Relaxed);
    }
    event(Kind::Start, "", None, |e| e.parent = parent);
}

/// The pids of a whitelist a program passed (`num` of them), read through
/// the kernel; at most 4096 (a longer list is cut: the runtime refuses
/// none for its length, but no machine runs that many importers). The
/// addresses are checked by the kernel: a bad one ends the list.
pub fn pids(pid: *const i32, num: usize) -> Vec<i32> {
    let mut out = Vec::new();
    if pid.is_null() {
        return out;
    }
    for i in 0..num.min(4096) {
        // SAFETY: an `i32` is valid for every bit pattern; the read goes
        // through the kernel, and an address the process may not read ends
        // the list.
        match unsafe { crate::cmem::read(pid.wrapping_add(i)) } {
            Some(p) => out.push(p),
            None => break,
        }
    }
    out
}
