//! Work enqueued on a stream, run at once or recorded into the model the
//! stream captures (`aclmdlRICaptureBegin`), for every C function that
//! enqueues: copies, sets, operators, events, host functions. A recorded
//! task runs when the model is executed, on the stream it is executed on,
//! against the addresses captured (the caller keeps them valid until the
//! model is destroyed, as the runtime's contract says).

use std::sync::Arc;

use aclmem_core::AclError;
use aclmem_emu::TaskFn;

use crate::state::with_global;

/// Runs `work` on `stream` now, or records it (of the runtime's task type
/// `kind`, named `name`) when
/// `stream` captures or updates a task group. A failure while recording
/// is the call's error; a recorded task's failure is its replay's.
pub(crate) fn enqueue(
    stream: u64,
    kind: &'static str,
    name: impl FnOnce() -> String,
    work: impl Fn(u64) -> Result<(), AclError> + Send + Sync + 'static,
) -> Result<(), AclError> {
    if !active() {
        return work(stream);
    }
    let work: Arc<TaskFn> = Arc::new(work);
    match with_global(|g| g.emu.capture_record(stream, kind, name, work))? {
        Some(now) => now(stream),
        None => Ok(()),
    }
}

/// Whether `stream` captures now (0 never does); while no stream of the
/// process captures, a look at the state only.
pub(crate) fn capturing(stream: u64) -> bool {
    stream != 0
        && active()
        && with_global(|g| g.emu.capture_info(stream))
            .is_ok_and(|(status, _)| status != aclmem_emu::CaptureStatus::None)
}

/// Whether any stream of the process captures or updates a task group.
pub(crate) fn active() -> bool {
    with_global(|g| Ok(g.emu.capture_active())).unwrap_or(false)
}

/// The runtime's check before a synchronous call: 107030 when a capture's
/// mode forbids it in this thread.
pub(crate) fn permits_sync() -> Result<(), AclError> {
    if !active() {
        return Ok(());
    }
    with_global(|g| g.emu.capture_permits_sync())
}

/// Tells the model `stream` captures into (if it does) which memory the
/// task just recorded reads and writes.
pub(crate) fn touched(stream: u64, ranges: &[(usize, usize)]) {
    if !active() {
        return;
    }
    let _ = with_global(|g| {
        g.emu.capture_touch(stream, ranges);
        Ok(())
    });
}
