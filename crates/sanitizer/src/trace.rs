//! The memory timeline: with `ACLMEM_SANITIZER_TRACE=file`, every
//! interposed call is one JSON line: time (µs since the first call),
//! thread, call, device, size, result, and the device's physical and
//! mapped bytes after it. `aclmem timeline` turns the file into a Perfetto
//! trace and an HTML page.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::OnceLock;

use parking_lot::Mutex;
use std::time::Instant;

struct Trace {
    out: BufWriter<File>,
}

static TRACE: Mutex<Option<Trace>> = Mutex::new(None);
static START: OnceLock<Instant> = OnceLock::new();
static ENABLED: OnceLock<bool> = OnceLock::new();

fn enabled() -> bool {
    *ENABLED.get_or_init(|| {
        let Some(path) = std::env::var_os("ACLMEM_SANITIZER_TRACE").filter(|p| !p.is_empty())
        else {
            return false;
        };
        match File::create(&path) {
            Ok(f) => {
                *TRACE.lock() = Some(Trace {
                    out: BufWriter::new(f),
                });
                START.get_or_init(Instant::now);
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

fn tid() -> i64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// One call. `device` is `u32::MAX` for host memory.
pub fn call(call: &str, totals: Option<(u32, usize, usize)>, size: usize, ret: i32) {
    call_with(call, totals, size, ret, || serde_json::Value::Null);
}

/// One call, with the details `aclmem replay` needs to make it again
/// (`extra`, an object whose fields join the record: the handle, the
/// address, the attribute and location).
pub fn call_with(
    call: &str,
    totals: Option<(u32, usize, usize)>,
    size: usize,
    ret: i32,
    extra: impl FnOnce() -> serde_json::Value,
) {
    if !enabled() {
        return;
    }
    let t = START.get().map_or(0, |s| s.elapsed().as_micros());
    let line = match totals {
        Some((d, phys, mapped)) => serde_json::json!({
            "t": t, "tid": tid(), "call": call, "size": size, "ret": ret,
            "device": if d == u32::MAX { serde_json::Value::from("host") } else { d.into() },
            "phys": phys, "mapped": mapped,
        }),
        None => serde_json::json!({
            "t": t, "tid": tid(), "call": call, "size": size, "ret": ret,
        }),
    };
    let mut line = line;
    if let (serde_json::Value::Object(fields), serde_json::Value::Object(more)) =
        (&mut line, extra())
    {
        fields.extend(more);
    }
    if let Some(tr) = TRACE.lock().as_mut() {
        let _ = writeln!(tr.out, "{line}");
    }
}

/// A non-call event (everything released at finalize or exit).
pub fn event(what: &str, device: u32, size: usize, phys: usize, mapped: usize) {
    call(what, Some((device, phys, mapped)), size, 0);
}

/// Flushes the file (at finalize and exit).
pub fn flush() {
    if let Some(tr) = TRACE.lock().as_mut() {
        let _ = tr.out.flush();
    }
}
