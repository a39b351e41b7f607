//! Sharing memory between processes: shareable handles (V1 and V2) and the
//! IPC keys of `aclrtMalloc` memory.
//!
//! The importer's identity is the kernel's (see `aclmem_emu`); whitelists
//! take pids from `aclrtDeviceGetBareTgid`.

use std::ffi::{c_char, c_void};

use aclmem_core::AclError;
use aclmem_emu::errors::Situation;
use aclmem_emu::{WHITELIST, args};
use aclmem_hal::{ShareHandleType, ShareableHandleV2};
use aclmem_sys::{ACL_IPC_KEY_LEN, aclrtDrvMemHandle, aclrtMemFabricHandle};

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::state::with_global;
use aclmem_emu::Target;
use aclmem_sys::ExportFlags;

fn share_type(raw: u32) -> Result<ShareHandleType, AclError> {
    args::share_type(raw)?;
    ShareHandleType::from_raw(raw).ok_or(AclError::INVALID_PARAM)
}

/// Reads a pid array of the caller's: NULL or unreadable is 100000, more
/// pids than a whitelist holds is refused before anything is read.
fn read_pids(pid: *mut i32, count: usize) -> Result<Vec<i32>, AclError> {
    if pid.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    // SAFETY: plain integers, read through the kernel-checked path.
    unsafe { cptr::read_array(pid, count, WHITELIST, Situation::WhitelistFull.code()) }
}

/// `aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
/// aclrtMemHandleType handleType, uint64_t flags, uint64_t
/// *shareableHandle)`: flags 0 enforces the whitelist, 1
/// (`ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION`) lets any process
/// import.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemExportToShareableHandle(
    handle: aclrtDrvMemHandle,
    handle_type: u32,
    flags: u64,
    shareable_handle: *mut u64,
) -> AclErrorCode {
    guard("aclrtMemExportToShareableHandle", || {
        let handle = args::export(handle as usize as u64, handle_type)?;
        if shareable_handle.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let flags = ExportFlags::from_raw(flags);
        let s = with_global(|g| {
            g.emu
                .export_shareable(handle, flags, ShareHandleType::Default)
        })?;
        let ShareableHandleV2::Default(id) = s else {
            return Err(AclError::INTERNAL_ERROR);
        };
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(shareable_handle, id) }
    })
}

/// `aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle,
/// int32_t *pid, size_t pidNum)`: adds pids to the whitelist (duplicates
/// ignored; at most 128 per handle).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandle(
    shareable_handle: u64,
    pid: *mut i32,
    pid_num: usize,
) -> AclErrorCode {
    guard("aclrtMemSetPidToShareableHandle", || {
        let pids = read_pids(pid, pid_num)?;
        let pids = args::pids(&pids)?;
        let shareable = ShareableHandleV2::Default(shareable_handle);
        with_global(|g| g.emu.set_pids_checked(&shareable, pids))
    })
}

/// `aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
/// int32_t deviceId, aclrtDrvMemHandle *handle)`: imports onto `deviceId`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemImportFromShareableHandle(
    shareable_handle: u64,
    device_id: i32,
    handle: *mut aclrtDrvMemHandle,
) -> AclErrorCode {
    guard("aclrtMemImportFromShareableHandle", || {
        if handle.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // A negative id is no device (u32::MAX never is one).
        let device = u32::try_from(device_id).unwrap_or(u32::MAX);
        with_global(|g| {
            let h = g
                .emu
                .import_shareable(&ShareableHandleV2::Default(shareable_handle), device)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(handle, h.0.get() as usize as aclrtDrvMemHandle, || {
                    let _ = aclmem_hal::PhysicalAllocator::free_physical(&g.emu, h);
                })
            }
        })
    })
}

/// `aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle,
/// uint64_t flags, aclrtMemSharedHandleType shareType, void
/// *shareableHandle)`: writes a `uint64_t` (DEFAULT) or an
/// `aclrtMemFabricHandle` (FABRIC, A3 only).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemExportToShareableHandleV2(
    handle: aclrtDrvMemHandle,
    flags: u64,
    share_type_: u32,
    shareable_handle: *mut c_void,
) -> AclErrorCode {
    guard("aclrtMemExportToShareableHandleV2", || {
        let h = args::handle(handle as usize as u64)?;
        let kind = share_type(share_type_)?;
        if shareable_handle.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let flags = ExportFlags::from_raw(flags);
        let shareable = with_global(|g| g.emu.export_shareable(h, flags, kind))?;
        // SAFETY: the C caller's out buffer of the documented type.
        unsafe {
            match shareable {
                ShareableHandleV2::Default(id) => cptr::write(shareable_handle.cast::<u64>(), id),
                ShareableHandleV2::Fabric(data) => cptr::write(
                    shareable_handle.cast::<aclrtMemFabricHandle>(),
                    aclrtMemFabricHandle { data },
                ),
            }
        }
    })
}

/// Reads a V2 shareable handle of the caller's.
fn read_v2(
    shareable_handle: *mut c_void,
    kind: ShareHandleType,
) -> Result<ShareableHandleV2, AclError> {
    // SAFETY: plain C data, read through the kernel-checked path.
    unsafe {
        Ok(match kind {
            ShareHandleType::Default => {
                ShareableHandleV2::Default(cptr::read(shareable_handle.cast::<u64>())?)
            }
            ShareHandleType::Fabric => ShareableHandleV2::Fabric(
                cptr::read(shareable_handle.cast::<aclrtMemFabricHandle>())?.data,
            ),
        })
    }
}

/// `aclError aclrtMemSetPidToShareableHandleV2(void *shareableHandle,
/// aclrtMemSharedHandleType shareType, int32_t *pid, size_t pidNum)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandleV2(
    shareable_handle: *mut c_void,
    share_type_: u32,
    pid: *mut i32,
    pid_num: usize,
) -> AclErrorCode {
    guard("aclrtMemSetPidToShareableHandleV2", || {
        let pids = read_pids(pid, pid_num)?;
        let pids = args::pids(&pids)?;
        if shareable_handle.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let kind = share_type(share_type_)?;
        let shareable = read_v2(shareable_handle, kind)?;
        with_global(|g| g.emu.set_pids_checked(&shareable, pids))
    })
}

/// `aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle,
/// aclrtMemSharedHandleType shareType, uint64_t flags, aclrtDrvMemHandle
/// *handle)`: imports onto the current device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemImportFromShareableHandleV2(
    shareable_handle: *mut c_void,
    share_type_: u32,
    flags: u64,
    handle: *mut aclrtDrvMemHandle,
) -> AclErrorCode {
    guard("aclrtMemImportFromShareableHandleV2", || {
        if shareable_handle.is_null() || handle.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        args::import_v2_flags(flags)?;
        let kind = share_type(share_type_)?;
        let shareable = read_v2(shareable_handle, kind)?;
        with_global(|g| {
            let h = g.emu.import_shareable(&shareable, Target::Current)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(handle, h.0.get() as usize as aclrtDrvMemHandle, || {
                    let _ = aclmem_hal::PhysicalAllocator::free_physical(&g.emu, h);
                })
            }
        })
    })
}

/// `aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key,
/// size_t len, uint64_t flags)`: exports the `aclrtMalloc` block at
/// `devPtr` (page aligned, `size` within it); `len` must be 65.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemGetExportKey(
    dev_ptr: *mut c_void,
    size: usize,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> AclErrorCode {
    guard("aclrtIpcMemGetExportKey", || {
        if dev_ptr.is_null() || key.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        if len == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let checked = args::ipc_export(size, flags)?;
        if len < ACL_IPC_KEY_LEN {
            return Err(Situation::IpcKeyLength.code());
        }
        with_global(|g| {
            let text = g.emu.ipc_export_key_checked(dev_ptr as usize, checked)?;
            // SAFETY: the C caller's key buffer of `len` bytes.
            unsafe { cptr::write_cstr(key, len, &text) }.inspect_err(|_| {
                // The caller never learns the key: withdraw it.
                let _ = g.emu.ipc_close(&text);
            })
        })
    })
}

/// `aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t
/// num)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemSetImportPid(
    key: *const c_char,
    pid: *mut i32,
    num: usize,
) -> AclErrorCode {
    guard("aclrtIpcMemSetImportPid", || {
        if num == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let pids = read_pids(pid, num)?;
        let pids = args::ipc_pids(&pids)?;
        let key = cptr::read_cstr(key, ACL_IPC_KEY_LEN - 1)?;
        with_global(|g| g.emu.ipc_set_pids_checked(&key, pids))
    })
}

/// `aclError aclrtIpcMemImportByKey(void **devPtr, const char *key,
/// uint64_t flags)`: maps the exporter's block onto the current device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemImportByKey(
    dev_ptr: *mut *mut c_void,
    key: *const c_char,
    flags: u64,
) -> AclErrorCode {
    guard("aclrtIpcMemImportByKey", || {
        if dev_ptr.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let key = cptr::read_cstr(key, ACL_IPC_KEY_LEN - 1)?;
        with_global(|g| {
            let a = g.emu.ipc_import(&key, Target::Current, flags)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(dev_ptr, a as *mut c_void, || {
                    let _ = g.emu.ipc_close(&key);
                })
            }
        })
    })
}

/// `aclError aclrtIpcMemClose(const char *key)`: an importer unmaps the
/// block; the exporter withdraws the key.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemClose(key: *const c_char) -> AclErrorCode {
    guard("aclrtIpcMemClose", || {
        let key = cptr::read_cstr(key, ACL_IPC_KEY_LEN - 1)?;
        with_global(|g| g.emu.ipc_close(&key))
    })
}
