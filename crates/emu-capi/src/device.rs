//! Initialisation, devices, contexts, streams, synchronisation, versions.

use std::ffi::c_char;
use std::ptr;

use aclmem_core::AclError;
use aclmem_emu::args;
use aclmem_sys::{aclCANNPackageVersion, aclrtContext, aclrtStream};

use crate::entry::{self, AclErrorCode, guard};
use crate::state::{self, with_global};
use crate::{cptr, faults, fork, shared};
use aclmem_hal::DeviceInfo;

/// `aclError aclInit(const char *configPath)`. Joins the machine
/// `ACLMEM_EMU_MACHINE` names (the emulator reads its environment: see the
/// crate docs). `configPath` may be NULL; of the JSON it names, the
/// emulator reads the default device (`{"defaultDevice":
/// {"default_device": "0"}}`, what torch_npu passes): a call that needs a
/// device on a thread without one then sets it on that thread, as the
/// runtime does. A value that is not a decimal device id is 100000; a
/// file that cannot be read or parsed is ignored, as is a device the
/// machine does not have (the runtime uses it only if it exists).
#[unsafe(no_mangle)]
pub extern "C" fn aclInit(config_path: *const c_char) -> AclErrorCode {
    guard("aclInit", || {
        let default_device = if config_path.is_null() {
            None
        } else {
            let path = cptr::read_cstr(config_path, 4096)?;
            state::default_device(&path)?
        };
        fork::install();
        state::init(faults::config_error)?;
        if let Some(d) = default_device {
            let _ = with_global(|g| g.emu.set_default_device(Some(d)));
        }
        Ok(())
    })
}

/// `aclError aclFinalize()`: this process leaves the machine; everything it
/// still holds is released, as at exit.
#[unsafe(no_mangle)]
pub extern "C" fn aclFinalize() -> AclErrorCode {
    guard("aclFinalize", state::finalize)
}

/// `aclError aclrtSetDevice(int32_t deviceId)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDevice(device_id_: i32) -> AclErrorCode {
    guard("aclrtSetDevice", || {
        with_global(|g| g.emu.set_device(device_id_))
    })
}

fn reset(device: i32, force: bool) -> Result<(), AclError> {
    with_global(|g| g.emu.reset_device(device, force))
}

/// `aclError aclrtResetDevice(int32_t deviceId)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDevice(device_id: i32) -> AclErrorCode {
    guard("aclrtResetDevice", || reset(device_id, false))
}

/// `aclError aclrtResetDeviceForce(int32_t deviceId)`: as many resets as it
/// takes.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDeviceForce(device_id: i32) -> AclErrorCode {
    guard("aclrtResetDeviceForce", || reset(device_id, true))
}

/// `aclError aclrtGetDevice(int32_t *deviceId)`: 107002 on a thread
/// without a device, before `aclInit` too, as the runtime answers; that
/// answer is not the thread's last error (torch_npu asks
/// `aclrtPeekAtLastError` after it and must see 0 to take it for device 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDevice(device_id: *mut i32) -> AclErrorCode {
    let before = entry::last_error(false);
    let code = guard("aclrtGetDevice", || {
        if device_id.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // Before `aclInit` no thread has a device: 107002, as the runtime
        // answers (torch_npu takes it for device 0), not 100001.
        let d = with_global(|g| g.emu.current_device()).map_err(|e| {
            if e == AclError::UNINITIALIZE {
                AclError::RT_CONTEXT_NULL
            } else {
                e
            }
        })?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(device_id, d as i32) }
    });
    if code == AclError::RT_CONTEXT_NULL.code() {
        entry::set_last_error(before);
    }
    code
}

/// `aclError aclrtGetDeviceCount(uint32_t *count)`; answered before
/// `aclInit` too, as the runtime does (from the environment's machine).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> AclErrorCode {
    guard("aclrtGetDeviceCount", || {
        if count.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let n = match with_global(|g| g.emu.device_count()) {
            Err(AclError::UNINITIALIZE) => state::with_config(|c| {
                aclmem_emu::env::visible_devices(c.devices).count(c.devices)
            })??,
            n => n?,
        };
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(count, n) }
    })
}

/// `const char *aclrtGetSocName()`: answered before `aclInit` too (the
/// runtime's does not need it); NULL only when the environment names no
/// valid machine.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSocName() -> *const c_char {
    std::panic::catch_unwind(|| {
        state::with_config(|c| state::intern(&c.soc_name).as_ptr()).unwrap_or(ptr::null())
    })
    .unwrap_or(ptr::null())
}

/// `aclError aclrtGetRunMode(aclrtRunMode *runMode)`: `ACL_HOST` (1) or
/// `ACL_DEVICE` (0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetRunMode(run_mode: *mut u32) -> AclErrorCode {
    guard("aclrtGetRunMode", || {
        if run_mode.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let m = with_global(|g| Ok(g.emu.config().run_mode.to_acl_run_mode()))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(run_mode, m) }
    })
}

/// `aclError aclrtGetVersion(int32_t *major, int32_t *minor, int32_t
/// *patch)`: the ACL interface version of the emulated CANN release.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetVersion(
    major: *mut i32,
    minor: *mut i32,
    patch: *mut i32,
) -> AclErrorCode {
    guard("aclrtGetVersion", || {
        if major.is_null() || minor.is_null() || patch.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let (a, b, c) = with_global(|g| Ok(g.emu.config().cann.acl_interface()))?;
        // SAFETY: the C caller's out parameters.
        unsafe {
            cptr::write(major, a)?;
            cptr::write(minor, b)?;
            cptr::write(patch, c)
        }
    })
}

/// Copies `text` into a C `char` array, NUL-terminated (truncated to fit).
fn fill(field: &mut [c_char], text: &str) {
    field.fill(0);
    let room = field.len().saturating_sub(1);
    for (dst, src) in field.iter_mut().zip(text.bytes().take(room)) {
        *dst = src as c_char;
    }
}

/// `aclError aclsysGetCANNVersion(aclCANNPackageName name,
/// aclCANNPackageVersion *version)`: the emulated release for the CANN and
/// runtime packages, the driver's version (`ACLMEM_EMU_DRIVER`) for
/// `ACL_PKG_NAME_DRIVER`; any other package is "not installed"
/// (`ACL_ERROR_INVALID_FILE`, 100003); an unknown name is 100000. The
/// version is split at its dots into major, minor, release and patch, the
/// missing ones "0" (`26.0.rc1` is 26, 0, rc1, 0), as the runtime splits it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetCANNVersion(
    name: u32,
    version: *mut aclCANNPackageVersion,
) -> AclErrorCode {
    guard("aclsysGetCANNVersion", || {
        if version.is_null() || name > aclmem_sys::ACL_PKG_NAME_DRIVER {
            return Err(AclError::INVALID_PARAM);
        }
        // Read from the installation, before `aclInit` too.
        let release = match name {
            aclmem_sys::ACL_PKG_NAME_CANN | aclmem_sys::ACL_PKG_NAME_RUNTIME => {
                state::with_config(|c| c.cann.release().to_owned())?
            }
            aclmem_sys::ACL_PKG_NAME_DRIVER => shared::driver_version()?,
            _ => return Err(AclError::INVALID_FILE),
        };
        let release = release.as_str();
        let mut out = aclCANNPackageVersion::default();
        fill(&mut out.version, release);
        let mut parts = release.split('.').chain(std::iter::repeat("0"));
        for field in [
            &mut out.majorVersion,
            &mut out.minorVersion,
            &mut out.releaseVersion,
            &mut out.patchVersion,
        ] {
            fill(field, parts.next().unwrap_or("0"));
        }
        // SAFETY: the C caller's out parameter (512 bytes).
        unsafe { cptr::write(version, out) }
    })
}

/// `aclError aclrtDeviceGetBareTgid(int32_t *pid)`: the process id to
/// whitelist for sharing, as the kernel knows it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetBareTgid(pid: *mut i32) -> AclErrorCode {
    guard("aclrtDeviceGetBareTgid", || {
        if pid.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let p = with_global(|g| Ok(g.emu.pid()))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(pid, p) }
    })
}

/// `aclError aclrtSynchronizeDevice(void)`: nothing runs asynchronously in
/// the emulator (copies are synchronous), so there is nothing to wait for.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeDevice() -> AclErrorCode {
    guard("aclrtSynchronizeDevice", || {
        with_global(|g| g.emu.synchronize_device())
    })
}

/// `aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)`: -1
/// waits forever, above waits that many milliseconds; below -1 is 107000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> AclErrorCode {
    guard("aclrtSynchronizeDeviceWithTimeout", || {
        args::sync_timeout(timeout)?;
        with_global(|g| g.emu.synchronize_device())
    })
}

/// `aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)`:
/// makes a context on the device and makes it current on this thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateContext(
    context: *mut aclrtContext,
    device_id_: i32,
) -> AclErrorCode {
    guard("aclrtCreateContext", || {
        if context.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            let c = g.emu.create_context(device_id_)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(context, c as usize as aclrtContext, || {
                    let _ = g.emu.destroy_context(c);
                })
            }
        })
    })
}

/// `aclError aclrtDestroyContext(aclrtContext context)`: only contexts made
/// by `aclrtCreateContext` (the default context is 107000, as is an unknown
/// one).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyContext(context: aclrtContext) -> AclErrorCode {
    guard("aclrtDestroyContext", || {
        if context.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| g.emu.destroy_context(context as usize as u64))
    })
}

/// `aclError aclrtSetCurrentContext(aclrtContext context)`: the context's
/// device becomes this thread's.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetCurrentContext(context: aclrtContext) -> AclErrorCode {
    guard("aclrtSetCurrentContext", || {
        if context.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| g.emu.set_current_context(context as usize as u64))
    })
}

/// `aclError aclrtGetCurrentContext(aclrtContext *context)`: the context set
/// on this thread, or the default context of its device; 107002 with none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetCurrentContext(context: *mut aclrtContext) -> AclErrorCode {
    guard("aclrtGetCurrentContext", || {
        if context.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let c = with_global(|g| g.emu.current_context())?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(context, c as usize as aclrtContext) }
    })
}

/// `aclError aclrtCreateStream(aclrtStream *stream)`: a stream on this
/// thread's device. Streams execute at once (copies are synchronous).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStream(stream: *mut aclrtStream) -> AclErrorCode {
    shared::create_stream(stream)
}

fn destroy_stream(stream: aclrtStream) -> Result<(), AclError> {
    if stream.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    with_global(|g| g.emu.destroy_stream(stream as usize as u64))
}

/// `aclError aclrtDestroyStream(aclrtStream stream)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyStream(stream: aclrtStream) -> AclErrorCode {
    guard("aclrtDestroyStream", || destroy_stream(stream))
}

/// `aclError aclrtDestroyStreamForce(aclrtStream stream)`: as
/// `aclrtDestroyStream` (nothing is ever pending).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDestroyStreamForce(stream: aclrtStream) -> AclErrorCode {
    guard("aclrtDestroyStreamForce", || destroy_stream(stream))
}

/// `aclError aclrtSynchronizeStream(aclrtStream stream)`: NULL is the
/// default stream; nothing is ever pending.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeStream(stream: aclrtStream) -> AclErrorCode {
    guard("aclrtSynchronizeStream", || {
        with_global(|g| g.emu.synchronize_stream(stream as usize as u64))
    })
}

/// `aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t
/// timeout)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeStreamWithTimeout(
    stream: aclrtStream,
    timeout: i32,
) -> AclErrorCode {
    guard("aclrtSynchronizeStreamWithTimeout", || {
        args::sync_timeout(timeout)?;
        with_global(|g| g.emu.synchronize_stream(stream as usize as u64))
    })
}

/// `aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t
/// deviceId, int32_t peerDeviceId)`: every pair of distinct devices of the
/// emulated server can (1); a device with itself is 100000.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceCanAccessPeer(
    can: *mut i32,
    device: i32,
    peer: i32,
) -> AclErrorCode {
    guard("aclrtDeviceCanAccessPeer", || {
        if can.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let yes = with_global(|g| g.emu.can_access_peer(device, peer))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(can, i32::from(yes)) }
    })
}

/// `aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t
/// flags)`: flags other than 0 are `ACL_ERROR_FEATURE_UNSUPPORTED`
/// (200006); the current device itself is 100000. Access between devices
/// is always possible in the emulator; this records that it was enabled
/// (`aclrtDevicePeerAccessStatus`, `aclrtMemP2PMap`).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceEnablePeerAccess(peer: i32, flags: u32) -> AclErrorCode {
    guard("aclrtDeviceEnablePeerAccess", || {
        if flags != 0 {
            return Err(AclError::FEATURE_UNSUPPORTED);
        }
        with_global(|g| g.emu.set_peer_access(peer, true))
    })
}

/// `aclError aclrtDeviceDisablePeerAccess(int32_t peerDeviceId)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceDisablePeerAccess(peer: i32) -> AclErrorCode {
    guard("aclrtDeviceDisablePeerAccess", || {
        with_global(|g| g.emu.set_peer_access(peer, false))
    })
}
