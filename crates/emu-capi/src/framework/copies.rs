//! Copies beyond `aclrtMemcpy(Async)`: two-dimensional ones
//! (`aclrtMemcpy2d(Async)`), device-to-device copies through base pointers
//! held in device memory (`aclrtMemcpyAsyncWithOffset`), and copies
//! described in device memory (`aclrtGetMemcpyDescSize`,
//! `aclrtSetMemcpyDesc`, `aclrtMemcpyAsyncWithDesc`), and 32-bit sets
//! (`aclrtMemsetD32(Async)`, CANN 9.1 on). Every byte moves
//! through the emulator's checked copy path; every stream's work is done
//! when the call returns.

use std::ffi::c_void;

use aclmem_core::{AclError, Product};
use aclmem_sys::{LocationType, MemcpyKind, aclrtStream};

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `RT_MAX_MEMCPY2D_HEIGHT`.
const MAX_2D_HEIGHT: usize = 5_242_880;
/// `RT_MAX_MEMCPY2D_WIDTH`.
const MAX_2D_WIDTH: usize = 5_000_000;
/// `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`: a copy within one device.
const INNER_D2D: u32 = 6;
/// `RT_MEMCPY_KIND_MAX`: one past the last `aclrtMemcpyKind`.
const KIND_MAX: u32 = 8;

/// The products whose device-to-device 2D copies and 32-bit sets exist
/// (documented).
const D2D_2D_PRODUCTS: &[Product] = &[Product::Atlas350, Product::AtlasA3, Product::AtlasA2];
/// The products with `aclrtMemcpyAsyncWithOffset` (documented).
const OFFSET_PRODUCTS: &[Product] = &[
    Product::Atlas350,
    Product::AtlasA3,
    Product::AtlasA2,
    Product::AtlasTraining,
];
/// The products whose runtime has memcpy descriptors (STARS).
const DESC_PRODUCTS: &[Product] = &[
    Product::Atlas350,
    Product::AtlasA3,
    Product::AtlasA2,
    Product::Atlas200IA2,
];

/// Whether `ptr` is device memory.
fn on_device(ptr: usize) -> Result<bool, AclError> {
    with_global(|g| g.emu.pointer_attributes(ptr)).map(|a| a.location == LocationType::Device)
}

/// A 2D copy: `height` rows of `width` bytes, row r from `src + r*spitch`
/// to `dst + r*dpitch`; `stream` for the asynchronous form.
#[allow(clippy::too_many_arguments)]
fn copy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: u32,
    stream: Option<aclrtStream>,
) -> Result<(), AclError> {
    // The ACL layer.
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() || width > spitch || width > dpitch {
        return Err(AclError::INVALID_PARAM);
    }
    let kind = MemcpyKind::from_raw(kind);
    if !matches!(
        kind,
        MemcpyKind::HostToDevice
            | MemcpyKind::DeviceToHost
            | MemcpyKind::DeviceToDevice
            | MemcpyKind::Default
    ) {
        return Err(AclError::INVALID_PARAM);
    }
    // The runtime.
    if height > MAX_2D_HEIGHT || width > MAX_2D_WIDTH {
        return Err(AclError::RT_PARAM_INVALID);
    }
    let resolved = match kind {
        MemcpyKind::Default => match (on_device(dst as usize)?, on_device(src as usize)?) {
            (true, true) => MemcpyKind::DeviceToDevice,
            (true, false) => MemcpyKind::HostToDevice,
            (false, true) => MemcpyKind::DeviceToHost,
            (false, false) => return Err(AclError::RT_PARAM_INVALID),
        },
        k => k,
    };
    if resolved == MemcpyKind::DeviceToDevice {
        if stream.is_none() {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        shared::on_products(D2D_2D_PRODUCTS)?;
    }
    let rows = height.checked_sub(1).ok_or(AclError::RT_PARAM_INVALID)?;
    let last_dst =
        (dst as usize).checked_add(rows.checked_mul(dpitch).ok_or(AclError::RT_PARAM_INVALID)?);
    let last_src =
        (src as usize).checked_add(rows.checked_mul(spitch).ok_or(AclError::RT_PARAM_INVALID)?);
    if last_dst.is_none() || last_src.is_none() {
        return Err(AclError::RT_PARAM_INVALID);
    }
    for r in 0..height {
        shared::copy(
            (dst as usize + r * dpitch) as *mut c_void,
            width,
            (src as usize + r * spitch) as *const c_void,
            width,
            resolved.raw(),
            stream,
        )?;
    }
    Ok(())
}

/// `aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src,
/// size_t spitch, size_t width, size_t height, aclrtMemcpyKind kind)`:
/// host to device or device to host (device to device is 207000 in the
/// synchronous form). Width or height 0 copies nothing and succeeds.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: u32,
) -> AclErrorCode {
    guard("aclrtMemcpy2d", || {
        copy_2d(dst, dpitch, src, spitch, width, height, kind, None)
    })
}

/// `aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src,
/// size_t spitch, size_t width, size_t height, aclrtMemcpyKind kind,
/// aclrtStream stream)`: as `aclrtMemcpy2d`, device to device too (Atlas
/// 350, A3 and A2), on `stream`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclrtMemcpy2dAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemcpy2dAsync", || {
        copy_2d(dst, dpitch, src, spitch, width, height, kind, Some(stream))
    })
}

/// Reads the 64-bit pointer device memory holds at `at` (107000 where it
/// is not device memory of this process).
fn device_pointer(at: usize) -> Result<usize, AclError> {
    let mut bytes = [0u8; 8];
    with_global(|g| g.emu.read(at, &mut bytes)).map_err(|_| AclError::RT_PARAM_INVALID)?;
    usize::try_from(u64::from_le_bytes(bytes)).map_err(|_| AclError::RT_PARAM_INVALID)
}

/// `aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t
/// dstDataOffset, const void **src, size_t count, size_t srcDataOffset,
/// aclrtMemcpyKind kind, aclrtStream stream)`: `dst` and `src` are device
/// addresses that hold the base pointers; `count` bytes go from `*src +
/// srcDataOffset` to `*dst + dstDataOffset`. Count 0 succeeds at once;
/// the kind must be `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE` (107000).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn aclrtMemcpyAsyncWithOffset(
    dst: *mut *mut c_void,
    dest_max: usize,
    dst_data_offset: usize,
    src: *const *const c_void,
    count: usize,
    src_data_offset: usize,
    kind: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemcpyAsyncWithOffset", || {
        shared::in_release("aclrtMemcpyAsyncWithOffset")?;
        if count == 0 {
            return Ok(());
        }
        shared::on_products(OFFSET_PRODUCTS)?;
        if kind != INNER_D2D || dst.is_null() || src.is_null() {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let to = device_pointer(dst as usize)?
            .checked_add(dst_data_offset)
            .ok_or(AclError::RT_PARAM_INVALID)?;
        let from = device_pointer(src as usize)?
            .checked_add(src_data_offset)
            .ok_or(AclError::RT_PARAM_INVALID)?;
        shared::copy(
            to as *mut c_void,
            dest_max,
            from as *const c_void,
            count,
            MemcpyKind::DeviceToDevice.raw(),
            Some(stream),
        )
    })
}

/// The size of a memcpy descriptor: 32 bytes, 64 on Atlas 350.
fn descriptor_size() -> Result<usize, AclError> {
    let product = with_global(|g| Ok(g.emu.product()))?;
    Ok(if product == Product::Atlas350 { 64 } else { 32 })
}

/// The emulator's mark of a descriptor `aclrtSetMemcpyDesc` wrote.
const DESC_MAGIC: u64 = u64::from_le_bytes(*b"aclmemcd");

/// `aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t
/// *descSize)`: descSize NULL or a kind out of range 100000; a chip
/// without descriptors, or a kind other than
/// `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE`, 207000.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemcpyDescSize(kind: u32, desc_size: *mut usize) -> AclErrorCode {
    guard("aclrtGetMemcpyDescSize", || {
        shared::in_release("aclrtGetMemcpyDescSize")?;
        if desc_size.is_null() || kind >= KIND_MAX {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(DESC_PRODUCTS)?;
        if kind != INNER_D2D {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        let size = descriptor_size()?;
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(desc_size, size) }
    })
}

/// `aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void
/// *srcAddr, void *dstAddr, size_t count, void *config)`: records the copy
/// in `desc`, device memory of the descriptor's size. NULL desc, source
/// or destination, a kind out of range, count 0 or a configuration 100000;
/// a kind other than `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE` 207000; `desc`
/// not device memory 107000.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetMemcpyDesc(
    desc: *mut c_void,
    kind: u32,
    src_addr: *mut c_void,
    dst_addr: *mut c_void,
    count: usize,
    config: *mut c_void,
) -> AclErrorCode {
    guard("aclrtSetMemcpyDesc", || {
        shared::in_release("aclrtSetMemcpyDesc")?;
        if desc.is_null()
            || src_addr.is_null()
            || dst_addr.is_null()
            || kind >= KIND_MAX
            || count == 0
            || !config.is_null()
        {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(DESC_PRODUCTS)?;
        if kind != INNER_D2D {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        let mut record = [0u8; 32];
        for (i, v) in [DESC_MAGIC, src_addr as u64, dst_addr as u64, count as u64]
            .into_iter()
            .enumerate()
        {
            record[i * 8..(i + 1) * 8].copy_from_slice(&v.to_le_bytes());
        }
        with_global(|g| g.emu.write(desc as usize, &record)).map_err(|_| AclError::RT_PARAM_INVALID)
    })
}

/// `aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind,
/// aclrtStream stream)`: the copy `desc` describes, on `stream`. NULL
/// desc or stream, or a kind out of range 100000; a descriptor
/// `aclrtSetMemcpyDesc` did not write 107000.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsyncWithDesc(
    desc: *mut c_void,
    kind: u32,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemcpyAsyncWithDesc", || {
        shared::in_release("aclrtMemcpyAsyncWithDesc")?;
        if desc.is_null() || kind >= KIND_MAX || stream.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(DESC_PRODUCTS)?;
        if kind != INNER_D2D {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        let mut record = [0u8; 32];
        with_global(|g| g.emu.read(desc as usize, &mut record))
            .map_err(|_| AclError::RT_PARAM_INVALID)?;
        let field = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&record[i * 8..(i + 1) * 8]);
            u64::from_le_bytes(b) as usize
        };
        if field(0) as u64 != DESC_MAGIC {
            return Err(AclError::RT_PARAM_INVALID);
        }
        shared::copy(
            field(2) as *mut c_void,
            field(3),
            field(1) as *const c_void,
            field(3),
            MemcpyKind::DeviceToDevice.raw(),
            Some(stream),
        )
    })
}

/// `aclrtMemsetD32`'s and `aclrtMemsetD32Async`'s work: `n` copies of
/// `value` from `ptr`. ACL layer (100000): `n` 0 succeeds at once; ptr NULL
/// or not 4-byte aligned; `memSize` below `n * 4`; memory that is not
/// `aclrtMalloc` or `aclrtMallocHost` memory. A chip without the feature
/// answers the ACL layer 207000, which it turns into success (logging a
/// warning): nothing is set (Atlas 350, A3 and A2 have it).
fn memset_d32(
    name: &'static str,
    ptr: *mut c_void,
    mem_size: usize,
    value: u32,
    n: usize,
    stream: Option<aclrtStream>,
) -> Result<(), AclError> {
    shared::in_release(name)?;
    if n == 0 {
        return Ok(());
    }
    let bytes = n.checked_mul(4).ok_or(AclError::INVALID_PARAM)?;
    if ptr.is_null() || !(ptr as usize).is_multiple_of(4) || mem_size < bytes {
        return Err(AclError::INVALID_PARAM);
    }
    let location = with_global(|g| g.emu.pointer_attributes(ptr as usize))?.location;
    if !matches!(
        location,
        LocationType::Host | LocationType::Device | LocationType::HostNuma
    ) {
        return Err(AclError::INVALID_PARAM);
    }
    match shared::on_products(D2D_2D_PRODUCTS) {
        Err(AclError::RT_FEATURE_NOT_SUPPORT) => return Ok(()),
        other => other?,
    }
    let pattern: Vec<u8> = std::iter::repeat_n(value.to_ne_bytes(), n)
        .flatten()
        .collect();
    shared::copy(
        ptr,
        bytes,
        pattern.as_ptr().cast(),
        bytes,
        MemcpyKind::Default.raw(),
        stream,
    )
}

/// `aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value,
/// size_t N)` (CANN 9.1 on): N 32-bit values.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemsetD32(
    ptr: *mut c_void,
    mem_size: usize,
    value: u32,
    n: usize,
) -> AclErrorCode {
    guard("aclrtMemsetD32", || {
        memset_d32("aclrtMemsetD32", ptr, mem_size, value, n, None)
    })
}

/// `aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value,
/// size_t N, aclrtStream stream)` (CANN 9.1 on): as `aclrtMemsetD32`, on
/// `stream` (NULL: the default stream).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemsetD32Async(
    ptr: *mut c_void,
    mem_size: usize,
    value: u32,
    n: usize,
    stream: aclrtStream,
) -> AclErrorCode {
    guard("aclrtMemsetD32Async", || {
        memset_d32("aclrtMemsetD32Async", ptr, mem_size, value, n, Some(stream))
    })
}
