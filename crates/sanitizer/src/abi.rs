//! The sanitizer's own C ABI: findings so far, phases, stack depth.

use std::ffi::{c_char, c_void};

use crate::config::config;
use crate::{cmem, report, trace};

/// Present in a process the sanitizer is loaded into (for tools that ask).
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_sanitizer_findings() -> u64 {
    report::total()
}

/// `void aclmem_sanitizer_phase(const char *name)`: marks a phase of the
/// program. `sleep` (memory is being given back) and `wake` (it is being
/// taken again) bound the sleep/wake cycles whose growth `cycle-growth`
/// reports, in place of the heuristic (an unmap, then a map at the same
/// address); any name is a marker in the timeline. NULL is ignored.
///
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_sanitizer_phase(name: *const c_char) {
    if name.is_null() {
        return;
    }
    // Read through the kernel (a bad pointer is ignored, never a crash),
    // up to 255 bytes.
    let mut buf = [0u8; 256];
    let mut len = 0;
    while len < buf.len() - 1 && cmem::read_bytes(name as usize + len, &mut buf[len..=len]) {
        if buf[len] == 0 {
            break;
        }
        len += 1;
    }
    if len == 0 {
        return;
    }
    let name = String::from_utf8_lossy(&buf[..len]).into_owned();
    phase(Some(&name), &name);
}

/// A phase of the program: `which` (`sleep`, `wake`) bounds the sleep/wake
/// cycles; `label` is its marker in the timeline.
pub(crate) fn phase(which: Option<&str>, label: &str) {
    if let Some(which) = which {
        crate::model::phase(which);
    }
    trace::call_with("phase", None, 0, 0, |t| t.name = Some(label.into()));
}

/// `unsigned aclmem_sanitizer_python_site(const void *ra, char *file,
/// size_t cap)`: the line of the Python script that is making the current
/// call, whose return address is `ra` (a call from Python code, or through
/// `ctypes`), with the script's file name written into `file` (at most
/// `cap` bytes with the NUL); 0 when the call is not from Python, or the
/// name does not fit, or `file` may not be written. The emulated library
/// asks it for the call sites of its faults and call log, so that
/// `aclmem explore` names and fails a Python program's calls by the
/// script's lines.
///
/// # Safety
/// `file` is NULL or `cap` writable bytes that no Rust code borrows (it is
/// written through the kernel's check: garbage is refused, not a crash).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmem_sanitizer_python_site(
    ra: *const c_void,
    file: *mut c_char,
    cap: usize,
) -> u32 {
    // The site only: no stack is taken for it.
    let n = crate::python::site_for_library(ra as usize);
    match crate::python::place(n) {
        // SAFETY: the caller's contract, passed on.
        Some((name, line)) if unsafe { aclmem_cmem::write_cstr(file, cap, &name) } => line,
        _ => 0,
    }
}

/// `unsigned aclmem_sanitizer_stacks(unsigned depth)`: from now on, keep
/// `depth` frames of native stack per call site (0 or 1: the call site
/// only; at most 32); answers the depth in effect before. For a program
/// that wants stacks only around the part it is debugging.
#[unsafe(no_mangle)]
pub extern "C" fn aclmem_sanitizer_stacks(depth: u32) -> u32 {
    let depth = (depth as usize).min(report::MAX_STACK);
    let old = config()
        .stack_depth
        .swap(depth, std::sync::atomic::Ordering::Relaxed);
    u32::try_from(old).unwrap_or(u32::MAX)
}
