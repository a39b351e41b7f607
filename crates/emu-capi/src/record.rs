//! The record of calls the emulator accepts without effect or does not
//! support, the `ACLMEM_EMU_UNSUPPORTED` policy, and the report at exit,
//! which names plan mode (`ACLMEM_EMU_OPS=plan`) first when the process
//! ran in it.
//!
//! Each such call is counted per function with the place it was first
//! called from (the first frame outside this library, symbolised once).
//! At exit the process prints what its program needed that the emulator
//! does not do, so that a user sees it at once instead of hunting through
//! error codes (`ACLMEM_EMU_QUIET` silences it).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use aclmem_emu::env::{self, Unsupported};
use aclmem_fork::ForkMutex;
use aclmem_sys::catalogue::{Answer, Library, Returns};

use crate::site;

/// One function's calls.
#[derive(Debug, Clone)]
pub struct Calls {
    /// How the emulator answered them.
    pub answer: Answer,
    /// The CANN library the function belongs to.
    pub library: Library,
    /// How many.
    pub count: u64,
    /// Where the first one came from.
    pub first_site: String,
}

static CALLS: ForkMutex<BTreeMap<&'static str, Calls>> = ForkMutex::new(BTreeMap::new);

/// Whether the process joined its machine in plan mode.
static PLAN: AtomicBool = AtomicBool::new(false);

/// `aclInit` joined the machine in `mode`: in plan mode, said on stderr
/// now and at exit (the report's first line), whatever else is recorded.
pub(crate) fn joined(mode: env::OpsMode) {
    let Some(warning) = mode.warning() else {
        return;
    };
    install_report();
    if !PLAN.swap(true, Ordering::AcqRel) && !env::quiet() {
        eprintln!("aclmem-emu: {warning}");
    }
}

/// Records a call of `name`, applies the policy, and hands back nothing:
/// the caller answers with the catalogue's value.
pub(crate) fn record(
    name: &'static str,
    library: Library,
    answer: Answer,
    returns: Returns,
    entry: usize,
) {
    let first = {
        let mut calls = CALLS.lock();
        match calls.get_mut(name) {
            Some(c) => {
                c.count += 1;
                false
            }
            None => {
                calls.insert(
                    name,
                    Calls {
                        answer,
                        library,
                        count: 1,
                        first_site: String::new(),
                    },
                );
                true
            }
        }
    };
    if first {
        install_report();
        // Symbolised outside the lock: resolving may load debug data.
        let site = call_site(entry);
        if let Some(c) = CALLS.lock().get_mut(name) {
            c.first_site = site.clone();
        }
        if answer == Answer::Unsupported {
            match env::unsupported().unwrap_or_default() {
                Unsupported::Abort => {
                    eprintln!(
                        "aclmem-emu: {name} ({}) is not supported by the emulator; called from {site}; aborting (ACLMEM_EMU_UNSUPPORTED=abort)",
                        library.soname()
                    );
                    std::process::abort();
                }
                Unsupported::Warn if !env::quiet() => eprintln!(
                    "aclmem-emu: {name} ({}) is not supported by the emulator: answered {}; called from {site}",
                    library.soname(),
                    returns.describe_value(answer),
                ),
                _ => {}
            }
        }
    }
}

/// Every recorded function, by name.
pub fn calls() -> BTreeMap<&'static str, Calls> {
    CALLS.lock().clone()
}

/// The report: one line per function, not-supported ones first.
pub fn report() -> Option<String> {
    let calls = calls();
    let plan = PLAN
        .load(Ordering::Acquire)
        .then(|| env::OpsMode::Plan.warning())
        .flatten();
    let mut out = plan.map_or_else(String::new, |w| format!("aclmem-emu: {w}\n"));
    if calls.is_empty() {
        return (!out.is_empty()).then_some(out);
    }
    let mut rows: Vec<_> = calls.into_iter().collect();
    rows.sort_by_key(|(name, c)| (std::cmp::Reverse(c.answer), *name));
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    out.push_str("aclmem-emu: calls the emulator did not carry out (docs/catalogue.md):\n");
    for (name, c) in rows {
        let _ = writeln!(
            out,
            "  {:<13} {name:<width$} {:>6} call{} ({}), first from {}",
            c.answer.describe(),
            c.count,
            if c.count == 1 { " " } else { "s" },
            c.library.soname(),
            c.first_site,
        );
    }
    Some(out)
}

fn install_report() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: `report_at_exit` is an `extern "C"` function of this
        // library, which stays loaded until the process exits.
        unsafe { libc::atexit(report_at_exit) };
    });
}

extern "C" fn report_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        if !env::quiet()
            && let Some(text) = report()
        {
            eprint!("{text}");
        }
    });
}

/// The first frame of the stack outside this library, as
/// `symbol (object+0xoffset)`, or `object+0xoffset` when the object has no
/// symbol for it (the offset is what `addr2line -e object` takes).
fn call_site(entry: usize) -> String {
    let Some(ip) = site::caller(Some(entry)) else {
        return "an unknown place".to_owned();
    };
    let site = site::Site::of(ip);
    let place = site.place();
    match site.symbol {
        Some(n) => format!("{n} ({place})"),
        None => place,
    }
}

/// `const char *aclmem_emu_calls_json(void)`: the record as a JSON array
/// (name, library, answer, value answered, count, first call site), for
/// tools in the same process (the sanitizer puts the not-supported ones in
/// its log). Valid until the next call; never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_emu_calls_json() -> *const std::ffi::c_char {
    static TEXT: ForkMutex<Option<std::ffi::CString>> = ForkMutex::new(|| None);
    let rows: Vec<serde_json::Value> = calls()
        .into_iter()
        .map(|(name, c)| {
            let returns = aclmem_sys::catalogue::find(name).map_or(Returns::Void, |e| e.returns);
            let code = matches!(
                returns,
                Returns::Code | Returns::OpStatus | Returns::HcclStatus
            )
            .then(|| returns.value(c.answer));
            serde_json::json!({
                "name": name,
                "library": c.library.soname(),
                "answer": c.answer.describe(),
                "answered": returns.describe_value(c.answer),
                "code": code,
                "count": c.count,
                "first_site": c.first_site,
            })
        })
        .collect();
    let text =
        std::ffi::CString::new(serde_json::Value::from(rows).to_string()).unwrap_or_default();
    let mut slot = TEXT.lock();
    slot.insert(text).as_ptr()
}

/// `const char *aclmem_emu_ops_mode(void)`: `"plan"` when this process
/// joined its machine in plan mode (`ACLMEM_EMU_OPS=plan`), else
/// `"compute"`; for tools in the same process (the sanitizer names the mode
/// in its summary and its trace). Static; never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_emu_ops_mode() -> *const std::ffi::c_char {
    if PLAN.load(Ordering::Acquire) {
        c"plan".as_ptr()
    } else {
        c"compute".as_ptr()
    }
}
