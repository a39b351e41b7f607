//! ACL graphs (`aclmdlRI*`): the sanitizer forwards each call unchanged to
//! the library underneath and checks the memory a graph captured:
//!
//! * memory a live graph captured (a copy recorded between
//!   `aclmdlRICaptureBegin` and `aclmdlRICaptureEnd`, on the capturing
//!   stream or one joined to it) released before `aclmdlRIDestroy`:
//!   `graph-memory-released`, naming the graph and the capture;
//! * a replay (`aclmdlRIExecuteAsync`) of a graph whose captured memory is
//!   gone: `graph-replay-released`;
//! * a graph never destroyed: `graph-not-destroyed` at exit.
//!
//! Captures and replays are records of the trace, so the timeline shows
//! them. Whether a stream captures is asked of the library underneath
//! (`aclmdlRICaptureGetInfo`), and only while a capture is under way.

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use aclmem_fork::ForkMutex;
use aclmem_formats::finding::Class;

use crate::report::{Finding, Site, report};

/// The functions, as the audit redirects them.
pub const NAMES: [&str; 4] = [
    "aclmdlRICaptureBegin",
    "aclmdlRICaptureEnd",
    "aclmdlRIExecuteAsync",
    "aclmdlRIDestroy",
];

type Ptr = *mut c_void;
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, when nothing is underneath.
const NOT_SUPPORTED: i32 = 207_000;
/// `ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE`.
const ACTIVE: u32 = 1;

/// The definition underneath `name` (0: none).
fn next(name: &'static CStr) -> usize {
    crate::underneath::next_in(c"libascendcl.so", name)
}

/// Calls the definition underneath as `F`, or answers 207000.
macro_rules! forward_graph {
    ($name:literal: fn($($t:ty),*) ($($arg:expr),*)) => {
        $crate::underneath::forward_in!(c"libascendcl.so", $name: fn($($t),*) -> i32, NOT_SUPPORTED, ($($arg),*))
    };
}

/// One graph: where its capture began, what it captured (address, bytes,
/// where, and whether the memory was the device's), whether it ended.
struct Graph {
    begun: Site,
    captured: Vec<(usize, usize, Site, bool)>,
    ended: bool,
}

/// Graphs made and not destroyed: model handle -> graph.
fn graphs() -> &'static ForkMutex<HashMap<usize, Graph>> {
    static GRAPHS: ForkMutex<HashMap<usize, Graph>> = ForkMutex::new(HashMap::new);
    &GRAPHS
}

/// Captures under way: until one begins, a copy asks nothing.
static CAPTURING: AtomicUsize = AtomicUsize::new(0);
/// Whether a graph was ever made: until then a release is not looked at.
static EVER: AtomicBool = AtomicBool::new(false);

/// The model `stream` captures into (`None`: it does not capture).
fn capturing_model(stream: Ptr) -> Option<usize> {
    let (mut status, mut model): (u32, Ptr) = (0, std::ptr::null_mut());
    let r = forward_graph!(c"aclmdlRICaptureGetInfo": fn(Ptr, *mut u32, *mut Ptr) (stream, &mut status, &mut model));
    (r == 0 && status == ACTIVE && !model.is_null()).then_some(model as usize)
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureBegin(stream: Ptr, mode: u32) -> i32 {
    let site = Site::outside();
    let r = forward_graph!(c"aclmdlRICaptureBegin": fn(Ptr, u32) (stream, mode));
    if r == 0
        && let Some(model) = capturing_model(stream)
    {
        EVER.store(true, Ordering::Release);
        CAPTURING.fetch_add(1, Ordering::AcqRel);
        graphs().lock().insert(
            model,
            Graph {
                begun: site.with_stack(),
                captured: Vec::new(),
                ended: false,
            },
        );
    }
    crate::trace::call("aclmdlRICaptureBegin", None, 0, r);
    r
}

/// The memory the library says a model's tasks use (the emulated
/// library's `aclmem_emu_model_ranges`; none from another library).
fn library_ranges(model: usize) -> Vec<(usize, usize)> {
    let p = next(c"aclmem_emu_model_ranges");
    if p == 0 {
        return Vec::new();
    }
    type Ranges = unsafe extern "C" fn(Ptr, *mut [usize; 2], usize) -> usize;
    // SAFETY: the emulated library's export of that name has this
    // prototype (`crates/emu-capi/src/graphs.rs`).
    let f: Ranges = unsafe { std::mem::transmute(p) };
    // SAFETY: a count first (NULL array), then an array of that many.
    let n = unsafe { f(model as Ptr, std::ptr::null_mut(), 0) }.min(1 << 20);
    let mut out = vec![[0usize; 2]; n];
    // SAFETY: `out` holds `n` pairs.
    let got = unsafe { f(model as Ptr, out.as_mut_ptr(), n) };
    out.truncate(got.min(n));
    out.into_iter().map(|[a, b]| (a, b)).collect()
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureEnd(stream: Ptr, model: *mut Ptr) -> i32 {
    let before = capturing_model(stream);
    let r = forward_graph!(c"aclmdlRICaptureEnd": fn(Ptr, *mut Ptr) (stream, model));
    if let Some(m) = before {
        // The capture is over, whatever the answer.
        let _ = CAPTURING.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        let extra = if r == 0 {
            library_ranges(m)
        } else {
            Vec::new()
        };
        let site = Site::outside().with_stack();
        let marked: Vec<_> = extra
            .into_iter()
            .map(|(a, n)| (a, n, site, crate::model::device_range(a, n)))
            .collect();
        let mut g = graphs().lock();
        if r == 0 {
            if let Some(graph) = g.get_mut(&m) {
                graph.ended = true;
                // What the library recorded beyond the copies seen here
                // (operators, sets): at the capture's end.
                for range in marked {
                    if !graph
                        .captured
                        .iter()
                        .any(|c| c.0 == range.0 && c.1 == range.1)
                    {
                        graph.captured.push(range);
                    }
                }
            }
        } else {
            g.remove(&m);
        }
    }
    let bytes = before
        .and_then(|m| {
            graphs()
                .lock()
                .get(&m)
                .map(|g| g.captured.iter().map(|c| c.1).sum())
        })
        .unwrap_or(0);
    crate::trace::call("aclmdlRICaptureEnd", None, bytes, r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIExecuteAsync(model: Ptr, stream: Ptr) -> i32 {
    // The captured ranges, then the model (whose shards come before the
    // graphs' lock in the lock order: an unmap checks the graphs with its
    // shards held).
    let captured: Vec<(usize, usize, Site, bool)> = graphs()
        .lock()
        .get(&(model as usize))
        .map(|g| g.captured.clone())
        .unwrap_or_default();
    let gone: Vec<(usize, usize, Site)> = captured
        .into_iter()
        .filter(|&(a, n, _, device)| {
            if device {
                !crate::model::device_range(a, n)
            } else {
                !crate::model::host_range(a, n)
            }
        })
        .map(|(a, n, s, _)| (a, n, s))
        .collect();
    if let Some((a, n, at)) = gone.first() {
        report(Finding {
            class: Class::GraphReplayReleased,
            call: "aclmdlRIExecuteAsync",
            args: format!("{model:p}"),
            message: format!(
                "the graph captured {n} bytes at {a:#x} ({}), which the process no longer holds ({} such range(s)): the replay reads or writes released memory",
                at.describe(),
                gone.len()
            ),
            code: None,
            site: Site::outside().with_stack(),
        });
    }
    let r = forward_graph!(c"aclmdlRIExecuteAsync": fn(Ptr, Ptr) (model, stream));
    crate::trace::call("aclmdlRIExecuteAsync", None, 0, r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIDestroy(model: Ptr) -> i32 {
    let r = forward_graph!(c"aclmdlRIDestroy": fn(Ptr) (model));
    if r == 0 {
        graphs().lock().remove(&(model as usize));
    }
    crate::trace::call("aclmdlRIDestroy", None, 0, r);
    r
}

/// After a copy or set enqueued on `stream`: while a capture is under
/// way, the ranges it touched belong to the graph `stream` captures into.
pub(crate) fn captured(stream: Ptr, ranges: &[(usize, usize)]) {
    if CAPTURING.load(Ordering::Acquire) == 0 {
        return;
    }
    let Some(model) = capturing_model(stream) else {
        return;
    };
    // Only while capturing: it unwinds (a six-argument hook has no caller).
    let site = Site::outside().with_stack();
    let ranges: Vec<_> = ranges
        .iter()
        .filter(|(a, n)| *a != 0 && *n != 0)
        .map(|&(a, n)| (a, n, site, crate::model::device_range(a, n)))
        .collect();
    if let Some(g) = graphs().lock().get_mut(&model) {
        g.captured.extend(ranges);
    }
}

/// Before `aclrtFree`, `aclrtFreeHost` or `aclrtUnmapMem` of
/// `addr..addr + len`: memory a live graph captured in it is a finding.
#[inline]
pub(crate) fn check_release(
    call: &'static str,
    addr: usize,
    len: usize,
    site: impl FnOnce() -> Site,
) {
    if EVER.load(Ordering::Acquire) {
        check_release_captured(call, addr, len, site);
    }
}

#[cold]
#[inline(never)]
fn check_release_captured(
    call: &'static str,
    addr: usize,
    len: usize,
    site: impl FnOnce() -> Site,
) {
    let end = addr.saturating_add(len.max(1));
    let hit = graphs().lock().iter().find_map(|(&model, g)| {
        g.captured
            .iter()
            .find(|(a, n, _, _)| *a < end && addr < a.saturating_add(*n))
            .map(|&(a, n, at, _)| (model, a, n, at, g.begun))
    });
    if let Some((model, a, n, at, begun)) = hit {
        report(Finding {
            class: Class::GraphMemoryReleased,
            call,
            args: format!("{addr:#x}"),
            message: format!(
                "graph {model:#x} (capture begun at {}) still holds {n} bytes at {a:#x}, captured at {}, and is not destroyed (aclmdlRIDestroy): its replays would use released memory",
                begun.describe(),
                at.describe()
            ),
            code: None,
            site: site().with_stack(),
        });
    }
}

/// At exit: graphs captured and never destroyed.
pub(crate) fn report_leaks() {
    let left: Vec<(usize, Site)> = graphs()
        .lock()
        .drain()
        .filter(|(_, g)| g.ended)
        .map(|(m, g)| (m, g.begun))
        .collect();
    for (model, begun) in left {
        report(Finding {
            class: Class::GraphNotDestroyed,
            call: "aclmdlRICaptureBegin",
            args: format!("{model:#x}"),
            message: format!(
                "graph {model:#x}, captured from {}, was never destroyed (aclmdlRIDestroy)",
                begun.describe()
            ),
            code: None,
            site: begun,
        });
    }
}
