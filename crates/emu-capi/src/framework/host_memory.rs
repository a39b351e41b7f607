//! Host memory and copies beyond the core API: a conditional asynchronous
//! copy, host registration (`aclrtHostRegister*`), and the device's memory
//! usage per component.

use aclmem_core::AclError;
use aclmem_emu::Target;
use aclmem_sys::aclrtStream;

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const
/// void *src, size_t count, aclrtMemcpyKind kind, aclrtStream stream)`:
/// `aclrtMemcpyAsync` (done at once, so the condition, that the stream
/// has reached the copy, always holds). torch_npu takes it for
/// non-blocking device-to-host copies once the driver is 25.0.RC1 or
/// newer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsyncWithCondition(
    dst: *mut std::ffi::c_void,
    dest_max: usize,
    src: *const std::ffi::c_void,
    count: usize,
    kind: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemcpyAsyncWithCondition", || {
        shared::copy(dst, dest_max, src, count, kind, Some(stream))
    })
}

/// `aclError aclrtHostRegister(void *ptr, uint64_t size,
/// aclrtHostRegisterType type, void **devPtr)`: registers host memory for
/// the device; its device pointer is the host address (the emulated device
/// shares the host's address space). A NULL `devPtr` is 100000; if
/// `devPtr` cannot be written, the registration is undone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostRegister(
    ptr: *mut std::ffi::c_void,
    size: u64,
    kind: u32,
    dev_ptr: *mut *mut std::ffi::c_void,
) -> AclErrorCode {
    guard("aclrtHostRegister", || {
        if ptr.is_null() || dev_ptr.is_null() || size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            let dev = g.emu.host_register(ptr as usize, size, kind)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(dev_ptr, dev as *mut std::ffi::c_void, || {
                    let _ = g.emu.host_unregister(ptr as usize);
                })
            }
        })
    })
}

/// `aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t
/// flag)`: registers host memory, mapped for the device or pinned only.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtHostRegisterV2(
    ptr: *mut std::ffi::c_void,
    size: u64,
    flag: u32,
) -> AclErrorCode {
    guard("aclrtHostRegisterV2", || {
        with_global(|g| g.emu.host_register_v2(ptr as usize, size, flag))
    })
}

/// `aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice,
/// uint32_t flag)`: the device pointer of a range registered as mapped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostGetDevicePointer(
    host: *mut std::ffi::c_void,
    device: *mut *mut std::ffi::c_void,
    flag: u32,
) -> AclErrorCode {
    guard("aclrtHostGetDevicePointer", || {
        if host.is_null() || device.is_null() || flag != 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let d = with_global(|g| g.emu.host_device_pointer(host as usize, flag))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(device, d as *mut std::ffi::c_void) }
    })
}

/// `aclError aclrtHostUnregister(void *ptr)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtHostUnregister(ptr: *mut std::ffi::c_void) -> AclErrorCode {
    guard("aclrtHostUnregister", || {
        with_global(|g| g.emu.host_unregister(ptr as usize))
    })
}

/// The bytes of `aclrtMemUsageInfo` the runtime fills: `char name[32];
/// uint64_t curMemSize; uint64_t memPeakSize;` (its `size_t reserved[8]`
/// that follow are left as the caller had them, as the runtime leaves them).
#[repr(C)]
#[derive(Clone, Copy)]
struct MemUsageFilled {
    name: [u8; 32],
    cur: u64,
    peak: u64,
}

/// `sizeof(aclrtMemUsageInfo)` on LP64: 32 + 8 + 8 + 8 × 8.
const MEM_USAGE_INFO_SIZE: usize = 112;

/// `aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo
/// *memUsageInfo, size_t inputNum, size_t *outputNum)`: what uses the
/// device's memory (`aclmem_emu::MEM_USAGE_COMPONENTS`), largest first, at
/// most `inputNum` entries; `*outputNum` says how many were written.
///
/// NULL `memUsageInfo` or `outputNum`: 100000; `*outputNum` is set to 0,
/// then `inputNum` 0 is 107000; a device the machine lacks 107001.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemUsageInfo(
    device: i32,
    info: *mut std::ffi::c_void,
    input_num: usize,
    output_num: *mut usize,
) -> AclErrorCode {
    guard("aclrtGetMemUsageInfo", || {
        if info.is_null() || output_num.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(output_num, 0)? };
        if input_num == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let device = u32::try_from(device).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        let parts = with_global(|g| g.emu.mem_usage(Target::Device(device)))?;
        let mut written = 0;
        for (i, (name, cur, peak)) in parts.into_iter().take(input_num).enumerate() {
            let mut filled = MemUsageFilled {
                name: [0; 32],
                cur,
                peak,
            };
            filled.name[..name.len()].copy_from_slice(name.as_bytes());
            let at = (info as usize).wrapping_add(i * MEM_USAGE_INFO_SIZE);
            // SAFETY: the C caller's array of `inputNum` entries; a bad
            // address is refused by `cptr::write`.
            unsafe { cptr::write(at as *mut MemUsageFilled, filled)? };
            written += 1;
        }
        // SAFETY: as above.
        unsafe { cptr::write(output_num, written) }
    })
}
