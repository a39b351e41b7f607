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
//!
//! The memory API (heaps and regions a program registers over its pools)
//! is checked in the `pools` room.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};

use aclmem_fork::ForkMutex;

/// The functions, as the audit redirects them.
pub const NAMES: [&str; 8] = [
    "mstxMarkA",
    "mstxRangeStartA",
    "mstxRangeEnd",
    "mstxDomainDestroy",
    "mstxMemHeapRegister",
    "mstxMemHeapUnregister",
    "mstxMemRegionsRegister",
    "mstxMemRegionsUnregister",
];

/// Calls the definition underneath, if there is one.
macro_rules! forward_mstx {
    ($name:literal: fn($($t:ty),*) -> $r:ty, $none:expr, ($($arg:expr),*)) => {
        $crate::underneath::forward_in!(c"libms_tools_ext.so", $name: fn($($t),*) -> $r, $none, ($($arg),*))
    };
}

mod pools;
pub(crate) use pools::{after_fork_in_child, check_access, check_release, hold_for_fork};

/// Open ranges: id -> message (ended ranges leave).
fn ranges() -> &'static ForkMutex<HashMap<u64, String>> {
    static RANGES: ForkMutex<HashMap<u64, String>> = ForkMutex::new(HashMap::new);
    &RANGES
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
        crate::abi::phase(phase_of(&text), &text);
    }
    forward_mstx!(c"mstxMarkA": fn(*const c_char, *mut c_void) -> (), (), (message_ptr, stream))
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxRangeStartA(message_ptr: *const c_char, stream: *mut c_void) -> u64 {
    let id = forward_mstx!(c"mstxRangeStartA": fn(*const c_char, *mut c_void) -> u64, 0, (message_ptr, stream));
    if id != 0
        && let Some(text) = message(message_ptr)
    {
        crate::abi::phase(phase_of(&text), &text);
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
        crate::abi::phase(phase, &format!("end of {text}"));
    }
    forward_mstx!(c"mstxRangeEnd": fn(u64) -> (), (), (id))
}
