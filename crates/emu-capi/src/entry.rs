//! The guard every ACL entry point runs in, and the calling thread's last
//! error (`aclGetRecentErrMsg`, `aclrtGetLastError`, `aclrtPeekAtLastError`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use aclmem_core::AclError;

use crate::faults;

/// `aclError`.
pub type AclErrorCode = i32;

thread_local! {
    /// The code of the calling thread's last failed call (0: none since
    /// it was last read with `aclrtGetLastError`).
    static LAST_ERROR: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// Runs the entry point `name` (its catalogue name): a fault armed for it
/// (`ACLMEM_EMU_FAULTS`) answers first, before anything is read or
/// written; a panic becomes `ACL_ERROR_INTERNAL_ERROR`; a failure becomes
/// the thread's last error.
pub(crate) fn guard(name: &'static str, f: impl FnOnce() -> Result<(), AclError>) -> AclErrorCode {
    let code = catch_unwind(AssertUnwindSafe(|| match faults::check(name) {
        Some(code) => code,
        None => f().map_or_else(|e| e.code(), |()| 0),
    }))
    .unwrap_or(AclError::INTERNAL_ERROR.code());
    if code != 0 {
        set_last_error(code);
    }
    code
}

/// Makes `code` the thread's last error.
pub(crate) fn set_last_error(code: i32) {
    let _ = LAST_ERROR.try_with(|l| l.set(code));
}

/// The thread's last error code, cleared when `clear`.
pub(crate) fn last_error(clear: bool) -> i32 {
    LAST_ERROR
        .try_with(|l| if clear { l.replace(0) } else { l.get() })
        .unwrap_or(0)
}
