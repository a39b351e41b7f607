//! mstx markers and ranges (`libms_tools_ext.so`): programs and frameworks
//! mark their phases with them for Ascend's profilers. The sanitizer
//! forwards each call unchanged to the library underneath and reads the
//! phases out of them:
//!
//! * a range or marker whose message names a sleep (`sleep`, any case) is
//!   the start of a sleep; the end of such a range is the wake (the process
//!   holds what it keeps across the cycle then);
//! * one whose message names a wake (`wake`, `wake_up`) is a wake.
//!
//! These bound the sleep/wake cycles as `aclmem_sanitizer_phase` does
//! (the heuristic is off from then on). Every marker and range is also a
//! phase marker in the timeline.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

use parking_lot::Mutex;

/// The functions, as the audit redirects them.
pub const NAMES: [&str; 3] = ["mstxMarkA", "mstxRangeStartA", "mstxRangeEnd"];

type MarkFn = unsafe extern "C" fn(*const c_char, *mut c_void);
type StartFn = unsafe extern "C" fn(*const c_char, *mut c_void) -> u64;
type EndFn = unsafe extern "C" fn(u64);

struct Next {
    mark: Option<MarkFn>,
    start: Option<StartFn>,
    end: Option<EndFn>,
}

/// The library underneath: the next definition in the global scope, or
/// `libms_tools_ext.so` opened by name (the way frameworks reach it).
fn next() -> &'static Next {
    static NEXT: OnceLock<Next> = OnceLock::new();
    NEXT.get_or_init(|| {
        let mut lib: *mut c_void = std::ptr::null_mut();
        let mut lookup = |name: &std::ffi::CStr| -> *mut c_void {
            // SAFETY: dlsym with a NUL-terminated name.
            let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
            if !p.is_null() && !crate::own(p) {
                return p;
            }
            if lib.is_null() {
                // SAFETY: dlopen of a library name; the handle is kept for
                // the life of the process.
                lib = unsafe {
                    libc::dlopen(
                        c"libms_tools_ext.so".as_ptr(),
                        libc::RTLD_NOW | libc::RTLD_LOCAL,
                    )
                };
            }
            if lib.is_null() {
                return std::ptr::null_mut();
            }
            // SAFETY: dlsym on a live handle.
            let p = unsafe { libc::dlsym(lib, name.as_ptr()) };
            if crate::own(p) {
                std::ptr::null_mut()
            } else {
                p
            }
        };
        let (mark, start, end) = (
            lookup(c"mstxMarkA"),
            lookup(c"mstxRangeStartA"),
            lookup(c"mstxRangeEnd"),
        );
        // SAFETY: each symbol found has the documented prototype of its
        // name; NULL stays `None`.
        unsafe {
            Next {
                mark: (!mark.is_null()).then(|| std::mem::transmute::<*mut c_void, MarkFn>(mark)),
                start: (!start.is_null())
                    .then(|| std::mem::transmute::<*mut c_void, StartFn>(start)),
                end: (!end.is_null()).then(|| std::mem::transmute::<*mut c_void, EndFn>(end)),
            }
        }
    })
}

/// Open ranges: id -> message (ended ranges leave).
fn ranges() -> &'static Mutex<HashMap<u64, String>> {
    static RANGES: OnceLock<Mutex<HashMap<u64, String>>> = OnceLock::new();
    RANGES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The message, read through the kernel (at most 255 bytes; a bad pointer
/// is `None`).
fn message(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut buf = [0u8; 256];
    let mut len = 0;
    while len < buf.len() - 1 && crate::cmem::read_bytes(p as usize + len, &mut buf[len..=len]) {
        if buf[len] == 0 {
            return Some(String::from_utf8_lossy(&buf[..len]).into_owned());
        }
        len += 1;
    }
    None
}

/// The phase a message names, if any.
fn phase_of(message: &str) -> Option<&'static str> {
    let m = message.to_ascii_lowercase();
    if m.contains("sleep") {
        Some("sleep")
    } else if m.contains("wake") {
        Some("wake")
    } else {
        None
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxMarkA(message_ptr: *const c_char, stream: *mut c_void) {
    if let Some(text) = message(message_ptr) {
        crate::phase(phase_of(&text), &text);
    }
    if let Some(f) = next().mark {
        // SAFETY: the library's definition, given the caller's arguments.
        unsafe { f(message_ptr, stream) }
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxRangeStartA(message_ptr: *const c_char, stream: *mut c_void) -> u64 {
    let id = match next().start {
        // SAFETY: the library's definition, given the caller's arguments.
        Some(f) => unsafe { f(message_ptr, stream) },
        None => 0,
    };
    if id != 0
        && let Some(text) = message(message_ptr)
    {
        crate::phase(phase_of(&text), &text);
        ranges().lock().insert(id, text);
    }
    id
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxRangeEnd(id: u64) {
    if let Some(text) = ranges().lock().remove(&id) {
        // The end of a sleep is the wake.
        let phase = (phase_of(&text) == Some("sleep")).then_some("wake");
        crate::phase(phase, &format!("end of {text}"));
    }
    if let Some(f) = next().end {
        // SAFETY: the library's definition, given the caller's argument.
        unsafe { f(id) }
    }
}
