//! ACL graphs (`aclmdlRI*`, CANN 8.1 on): a stream's work captured into a
//! model, replayed on any stream, its task groups updated between replays;
//! host functions on a stream. The engine keeps the captures and models
//! (`aclmem_emu`, `calls::graphs`); the work recorded is the C library's
//! (`capture`). docs/graphs.md says what is recorded, what is refused
//! during capture, and where each rule comes from.

use std::ffi::{c_char, c_void};

use aclmem_core::AclError;
use aclmem_sys::aclrtStream;

use crate::capture;
use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::state::with_global;

/// `aclmdlRI`, `aclrtTaskGrp`: opaque handles.
type Handle = *mut c_void;

/// A handle's value; NULL is 100000, as the ACL layer checks.
fn handle(h: Handle) -> Result<u64, AclError> {
    if h.is_null() {
        Err(AclError::INVALID_PARAM)
    } else {
        Ok(h as usize as u64)
    }
}

fn stream_of(s: aclrtStream) -> u64 {
    s as usize as u64
}

/// `aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode
/// mode)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureBegin(stream: aclrtStream, mode: u32) -> AclErrorCode {
    guard("aclmdlRICaptureBegin", || {
        with_global(|g| g.emu.capture_begin(stream_of(stream), mode))
    })
}

/// `aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI
/// modelRI, aclmdlRICaptureMode mode)`: capture into a model whose capture
/// is still going on.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureToModelRIBegin(
    stream: aclrtStream,
    model: Handle,
    mode: u32,
) -> AclErrorCode {
    guard("aclmdlRICaptureToModelRIBegin", || {
        let model = handle(model)?;
        with_global(|g| g.emu.capture_to_model_begin(stream_of(stream), model, mode))
    })
}

/// `aclError aclmdlRICaptureGetInfo(aclrtStream stream,
/// aclmdlRICaptureStatus *status, aclmdlRI *modelRI)`: NONE (0) and no
/// model, ACTIVE (1) or INVALIDATED (2) and the model.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureGetInfo(
    stream: aclrtStream,
    status: *mut u32,
    model: *mut Handle,
) -> AclErrorCode {
    guard("aclmdlRICaptureGetInfo", || {
        if status.is_null() || model.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let (s, m) = with_global(|g| g.emu.capture_info(stream_of(stream)))?;
        // SAFETY: the C caller's out parameters.
        unsafe {
            cptr::write(status, s as u32)?;
            cptr::write(model, m as usize as Handle)
        }
    })
}

/// `aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)`:
/// the capture ends (whatever the answer) and hands out its model.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureEnd(
    stream: aclrtStream,
    model: *mut Handle,
) -> AclErrorCode {
    let code = guard("aclmdlRICaptureEnd", || {
        if model.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let m = with_global(|g| g.emu.capture_end(stream_of(stream)))?;
        // SAFETY: the C caller's out parameter.
        unsafe {
            cptr::hand_out(model, m as usize as Handle, || {
                let _ = with_global(|g| g.emu.destroy_model(m));
            })
        }
    });
    // A capture that ends with an error is over (the runtime clears it):
    // an injected fault ends it too, its model gone with it.
    if code != 0
        && crate::faults::aclmem_emu_fault_injected() != 0
        && capture::capturing(stream_of(stream))
    {
        let _ = with_global(|g| {
            let m = g.emu.capture_end(stream_of(stream))?;
            g.emu.destroy_model(m)
        });
    }
    code
}

/// `aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)`:
/// sets this thread's mode and writes back the previous one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureThreadExchangeMode(mode: *mut u32) -> AclErrorCode {
    guard("aclmdlRICaptureThreadExchangeMode", || {
        if mode.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's in-out parameter.
        let wanted = unsafe { cptr::read(mode) }?;
        let old = with_global(|g| g.emu.capture_exchange_mode(wanted))?;
        // SAFETY: as above.
        unsafe { cptr::write(mode, old) }
    })
}

/// `aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)`:
/// the model's tasks, in the order they were captured, on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIExecuteAsync(model: Handle, stream: aclrtStream) -> AclErrorCode {
    guard("aclmdlRIExecuteAsync", || {
        let model = handle(model)?;
        with_global(|g| Ok(g.emu.clone()))?.execute_model(model, stream_of(stream))
    })
}

/// `aclError aclmdlRIDestroy(aclmdlRI modelRI)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIDestroy(model: Handle) -> AclErrorCode {
    guard("aclmdlRIDestroy", || {
        let model = handle(model)?;
        with_global(|g| g.emu.destroy_model(model))
    })
}

/// `aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetId(model: Handle, id: *mut u32) -> AclErrorCode {
    guard("aclmdlRIGetId", || {
        let model = handle(model)?;
        if id.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let v = with_global(|g| g.emu.model_id(model))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(id, v) }
    })
}

/// `aclError aclmdlRIDebugPrint(aclmdlRI modelRI)`: the model and its
/// tasks, on standard error (the runtime prints to its log).
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIDebugPrint(model: Handle) -> AclErrorCode {
    guard("aclmdlRIDebugPrint", || {
        let model = handle(model)?;
        for line in with_global(|g| g.emu.model_description(model))? {
            eprintln!("aclmem-emu: {line}");
        }
        Ok(())
    })
}

/// `aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path,
/// uint32_t flags)`: the model's tasks written to `path` as the runtime
/// writes them, a Chrome trace (an array of complete events, one per task,
/// in order, each stream a `tid` `stream<N>` and the task type in
/// `args`), which torch_npu's `debug_dump` aligns for viewing.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIDebugJsonPrint(
    model: Handle,
    path: *const c_char,
    _flags: u32,
) -> AclErrorCode {
    guard("aclmdlRIDebugJsonPrint", || {
        let model = handle(model)?;
        let path = cptr::read_cstr(path, 4096)?;
        if path.is_empty() {
            return Err(AclError::INVALID_PARAM);
        }
        let (id, tasks) =
            with_global(|g| Ok((g.emu.model_id(model)?, g.emu.model_tasks(model)?.1)))?;
        let events: Vec<serde_json::Value> = tasks
            .iter()
            .enumerate()
            .map(|(i, (kind, name, stream))| {
                let name = if kind.starts_with("EVENT_") {
                    format!("{kind}_{name}")
                } else {
                    name.clone()
                };
                serde_json::json!({
                    "name": name,
                    "ph": "X",
                    "ts": i as f64,
                    "dur": 1.0,
                    "pid": format!("model{id}"),
                    "tid": format!("stream{stream}"),
                    "args": { "Task Type": kind, "Stream Id": stream, "Task Id": i },
                })
            })
            .collect();
        let text = serde_json::Value::Array(events).to_string();
        std::fs::write(&path, text).map_err(|_| AclError::INVALID_FILE)
    })
}

/// `aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureTaskGrpBegin(stream: aclrtStream) -> AclErrorCode {
    guard("aclmdlRICaptureTaskGrpBegin", || {
        with_global(|g| g.emu.task_group_begin(stream_of(stream)))
    })
}

/// `aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp
/// *handle)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureTaskGrpEnd(
    stream: aclrtStream,
    group: *mut Handle,
) -> AclErrorCode {
    guard("aclmdlRICaptureTaskGrpEnd", || {
        if group.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let h = with_global(|g| g.emu.task_group_end(stream_of(stream)))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(group, h as usize as Handle) }
    })
}

/// `aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream,
/// aclrtTaskGrp handle)`: the work enqueued on `stream` until the update
/// ends replaces the group's tasks.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureTaskUpdateBegin(
    stream: aclrtStream,
    group: Handle,
) -> AclErrorCode {
    guard("aclmdlRICaptureTaskUpdateBegin", || {
        let group = handle(group)?;
        with_global(|g| g.emu.task_update_begin(stream_of(stream), group))
    })
}

/// `aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRICaptureTaskUpdateEnd(stream: aclrtStream) -> AclErrorCode {
    guard("aclmdlRICaptureTaskUpdateEnd", || {
        with_global(|g| g.emu.task_update_end(stream_of(stream)))
    })
}

/// `aclmdlRICondTaskParams`: a conditional task's handle, type, body
/// count and the caller's array the bodies are written to.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct aclmdlRICondTaskParams {
    /// `aclmdlRICondHandle handle`.
    pub handle: Handle,
    /// `aclmdlRICondTaskType type` (IF 0, WHILE 1, SWITCH 2).
    pub kind: u32,
    /// `uint32_t size`: how many bodies.
    pub size: u32,
    /// `aclmdlRI *modelRIArray`: `size` out slots.
    pub bodies: *mut Handle,
}

/// The most bodies a SWITCH task takes here: the runtime names no bound,
/// this one keeps a garbage count from allocating without end (107000
/// above it, as for any count the runtime refuses).
const MAX_BODIES: usize = 1 << 16;

/// `aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t
/// defaultLaunchValue, aclmdlRICondHandleFlag flag, aclmdlRICondHandle
/// *handle)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICondHandleCreate(
    model: Handle,
    default: u32,
    flag: u32,
    out: *mut Handle,
) -> AclErrorCode {
    guard("aclmdlRICondHandleCreate", || {
        let model = handle(model)?;
        if out.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let h = with_global(|g| g.emu.cond_handle_create(model, default, flag))?;
        // SAFETY: the C caller's out parameter. The handle lives with its
        // model, so one the caller never receives goes with it.
        unsafe { cptr::write(out, h as usize as Handle) }
    })
}

/// `aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle,
/// uint64_t **ptr)`: the device address of the handle's value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICondHandleGetCondPtr(
    cond: Handle,
    out: *mut *mut u64,
) -> AclErrorCode {
    guard("aclmdlRICondHandleGetCondPtr", || {
        let cond = handle(cond)?;
        if out.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let addr = with_global(|g| g.emu.cond_value_address(cond))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(out, addr as *mut u64) }
    })
}

/// `aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params,
/// aclrtStream stream, uint32_t flags)`: records the conditional task on
/// the capturing `stream` and writes its `size` new bodies to
/// `params.modelRIArray`.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlRIAddCondTask(
    params: aclmdlRICondTaskParams,
    stream: aclrtStream,
    flags: u32,
) -> AclErrorCode {
    guard("aclmdlRIAddCondTask", || {
        if stream.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        if params.handle.is_null() || params.bodies.is_null() {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let count = params.size as usize;
        // The slots must be the caller's before anything is made: read
        // them and write them back unchanged.
        let slots = params.bodies.cast::<usize>();
        // SAFETY: the caller's array of `size` handles (checked copies).
        let held =
            unsafe { cptr::read_array(slots, count, MAX_BODIES, AclError::RT_PARAM_INVALID) }?;
        for (i, &v) in held.iter().enumerate() {
            // SAFETY: as above; the same value back.
            unsafe { cptr::write(slots.wrapping_add(i), v) }?;
        }
        let bodies = with_global(|g| {
            g.emu.add_cond_task(
                params.handle as usize as u64,
                params.kind,
                params.size,
                stream_of(stream),
                flags,
            )
        })?;
        for (i, b) in bodies.into_iter().enumerate() {
            // SAFETY: written back above, so writable.
            unsafe { cptr::write(params.bodies.wrapping_add(i), b as usize as Handle) }?;
        }
        Ok(())
    })
}

/// A host function and its argument, as the caller gave them.
type HostFn = unsafe extern "C" fn(*mut c_void);

/// Enqueues `f(arg)` on `stream`: called in order with the stream's other
/// work (at once here, or by each replay when the stream captures).
fn launch(
    stream: aclrtStream,
    f: Option<HostFn>,
    arg: *mut c_void,
    what: &'static str,
) -> Result<(), AclError> {
    let f = f.ok_or(AclError::INVALID_PARAM)?;
    let s = stream_of(stream);
    with_global(|g| g.emu.check_stream(s))?;
    let arg = arg as usize;
    capture::enqueue(
        s,
        "HOST_FUNC",
        || format!("{what} {:#x}", f as usize),
        move |_| {
            // SAFETY: the caller's function with the caller's argument, called
            // as the runtime calls it: once per enqueue or per replay, on a
            // thread of this process; what it does is the caller's contract.
            unsafe { f(arg as *mut c_void) };
            Ok(())
        },
    )
}

/// `aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn,
/// void *args)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchHostFunc(
    stream: aclrtStream,
    f: Option<HostFn>,
    args: *mut c_void,
) -> AclErrorCode {
    guard("aclrtLaunchHostFunc", || {
        launch(stream, f, args, "host function")
    })
}

/// `aclError aclrtLaunchCallback(aclrtCallback fn, void *userData,
/// aclrtCallbackBlockType blockType, aclrtStream stream)`: the callback
/// runs in stream order on the calling thread (no report thread is needed
/// where nothing runs asynchronously). A block type other than
/// `ACL_CALLBACK_NO_BLOCK` (0) or `ACL_CALLBACK_BLOCK` (1) is 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtLaunchCallback(
    f: Option<HostFn>,
    data: *mut c_void,
    block: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtLaunchCallback", || {
        if block > 1 {
            return Err(AclError::INVALID_PARAM);
        }
        launch(stream, f, data, "callback")
    })
}

/// `size_t aclmem_emu_model_ranges(aclmdlRI modelRI, uintptr_t (*out)[2],
/// size_t capacity)`: the memory the model's tasks read and write, as
/// (address, bytes) pairs, at most `capacity` of them written to `out`
/// (NULL to count); how many there are (0 for an unknown model). aclmem's
/// sanitizer asks it at the end of a capture, to check releases of memory a
/// live graph uses whatever call recorded it. Not a CANN function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmem_emu_model_ranges(
    model: Handle,
    out: *mut [usize; 2],
    capacity: usize,
) -> usize {
    let Ok(model) = handle(model) else {
        return 0;
    };
    let ranges = with_global(|g| g.emu.model_ranges(model)).unwrap_or_default();
    if !out.is_null() {
        for (i, &(a, n)) in ranges.iter().take(capacity).enumerate() {
            // SAFETY: the caller's array of `capacity` pairs (checked write).
            if unsafe { cptr::write(out.wrapping_add(i), [a, n]) }.is_err() {
                return 0;
            }
        }
    }
    ranges.len()
}
