//! What the in-process tests of the memory chapter and the operator API
//! share: a machine joined per release and product, device and host
//! memory, copies to compare bytes, and the operator API's tensors and
//! scalars over device memory.

#![allow(dead_code)]

use std::ffi::c_void;
use std::ptr;

use aclmem_core::RawMemLocation;
use aclmem_emu_capi::*;
use aclmem_sys::{ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_HOST};

pub const INVALID: i32 = 100_000;
pub const RT_INVALID: i32 = 107_000;
pub const CONTEXT_NULL: i32 = 107_002;
pub const NOT_SUPPORTED: i32 = 207_000;
pub const H2D: u32 = 1;
pub const D2H: u32 = 2;

pub fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

/// Joins a fresh machine of `soc` emulating CANN `cann`, device 0 set.
pub fn init(tag: &str, soc: &str, cann: &str) {
    set(
        "ACLMEM_EMU_MACHINE",
        &format!("capi-memapi-{tag}-{}", std::process::id()),
    );
    set("ACLMEM_EMU_SOC", soc);
    set("ACLMEM_EMU_CANN", cann);
    assert_eq!(aclInit(ptr::null()), 0, "{tag}");
    assert_eq!(aclrtSetDevice(0), 0, "{tag}");
}

pub fn finalize() {
    assert_eq!(aclFinalize(), 0);
}

pub fn device(size: usize) -> *mut c_void {
    let mut p = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtMalloc(&mut p, size, 0) }, 0);
    p
}

pub fn host(size: usize) -> *mut c_void {
    let mut p = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtMallocHost(&mut p, size) }, 0);
    p
}

pub fn to_device(dst: *mut c_void, data: &[u8]) {
    // SAFETY: `data` is a live slice; `dst` device memory of its size.
    let code = unsafe { aclrtMemcpy(dst, data.len(), data.as_ptr().cast(), data.len(), H2D) };
    assert_eq!(code, 0);
}

pub fn from_device(src: *mut c_void, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` is a live buffer of `len` bytes.
    let code = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, src, len, D2H) };
    assert_eq!(code, 0);
    out
}

pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// A batch attribute: destinations at `dst` (`dst_id`), sources at `src`.
pub fn attr(dst: u32, dst_id: u32, src: u32, src_id: u32) -> aclrtMemcpyBatchAttr {
    aclrtMemcpyBatchAttr {
        dst_loc: RawMemLocation {
            id: dst_id,
            type_: dst,
        },
        src_loc: RawMemLocation {
            id: src_id,
            type_: src,
        },
        rsv: [0; 16],
    }
}

/// A batch of one H2D copy from `hsrc` to `ddst`, with overrides.
pub struct OneBatch {
    pub dsts: [*mut c_void; 2],
    pub srcs: [*mut c_void; 2],
    pub sizes: [usize; 2],
    pub maxs: [usize; 2],
    pub attrs: [aclrtMemcpyBatchAttr; 2],
    pub indexes: [usize; 2],
    pub count: usize,
    pub num_attrs: usize,
}

impl OneBatch {
    pub fn new(ddst: *mut c_void, hsrc: *mut c_void) -> OneBatch {
        let a = attr(
            ACL_MEM_LOCATION_TYPE_DEVICE,
            0,
            ACL_MEM_LOCATION_TYPE_HOST,
            0,
        );
        OneBatch {
            dsts: [ddst, ddst],
            srcs: [hsrc, hsrc],
            sizes: [64, 64],
            maxs: [64, 64],
            attrs: [a, a],
            indexes: [0, 1],
            count: 1,
            num_attrs: 1,
        }
    }

    /// The asynchronous call on the default stream: its code and failIndex.
    pub fn run(&mut self) -> (i32, usize) {
        let mut fail = 0usize;
        // SAFETY: every array holds two entries, at least count and
        // num_attrs.
        let code = unsafe {
            aclrtMemcpyBatchAsync(
                self.dsts.as_mut_ptr(),
                self.maxs.as_mut_ptr(),
                self.srcs.as_mut_ptr(),
                self.sizes.as_mut_ptr(),
                self.count,
                self.attrs.as_mut_ptr(),
                self.indexes.as_mut_ptr(),
                self.num_attrs,
                &mut fail,
                ptr::null_mut(),
            )
        };
        (code, fail)
    }
}

// Safe forms of the C functions that dereference their pointers (the
// library checks every pointer it is given: NULL or garbage is an error
// code, never a crash).

macro_rules! checked {
    ($($name:ident = $c:ident($($arg:ident: $t:ty),*);)*) => {$(
        pub fn $name($($arg: $t),*) -> i32 {
            // SAFETY: the C prototype; every pointer is checked by the
            // library, which answers an error code for one it cannot use.
            unsafe { $c($($arg),*) }
        }
    )*};
}

checked! {
    cmo_get_desc_size = aclrtCmoGetDescSize(size: *mut usize);
    cmo_wait_barrier = aclrtCmoWaitBarrier(info: *mut aclrtBarrierTaskInfo, stream: *mut c_void, flag: u32);
    device_peer_access_status = aclrtDevicePeerAccessStatus(device: i32, peer: i32, status: *mut i32);
    get_mem_uce_info = aclrtGetMemUceInfo(device: i32, infos: *mut aclrtMemUceInfo, size: usize, got: *mut usize);
    host_mem_map_capabilities = aclrtHostMemMapCapabilities(device: u32, hac: u32, cap: *mut u32);
    mem_alloc_managed = aclrtMemAllocManaged(ptr: *mut *mut c_void, size: u64, flag: u32);
    mem_pool_create = aclrtMemPoolCreate(pool: *mut *mut c_void, props: *const aclrtMemPoolProps);
    mem_pool_malloc_async = aclrtMemPoolMallocAsync(ptr: *mut *mut c_void, size: usize, pool: *mut c_void, stream: *mut c_void);
    reserve_mem_address_no_uc_memory = aclrtReserveMemAddressNoUCMemory(va: *mut *mut c_void, size: usize, alignment: usize, at: *mut c_void, flags: u64);
}

// ----- the operator API's objects ----------------------------------------------

/// `ACLNN_ERR_PARAM_NULLPTR`.
pub const NULLPTR: i32 = 161_001;
/// `ACLNN_ERR_PARAM_INVALID`.
pub const PARAM_INVALID: i32 = 161_002;
/// `ACL_FLOAT`, `ACL_DOUBLE`, `ACL_FORMAT_ND`.
pub const ACL_FLOAT: i32 = 0;
pub const ACL_DOUBLE: i32 = 11;
pub const ND: i32 = 2;

/// Writes `values` to device memory at `p`.
pub fn floats(p: *mut c_void, values: &[f32]) {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    to_device(p, &bytes);
}

/// `n` floats of device memory at `p`.
pub fn read(p: *mut c_void, n: usize) -> Vec<f32> {
    let mut bytes = vec![0u8; n * 4];
    // SAFETY: a live buffer of that size.
    let code = unsafe { aclrtMemcpy(bytes.as_mut_ptr().cast(), bytes.len(), p, bytes.len(), D2H) };
    assert_eq!(code, 0);
    bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A contiguous float tensor of `dims` over `data`.
pub fn tensor(dims: &[i64], data: *mut c_void) -> *mut c_void {
    let strides: Vec<i64> = (0..dims.len())
        .map(|i| dims[i + 1..].iter().product())
        .collect();
    let n = [dims.iter().product::<i64>()];
    let t = aclCreateTensor(
        dims.as_ptr(),
        dims.len() as u64,
        ACL_FLOAT,
        strides.as_ptr(),
        0,
        ND,
        n.as_ptr(),
        1,
        data,
    );
    assert!(!t.is_null());
    t
}

/// A double scalar of `v`.
pub fn scalar(v: f64) -> *mut c_void {
    let mut v = v;
    let s = aclCreateScalar((&raw mut v).cast(), ACL_DOUBLE);
    assert!(!s.is_null());
    s
}
