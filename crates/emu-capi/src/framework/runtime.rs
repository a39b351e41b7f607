//! The framework functions the emulator carries out: streams made with a
//! configuration, events (also across processes), compile options and
//! system parameters as stored values, version strings, the thread's last
//! error, and the capture state of a stream (never capturing).
//!
//! Prototypes are CANN's (`docs/catalogue.md` lists them); every pointer is
//! checked as in the rest of the library.

use std::collections::BTreeMap;
use std::ffi::{CString, c_char};

use aclmem_core::AclError;
use aclmem_sys::{aclrtEvent, aclrtStream};
use parking_lot::Mutex;

use aclmem_emu::Target;

use crate::state::{self, with_global};
use crate::{AclErrorCode, cptr, guard};

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
    // SAFETY: the same contract as aclrtCreateStream.
    unsafe { crate::aclrtCreateStream(stream) }
}

/// `aclError aclrtStreamQuery(aclrtStream stream)`: 0, every stream is
/// complete; a stream that is not live is 107000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtStreamQuery(stream: aclrtStream) -> AclErrorCode {
    guard("aclrtStreamQuery", || {
        with_global(|g| g.emu.check_stream(stream as usize as u64))
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
        with_global(|g| g.emu.record_event(event(e)?, stream as usize as u64))
    })
}

/// `aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetEvent(e: aclrtEvent, stream: aclrtStream) -> AclErrorCode {
    guard("aclrtResetEvent", || {
        with_global(|g| g.emu.reset_event(event(e)?, stream as usize as u64))
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
        with_global(|g| g.emu.wait_event(event(e)?, stream as usize as u64))
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

/// Values set by `aclSetCompileopt` and the system-parameter setters, per
/// process (they configure operator compilation and execution, which the
/// emulator does not do; they are kept so that what is set reads back).
static COMPILE_OPTIONS: Mutex<BTreeMap<u32, String>> = Mutex::new(BTreeMap::new());
static SYS_PARAMS: Mutex<BTreeMap<u32, i64>> = Mutex::new(BTreeMap::new());

/// The length limit of a compile option's value (the runtime's buffer).
const COMPILE_OPTION_MAX: usize = 4096;

/// `aclError aclSetCompileopt(aclCompileOpt opt, const char *value)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclSetCompileopt(opt: u32, value: *const c_char) -> AclErrorCode {
    guard("aclSetCompileopt", || {
        let v = cptr::read_cstr(value, COMPILE_OPTION_MAX)?;
        COMPILE_OPTIONS.lock().insert(opt, v);
        Ok(())
    })
}

/// `ACL_OP_JIT_COMPILE`: whether operators are compiled just in time.
const ACL_OP_JIT_COMPILE: u32 = 10;

/// The value of an option: the one set, else the default (`disable` for
/// `ACL_OP_JIT_COMPILE`: no operator is ever compiled here; empty for the
/// others).
fn compile_option(opt: u32) -> String {
    COMPILE_OPTIONS
        .lock()
        .get(&opt)
        .cloned()
        .unwrap_or_else(|| {
            if opt == ACL_OP_JIT_COMPILE {
                "disable".to_owned()
            } else {
                String::new()
            }
        })
}

/// `size_t aclGetCompileoptSize(aclCompileOpt opt)`: the buffer a value of
/// the option needs (the runtime's fixed 4096, or more for a longer value
/// set), never 0.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetCompileoptSize(opt: u32) -> usize {
    (compile_option(opt).len() + 1).max(COMPILE_OPTION_MAX)
}

/// `aclError aclGetCompileopt(aclCompileOpt opt, char *value, size_t
/// length)`: the value set, or the option's default.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetCompileopt(
    opt: u32,
    value: *mut c_char,
    length: usize,
) -> AclErrorCode {
    guard("aclGetCompileopt", || {
        if value.is_null() || length == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let v = compile_option(opt);
        if v.len() >= length {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's buffer of `length` bytes.
        unsafe { cptr::write_cstr(value, length, &v) }
    })
}

/// `aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetSysParamOpt(opt: u32, value: i64) -> AclErrorCode {
    guard("aclrtSetSysParamOpt", || {
        SYS_PARAMS.lock().insert(opt, value);
        Ok(())
    })
}

/// `aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value)`:
/// as `aclrtSetSysParamOpt` (one value per process). Not refused without a
/// current context: torch_npu sets it during initialisation and treats
/// any failure as fatal, and the value changes nothing here
/// (docs/catalogue.md).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCtxSetSysParamOpt(opt: u32, value: i64) -> AclErrorCode {
    guard("aclrtCtxSetSysParamOpt", || {
        SYS_PARAMS.lock().insert(opt, value);
        Ok(())
    })
}

/// `aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value)`: the
/// value set; 0, the runtime's default, for one never set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetSysParamOpt(opt: u32, value: *mut i64) -> AclErrorCode {
    guard("aclrtGetSysParamOpt", || {
        if value.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let v = SYS_PARAMS.lock().get(&opt).copied().unwrap_or(0);
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(value, v) }
    })
}

/// `ACL_PKG_VERSION_MAX_SIZE`: the version string buffer.
const VERSION_MAX: usize = 128;

/// The packages the emulated installation has: the runtime's directory
/// names under `share/info` that carry the emulated release; `pkg` is the
/// C caller's package name (NULL or unreadable: 100000).
fn package_release(pkg: *const c_char) -> Result<String, AclError> {
    match cptr::read_cstr(pkg, VERSION_MAX)?.as_str() {
        "runtime" | "cann" | "compiler" | "hccl" | "opp" | "toolkit" => {
            state::with_config(|c| c.cann.release().to_owned())
        }
        "driver" => crate::device::driver_version(),
        // Not installed, as the runtime answers a missing version.info.
        _ => Err(AclError::INVALID_FILE),
    }
}

/// `aclError aclsysGetVersionStr(char *pkgName, char *versionStr)`: the
/// emulated release for the runtime's packages (`ACL_PKG_VERSION_MAX_SIZE`
/// bytes are written at most); another package is 100003.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionStr(pkg: *const c_char, out: *mut c_char) -> AclErrorCode {
    guard("aclsysGetVersionStr", || {
        if out.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let release = package_release(pkg)?;
        // SAFETY: the C caller's buffer of ACL_PKG_VERSION_MAX_SIZE bytes.
        unsafe { cptr::write_cstr(out, VERSION_MAX, &release) }
    })
}

/// A release string as the runtime counts it: major·10,000,000 +
/// minor·100,000 + patch·1,000, less 300, 200 or 100 for an alpha, beta or
/// RC, plus its number (`8.3.RC1` is 80,299,901; `9.0.0` is 90,000,000).
fn version_num(release: &str) -> i32 {
    let mut parts = release.split('.');
    let number = |p: Option<&str>| p.and_then(|p| p.parse::<i32>().ok()).unwrap_or(0);
    let (major, minor) = (number(parts.next()), number(parts.next()));
    let rest = parts.next().unwrap_or("0").to_ascii_lowercase();
    let pre = [("alpha", 300), ("beta", 200), ("rc", 100)]
        .into_iter()
        .find_map(|(name, less)| rest.strip_prefix(name).map(|n| (less, n)));
    let base = major * 10_000_000 + minor * 100_000;
    match pre {
        Some((less, n)) => base - less + n.parse::<i32>().unwrap_or(0),
        None => base + rest.parse::<i32>().unwrap_or(0) * 1_000,
    }
}

/// `aclError aclsysGetVersionNum(char *pkgName, int32_t *versionNum)`: the
/// emulated release of the runtime's packages, counted as the runtime does.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionNum(pkg: *const c_char, out: *mut i32) -> AclErrorCode {
    guard("aclsysGetVersionNum", || {
        if out.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let release = package_release(pkg)?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(out, version_num(&release)) }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_numbers_count_as_the_runtime_does() {
        assert_eq!(super::version_num("9.0.0"), 90_000_000);
        assert_eq!(super::version_num("8.3.RC1"), 80_299_901);
        assert_eq!(super::version_num("8.5.alpha002"), 80_499_702);
        assert_eq!(super::version_num("8.1.beta1"), 80_099_801);
        assert_eq!(super::version_num("8.0.2"), 80_002_000);
    }
}

/// `aclError aclrtPeekAtLastError(aclrtLastErrLevel level)`: the code of
/// the calling thread's last failed call, kept.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtPeekAtLastError(_level: u32) -> AclErrorCode {
    crate::last_error(false)
}

/// `aclError aclrtGetLastError(aclrtLastErrLevel level)`: the code of the
/// calling thread's last failed call, cleared.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetLastError(_level: u32) -> AclErrorCode {
    crate::last_error(true)
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
    let code = crate::last_error(false);
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

/// `aclError aclmdlRICaptureGetInfo(aclrtStream stream,
/// aclmdlRICaptureStatus *status, aclmdlRI *modelRI)`: no stream is ever
/// capturing (`ACL_MODEL_RI_CAPTURE_STATUS_NONE`, 0; no model).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureGetInfo(
    stream: aclrtStream,
    status: *mut u32,
    model: *mut *mut std::ffi::c_void,
) -> AclErrorCode {
    guard("aclmdlRICaptureGetInfo", || {
        if status.is_null() || model.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| g.emu.check_stream(stream as usize as u64))?;
        // SAFETY: the C caller's out parameters.
        unsafe {
            cptr::write(status, 0)?;
            cptr::write(model, std::ptr::null_mut())
        }
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
    let live = guard("aclrtMemsetAsync", || {
        with_global(|g| g.emu.check_stream(stream as usize as u64))
    });
    if live != 0 {
        return live;
    }
    // SAFETY: the same contract as aclrtMemset.
    unsafe { crate::aclrtMemset(dev_ptr, max_count, value, count) }
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
