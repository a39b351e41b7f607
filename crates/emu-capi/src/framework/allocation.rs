//! Allocation variants beyond `aclrtMalloc` / `aclrtMallocHost`: with a
//! configuration (`aclrtMallocWithCfg`, `aclrtMallocHostWithCfg`), cached
//! (`aclrtMallocCached`), frees after a device synchronisation
//! (`aclrtFreeWithDevSync`, `aclrtFreeHostWithDevSync`), and the cache
//! maintenance of device memory (`aclrtMemFlush`, `aclrtMemInvalidate`),
//! which needs no work on the emulated machine, and the type check of
//! addresses (`aclrtCheckMemType`).
//!
//! The checks are the ACL layer's (100000) then the runtime's (107000,
//! 107002 without a device), in the runtime's order
//! (`docs/facts.md`, "Allocation variants").

use std::ffi::c_void;

use aclmem_core::{AclError, Product};

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `aclrtMallocAttribute`: `{ aclrtMallocAttrType attr;
/// aclrtMallocAttrValue value; }`, the value a union of 8 bytes aligned
/// to 4 (12 bytes in all).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct aclrtMallocAttribute {
    /// `ACL_RT_MEM_ATTR_RSV` 0, `MODULE_ID` 1, `DEVICE_ID` 2, `VA_FLAG` 3.
    pub attr: u32,
    /// The union's bytes: `moduleId` (u16), `deviceId` / `vaFlag` (u32).
    pub value: [u32; 2],
}

/// `aclrtMallocConfig`: `{ aclrtMallocAttribute *attrs; size_t numAttrs; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtMallocConfig {
    /// The attributes (may be NULL only if the runtime is not asked).
    pub attrs: *const aclrtMallocAttribute,
    /// How many.
    pub num_attrs: usize,
}

const ATTR_RSV: u32 = 0;
const ATTR_MODULE_ID: u32 = 1;
const ATTR_DEVICE_ID: u32 = 2;
const ATTR_VA_FLAG: u32 = 3;

/// The most attributes read from one configuration (the runtime sets no
/// limit; more is refused as an invalid value, 107000).
const MAX_ATTRS: usize = 1024;

/// The products whose host memory can have the device's virtual address
/// (`vaFlag` 1; documented as A2/A3 only).
const VA_FLAG_PRODUCTS: &[Product] = &[Product::AtlasA2, Product::AtlasA3];

/// A configuration the C caller passed: `None` for NULL. Its `attrs`
/// NULL is 107000 (the runtime's check, whatever `numAttrs` says).
///
/// # Safety
/// `cfg` is NULL or a pointer the C caller passed.
unsafe fn read_config(
    cfg: *mut aclrtMallocConfig,
) -> Result<Option<Vec<aclrtMallocAttribute>>, AclError> {
    if cfg.is_null() {
        return Ok(None);
    }
    // SAFETY: plain C data; read through the kernel-checked path.
    let cfg = unsafe { cptr::read(cfg)? };
    if cfg.attrs.is_null() {
        return Err(AclError::RT_PARAM_INVALID);
    }
    // SAFETY: as above.
    let attrs = unsafe {
        cptr::read_array(
            cfg.attrs,
            cfg.num_attrs,
            MAX_ATTRS,
            AclError::RT_PARAM_INVALID,
        )?
    };
    Ok(Some(attrs))
}

/// `aclError aclrtMallocWithCfg(void **devPtr, size_t size,
/// aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)`: `aclrtMalloc`
/// whose size is rounded up to 32 bytes without padding. ACL layer:
/// devPtr NULL, `numAttrs` above 0 with `attrs` NULL, size 0: 100000.
/// Runtime: `attrs` NULL 107000; a device id other than the current
/// device's, `VA_FLAG` or an unknown attribute 107000; `RSV` and module ids
/// change nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocWithCfg(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
    cfg: *mut aclrtMallocConfig,
) -> AclErrorCode {
    // SAFETY: the C caller's arguments, passed on.
    unsafe { malloc_with_cfg("aclrtMallocWithCfg", dev_ptr, size, policy, cfg) }
}

/// `aclError aclrtMallocForTaskScheduler(void **devPtr, size_t size,
/// aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)` (CANN 8.5):
/// `aclrtMallocWithCfg` for memory the task scheduler uses (the runtime
/// asks for TS memory within 4 GiB; every emulated device address serves
/// the scheduler), with the same checks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocForTaskScheduler(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
    cfg: *mut aclrtMallocConfig,
) -> AclErrorCode {
    // SAFETY: the C caller's arguments, passed on.
    unsafe { malloc_with_cfg("aclrtMallocForTaskScheduler", dev_ptr, size, policy, cfg) }
}

/// The work of `aclrtMallocWithCfg` and `aclrtMallocForTaskScheduler`,
/// in `name`'s guard.
///
/// # Safety
/// The C caller's arguments.
unsafe fn malloc_with_cfg(
    name: &'static str,
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
    cfg: *mut aclrtMallocConfig,
) -> AclErrorCode {
    guard(name, || {
        shared::in_release(name)?;
        if dev_ptr.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        if !cfg.is_null() {
            // SAFETY: plain C data; read through the kernel-checked path.
            let c = unsafe { cptr::read(cfg)? };
            if c.num_attrs != 0 && c.attrs.is_null() {
                return Err(AclError::INVALID_PARAM);
            }
        }
        if size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's configuration.
        let attrs = unsafe { read_config(cfg)? }.unwrap_or_default();
        let device = with_global(|g| g.emu.current_device())?;
        for a in &attrs {
            match a.attr {
                ATTR_RSV | ATTR_MODULE_ID => {}
                ATTR_DEVICE_ID if a.value[0] == device => {}
                _ => return Err(AclError::RT_PARAM_INVALID),
            }
        }
        shared::malloc_device(dev_ptr, size, policy, true)
    })
}

/// `aclError aclrtMallocCached(void **devPtr, size_t size,
/// aclrtMemMallocPolicy policy)`: `aclrtMalloc` (cache-coherent memory;
/// every emulated memory is).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocCached(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
) -> AclErrorCode {
    guard("aclrtMallocCached", || {
        shared::malloc_device(dev_ptr, size, policy, false)
    })
}

/// `aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size,
/// aclrtMallocConfig *cfg)`: `aclrtMallocHost` with attributes. ACL
/// layer: ptr NULL or size 0 100000. Runtime: `attrs` NULL 107000; `RSV`,
/// `DEVICE_ID` or an unknown attribute 107000; a thread without a device
/// 107002; `VA_FLAG` 1 on a product other than A2/A3 207000 (there the
/// host address is the device's, as `aclrtHostRegister` then answers).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocHostWithCfg(
    ptr: *mut *mut c_void,
    size: u64,
    cfg: *mut aclrtMallocConfig,
) -> AclErrorCode {
    guard("aclrtMallocHostWithCfg", || {
        shared::in_release("aclrtMallocHostWithCfg")?;
        if ptr.is_null() || size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's configuration.
        let attrs = unsafe { read_config(cfg)? }.unwrap_or_default();
        let mut va_flag = false;
        for a in &attrs {
            match a.attr {
                ATTR_MODULE_ID => {}
                ATTR_VA_FLAG => va_flag = a.value[0] == 1,
                _ => return Err(AclError::RT_PARAM_INVALID),
            }
        }
        with_global(|g| g.emu.current_device())?;
        if va_flag {
            shared::on_products(VA_FLAG_PRODUCTS)?;
        }
        let size = usize::try_from(size).map_err(|_| AclError::RT_MEMORY_ALLOCATION)?;
        shared::malloc_host(ptr, size)
    })
}

/// `aclError aclrtFreeWithDevSync(void *devPtr)`: `aclrtFree` after the
/// device's work is done (it always is here). NULL is 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreeWithDevSync(dev_ptr: *mut c_void) -> AclErrorCode {
    guard("aclrtFreeWithDevSync", || {
        shared::in_release("aclrtFreeWithDevSync")?;
        let addr = aclmem_emu::args::address(dev_ptr as usize)?;
        with_global(|g| {
            g.emu.synchronize_device()?;
            g.emu.free_device_checked(addr)
        })
    })
}

/// `aclError aclrtFreeHostWithDevSync(void *hostPtr)`: `aclrtFreeHost`
/// after the device's work is done. NULL is 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreeHostWithDevSync(host_ptr: *mut c_void) -> AclErrorCode {
    guard("aclrtFreeHostWithDevSync", || {
        shared::in_release("aclrtFreeHostWithDevSync")?;
        let addr = aclmem_emu::args::address(host_ptr as usize)?;
        with_global(|g| {
            g.emu.synchronize_device()?;
            g.emu.free_host_checked(addr)
        })
    })
}

/// The checks of the cache maintenance calls: NULL or size 0 is 100000;
/// the runtime needs the thread's context (107002) and does nothing
/// else on A2/A3 ("this version needs no cache maintenance").
fn cache_op(dev_ptr: *mut c_void, size: usize) -> Result<(), AclError> {
    if dev_ptr.is_null() || size == 0 {
        return Err(AclError::INVALID_PARAM);
    }
    with_global(|g| g.emu.current_context()).map(|_| ())
}

/// `aclError aclrtMemFlush(void *devPtr, size_t size)`: writes caches
/// back; nothing to do on the emulated machine.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemFlush(dev_ptr: *mut c_void, size: usize) -> AclErrorCode {
    guard("aclrtMemFlush", || cache_op(dev_ptr, size))
}

/// `aclError aclrtMemInvalidate(void *devPtr, size_t size)`: drops cached
/// lines; nothing to do on the emulated machine.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemInvalidate(dev_ptr: *mut c_void, size: usize) -> AclErrorCode {
    guard("aclrtMemInvalidate", || cache_op(dev_ptr, size))
}

/// The memory types `aclrtCheckMemType` takes: `RT_MEM_MASK_DEV_TYPE`
/// 0x2, `RT_MEM_MASK_DVPP_TYPE` 0x8, `RT_MEM_MASK_RSVD_TYPE` 0x20 (the
/// runtime's masks; the header's `ACL_RT_MEM_TYPE_RSVD` is 0x10, which the
/// runtime refuses).
const MEM_TYPES: u32 = 0x2 | 0x8 | 0x20;

/// The most addresses `aclrtCheckMemType` reads (the emulator's limit;
/// more is 107000).
const MAX_ADDRESSES: usize = 1 << 20;

/// `aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t
/// memType, uint32_t *checkResult, uint32_t reserve)`: `*checkResult` is 1
/// if every address's memory is of a type in `memType`, else 0. ACL
/// layer: addrList or checkResult NULL 100000. Runtime: `*checkResult` 0
/// first; reserve not 0, size 0 or a type outside the masks 107000; a
/// thread without a device 107002.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCheckMemType(
    addr_list: *mut *mut c_void,
    size: u32,
    mem_type: u32,
    check_result: *mut u32,
    reserve: u32,
) -> AclErrorCode {
    guard("aclrtCheckMemType", || {
        shared::in_release("aclrtCheckMemType")?;
        if addr_list.is_null() || check_result.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(check_result, 0)? };
        if reserve != 0 || size == 0 || mem_type & !MEM_TYPES != 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        // SAFETY: the caller's array of `size` addresses, read through the
        // kernel-checked path.
        let addrs = unsafe {
            cptr::read_array(
                addr_list.cast::<usize>().cast_const(),
                size as usize,
                MAX_ADDRESSES,
                AclError::RT_PARAM_INVALID,
            )?
        };
        let mut all = true;
        for a in addrs {
            let t = with_global(|g| g.emu.memory_type(a))?;
            all &= t & mem_type != 0;
        }
        // SAFETY: as above.
        unsafe { cptr::write(check_result, u32::from(all)) }
    })
}

// The layouts of CANN's header (LP64, 4-byte enums).
const _: () = assert!(std::mem::size_of::<aclrtMallocAttribute>() == 12);
const _: () = assert!(std::mem::size_of::<aclrtMallocConfig>() == 16);
