//! The library underneath: finding it, forwarding to it, and what the sanitizer says when a call of it fails (a refused call, memory run out, a function it lacks).

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::OnceLock;

use aclmem_core::AclError;
use aclmem_fork::ForkMutex;
use aclmem_sys::{self as sys, AclFunctions};

use crate::config::config;
use crate::report::{self, Class, Site};

/// Calls the definition of `$name` in `$library` underneath ([`next_in`])
/// as a function of the prototype written at the call (its header's), or
/// answers `$none` when there is none: the one forwarding of the libraries
/// beside ACL's typed list (HCCL, mstx, graphs, pools).
macro_rules! forward_in {
    ($library:literal, $name:literal: fn($($t:ty),*) -> $r:ty, $none:expr, ($($arg:expr),*)) => {{
        let p = $crate::underneath::next_in($library, $name);
        if p == 0 {
            $none
        } else {
            // SAFETY: the symbol of that name in the library underneath has
            // the prototype written at the call, its header's.
            let f: unsafe extern "C" fn($($t),*) -> $r = unsafe { std::mem::transmute(p) };
            // SAFETY: the caller's arguments, passed on.
            unsafe { f($($arg),*) }
        }
    }};
}
pub(crate) use forward_in;

/// Calls the next definition of `$name` with the arguments, or answers
/// 207000 (once named on stderr) when the library underneath lacks it.
macro_rules! forward {
    ($name:ident($($arg:expr),* $(,)?)) => {
        match $crate::underneath::next().$name {
            Some(f) => {
                // SAFETY: `f` is the library's own definition of this
                // function (same prototype), given the caller's arguments
                // unchanged: the caller's contract is passed on.
                #[allow(unused_unsafe)]
                let r = unsafe { f($($arg),*) };
                r
            }
            None => $crate::underneath::missing(stringify!($name)),
        }
    };
}
pub(crate) use forward;

/// Whether `p` is one of this library's own definitions (never "the next
/// one": that would call itself).
pub(crate) fn own(p: *mut c_void) -> bool {
    !p.is_null() && report::module_of(p as usize) == report::module_of(own as *const () as usize)
}

/// The definition of `name` underneath, for the libraries beside ACL
/// (`libhccl.so`, `libms_tools_ext.so`): the next one in the global scope,
/// or the one of `library` opened by name, as frameworks reach it; 0 when
/// there is none. Looked up once per name.
pub(crate) fn next_in(library: &'static CStr, name: &'static CStr) -> usize {
    type Key = (&'static CStr, &'static CStr);
    static FOUND: ForkMutex<HashMap<Key, usize>> = ForkMutex::new(HashMap::new);
    static OPENED: ForkMutex<HashMap<&'static CStr, usize>> = ForkMutex::new(HashMap::new);
    let found = &FOUND;
    if let Some(p) = found.lock().get(&(library, name)) {
        return *p;
    }
    // SAFETY: dlsym with a NUL-terminated name.
    let mut p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if p.is_null() || own(p) {
        let lib = *OPENED.lock().entry(library).or_insert_with(|| {
            // SAFETY: dlopen of a library name; the handle is kept for
            // the life of the process.
            unsafe { libc::dlopen(library.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) as usize }
        });
        p = if lib == 0 {
            std::ptr::null_mut()
        } else {
            // SAFETY: dlsym on a live handle.
            unsafe { libc::dlsym(lib as *mut c_void, name.as_ptr()) }
        };
        if own(p) {
            p = std::ptr::null_mut();
        }
    }
    found.lock().insert((library, name), p as usize);
    p as usize
}

/// The next definition of every function.
pub(crate) fn next() -> &'static AclFunctions {
    static NEXT: OnceLock<AclFunctions> = OnceLock::new();
    NEXT.get_or_init(|| {
        let mut fallback: *mut c_void = std::ptr::null_mut();
        let lookup = |name: &'static str| -> *mut c_void {
            let Ok(c) = std::ffi::CString::new(name) else {
                return std::ptr::null_mut();
            };
            // SAFETY: dlsym with a NUL-terminated name.
            let p = unsafe { libc::dlsym(libc::RTLD_NEXT, c.as_ptr()) };
            if !p.is_null() && !own(p) {
                return p;
            }
            if fallback.is_null() {
                let lib = std::env::var("ACLMEM_ASCENDCL")
                    .ok()
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| "libascendcl.so".into());
                if let Ok(path) = std::ffi::CString::new(lib) {
                    // SAFETY: dlopen of a path; the handle is kept for the
                    // life of the process.
                    fallback =
                        unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
                }
            }
            if fallback.is_null() {
                return std::ptr::null_mut();
            }
            // SAFETY: dlsym on a live handle.
            let p = unsafe { libc::dlsym(fallback, c.as_ptr()) };
            if own(p) { std::ptr::null_mut() } else { p }
        };
        // SAFETY: every symbol found has the documented prototype of its
        // name (the library underneath implements the ACL API); handles
        // are never closed.
        unsafe { AclFunctions::from_lookup(lookup) }
    })
}

/// With `ACLMEM_SANITIZER_REPORT_API_ERRORS`, a call the library refused
/// is a finding (`api-error`) with its code and where it was made. Asked
/// after every call: whether to report is decided inline.
#[inline]
pub(crate) fn api_error(call: &'static str, r: sys::aclError, site: Site) {
    if r != 0 && config().report_api_errors {
        api_error_reported(call, r, site);
    }
}

#[cold]
#[inline(never)]
fn api_error_reported(call: &'static str, r: sys::aclError, site: Site) {
    report::report(report::Finding {
        class: Class::ApiError,
        call,
        args: String::new(),
        message: "the library refused the call".into(),
        code: Some(r),
        site,
    });
}

/// An allocation refused for lack of device memory (207001, what
/// torch_npu takes for an OOM): an `out-of-memory` finding at the call,
/// with what held the device in this process then, grouped by the call site
/// that made it, largest first, and the process's reserved address space.
/// The whole model is locked only for a refusal, which is decided inline
/// (the caller holds none of its shards).
#[inline]
pub(crate) fn out_of_memory(
    call: &'static str,
    r: sys::aclError,
    size: usize,
    device: Option<u32>,
    site: Site,
) {
    if r == AclError::RT_MEMORY_ALLOCATION.code()
        && let Some(device) = device
        && !injected()
    {
        out_of_memory_reported(call, r, size, device, site);
    }
}

/// Whether the library underneath answered this thread's last call with
/// a fault injected by the test (`ACLMEM_EMU_FAULTS`): the emulated
/// library's `aclmem_emu_fault_injected`. A real library has none: never.
/// An injected refusal is not the program's out-of-memory.
#[cold]
fn injected() -> bool {
    match next_in(c"libascendcl.so", c"aclmem_emu_fault_injected") {
        0 => false,
        f => {
            // SAFETY: the emulated library's `int
            // aclmem_emu_fault_injected(void)`, found by that name.
            let f = unsafe { std::mem::transmute::<usize, extern "C" fn() -> std::ffi::c_int>(f) };
            f() != 0
        }
    }
}

#[cold]
#[inline(never)]
fn out_of_memory_reported(
    call: &'static str,
    r: sys::aclError,
    size: usize,
    device: u32,
    site: Site,
) {
    let (holders, (reserved, mapped, gap)) = {
        let w = crate::model::whole();
        (w.holders(device), w.address_space())
    };
    let holders = described(holders);
    let mib = |b: usize| b as f64 / f64::from(1u32 << 20);
    let held: usize = holders.iter().map(|h| h.bytes).sum();
    // Places that share a site (an allocation wrapper's, made for several
    // callers) are told apart by their caller on stderr (the log has each
    // stack).
    let mut per_site: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for h in &holders {
        *per_site.entry(&h.site).or_default() += 1;
    }
    let mut lines: Vec<String> = holders
        .iter()
        .take(OOM_HOLDERS)
        .map(|h| {
            let caller = h
                .stack
                .get(1)
                .filter(|_| per_site[h.site.as_str()] > 1)
                .map(|f| format!(", called from {f}"))
                .unwrap_or_default();
            format!(
                "{:.1} MiB in {} object(s) made at {}{caller}",
                mib(h.bytes),
                h.count,
                h.site,
            )
        })
        .collect();
    if holders.len() > OOM_HOLDERS {
        lines.push(format!(
            "... and {} more place(s)",
            holders.len() - OOM_HOLDERS
        ));
    }
    lines.push(format!(
        "address space: {:.1} MiB reserved, {:.1} MiB of it mapped, the largest unmapped run {:.1} MiB",
        mib(reserved),
        mib(mapped),
        mib(gap)
    ));
    let mut fields = serde_json::Map::new();
    fields.insert("device".into(), device.into());
    fields.insert("requested".into(), size.into());
    fields.insert("held".into(), held.into());
    fields.insert(
        "holders".into(),
        holders
            .iter()
            .map(|h| {
                serde_json::json!({
                    "site": h.site,
                    "bytes": h.bytes,
                    "count": h.count,
                    "stack": h.stack,
                })
            })
            .collect(),
    );
    fields.insert(
        "address_space".into(),
        serde_json::json!({ "reserved": reserved, "mapped": mapped, "largest_unmapped": gap }),
    );
    report::report_with(
        report::Finding {
            class: Class::OutOfMemory,
            call,
            args: format!("{size} bytes on device {device}"),
            message: format!(
                "device {device} is out of memory; this process held {:.1} MiB of it, made at {} place(s), largest first:",
                mib(held),
                holders.len()
            ),
            code: Some(r),
            site,
        },
        lines,
        fields,
    );
}

/// What one place holds, as an out-of-memory report names it.
struct Holder {
    site: String,
    stack: Vec<String>,
    bytes: usize,
    count: usize,
}

/// The model's holders grouped by what a reader sees: the site and stack
/// as described (two calls on one line, or one stack reached through two
/// return addresses of a line, are one place), largest first, then by
/// count and by name (the same order in every run).
fn described(holders: Vec<(Site, usize, usize)>) -> Vec<Holder> {
    let mut by_place: std::collections::BTreeMap<(String, Vec<String>), (usize, usize)> =
        std::collections::BTreeMap::new();
    for (site, bytes, count) in holders {
        let e = by_place
            .entry((site.describe(), site.frames()))
            .or_default();
        e.0 += bytes;
        e.1 += count;
    }
    let mut out: Vec<Holder> = by_place
        .into_iter()
        .map(|((site, stack), (bytes, count))| Holder {
            site,
            stack,
            bytes,
            count,
        })
        .collect();
    // Stable: places of equal size stay in the order of their names.
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(b.count.cmp(&a.count)));
    out
}

/// Places listed on stderr in an out-of-memory report (the log has all).
pub(crate) const OOM_HOLDERS: usize = 16;

pub(crate) fn missing(name: &str) -> i32 {
    static WARNED: ForkMutex<Vec<String>> = ForkMutex::new(Vec::new);
    let mut w = WARNED.lock();
    if !w.iter().any(|n| n == name) {
        eprintln!("aclmem-sanitizer: the library underneath has no {name}; answering 207000");
        w.push(name.to_owned());
    }
    AclError::RT_FEATURE_NOT_SUPPORT.code()
}
