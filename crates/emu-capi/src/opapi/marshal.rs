//! What the operator API's C functions share: their status wrapper, the
//! checked reading of arrays and objects, the executor handed out by a
//! `GetWorkspaceSize` and run by its `aclnnX`.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use aclmem_core::AclError;
use aclmem_ops::aclnn::{self, ERR_PARAM_INVALID, ERR_PARAM_NULLPTR, SUCCESS, Scalar, View};
use aclmem_ops::tensor::Num;
use aclmem_sys::catalogue::{Answer, Library, Returns};

use crate::cptr;
use crate::entry::set_last_error;
use crate::faults;
use crate::state::with_global;

/// The most elements an array argument holds.
pub(crate) const MAX_ARRAY: usize = 1 << 20;
/// The most dimensions (`ACL_MAX_DIM_CNT`).
pub(crate) const MAX_DIMS: usize = 128;

/// Runs an operator API function: an injected fault's code, or `f`'s
/// status; a panic is `ACLNN_ERR_RUNTIME_ERROR`, never an unwind into C.
pub(crate) fn status(name: &'static str, f: impl FnOnce() -> Result<(), i32>) -> i32 {
    let code = catch_unwind(AssertUnwindSafe(|| match faults::check(name) {
        Some(code) => code,
        None => f().map_or_else(|e| e, |()| SUCCESS),
    }))
    .unwrap_or(aclnn::ERR_RUNTIME_ERROR);
    if code != SUCCESS {
        set_last_error(code);
    }
    code
}

/// A constructor's answer: the handle, or NULL (the operator API's
/// constructors have no error code).
pub(crate) fn made(name: &'static str, f: impl FnOnce() -> Option<usize>) -> *mut c_void {
    catch_unwind(AssertUnwindSafe(|| {
        if faults::check(name).is_some() {
            return None;
        }
        f()
    }))
    .ok()
    .flatten()
    .map_or(std::ptr::null_mut(), |h| h as *mut c_void)
}

/// Reads `n` values of `T` from a C array (`None`: unreadable or too long).
pub(crate) fn array<T: Copy + Default>(p: *const T, n: u64) -> Option<Vec<T>> {
    let n = usize::try_from(n).ok()?;
    if n == 0 {
        return Some(Vec::new());
    }
    // SAFETY: plain C values; the read is checked.
    unsafe { cptr::read_array(p, n, MAX_ARRAY, AclError::INVALID_PARAM) }.ok()
}

/// A live tensor (161001 for NULL or a dead handle).
pub(crate) fn tensor(p: *const c_void) -> Result<View, i32> {
    aclnn::tensor(p as usize).ok_or(ERR_PARAM_NULLPTR)
}

/// A live scalar's value (161001 for NULL or a dead handle).
pub(crate) fn scalar(p: *const c_void) -> Result<Num, i32> {
    aclnn::scalar(p as usize)
        .map(|s| s.value)
        .ok_or(ERR_PARAM_NULLPTR)
}

/// A live scalar (161001 for NULL or a dead handle).
pub(crate) fn scalar_arg(p: *const c_void) -> Result<Scalar, i32> {
    aclnn::scalar(p as usize).ok_or(ERR_PARAM_NULLPTR)
}

/// `*workspaceSize = 0`, `*executor = ` a new executor of `plan`.
pub(crate) fn hand_out(
    plan: Result<aclnn::Plan, AclError>,
    workspace: *mut u64,
    executor: *mut *mut c_void,
) -> Result<(), i32> {
    if workspace.is_null() || executor.is_null() {
        return Err(ERR_PARAM_NULLPTR);
    }
    let plan = plan.map_err(|_| ERR_PARAM_INVALID)?;
    let handle = aclnn::create_executor(plan);
    // SAFETY: the C caller's out parameters.
    let written = unsafe {
        cptr::write(workspace, 0).and_then(|()| cptr::write(executor, handle as *mut c_void))
    };
    written.map_err(|_| {
        aclnn::destroy_executor(handle);
        ERR_PARAM_NULLPTR
    })
}

/// `aclnnX(workspace, workspaceSize, executor, stream)`: runs the
/// executor's plan on `stream` (or records it when the stream captures);
/// the executor is used up. In plan mode (`ACLMEM_EMU_OPS=plan`) the plan,
/// checked when it was made, is accepted without running: no device memory
/// is read or written.
/// `entry` is the `aclnnX` called (the record names its caller).
pub(crate) fn execute(executor: *mut c_void, stream: *mut c_void, entry: usize) -> Result<(), i32> {
    let plan = aclnn::take_executor(executor as usize).ok_or(ERR_PARAM_NULLPTR)?;
    let stream = stream as usize as u64;
    let mode =
        with_global(|g| g.emu.check_stream(stream).map(|()| g.emu.ops())).map_err(aclnn::status)?;
    let name = plan.name.to_owned();
    if mode.is_plan() {
        crate::record::record(
            plan.name,
            Library::OpApi,
            Answer::Accepted,
            Returns::OpStatus,
            entry,
        );
        return crate::capture::enqueue(
            stream,
            "KERNEL",
            || format!("{name} (plan mode)"),
            |_| Ok(()),
        )
        .map_err(aclnn::status);
    }
    crate::capture::touched(stream, &plan.ranges());
    crate::capture::enqueue(
        stream,
        "KERNEL",
        || name,
        move |_| plan.run(&crate::shared::DeviceMemory),
    )
    .map_err(aclnn::status)
}
