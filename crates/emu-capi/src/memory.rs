//! Physical memory, virtual ranges, plain memory, copies and the
//! introspection calls.
//!
//! Every function checks its own pointers and reads the caller's C data,
//! runs the ACL layer's checks once ([`aclmem_emu::args`], which hand the
//! checked values on), and calls the emulator, which makes the runtime's
//! checks (the calling thread's device, 107002 without one, among them).

use std::ffi::c_void;
use std::num::NonZeroUsize;

use aclmem_core::{AclError, GranularityOption, RawMemLocation, RawPhysicalMemProp};
use aclmem_emu::args;
use aclmem_hal::{PhysicalAllocator, RawHandle, VirtAddr, VirtualMemory};
use aclmem_sys::{aclrtDrvMemHandle, aclrtMemAccessDesc, aclrtPtrAttributes, aclrtStream};

use crate::entry::{AclErrorCode, guard};
use crate::state::with_global;
use crate::{cptr, shared};
use aclmem_emu::Target;
use aclmem_sys::{AccessDesc, AccessFlags};

fn raw_handle(h: aclrtDrvMemHandle) -> Result<RawHandle, AclError> {
    args::handle(h as usize as u64)
}

fn virt(p: *mut c_void) -> Result<VirtAddr, AclError> {
    args::address(p as usize).map(|a| VirtAddr(*a.get()))
}

/// `aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t
/// *total)` for the current device, machine-wide (what every process uses).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemInfo(
    attr: u32,
    free: *mut usize,
    total: *mut usize,
) -> AclErrorCode {
    guard("aclrtGetMemInfo", || {
        if free.is_null() || total.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let attr = args::mem_info_attr(attr)?;
        let (f, t) = with_global(|g| g.emu.mem_info(attr, Target::Current))?;
        // SAFETY: the C caller's out parameters.
        unsafe {
            cptr::write(free, f)?;
            cptr::write(total, t)
        }
    })
}

/// `aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
/// const aclrtPhysicalMemProp *prop, uint64_t flags)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocPhysical(
    handle: *mut aclrtDrvMemHandle,
    size: usize,
    prop: *const RawPhysicalMemProp,
    flags: u64,
) -> AclErrorCode {
    guard("aclrtMallocPhysical", || {
        if handle.is_null() || prop.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: plain C data; read through the kernel-checked path.
        let prop = unsafe { cptr::read(prop)? };
        let request = args::malloc_physical(size, &prop, flags)?;
        with_global(|g| {
            let h = g.emu.malloc_physical_checked(request)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(handle, h.0.get() as usize as aclrtDrvMemHandle, || {
                    let _ = g.emu.free_physical(h);
                })
            }
        })
    })
}

/// `aclError aclrtFreePhysical(aclrtDrvMemHandle handle)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreePhysical(handle: aclrtDrvMemHandle) -> AclErrorCode {
    guard("aclrtFreePhysical", || {
        let h = raw_handle(handle)?;
        with_global(|g| g.emu.free_physical(h))
    })
}

/// `aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
/// aclrtMemGranularityOptions option, size_t *granularity)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationGranularity(
    prop: *mut RawPhysicalMemProp,
    option: u32,
    granularity: *mut usize,
) -> AclErrorCode {
    guard("aclrtMemGetAllocationGranularity", || {
        if prop.is_null() || granularity.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: plain C data; read through the kernel-checked path.
        let prop = unsafe { cptr::read(prop)? };
        let prop = args::granularity(&prop)?;
        // The option is the driver's to check; the emulator answers the
        // documented granularity for both, and refuses anything else.
        GranularityOption::from_raw(option).ok_or(AclError::RT_PARAM_INVALID)?;
        let value = with_global(|g| g.emu.granularity_checked(prop))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(granularity, value) }
    })
}

/// `aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t
/// alignment, void *expectPtr, uint64_t flags)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReserveMemAddress(
    vir_ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expect_ptr: *mut c_void,
    flags: u64,
) -> AclErrorCode {
    guard("aclrtReserveMemAddress", || {
        if vir_ptr.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let request = args::reserve(size, flags)?;
        with_global(|g| {
            let expected = NonZeroUsize::new(expect_ptr as usize).map(VirtAddr);
            let a = g.emu.reserve_checked(request, alignment, expected)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(vir_ptr, a.get() as *mut c_void, || {
                    let _ = g.emu.release(a);
                })
            }
        })
    })
}

/// `aclError aclrtReleaseMemAddress(void *virPtr)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtReleaseMemAddress(vir_ptr: *mut c_void) -> AclErrorCode {
    guard("aclrtReleaseMemAddress", || {
        let a = virt(vir_ptr)?;
        with_global(|g| g.emu.release(a))
    })
}

/// `aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
/// aclrtDrvMemHandle handle, uint64_t flags)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMapMem(
    vir_ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> AclErrorCode {
    guard("aclrtMapMem", || {
        let request = args::map(vir_ptr as usize, size, handle as usize as u64, flags)?;
        with_global(|g| g.emu.map_checked(request, offset))
    })
}

/// `aclError aclrtUnmapMem(void *virPtr)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtUnmapMem(vir_ptr: *mut c_void) -> AclErrorCode {
    guard("aclrtUnmapMem", || {
        let a = virt(vir_ptr)?;
        with_global(|g| g.emu.unmap(a))
    })
}

/// `aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy
/// policy)`: device memory of the current device, charged to its capacity;
/// the size is rounded up to 32 bytes plus 32 of padding (documented), the
/// memory to pages (2 MiB pages above 1 MiB, 4 KiB below or for
/// NORMAL_ONLY policies, 1 GiB for HUGE1G_ONLY).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMalloc(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
) -> AclErrorCode {
    guard("aclrtMalloc", || {
        shared::malloc_device(dev_ptr, size, policy, false)
    })
}

/// `aclError aclrtMallocAlign32(void **devPtr, size_t size,
/// aclrtMemMallocPolicy policy)`: as `aclrtMalloc` without the padding.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocAlign32(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
) -> AclErrorCode {
    guard("aclrtMallocAlign32", || {
        shared::malloc_device(dev_ptr, size, policy, true)
    })
}

/// `aclError aclrtFree(void *devPtr)`: memory from `aclrtMalloc*` only.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFree(dev_ptr: *mut c_void) -> AclErrorCode {
    guard("aclrtFree", || {
        let addr = args::address(dev_ptr as usize)?;
        with_global(|g| g.emu.free_device_checked(addr))
    })
}

/// `aclError aclrtMallocHost(void **hostPtr, size_t size)`: page-locked host
/// memory (plain host memory in the emulator; not charged to a device).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocHost(host_ptr: *mut *mut c_void, size: usize) -> AclErrorCode {
    guard("aclrtMallocHost", || shared::malloc_host(host_ptr, size))
}

/// `aclError aclrtFreeHost(void *hostPtr)`: memory from `aclrtMallocHost`
/// only.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreeHost(host_ptr: *mut c_void) -> AclErrorCode {
    guard("aclrtFreeHost", || {
        let addr = args::address(host_ptr as usize)?;
        with_global(|g| g.emu.free_host_checked(addr))
    })
}

/// `aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t
/// count, aclrtMemcpyKind kind)`: synchronous. A device address is one
/// mapped by `aclrtMapMem` or returned by `aclrtMalloc`; `kind` must match
/// the addresses (`ACL_MEMCPY_DEFAULT` infers it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: u32,
) -> AclErrorCode {
    guard("aclrtMemcpy", || {
        shared::copy(dst, dest_max, src, count, kind, None)
    })
}

/// `aclError aclrtMemcpyAsync(..., aclrtStream stream)`: executes at once
/// (streams never hold pending work); NULL is the default stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemcpyAsync", || {
        shared::copy(dst, dest_max, src, count, kind, Some(stream))
    })
}

/// `aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value,
/// size_t count)`: device memory of this process or `aclrtMallocHost`
/// memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemset(
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
) -> AclErrorCode {
    shared::memset(dev_ptr, max_count, value, count)
}

/// `aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t
/// *psize)`: the mapping (or `aclrtMallocHost` block) containing `ptr`.
/// Either out pointer may be NULL, not both (107000).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAddressRange(
    ptr: *mut c_void,
    pbase: *mut *mut c_void,
    psize: *mut usize,
) -> AclErrorCode {
    guard("aclrtMemGetAddressRange", || {
        let ptr = args::address(ptr as usize)?;
        if pbase.is_null() && psize.is_null() {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let (base, size) = with_global(|g| g.emu.address_range(ptr.get().get()))?;
        // SAFETY: the C caller's out parameters (each may be NULL).
        unsafe {
            if !pbase.is_null() {
                cptr::write(pbase, base as *mut c_void)?;
            }
            if !psize.is_null() {
                cptr::write(psize, size)?;
            }
        }
        Ok(())
    })
}

/// `aclError aclrtMemRetainAllocationHandle(void *virPtr, aclrtDrvMemHandle
/// *handle)`: a new handle to what is mapped at `virPtr` (which must be an
/// `aclrtMapMem` address); free it with `aclrtFreePhysical`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemRetainAllocationHandle(
    vir_ptr: *mut c_void,
    handle: *mut aclrtDrvMemHandle,
) -> AclErrorCode {
    guard("aclrtMemRetainAllocationHandle", || {
        let addr = virt(vir_ptr)?;
        if handle.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            let h = g.emu.retain_allocation_handle(addr.get())?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(handle, h.0.get() as usize as aclrtDrvMemHandle, || {
                    let _ = g.emu.free_physical(h);
                })
            }
        })
    })
}

/// `aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle
/// handle, aclrtPhysicalMemProp *prop)`: handle type NONE, allocation type
/// PINNED, and the attribute and location it was allocated with.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationPropertiesFromHandle(
    handle: aclrtDrvMemHandle,
    prop: *mut RawPhysicalMemProp,
) -> AclErrorCode {
    guard("aclrtMemGetAllocationPropertiesFromHandle", || {
        let h = raw_handle(handle)?;
        if prop.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let p = with_global(|g| g.emu.allocation_properties(h))?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(prop, p) }
    })
}

/// `aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes
/// *attributes)`: HOST for `aclrtMallocHost` memory, DEVICE (with its id)
/// for device memory, UNREGISTERED for anything else; and the page size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtPointerGetAttributes(
    ptr: *const c_void,
    attributes: *mut aclrtPtrAttributes,
) -> AclErrorCode {
    guard("aclrtPointerGetAttributes", || {
        if ptr.is_null() || attributes.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let a = with_global(|g| g.emu.pointer_attributes(ptr as usize))?;
        let out = aclrtPtrAttributes {
            location: RawMemLocation {
                id: a.id,
                type_: a.location.raw(),
            },
            pageSize: a.page_size,
            rsv: [0; 4],
        };
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(attributes, out) }
    })
}

/// The most access descriptors one `aclrtMemSetAccess` call may pass (one
/// per device and the host).
const MAX_ACCESS_DESCS: usize = aclmem_emu::MAX_DEVICES as usize + 1;

/// `aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc
/// *desc, size_t count)`: virPtr and size must be those of an `aclrtMapMem`
/// call; each descriptor READWRITE on the device or host, `rsv` zero.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetAccess(
    vir_ptr: *mut c_void,
    size: usize,
    desc: *mut aclrtMemAccessDesc,
    count: usize,
) -> AclErrorCode {
    guard("aclrtMemSetAccess", || {
        if vir_ptr.is_null() || desc.is_null() || count == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        // SAFETY: plain C data, read through the kernel-checked path.
        let descs =
            unsafe { cptr::read_array(desc, count, MAX_ACCESS_DESCS, AclError::RT_PARAM_INVALID)? };
        // A descriptor with reserved bytes set is one the runtime does
        // not know.
        let descs: Vec<AccessDesc> = descs
            .iter()
            .map(|d| AccessDesc {
                flags: if d.rsv == [0; 12] {
                    AccessFlags::from_raw(d.flags)
                } else {
                    AccessFlags::Unknown(d.flags)
                },
                ..AccessDesc::from_raw(d)
            })
            .collect();
        with_global(|g| g.emu.set_access(vir_ptr as usize, size, &descs))
    })
}

/// `aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location,
/// uint64_t *flag)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAccess(
    vir_ptr: *mut c_void,
    location: *mut RawMemLocation,
    flag: *mut u64,
) -> AclErrorCode {
    guard("aclrtMemGetAccess", || {
        if vir_ptr.is_null() || location.is_null() || flag.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let a = with_global(|g| g.emu.get_access(vir_ptr as usize))?;
        // SAFETY: the C caller's out parameters.
        unsafe {
            cptr::write(
                location,
                RawMemLocation {
                    id: a.id,
                    type_: a.location.raw(),
                },
            )?;
            cptr::write(flag, u64::from(a.flags.raw()))
        }
    })
}
