//! Batched copies: `aclrtMemcpyBatch` and `aclrtMemcpyBatchAsync` (CANN
//! 8.3 on; vllm-ascend's `swap_blocks_batch` and torch_npu's
//! `_foreach_copy_` call them) and their V2 forms without `failIndex`
//! (CANN 9.1 on: newer than every release the emulator knows, so answered
//! 207000 until one is added), each copy host to device or device to host,
//! made by the emulator's checked copy path.
//!
//! The checks, in the runtime's order (docs/facts.md, "Batched copies"):
//! the ACL layer (100000): `failIndex` NULL (V1 forms); `sizes` NULL or `numBatches`
//! 0; then, **if every size is 0, success at once with `*failIndex` =
//! `SIZE_MAX`**; any other array NULL, a `destMaxs[i]` below `sizes[i]`,
//! an attribute's `rsv` not zero. The runtime (107000, `*failIndex` =
//! `SIZE_MAX` first): a chip without batch copies (207000: only Atlas
//! 350, A3 and A2 have them); `numAttrs` 0 or above `numBatches`,
//! `attrsIndexes` not starting at 0, not increasing or reaching
//! `numBatches`; the synchronous form above 4096 copies; then per copy
//! (`*failIndex` = its index): a size of 0 or above its `destMax` (the
//! asynchronous form), a NULL address, an address whose location is not
//! its attribute's (memory not from ACL counts as host, `HOST_NUMA` as
//! host, a device's id must match), both ends on the same side.

use std::ffi::c_void;

use aclmem_core::{AclError, Product, RawMemLocation};
use aclmem_sys::{LocationType, MemcpyKind, aclrtStream};

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `aclrtMemcpyBatchAttr`: `{ aclrtMemLocation dstLoc; aclrtMemLocation
/// srcLoc; uint8_t rsv[16]; }`, 32 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct aclrtMemcpyBatchAttr {
    /// Where the destinations are.
    pub dst_loc: RawMemLocation,
    /// Where the sources are.
    pub src_loc: RawMemLocation,
    /// Reserved, all 0.
    pub rsv: [u8; 16],
}

const _: () = assert!(std::mem::size_of::<aclrtMemcpyBatchAttr>() == 32);

/// The products whose runtime has `RT_FEATURE_TASK_MEMORY_BATCH_COPY`.
const BATCH_PRODUCTS: &[Product] = &[Product::Atlas350, Product::AtlasA3, Product::AtlasA2];

/// `DEVMM_MEMCPY_BATCH_MAX_COUNT`: the synchronous form's limit.
const SYNC_MAX: usize = 4096;

/// The most entries read from the caller's arrays (the emulator's limit;
/// more is 100000, as unreadable arrays are).
const READ_MAX: usize = 1 << 24;

/// A batch's arguments, as the C caller passed them.
pub(crate) struct Batch {
    dsts: *mut *mut c_void,
    dest_maxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    count: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrs_indexes: *mut usize,
    num_attrs: usize,
}

/// Reads `n` entries of a C array (NULL or unreadable: 100000).
///
/// # Safety
/// `p` is NULL or a pointer the C caller passed.
unsafe fn array<T: Copy + Default>(p: *const T, n: usize) -> Result<Vec<T>, AclError> {
    // SAFETY: the caller's contract, passed on.
    unsafe { cptr::read_array(p, n, READ_MAX, AclError::INVALID_PARAM) }
}

/// The location a pointer's memory is at, as the runtime compares it with
/// an attribute: memory not from ACL and a host NUMA node are the host.
fn side(location: LocationType) -> Option<LocationType> {
    match location {
        LocationType::Host | LocationType::Unregistered | LocationType::HostNuma => {
            Some(LocationType::Host)
        }
        LocationType::Device => Some(LocationType::Device),
        _ => None,
    }
}

/// Whether the memory at `ptr` is where `loc` says.
fn located(ptr: usize, loc: RawMemLocation) -> Result<bool, AclError> {
    let Some(want) = side(LocationType::from_raw(loc.type_)) else {
        return Ok(false);
    };
    let got = with_global(|g| g.emu.pointer_attributes(ptr))?;
    Ok(side(got.location) == Some(want) && (want != LocationType::Device || got.id == loc.id))
}

/// One batch: `fail_index` is the V1 forms' out parameter, `stream` the
/// asynchronous forms' (`None` for the synchronous ones).
///
/// # Safety
/// Every pointer is NULL or one the C caller passed.
unsafe fn run(
    name: &'static str,
    b: &Batch,
    fail_index: Option<*mut usize>,
    stream: Option<aclrtStream>,
) -> Result<(), AclError> {
    shared::in_release(name)?;
    let fail = |i: usize| -> Result<(), AclError> {
        match fail_index {
            // SAFETY: the C caller's out parameter.
            Some(p) => unsafe { cptr::write(p, i) },
            None => Ok(()),
        }
    };
    if fail_index.is_some_and(|p| p.is_null()) || b.sizes.is_null() || b.count == 0 {
        return Err(AclError::INVALID_PARAM);
    }
    // SAFETY: the caller's arrays (every read below is checked).
    let sizes = unsafe { array(b.sizes, b.count)? };
    if sizes.iter().all(|&s| s == 0) {
        return fail(usize::MAX);
    }
    if b.dsts.is_null() || b.srcs.is_null() || b.attrs.is_null() || b.attrs_indexes.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    // SAFETY: as above.
    let (dsts, srcs, dest_maxs) = unsafe {
        (
            array(b.dsts.cast::<usize>(), b.count)?,
            array(b.srcs.cast::<usize>(), b.count)?,
            array(b.dest_maxs, b.count)?,
        )
    };
    if dest_maxs.iter().zip(&sizes).any(|(m, s)| m < s) {
        return Err(AclError::INVALID_PARAM);
    }
    // SAFETY: as above.
    let attrs = unsafe { array(b.attrs, b.num_attrs)? };
    if attrs.iter().any(|a| a.rsv != [0; 16]) {
        return Err(AclError::INVALID_PARAM);
    }
    // The runtime.
    shared::on_products(BATCH_PRODUCTS)?;
    fail(usize::MAX)?;
    if b.num_attrs == 0 || b.num_attrs > b.count {
        return Err(AclError::RT_PARAM_INVALID);
    }
    // SAFETY: as above.
    let indexes = unsafe { array(b.attrs_indexes, b.num_attrs)? };
    let ordered = indexes.first() == Some(&0)
        && indexes.windows(2).all(|w| w[0] < w[1])
        && indexes.last().is_some_and(|&l| l < b.count);
    if !ordered || (stream.is_none() && b.count > SYNC_MAX) {
        return Err(AclError::RT_PARAM_INVALID);
    }
    // The attribute of copy i: the last whose first index is at most i.
    let attr_of = |i: usize| attrs[indexes.partition_point(|&first| first <= i) - 1];
    let mut kinds = Vec::with_capacity(b.count);
    for i in 0..b.count {
        let a = attr_of(i);
        let refused = (stream.is_some() && (sizes[i] == 0 || sizes[i] > dest_maxs[i]))
            || dsts[i] == 0
            || srcs[i] == 0
            || !located(dsts[i], a.dst_loc)?
            || !located(srcs[i], a.src_loc)?;
        let dst_device = LocationType::from_raw(a.dst_loc.type_) == LocationType::Device;
        let src_device = LocationType::from_raw(a.src_loc.type_) == LocationType::Device;
        if refused || dst_device == src_device {
            fail(i)?;
            return Err(AclError::RT_PARAM_INVALID);
        }
        kinds.push(if dst_device {
            MemcpyKind::HostToDevice
        } else {
            MemcpyKind::DeviceToHost
        });
    }
    for (i, kind) in kinds.into_iter().enumerate() {
        let copied = shared::copy(
            dsts[i] as *mut c_void,
            sizes[i],
            srcs[i] as *const c_void,
            sizes[i],
            kind.raw(),
            stream,
        );
        if let Err(e) = copied {
            fail(i)?;
            return Err(e);
        }
    }
    Ok(())
}

/// `aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs,
/// size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t
/// *attrsIndexes, size_t numAttrs, size_t *failIndex)`: the copies, done
/// when the call returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyBatch(
    dsts: *mut *mut c_void,
    dest_maxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    num_batches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrs_indexes: *mut usize,
    num_attrs: usize,
    fail_index: *mut usize,
) -> AclErrorCode {
    let b = Batch {
        dsts,
        dest_maxs,
        srcs,
        sizes,
        count: num_batches,
        attrs,
        attrs_indexes,
        num_attrs,
    };
    // SAFETY: the C caller's pointers, each read and written through cptr.
    guard("aclrtMemcpyBatch", || unsafe {
        run("aclrtMemcpyBatch", &b, Some(fail_index), None)
    })
}

/// `aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void
/// **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs,
/// size_t *attrsIndexes, size_t numAttrs, size_t *failIndex, aclrtStream
/// stream)`: the copies on `stream` (NULL: the default stream), done
/// when the call returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyBatchAsync(
    dsts: *mut *mut c_void,
    dest_maxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    num_batches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrs_indexes: *mut usize,
    num_attrs: usize,
    fail_index: *mut usize,
    stream: aclrtStream,
) -> AclErrorCode {
    let b = Batch {
        dsts,
        dest_maxs,
        srcs,
        sizes,
        count: num_batches,
        attrs,
        attrs_indexes,
        num_attrs,
    };
    // SAFETY: the C caller's pointers, each read and written through cptr.
    guard("aclrtMemcpyBatchAsync", || unsafe {
        run("aclrtMemcpyBatchAsync", &b, Some(fail_index), Some(stream))
    })
}

/// `aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void
/// **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs,
/// size_t *attrsIndexes, size_t numAttrs)` (CANN 9.1 on): `aclrtMemcpyBatch`
/// without `failIndex`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyBatchV2(
    dsts: *mut *mut c_void,
    dest_maxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    num_batches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrs_indexes: *mut usize,
    num_attrs: usize,
) -> AclErrorCode {
    let b = Batch {
        dsts,
        dest_maxs,
        srcs,
        sizes,
        count: num_batches,
        attrs,
        attrs_indexes,
        num_attrs,
    };
    // SAFETY: the C caller's pointers, each read through cptr.
    guard("aclrtMemcpyBatchV2", || unsafe {
        run("aclrtMemcpyBatchV2", &b, None, None)
    })
}

/// `aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void
/// **srcs, size_t *sizes, size_t numBatches, aclrtMemcpyBatchAttr *attrs,
/// size_t *attrsIndexes, size_t numAttrs, aclrtStream stream)` (CANN 9.1
/// on): `aclrtMemcpyBatchAsync` without `failIndex`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyBatchAsyncV2(
    dsts: *mut *mut c_void,
    dest_maxs: *mut usize,
    srcs: *mut *mut c_void,
    sizes: *mut usize,
    num_batches: usize,
    attrs: *mut aclrtMemcpyBatchAttr,
    attrs_indexes: *mut usize,
    num_attrs: usize,
    stream: aclrtStream,
) -> AclErrorCode {
    let b = Batch {
        dsts,
        dest_maxs,
        srcs,
        sizes,
        count: num_batches,
        attrs,
        attrs_indexes,
        num_attrs,
    };
    // SAFETY: the C caller's pointers, each read through cptr.
    guard("aclrtMemcpyBatchAsyncV2", || unsafe {
        run("aclrtMemcpyBatchAsyncV2", &b, None, Some(stream))
    })
}
