//! mstx markers and ranges (`libms_tools_ext.so`, one of the library's
//! names): taken and checked as the profiling tools take them; nothing
//! profiles them on the emulator (the sanitizer's timeline shows them).

use std::ffi::c_char;

use aclmem_sys::aclrtStream;

/// The longest mstx message the emulator takes: the documented limit
/// outside MSPTI (msprof, the Ascend PyTorch profiler) is 156 bytes, under
/// MSPTI 255. The emulator takes the stricter one (docs/torch-npu.md), so
/// a message that works here works under every profiler.
pub const MSTX_MESSAGE_MAX: usize = 156;

/// The range ids handed out (0 is the documented failure).
static MSTX_RANGES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether an mstx message is one the tools take: readable, at most
/// [`MSTX_MESSAGE_MAX`] bytes (NULL is refused: "message must not be a null
/// pointer").
fn mstx_message_ok(message: *const c_char) -> bool {
    crate::cptr::read_cstr(message, MSTX_MESSAGE_MAX).is_ok()
}

/// `void mstxMarkA(const char *message, aclrtStream stream)`: an instant
/// marker. Nothing profiles it on the emulator (the sanitizer's timeline
/// shows it); a bad message is ignored, as the tools ignore it.
#[unsafe(no_mangle)]
pub extern "C" fn mstxMarkA(message: *const c_char, _stream: aclrtStream) {
    let _ = mstx_message_ok(message);
}

/// `mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream)`:
/// the start of a range, as a new id (1, 2, ...); 0, the documented
/// failure, for a NULL, unreadable or too long message.
#[unsafe(no_mangle)]
pub extern "C" fn mstxRangeStartA(message: *const c_char, _stream: aclrtStream) -> u64 {
    if !mstx_message_ok(message) {
        return 0;
    }
    MSTX_RANGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

/// `void mstxRangeEnd(mstxRangeId id)`: the end of a range (any id is
/// taken: the tools report an unknown one, they do not fail the program).
#[unsafe(no_mangle)]
pub extern "C" fn mstxRangeEnd(_id: u64) {}
