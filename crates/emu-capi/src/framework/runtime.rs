//! The framework functions the emulator carries out: streams made with a
//! configuration, events (also across processes), the thread's last error,
//! the capture state of a stream (never capturing), device information and
//! capabilities (compile options, system parameters and versions are in
//! `options`; mstx in `mstx`; host memory in `host_memory`).
//!
//! Prototypes are CANN's (`docs/catalogue.md` lists them); every pointer is
//! checked as in the rest of the library.

use std::ffi::{CString, c_char};

use aclmem_core::AclError;
use aclmem_sys::{aclrtEvent, aclrtStream};

use aclmem_emu::Target;

use crate::capture;
use crate::cptr;
use crate::entry::{self, AclErrorCode, guard};
use crate::shared;
use crate::state::{self, with_global};

/// `aclrtIpcEventHandle`: `struct { char reserved[64]; }`, passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct aclrtIpcEventHandle {
    /// Opaque bytes.
    pub reserved: [u8; 64],
}

fn event(e: aclrtEvent) -> Result<u64, AclError> {
    if e.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    Ok(e as usize as u64)
}

/// Hands a new event out through `out` (destroyed again if `out` cannot
/// be written).
///
/// # Safety
/// `out` is NULL or a pointer the C caller passed for an `aclrtEvent`.
unsafe fn hand_out_event(
    out: *mut aclrtEvent,
    make: impl FnOnce() -> Result<u64, AclError>,
) -> Result<(), AclError> {
    if out.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    with_global(|g| {
        let e = make()?;
        // SAFETY: the C caller's out parameter.
        unsafe {
            cptr::hand_out(out, e as usize as aclrtEvent, || {
                let _ = g.emu.destroy_event(e);
            })
        }
    })
}

/// `aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t
/// priority, uint32_t flag)`: a stream on this thread's device; priority
/// and flags change nothing here (nothing runs asynchronously).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamWithConfig(
    stream: *mut aclrtStream,
    _priority: u32,
    _flag: u32,
) -> AclErrorCode {
    shared::create_stream(stream)
}

/// `aclError aclrtStreamQuery(aclrtStream stream)`: 0, every stream is
/// complete; a stream that is not live is 107000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamQuery(stream: aclrtStream) -> AclErrorCode {
    guard("aclrtStreamQuery", || {
        let s = stream as usize as u64;
        with_global(|g| {
            g.emu.check_stream(s)?;
            // A capturing stream cannot be queried (107027).
            g.emu.refuse_if_capturing(s)
        })
    })
}

/// `aclError aclrtCreateEvent(aclrtEvent *event)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEvent(out: *mut aclrtEvent) -> AclErrorCode {
    // SAFETY: the C caller's out parameter.
    unsafe { create_event("aclrtCreateEvent", out) }
}

/// `aclrtCreateEvent` and its variants (flags change nothing here), as
/// the entry point `name`.
///
/// # Safety
/// `out` is what the C caller passed for an `aclrtEvent *`.
unsafe fn create_event(name: &'static str, out: *mut aclrtEvent) -> AclErrorCode {
    // SAFETY: the C caller's out parameter, checked.
    guard(name, || unsafe {
        hand_out_event(out, || with_global(|g| g.emu.create_event(Target::Current)))
    })
}

/// `aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventWithFlag(
    out: *mut aclrtEvent,
    _flag: u32,
) -> AclErrorCode {
    // SAFETY: as aclrtCreateEvent.
    unsafe { create_event("aclrtCreateEventWithFlag", out) }
}

/// `aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventExWithFlag(
    out: *mut aclrtEvent,
    _flag: u32,
) -> AclErrorCode {
    // SAFETY: as aclrtCreateEvent.
    unsafe { create_event("aclrtCreateEventExWithFlag", out) }
}

/// `aclError aclrtDestroyEvent(aclrtEvent event)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyEvent(e: aclrtEvent) -> AclErrorCode {
    guard("aclrtDestroyEvent", || {
        with_global(|g| g.emu.destroy_event(event(e)?))
    })
}

/// `aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtRecordEvent(e: aclrtEvent, stream: aclrtStream) -> AclErrorCode {
    guard("aclrtRecordEvent", || {
        let (e, s) = (event(e)?, stream as usize as u64);
        with_global(|g| {
            g.emu.wait_event(e, s)?;
            if g.emu.capture_event_record(e, s)? {
                return Ok(());
            }
            g.emu.record_event(e, s)
        })
    })
}

/// `aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetEvent(e: aclrtEvent, stream: aclrtStream) -> AclErrorCode {
    guard("aclrtResetEvent", || {
        let (e, s) = (event(e)?, stream as usize as u64);
        with_global(|g| g.emu.wait_event(e, s))?;
        capture::enqueue(
            s,
            "EVENT_RESET",
            || format!("{e:x}"),
            // As a recorded event record: a destroyed event has nothing
            // left to reset.
            move |on| {
                let _ = with_global(|g| g.emu.reset_event(e, on));
                Ok(())
            },
        )
    })
}

/// `aclError aclrtSynchronizeEvent(aclrtEvent event)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeEvent(e: aclrtEvent) -> AclErrorCode {
    guard("aclrtSynchronizeEvent", || {
        with_global(|g| g.emu.wait_event(event(e)?, 0))
    })
}

/// `aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamWaitEvent(stream: aclrtStream, e: aclrtEvent) -> AclErrorCode {
    guard("aclrtStreamWaitEvent", || {
        let (e, s) = (event(e)?, stream as usize as u64);
        with_global(|g| {
            g.emu.stream_wait_event(e, s)?;
            // A stream waiting on an event of a capture joins it.
            g.emu.capture_event_wait(s, e).map(drop)
        })
    })
}

/// `aclError aclrtQueryEventStatus(aclrtEvent event,
/// aclrtEventRecordedStatus *status)`: `ACL_EVENT_RECORDED_STATUS_COMPLETE`
/// (1) once recorded, `..._NOT_READY` (0) before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEventStatus(e: aclrtEvent, status: *mut u32) -> AclErrorCode {
    guard("aclrtQueryEventStatus", || {
        if status.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let recorded = with_global(|g| g.emu.event_recorded(event(e)?))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(status, u32::from(recorded)) }
    })
}

/// `aclError aclrtQueryEventWaitStatus(aclrtEvent event,
/// aclrtEventWaitStatus *status)`: `ACL_EVENT_WAIT_STATUS_COMPLETE` (0):
/// nothing ever waits.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEventWaitStatus(
    e: aclrtEvent,
    status: *mut u32,
) -> AclErrorCode {
    guard("aclrtQueryEventWaitStatus", || {
        if status.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| g.emu.event_recorded(event(e)?))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(status, 0) }
    })
}

/// `aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent,
/// aclrtEvent endEvent)`: the host time between the two records.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventElapsedTime(
    ms: *mut f32,
    start: aclrtEvent,
    end: aclrtEvent,
) -> AclErrorCode {
    guard("aclrtEventElapsedTime", || {
        if ms.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let t = with_global(|g| g.emu.event_elapsed_ms(event(start)?, event(end)?))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(ms, t) }
    })
}

/// `aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle
/// *handle)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcGetEventHandle(
    e: aclrtEvent,
    handle: *mut aclrtIpcEventHandle,
) -> AclErrorCode {
    guard("aclrtIpcGetEventHandle", || {
        if handle.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let bytes = with_global(|g| g.emu.ipc_event_handle(event(e)?))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(handle, aclrtIpcEventHandle { reserved: bytes }) }
    })
}

/// `aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle,
/// aclrtEvent *event)`: an event of this process that stands for the
/// exporter's (complete: nothing runs asynchronously on the machine).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcOpenEventHandle(
    handle: aclrtIpcEventHandle,
    out: *mut aclrtEvent,
) -> AclErrorCode {
    // SAFETY: the C caller's out parameter, checked.
    guard("aclrtIpcOpenEventHandle", || unsafe {
        hand_out_event(out, || {
            with_global(|g| g.emu.open_ipc_event(&handle.reserved))
        })
    })
}

/// `aclError aclrtPeekAtLastError(aclrtLastErrLevel level)`: the code of
/// the calling thread's last failed call, kept.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtPeekAtLastError(_level: u32) -> AclErrorCode {
    entry::last_error(false)
}

/// `aclError aclrtGetLastError(aclrtLastErrLevel level)`: the code of the
/// calling thread's last failed call, cleared.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetLastError(_level: u32) -> AclErrorCode {
    entry::last_error(true)
}

thread_local! {
    static MESSAGE: std::cell::RefCell<CString> = std::cell::RefCell::new(CString::default());
}

/// `const char *aclGetRecentErrMsg()`: a message naming the calling
/// thread's last failed call's code; an empty string when none failed
/// (never NULL, which some callers turn into a string unchecked). Valid
/// until the thread's next call of it.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    let code = entry::last_error(false);
    let text = if code == 0 {
        String::new()
    } else {
        format!(
            "aclmem-emu: the last failed call answered {}",
            AclError::from_code(code).map_or_else(|| code.to_string(), |e| e.to_string())
        )
    };
    MESSAGE.with(|m| {
        let mut m = m.borrow_mut();
        *m = CString::new(text).unwrap_or_default();
        m.as_ptr()
    })
}

/// `aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value)`:
/// `ACL_CANN_ATTR_INF_NAN` (0) and `ACL_CANN_ATTR_BF16` (1) are 1 on the
/// products whose AI cores have them (Atlas A2 and A3 training and
/// inference series), 0 on the others; `ACL_CANN_ATTR_JIT_COMPILE` (2) is 0
/// (nothing is compiled here); another attribute is 100000.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetCannAttribute(attr: i32, value: *mut i32) -> AclErrorCode {
    guard("aclGetCannAttribute", || {
        if value.is_null() || !(0..=2).contains(&attr) {
            return Err(AclError::INVALID_PARAM);
        }
        let modern = state::with_config(|c| {
            matches!(
                c.product(),
                Ok(aclmem_core::Product::AtlasA2 | aclmem_core::Product::AtlasA3)
            )
        })?;
        let v = i32::from(attr != 2 && modern);
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(value, v) }
    })
}

/// `aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t
/// *actualTimeout)`: accepted (no operator runs); the timeout asked for is
/// the one in effect.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetOpExecuteTimeOutV2(
    timeout: u64,
    actual: *mut u64,
) -> AclErrorCode {
    guard("aclrtSetOpExecuteTimeOutV2", || {
        if actual.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(actual, timeout) }
    })
}

/// `aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t
/// *flag)`: 0, overflow detection is off (nothing computes).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetStreamOverflowSwitch(
    stream: aclrtStream,
    flag: *mut u32,
) -> AclErrorCode {
    guard("aclrtGetStreamOverflowSwitch", || {
        if flag.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| g.emu.check_stream(stream as usize as u64))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(flag, 0) }
    })
}

/// `aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t
/// value, size_t count, aclrtStream stream)`: `aclrtMemset` on a live
/// stream (0 is the default one), done at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemsetAsync(
    dev_ptr: *mut std::ffi::c_void,
    max_count: usize,
    value: i32,
    count: usize,
    stream: aclrtStream,
) -> AclErrorCode {
    shared::memset_async(dev_ptr, max_count, value, count, stream as usize as u64)
}

/// `aclrtDevAttr` values the emulator knows.
const ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: u32 = 301;
const ACL_DEV_ATTR_PHY_CHIP_ID: u32 = 402;
const ACL_DEV_ATTR_IS_VIRTUAL: u32 = 501;

/// `aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr,
/// int64_t *value)`: the device memory (`ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE`),
/// the chip id (the device id) and "not virtual" are the emulated
/// machine's. Core counts, cache sizes and the other attributes describe
/// hardware the emulator does not have: 207000, with `*value` set to 0 so
/// that a caller that ignores the code (torch_npu's device properties)
/// reads 0, not garbage. A device outside the machine is 107001.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceInfo(
    device: u32,
    attr: u32,
    value: *mut i64,
) -> AclErrorCode {
    guard("aclrtGetDeviceInfo", || {
        if value.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let (devices, hbm) = state::with_config(|c| (c.devices, c.device_memory))?;
        if device >= devices {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        let answer = match attr {
            ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE => Some(i64::try_from(hbm).unwrap_or(i64::MAX)),
            ACL_DEV_ATTR_PHY_CHIP_ID => Some(i64::from(device)),
            ACL_DEV_ATTR_IS_VIRTUAL => Some(0),
            _ => None,
        };
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(value, answer.unwrap_or(0))? };
        answer.map(drop).ok_or(AclError::RT_FEATURE_NOT_SUPPORT)
    })
}

/// `aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo
/// deviceInfo, int64_t *value)`: AI core and vector core counts and the L2
/// size describe hardware the emulator does not have: 207000, with
/// `*value` set to 0; a device outside the machine is 107001.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetDeviceCapability(
    device: u32,
    _info: i32,
    value: *mut i64,
) -> AclErrorCode {
    guard("aclGetDeviceCapability", || {
        if value.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        if device >= state::with_config(|c| c.devices)? {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(value, 0)? };
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    })
}
