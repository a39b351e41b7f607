//! Stream-ordered memory pools (`acl_rt_memory_soma.h`):
//! `aclrtMemPoolCreate`, `aclrtMemPoolDestroy`, `aclrtMemPoolSetAttr`,
//! `aclrtMemPoolGetAttr` (CANN 9.0), `aclrtMemPoolMallocAsync`,
//! `aclrtMemPoolFreeAsync`, `aclrtMemPoolTrimTo` (CANN 9.1).
//!
//! Marshalling only: the ACL layer's checks (100000) are made here, in
//! its order; the runtime's and the pools themselves are the engine's
//! (`aclmem_emu`, `calls/pools.rs`). Every stream's work is done when its
//! call returns, so a block freed on a stream is free at once; which
//! stream may take it again is the pool's reuse attributes' business.

use std::ffi::c_void;

use aclmem_core::AclError;
use aclmem_sys::aclrtStream;

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `aclrtMemPool`: an opaque pool handle (`void*`).
type MemPool = *mut c_void;

/// `aclrtMemPoolProps`: the one Rust copy of its layout, `aclmem_sys`'s.
pub use aclmem_sys::pools::aclrtMemPoolProps;

// Every pool function has the prototype the driver resolves.
const _: aclmem_sys::pools::aclrtMemPoolCreate_t = aclrtMemPoolCreate;
const _: aclmem_sys::pools::aclrtMemPoolDestroy_t = aclrtMemPoolDestroy;
const _: aclmem_sys::pools::aclrtMemPoolAttr_t = aclrtMemPoolSetAttr;
const _: aclmem_sys::pools::aclrtMemPoolAttr_t = aclrtMemPoolGetAttr;
const _: aclmem_sys::pools::aclrtMemPoolMallocAsync_t = aclrtMemPoolMallocAsync;
const _: aclmem_sys::pools::aclrtMemPoolFreeAsync_t = aclrtMemPoolFreeAsync;
const _: aclmem_sys::pools::aclrtMemPoolTrimTo_t = aclrtMemPoolTrimTo;

/// `ACL_MEM_ALLOCATION_TYPE_PINNED`.
const PINNED: u32 = 0;
/// `ACL_MEM_LOCATION_TYPE_DEVICE`.
const DEVICE: u32 = 1;

/// `aclError aclrtMemPoolCreate(aclrtMemPool* memPool, const
/// aclrtMemPoolProps* poolProps)`. ACL layer, 100000: memPool or
/// poolProps NULL (or unreadable), an allocation type other than PINNED,
/// a location other than DEVICE, reserved bytes not zero.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolCreate(
    mem_pool: *mut MemPool,
    pool_props: *const aclrtMemPoolProps,
) -> AclErrorCode {
    guard("aclrtMemPoolCreate", || {
        shared::in_release("aclrtMemPoolCreate")?;
        if mem_pool.is_null() || pool_props.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: plain C data; read through the kernel-checked path.
        let props = unsafe { cptr::read(pool_props)? };
        if props.alloc_type != PINNED
            || props.location.type_ != DEVICE
            || props.reserved.iter().any(|&b| b != 0)
        {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            let pool = g.emu.mem_pool_create(
                props.location.id,
                props.max_size as u64,
                props.handle_type,
            )?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(mem_pool, pool as usize as MemPool, || {
                    let _ = g.emu.mem_pool_destroy(pool);
                })
            }
        })
    })
}

/// `aclError aclrtMemPoolDestroy(const aclrtMemPool memPool)`: NULL is
/// 100000; a pool that is not live 507000; blocks still in use go with
/// the pool.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemPoolDestroy(mem_pool: MemPool) -> AclErrorCode {
    guard("aclrtMemPoolDestroy", || {
        shared::in_release("aclrtMemPoolDestroy")?;
        if mem_pool.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| g.emu.mem_pool_destroy(mem_pool as usize as u64))
    })
}

/// `aclError aclrtMemPoolSetAttr(aclrtMemPool memPool, aclrtMemPoolAttr
/// attr, void* value)`: memPool NULL 100000; value NULL 107000 (the
/// runtime's check); `value` points at a `uint32_t` for the reuse
/// switches (1-3), a `uint64_t` for the others (an unreadable one is
/// 100000).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemPoolSetAttr(
    mem_pool: MemPool,
    attr: u32,
    value: *mut c_void,
) -> AclErrorCode {
    guard("aclrtMemPoolSetAttr", || {
        shared::in_release("aclrtMemPoolSetAttr")?;
        if mem_pool.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        if value.is_null() {
            return Err(AclError::RT_PARAM_INVALID);
        }
        with_global(|g| {
            g.emu
                .mem_pool_set_attr(mem_pool as usize as u64, attr, |is_u32| {
                    // SAFETY: plain C data; read through the kernel-checked
                    // path.
                    unsafe {
                        if is_u32 {
                            cptr::read(value.cast::<u32>()).map(u64::from)
                        } else {
                            cptr::read(value.cast::<u64>())
                        }
                    }
                })
        })
    })
}

/// `aclError aclrtMemPoolGetAttr(aclrtMemPool memPool, aclrtMemPoolAttr
/// attr, void* value)`: as `aclrtMemPoolSetAttr`; writes a `uint32_t` for
/// the reuse switches, a `uint64_t` for the sizes and the threshold.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemPoolGetAttr(
    mem_pool: MemPool,
    attr: u32,
    value: *mut c_void,
) -> AclErrorCode {
    guard("aclrtMemPoolGetAttr", || {
        shared::in_release("aclrtMemPoolGetAttr")?;
        if mem_pool.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        if value.is_null() {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let (v, is_u32) = with_global(|g| g.emu.mem_pool_get_attr(mem_pool as usize as u64, attr))?;
        // SAFETY: the C caller's out parameter.
        unsafe {
            if is_u32 {
                cptr::write(value.cast::<u32>(), v as u32)
            } else {
                cptr::write(value.cast::<u64>(), v)
            }
        }
    })
}

/// `aclError aclrtMemPoolMallocAsync(void** ptr, size_t size, aclrtMemPool
/// memPool, aclrtStream stream)`: ptr, memPool or stream NULL 100000 (no
/// default stream); size 0 succeeds without a block (and without touching
/// `*ptr`); else a block of `size` rounded up to 2 MiB, on `stream`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    mem_pool: MemPool,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemPoolMallocAsync", || {
        shared::in_release("aclrtMemPoolMallocAsync")?;
        if ptr.is_null() || mem_pool.is_null() || stream.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        if size == 0 {
            return Ok(());
        }
        let stream = stream as usize as u64;
        with_global(|g| {
            let addr =
                g.emu
                    .mem_pool_malloc_async(size as u64, mem_pool as usize as u64, stream)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(ptr, addr as *mut c_void, || {
                    let _ = g.emu.mem_pool_free_async(addr, stream);
                })
            }
        })
    })
}

/// `aclError aclrtMemPoolFreeAsync(void* ptr, aclrtStream stream)`: ptr
/// NULL 100000; a block goes back to its pool on `stream`; memory of
/// `aclrtMalloc` is freed as `aclrtFree` frees it; a NULL stream is the
/// runtime's 507000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemPoolFreeAsync(ptr: *mut c_void, stream: aclrtStream) -> AclErrorCode {
    guard("aclrtMemPoolFreeAsync", || {
        shared::in_release("aclrtMemPoolFreeAsync")?;
        if ptr.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            g.emu
                .mem_pool_free_async(ptr as usize, stream as usize as u64)
        })
    })
}

/// `aclError aclrtMemPoolTrimTo(aclrtMemPool memPool, size_t
/// minBytesToKeep)`: memPool NULL 100000; cached memory is released down
/// to `minBytesToKeep`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemPoolTrimTo(mem_pool: MemPool, min_bytes_to_keep: usize) -> AclErrorCode {
    guard("aclrtMemPoolTrimTo", || {
        shared::in_release("aclrtMemPoolTrimTo")?;
        if mem_pool.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            g.emu
                .mem_pool_trim_to(mem_pool as usize as u64, min_bytes_to_keep as u64)
        })
    })
}
