//! Cache maintenance and memory errors: `aclrtCmoAsync`,
//! `aclrtCmoAsyncWithBarrier`, `aclrtCmoWaitBarrier`,
//! `aclrtCmoGetDescSize`, `aclrtCmoSetDesc`, `aclrtCmoAsyncWithDesc`,
//! `aclrtDeviceL2CacheFlush`, `aclrtGetMemUceInfo`, `aclrtMemUceRepair`.
//!
//! The emulated device has no cache and no uncorrectable memory errors:
//! each operation is checked as the runtime checks it (the ACL layer's
//! codes here, the runtime's in `aclmem_emu`), then is an ordered no-op on
//! its stream; the error record is empty. The products are the
//! documented ones (the others answer 207000, as a chip without the
//! runtime feature): the descriptor and plain forms 950, A3, A2; the
//! barrier forms Atlas 200I/500 A2 only.

use std::ffi::c_void;

use aclmem_core::{AclError, Product};
use aclmem_sys::aclrtStream;

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `aclrtBarrierCmoInfo`: `{ aclrtCmoType cmoType; uint32_t barrierId; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct aclrtBarrierCmoInfo {
    /// The operation (`ACL_RT_CMO_TYPE_INVALID` only, documented).
    pub cmo_type: u32,
    /// The barrier it waits for.
    pub barrier_id: u32,
}

/// `aclrtBarrierTaskInfo`: `{ size_t barrierNum; aclrtBarrierCmoInfo
/// cmoInfo[ACL_RT_CMO_MAX_BARRIER_NUM]; }` (56 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct aclrtBarrierTaskInfo {
    /// How many of `cmo_info` are used (1 to 6).
    pub barrier_num: usize,
    /// The barriers.
    pub cmo_info: [aclrtBarrierCmoInfo; MAX_BARRIERS],
}

/// `aclrtMemUceInfo`: `{ void* addr; size_t len; size_t
/// reserved[UCE_INFO_RESERVED_SIZE]; }` (128 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtMemUceInfo {
    /// The address of the error.
    pub addr: *mut c_void,
    /// Its length.
    pub len: usize,
    /// Must be zero.
    pub reserved: [usize; 14],
}

impl Default for aclrtMemUceInfo {
    fn default() -> aclrtMemUceInfo {
        aclrtMemUceInfo {
            addr: std::ptr::null_mut(),
            len: 0,
            reserved: [0; 14],
        }
    }
}

/// `ACL_RT_CMO_MAX_BARRIER_NUM`.
const MAX_BARRIERS: usize = 6;
/// `ACL_RT_CMO_TYPE_PREFETCH`, `..._INVALID`, `..._FLUSH`.
const PREFETCH: u32 = 0;
const INVALIDATE: u32 = 2;
const FLUSH: u32 = 3;
/// `RT_MAX_RECORD_PA_NUM_PER_DEV`: the most entries a repair takes.
const MAX_UCE: usize = 20;

/// The products with the CMO task and its descriptors (documented).
const CMO_PRODUCTS: &[Product] = &[Product::Atlas350, Product::AtlasA3, Product::AtlasA2];
/// The products with barrier CMO tasks (documented: Atlas 200I/500 A2).
const BARRIER_PRODUCTS: &[Product] = &[Product::Atlas200IA2];

/// The size of a CMO descriptor: 64 bytes on Atlas 350, 32 elsewhere
/// (`rtCmoAddrInfo`).
fn desc_size() -> Result<usize, AclError> {
    let product = with_global(|g| Ok(g.emu.product()))?;
    Ok(if product == Product::Atlas350 { 64 } else { 32 })
}

/// The operation types the runtime accepts (PREFETCH to FLUSH; others
/// 207000) and the documentation supports (PREFETCH only; the others
/// 207000 too, so that code that passes here passes there).
fn prefetch_only(cmo_type: u32) -> Result<(), AclError> {
    if cmo_type == PREFETCH {
        Ok(())
    } else {
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    }
}

/// `aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType,
/// aclrtStream stream)`: src NULL or size 0 100000; a prefetch of device
/// memory of the process into a cache the emulated device does not have.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoAsync(
    src: *mut c_void,
    size: usize,
    cmo_type: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtCmoAsync", || {
        shared::in_release("aclrtCmoAsync")?;
        if src.is_null() || size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(CMO_PRODUCTS)?;
        prefetch_only(cmo_type)?;
        with_global(|g| {
            g.emu
                .cache_maintenance(src as usize, size, stream as usize as u64)
        })
    })
}

/// `aclError aclrtCmoAsyncWithBarrier(void* src, size_t size, aclrtCmoType
/// cmoType, uint32_t barrierId, aclrtStream stream)`: src NULL 100000; a
/// type above FLUSH 207000; a barrier id other than 0 with a type other
/// than INVALID 107000 (documented: pass 0).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoAsyncWithBarrier(
    src: *mut c_void,
    size: usize,
    cmo_type: u32,
    barrier_id: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtCmoAsyncWithBarrier", || {
        shared::in_release("aclrtCmoAsyncWithBarrier")?;
        if src.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(BARRIER_PRODUCTS)?;
        if cmo_type > FLUSH {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        if barrier_id != 0 && cmo_type != INVALIDATE {
            return Err(AclError::RT_PARAM_INVALID);
        }
        with_global(|g| {
            g.emu
                .cache_maintenance(src as usize, size, stream as usize as u64)
        })
    })
}

/// `aclError aclrtCmoWaitBarrier(aclrtBarrierTaskInfo* taskInfo,
/// aclrtStream stream, uint32_t flag)`: taskInfo NULL or unreadable, or
/// `barrierNum` 0 or above 6, 100000; a type other than INVALID or a flag
/// other than 0 107000 (documented as required). Every barrier has passed
/// when the call returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCmoWaitBarrier(
    task_info: *mut aclrtBarrierTaskInfo,
    stream: aclrtStream,
    flag: u32,
) -> AclErrorCode {
    guard("aclrtCmoWaitBarrier", || {
        shared::in_release("aclrtCmoWaitBarrier")?;
        if task_info.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: plain C data; read through the kernel-checked path.
        let info = unsafe { cptr::read(task_info)? };
        if info.barrier_num == 0 || info.barrier_num > MAX_BARRIERS {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(BARRIER_PRODUCTS)?;
        let used = &info.cmo_info[..info.barrier_num];
        if flag != 0 || used.iter().any(|c| c.cmo_type != INVALIDATE) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        with_global(|g| g.emu.check_stream(stream as usize as u64))
    })
}

/// `aclError aclrtCmoGetDescSize(size_t* size)`: the size of a CMO
/// descriptor (32 bytes on A2/A3, 64 on Atlas 350); size NULL 107000 (the
/// runtime's check).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCmoGetDescSize(size: *mut usize) -> AclErrorCode {
    guard("aclrtCmoGetDescSize", || {
        shared::in_release("aclrtCmoGetDescSize")?;
        shared::on_products(CMO_PRODUCTS)?;
        if size.is_null() {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let n = desc_size()?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(size, n) }
    })
}

/// `aclError aclrtCmoSetDesc(void* cmoDesc, void* src, size_t size)`:
/// cmoDesc or src NULL, size 0 107000; writes the runtime's record
/// (`rtCmoAddrInfo`: `len_inner` at byte 12, `src` at byte 16, the rest
/// zero) into the device memory at `cmoDesc`, which must be device memory
/// of the process (107000).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoSetDesc(
    cmo_desc: *mut c_void,
    src: *mut c_void,
    size: usize,
) -> AclErrorCode {
    guard("aclrtCmoSetDesc", || {
        shared::in_release("aclrtCmoSetDesc")?;
        shared::on_products(CMO_PRODUCTS)?;
        if cmo_desc.is_null() || src.is_null() || size == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let mut record = vec![0u8; desc_size()?];
        record[12..16].copy_from_slice(&(size as u32).to_le_bytes());
        record[16..24].copy_from_slice(&(src as u64).to_le_bytes());
        with_global(|g| {
            g.emu
                .write(cmo_desc as usize, &record)
                .map_err(|_| AclError::RT_PARAM_INVALID)
        })
    })
}

/// `aclError aclrtCmoAsyncWithDesc(void* cmoDesc, aclrtCmoType cmoType,
/// aclrtStream stream, const void* reserve)`: reserve not NULL, cmoDesc
/// NULL or not device memory 107000; a type other than PREFETCH 207000;
/// then the operation the descriptor names, as `aclrtCmoAsync`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCmoAsyncWithDesc(
    cmo_desc: *mut c_void,
    cmo_type: u32,
    stream: aclrtStream,
    reserve: *const c_void,
) -> AclErrorCode {
    guard("aclrtCmoAsyncWithDesc", || {
        shared::in_release("aclrtCmoAsyncWithDesc")?;
        shared::on_products(CMO_PRODUCTS)?;
        if !reserve.is_null() || cmo_desc.is_null() {
            return Err(AclError::RT_PARAM_INVALID);
        }
        prefetch_only(cmo_type)?;
        let mut record = [0u8; 24];
        with_global(|g| {
            g.emu
                .read(cmo_desc as usize, &mut record)
                .map_err(|_| AclError::RT_PARAM_INVALID)?;
            let len = u32::from_le_bytes([record[12], record[13], record[14], record[15]]);
            let mut src = [0u8; 8];
            src.copy_from_slice(&record[16..24]);
            let src = u64::from_le_bytes(src) as usize;
            g.emu
                .cache_maintenance(src, len as usize, stream as usize as u64)
        })
    })
}

/// `aclError aclrtDeviceL2CacheFlush(void* rsv)`: rsv not NULL 100000; a
/// thread without a device 107002; nothing to flush. Not documented: the
/// products of the CMO task answer it, the others 207000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceL2CacheFlush(rsv: *mut c_void) -> AclErrorCode {
    guard("aclrtDeviceL2CacheFlush", || {
        shared::in_release("aclrtDeviceL2CacheFlush")?;
        if !rsv.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| g.emu.l2_cache_flush())?;
        shared::on_products(CMO_PRODUCTS)
    })
}

/// `aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo
/// *memUceInfoArray, size_t arraySize, size_t *retSize)`: the array or
/// retSize NULL 100000; a device the process lacks 107001; the emulated
/// device has no uncorrectable errors: `*retSize` 0, nothing written.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemUceInfo(
    device_id: i32,
    mem_uce_info_array: *mut aclrtMemUceInfo,
    _array_size: usize,
    ret_size: *mut usize,
) -> AclErrorCode {
    guard("aclrtGetMemUceInfo", || {
        shared::in_release("aclrtGetMemUceInfo")?;
        if mem_uce_info_array.is_null() || ret_size.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(CMO_PRODUCTS)?;
        let errors = with_global(|g| g.emu.uce_addresses(device_id))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(ret_size, errors.len()) }
    })
}

/// `aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo
/// *memUceInfoArray, size_t arraySize)`: the array NULL or unreadable,
/// `arraySize` above 20, reserved bytes not zero 100000; a device the
/// process lacks 107001. Nothing has an error to repair: no entries
/// succeed; an entry is an address without a recorded error, 107000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemUceRepair(
    device_id: i32,
    mem_uce_info_array: *mut aclrtMemUceInfo,
    array_size: usize,
) -> AclErrorCode {
    guard("aclrtMemUceRepair", || {
        shared::in_release("aclrtMemUceRepair")?;
        // SAFETY: the C caller's array, read through the kernel-checked
        // path.
        let entries = unsafe {
            cptr::read_array(
                mem_uce_info_array.cast_const(),
                array_size,
                MAX_UCE,
                AclError::INVALID_PARAM,
            )?
        };
        // The runtime compares the first 14 bytes of `reserved`.
        let reserved_bytes =
            |e: &aclrtMemUceInfo| e.reserved[0] != 0 || (e.reserved[1] & 0xffff_ffff_ffff) != 0;
        if entries.iter().any(reserved_bytes) {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(CMO_PRODUCTS)?;
        let errors = with_global(|g| g.emu.uce_addresses(device_id))?;
        let known = |e: &aclrtMemUceInfo| {
            errors
                .iter()
                .any(|&(a, l)| a == e.addr as usize && l == e.len)
        };
        if entries.iter().all(known) {
            Ok(())
        } else {
            Err(AclError::RT_PARAM_INVALID)
        }
    })
}
