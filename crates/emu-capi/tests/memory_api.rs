//! The runtime's memory chapter beyond the typed API, called in-process:
//! stream value operations, batched copies (with a vllm-ascend-style swap
//! of KV blocks between device memory and pinned host memory), allocation
//! variants and cache maintenance; each with its success (bytes compared)
//! and every documented refusal with its code, then the answers of
//! releases and products without them. One test, because the library's
//! state is process-wide.

use std::ffi::c_void;
use std::ptr;

use aclmem_core::RawMemLocation;
use aclmem_emu::errors::Situation;
use aclmem_emu_capi::*;
use aclmem_sys::{ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_HOST};

const INVALID: i32 = 100_000;
const RT_INVALID: i32 = 107_000;
const CONTEXT_NULL: i32 = 107_002;
const NOT_SUPPORTED: i32 = 207_000;
const H2D: u32 = 1;
const D2H: u32 = 2;

fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

/// Joins a fresh machine of `soc` emulating CANN `cann`, device 0 set.
fn init(tag: &str, soc: &str, cann: &str) {
    set(
        "ACLMEM_EMU_MACHINE",
        &format!("capi-memapi-{tag}-{}", std::process::id()),
    );
    set("ACLMEM_EMU_SOC", soc);
    set("ACLMEM_EMU_CANN", cann);
    assert_eq!(aclInit(ptr::null()), 0, "{tag}");
    assert_eq!(aclrtSetDevice(0), 0, "{tag}");
}

fn finalize() {
    assert_eq!(aclFinalize(), 0);
}

fn device(size: usize) -> *mut c_void {
    let mut p = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtMalloc(&mut p, size, 0) }, 0);
    p
}

fn host(size: usize) -> *mut c_void {
    let mut p = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtMallocHost(&mut p, size) }, 0);
    p
}

fn to_device(dst: *mut c_void, data: &[u8]) {
    // SAFETY: `data` is a live slice; `dst` device memory of its size.
    let code = unsafe { aclrtMemcpy(dst, data.len(), data.as_ptr().cast(), data.len(), H2D) };
    assert_eq!(code, 0);
}

fn from_device(src: *mut c_void, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: `out` is a live buffer of `len` bytes.
    let code = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), len, src, len, D2H) };
    assert_eq!(code, 0);
    out
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn memory_api() {
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_DEVICES", "2");
    set("ACLMEM_EMU_HBM", "256MiB");
    init("a2", "Ascend910B3", "9.0");
    value_operations();
    batch_swap_of_kv_blocks();
    batch_refusals();
    allocation_variants();
    finalize();
    older_releases();
    products_without_them();
}

fn value_operations() {
    let d = device(64);
    let h = host(64);
    // SAFETY: C prototypes with live locals, device memory of 64 bytes.
    unsafe {
        let v = 0x1122_3344_5566_7788u64;
        assert_eq!(aclrtValueWrite(d, v, 0, ptr::null_mut()), 0);
        assert_eq!(from_device(d, 8), v.to_le_bytes());
        // The conditions, each holding now.
        assert_eq!(aclrtValueWait(d, v, 1, ptr::null_mut()), 0, "EQ");
        assert_eq!(aclrtValueWait(d, v - 1, 0, ptr::null_mut()), 0, "GEQ");
        assert_eq!(aclrtValueWait(d, 0x8, 2, ptr::null_mut()), 0, "AND");
        assert_eq!(aclrtValueWrite(d, 0, 0, ptr::null_mut()), 0);
        assert_eq!(aclrtValueWait(d, 0, 3, ptr::null_mut()), 0, "NOR");
        // torch_npu's external event: record, wait, reset, on a stream.
        let mut s = ptr::null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtValueWrite(d, 1, 0, s), 0);
        assert_eq!(aclrtValueWait(d, 1, 1, s), 0);
        assert_eq!(aclrtValueWrite(d, 0, 0, s), 0);
        assert_eq!(from_device(d, 8), [0; 8]);
        // Refusals: the ACL layer, then the runtime.
        assert_eq!(aclrtValueWrite(ptr::null_mut(), 1, 0, s), INVALID);
        assert_eq!(aclrtValueWait(ptr::null_mut(), 1, 0, s), INVALID);
        assert_eq!(aclrtValueWrite(d, 1, 1, s), RT_INVALID, "flag must be 0");
        assert_eq!(aclrtValueWait(d, 1, 4, s), RT_INVALID, "no such condition");
        assert_eq!(aclrtValueWrite(h, 1, 0, s), RT_INVALID, "host memory");
        assert_eq!(aclrtValueWait(h, 1, 1, s), RT_INVALID, "host memory");
        let mut local = 0u64;
        let stack = (&raw mut local).cast::<c_void>();
        assert_eq!(
            aclrtValueWrite(stack, 1, 0, s),
            RT_INVALID,
            "not ACL memory"
        );
        assert_eq!(
            aclrtValueWrite(d.byte_add(4), 1, 0, s),
            Situation::ValueWriteUnaligned.code().code()
        );
        assert_eq!(
            aclrtValueWrite(d, 1, 0, 0xdead_0000 as *mut c_void),
            Situation::BadContextOrStream.code().code()
        );
        assert_eq!(from_device(d, 8), [0; 8], "no refused write stored");
        // A condition nothing makes true: the stream's timeout.
        assert_eq!(
            aclrtValueWait(d, 1, 1, s),
            Situation::ValueWaitTimeout.code().code()
        );
        // Another thread's write ends a wait.
        let addr = d as usize;
        let waiter = std::thread::spawn(move || {
            assert_eq!(aclrtSetDevice(0), 0);
            aclrtValueWait(addr as *mut c_void, 5, 0, ptr::null_mut())
        });
        assert_eq!(aclrtValueWrite(d, 7, 0, ptr::null_mut()), 0);
        assert_eq!(waiter.join().unwrap(), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
        assert_eq!(aclrtFree(d), 0);
        assert_eq!(aclrtFreeHost(h), 0);
    }
}

fn attr(dst: u32, dst_id: u32, src: u32, src_id: u32) -> aclrtMemcpyBatchAttr {
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

/// vllm-ascend's `swap_blocks_batch`: `aclrtMemcpyBatchAsync(dsts, sizes,
/// srcs, sizes, n, &attr, &index0, 1, &failIndex, stream)` with the same
/// array for destMaxs and sizes, blocks of device memory and of pinned
/// host memory, out (D2H) and back in (H2D).
fn batch_swap_of_kv_blocks() {
    const BLOCKS: usize = 6;
    const BLOCK: usize = 16 * 1024;
    let kv = device(BLOCKS * BLOCK);
    let pinned = host(BLOCKS * BLOCK);
    let original = pattern(BLOCKS * BLOCK, 7);
    to_device(kv, &original);
    // Blocks 0, 2, 4 out to host blocks 5, 3, 1.
    let moves = [(0usize, 5usize), (2, 3), (4, 1)];
    // SAFETY: C prototypes; every array has `moves.len()` entries.
    unsafe {
        let mut s = ptr::null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        let dev = |b: usize| kv.byte_add(b * BLOCK);
        let hst = |b: usize| pinned.byte_add(b * BLOCK);
        let mut sizes = [BLOCK; 3];
        let mut srcs: Vec<*mut c_void> = moves.iter().map(|&(d, _)| dev(d)).collect();
        let mut dsts: Vec<*mut c_void> = moves.iter().map(|&(_, h)| hst(h)).collect();
        let mut out = attr(
            ACL_MEM_LOCATION_TYPE_HOST,
            0,
            ACL_MEM_LOCATION_TYPE_DEVICE,
            0,
        );
        let mut index = 0usize;
        let mut fail = 0usize;
        let sizes_p = sizes.as_mut_ptr();
        let code = aclrtMemcpyBatchAsync(
            dsts.as_mut_ptr(),
            sizes_p,
            srcs.as_mut_ptr(),
            sizes_p,
            3,
            &mut out,
            &mut index,
            1,
            &mut fail,
            s,
        );
        assert_eq!((code, fail), (0, usize::MAX));
        assert_eq!(aclrtSynchronizeStream(s), 0);
        let pinned_bytes = std::slice::from_raw_parts(pinned.cast::<u8>(), BLOCKS * BLOCK);
        for &(d, h) in &moves {
            assert_eq!(
                pinned_bytes[h * BLOCK..(h + 1) * BLOCK],
                original[d * BLOCK..(d + 1) * BLOCK],
                "device block {d} in host block {h}"
            );
        }
        // Zero the device, then swap the host blocks back in (H2D) to
        // blocks 1, 3, 5.
        to_device(kv, &vec![0; BLOCKS * BLOCK]);
        let mut srcs: Vec<*mut c_void> = moves.iter().map(|&(_, h)| hst(h)).collect();
        let mut dsts: Vec<*mut c_void> = moves.iter().map(|&(d, _)| dev(d + 1)).collect();
        let mut back = attr(
            ACL_MEM_LOCATION_TYPE_DEVICE,
            0,
            ACL_MEM_LOCATION_TYPE_HOST,
            0,
        );
        fail = 0;
        let code = aclrtMemcpyBatchAsync(
            dsts.as_mut_ptr(),
            sizes_p,
            srcs.as_mut_ptr(),
            sizes_p,
            3,
            &mut back,
            &mut index,
            1,
            &mut fail,
            s,
        );
        assert_eq!((code, fail), (0, usize::MAX));
        assert_eq!(aclrtSynchronizeStream(s), 0);
        let now = from_device(kv, BLOCKS * BLOCK);
        for b in 0..BLOCKS {
            let want: &[u8] = if b % 2 == 1 {
                &original[(b - 1) * BLOCK..b * BLOCK]
            } else {
                &[0; BLOCK]
            };
            assert_eq!(&now[b * BLOCK..(b + 1) * BLOCK], want, "device block {b}");
        }
        // The synchronous form, two attributes in one batch: block 1 out
        // to pageable memory (not from ACL, which counts as host), then
        // back into block 0.
        let mut page = vec![0u8; BLOCK];
        let mut dsts = [page.as_mut_ptr().cast::<c_void>(), dev(0)];
        let mut srcs = [dev(1), page.as_mut_ptr().cast::<c_void>()];
        let mut sizes = [BLOCK, BLOCK];
        let mut maxs = [BLOCK, BLOCK];
        let mut attrs = [out, back];
        let mut indexes = [0usize, 1];
        let code = aclrtMemcpyBatch(
            dsts.as_mut_ptr(),
            maxs.as_mut_ptr(),
            srcs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            2,
            attrs.as_mut_ptr(),
            indexes.as_mut_ptr(),
            2,
            &mut fail,
        );
        assert_eq!((code, fail), (0, usize::MAX));
        assert_eq!(page, original[..BLOCK]);
        assert_eq!(from_device(kv, BLOCK), original[..BLOCK]);
        assert_eq!(aclrtDestroyStream(s), 0);
        assert_eq!(aclrtFree(kv), 0);
        assert_eq!(aclrtFreeHost(pinned), 0);
    }
}

/// A batch of one H2D copy from `hsrc` to `ddst`, with overrides.
struct OneBatch {
    dsts: [*mut c_void; 2],
    srcs: [*mut c_void; 2],
    sizes: [usize; 2],
    maxs: [usize; 2],
    attrs: [aclrtMemcpyBatchAttr; 2],
    indexes: [usize; 2],
    count: usize,
    num_attrs: usize,
}

impl OneBatch {
    fn new(ddst: *mut c_void, hsrc: *mut c_void) -> OneBatch {
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
    fn run(&mut self) -> (i32, usize) {
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

fn batch_refusals() {
    let d = device(64);
    let h = host(64);
    let fresh = || OneBatch::new(d, h);
    assert_eq!(fresh().run(), (0, usize::MAX));
    // SAFETY: C prototypes; NULL where a refusal is wanted.
    unsafe {
        let mut b = fresh();
        let code = aclrtMemcpyBatchAsync(
            b.dsts.as_mut_ptr(),
            b.maxs.as_mut_ptr(),
            b.srcs.as_mut_ptr(),
            b.sizes.as_mut_ptr(),
            1,
            b.attrs.as_mut_ptr(),
            b.indexes.as_mut_ptr(),
            1,
            ptr::null_mut(),
            ptr::null_mut(),
        );
        assert_eq!(code, INVALID, "failIndex NULL");
        let mut fail = 3usize;
        let code = aclrtMemcpyBatch(
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            [0usize, 0].as_mut_ptr(),
            2,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            &mut fail,
        );
        assert_eq!(
            (code, fail),
            (0, usize::MAX),
            "all sizes 0: success, nothing else checked"
        );
        let code = aclrtMemcpyBatch(
            b.dsts.as_mut_ptr(),
            b.maxs.as_mut_ptr(),
            b.srcs.as_mut_ptr(),
            ptr::null_mut(),
            1,
            b.attrs.as_mut_ptr(),
            b.indexes.as_mut_ptr(),
            1,
            &mut fail,
        );
        assert_eq!(code, INVALID, "sizes NULL");
        // More than 4096 copies in the synchronous form.
        let n = 4097;
        let mut dsts = vec![d; n];
        let mut srcs = vec![h; n];
        let mut sizes = vec![1usize; n];
        let mut maxs = vec![1usize; n];
        let mut index = 0usize;
        let code = aclrtMemcpyBatch(
            dsts.as_mut_ptr(),
            maxs.as_mut_ptr(),
            srcs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            n,
            b.attrs.as_mut_ptr(),
            &mut index,
            1,
            &mut fail,
        );
        assert_eq!((code, fail), (RT_INVALID, usize::MAX), "over 4096");
    }
    let cases: [(&str, fn(&mut OneBatch), (i32, usize)); 14] = [
        ("numBatches 0", |b| b.count = 0, (INVALID, 0)),
        (
            "dsts NULL",
            |b| b.dsts[0] = ptr::null_mut(),
            (RT_INVALID, 0),
        ),
        ("destMax below size", |b| b.maxs[0] = 63, (INVALID, 0)),
        ("rsv not 0", |b| b.attrs[0].rsv[15] = 1, (INVALID, 0)),
        ("numAttrs 0", |b| b.num_attrs = 0, (RT_INVALID, usize::MAX)),
        (
            "numAttrs above numBatches",
            |b| b.num_attrs = 2,
            (RT_INVALID, usize::MAX),
        ),
        (
            "attrsIndexes[0] not 0",
            |b| b.indexes[0] = 1,
            (RT_INVALID, usize::MAX),
        ),
        (
            "attrsIndexes not increasing",
            |b| {
                b.count = 2;
                b.num_attrs = 2;
                b.indexes = [0, 0];
            },
            (RT_INVALID, usize::MAX),
        ),
        (
            "a zero size among others",
            |b| {
                b.count = 2;
                b.sizes[1] = 0;
            },
            (RT_INVALID, 1),
        ),
        (
            "the source is not where its attribute says",
            |b| b.srcs[0] = b.dsts[0],
            (RT_INVALID, 0),
        ),
        (
            "another device's id",
            |b| b.attrs[0].dst_loc.id = 1,
            (RT_INVALID, 0),
        ),
        (
            "host to host",
            |b| {
                b.attrs[0].dst_loc.type_ = ACL_MEM_LOCATION_TYPE_HOST;
                b.dsts[0] = b.srcs[0];
            },
            (RT_INVALID, 0),
        ),
        (
            "device to device",
            |b| {
                b.attrs[0].src_loc.type_ = ACL_MEM_LOCATION_TYPE_DEVICE;
                b.srcs[0] = b.dsts[0];
            },
            (RT_INVALID, 0),
        ),
        (
            "second copy's destination NULL",
            |b| {
                b.count = 2;
                b.dsts[1] = ptr::null_mut();
            },
            (RT_INVALID, 1),
        ),
    ];
    for (what, change, want) in cases {
        let mut b = fresh();
        change(&mut b);
        assert_eq!(b.run(), want, "{what}");
    }
    assert_eq!(aclrtFree(d), 0);
    assert_eq!(aclrtFreeHost(h), 0);
}

fn allocation_variants() {
    let cfg = |attrs: &mut [aclrtMallocAttribute]| aclrtMallocConfig {
        attrs: attrs.as_mut_ptr(),
        num_attrs: attrs.len(),
    };
    let a = |attr: u32, value: u32| aclrtMallocAttribute {
        attr,
        value: [value, 0],
    };
    // SAFETY: C prototypes with live locals; NULL where a refusal is
    // wanted.
    unsafe {
        // aclrtMallocWithCfg: no configuration, or module and device ids.
        let mut p = ptr::null_mut();
        assert_eq!(aclrtMallocWithCfg(&mut p, 100, 0, ptr::null_mut()), 0);
        let data = pattern(100, 3);
        to_device(p, &data);
        assert_eq!(from_device(p, 100), data);
        assert_eq!(aclrtFreeWithDevSync(p), 0);
        let mut attrs = [a(1, 33), a(2, 0), a(0, 9)];
        let mut c = cfg(&mut attrs);
        assert_eq!(aclrtMallocWithCfg(&mut p, 64, 2, &mut c), 0);
        assert_eq!(aclrtFree(p), 0);
        assert_eq!(aclrtMallocWithCfg(ptr::null_mut(), 64, 0, &mut c), INVALID);
        assert_eq!(aclrtMallocWithCfg(&mut p, 0, 0, &mut c), INVALID);
        let mut c = aclrtMallocConfig {
            attrs: ptr::null_mut(),
            num_attrs: 1,
        };
        assert_eq!(aclrtMallocWithCfg(&mut p, 64, 0, &mut c), INVALID);
        c.num_attrs = 0;
        assert_eq!(aclrtMallocWithCfg(&mut p, 64, 0, &mut c), RT_INVALID);
        for bad in [a(2, 1), a(3, 1), a(9, 0)] {
            let mut attrs = [bad];
            let mut c = cfg(&mut attrs);
            assert_eq!(aclrtMallocWithCfg(&mut p, 64, 0, &mut c), RT_INVALID);
        }
        // aclrtMallocCached: aclrtMalloc.
        assert_eq!(aclrtMallocCached(&mut p, 4096, 0), 0);
        to_device(p, &pattern(4096, 9));
        assert_eq!(from_device(p, 4096), pattern(4096, 9));
        assert_eq!(aclrtMallocCached(&mut p, 0, 0), INVALID);
        assert_eq!(aclrtMallocCached(ptr::null_mut(), 64, 0), INVALID);
        // Cache maintenance: nothing to do, with a device.
        assert_eq!(aclrtMemFlush(p, 4096), 0);
        assert_eq!(aclrtMemInvalidate(p, 4096), 0);
        assert_eq!(aclrtMemFlush(ptr::null_mut(), 4096), INVALID);
        assert_eq!(aclrtMemInvalidate(p, 0), INVALID);
        let addr = p as usize;
        let codes = std::thread::spawn(move || {
            (
                aclrtMemFlush(addr as *mut c_void, 64),
                aclrtMemInvalidate(addr as *mut c_void, 64),
            )
        })
        .join()
        .unwrap();
        assert_eq!(
            codes,
            (CONTEXT_NULL, CONTEXT_NULL),
            "a thread without a device"
        );
        assert_eq!(aclrtFreeWithDevSync(p), 0);
        assert_eq!(aclrtFreeWithDevSync(ptr::null_mut()), INVALID);
        assert_eq!(
            aclrtFreeWithDevSync(p),
            Situation::NotAllocated.code().code(),
            "freed already"
        );
        // aclrtMallocHostWithCfg: torch_npu's pinned allocator asks for
        // host memory at the device's address (vaFlag 1).
        let mut attrs = [a(3, 1)];
        let mut c = cfg(&mut attrs);
        let mut h = ptr::null_mut();
        assert_eq!(aclrtMallocHostWithCfg(&mut h, 8192, &mut c), 0);
        let bytes = pattern(8192, 1);
        ptr::copy_nonoverlapping(bytes.as_ptr(), h.cast::<u8>(), 8192);
        let d = device(8192);
        assert_eq!(aclrtMemcpy(d, 8192, h, 8192, H2D), 0);
        assert_eq!(from_device(d, 8192), bytes);
        let mut dev_ptr = ptr::null_mut();
        assert_eq!(aclrtHostRegister(h, 8192, 0, &mut dev_ptr), 0);
        assert_eq!(dev_ptr, h, "vaFlag: the device address is the host's");
        assert_eq!(aclrtHostUnregister(h), 0);
        assert_eq!(aclrtFreeHostWithDevSync(h), 0);
        assert_eq!(aclrtMallocHostWithCfg(&mut h, 64, ptr::null_mut()), 0);
        assert_eq!(aclrtFreeHost(h), 0);
        assert_eq!(aclrtMallocHostWithCfg(ptr::null_mut(), 64, &mut c), INVALID);
        assert_eq!(aclrtMallocHostWithCfg(&mut h, 0, &mut c), INVALID);
        let mut c = aclrtMallocConfig {
            attrs: ptr::null_mut(),
            num_attrs: 0,
        };
        assert_eq!(aclrtMallocHostWithCfg(&mut h, 64, &mut c), RT_INVALID);
        for bad in [a(0, 0), a(2, 0), a(7, 0)] {
            let mut attrs = [bad];
            let mut c = cfg(&mut attrs);
            assert_eq!(aclrtMallocHostWithCfg(&mut h, 64, &mut c), RT_INVALID);
        }
        assert_eq!(aclrtFreeHostWithDevSync(ptr::null_mut()), INVALID);
        assert_eq!(aclrtFree(d), 0);
    }
}

/// A release whose library lacks a function answers it as a missing
/// symbol is answered: 207000; the ones it has work.
fn older_releases() {
    init("cann80", "Ascend910B3", "8.0");
    let d = device(64);
    let h = host(64);
    // SAFETY: C prototypes with live locals.
    unsafe {
        assert_eq!(aclrtValueWrite(d, 1, 0, ptr::null_mut()), NOT_SUPPORTED);
        assert_eq!(aclrtValueWait(d, 0, 0, ptr::null_mut()), NOT_SUPPORTED);
        let mut b = OneBatch::new(d, h);
        assert_eq!(b.run().0, NOT_SUPPORTED, "batches are 8.3 on");
        let mut p = ptr::null_mut();
        assert_eq!(
            aclrtMallocHostWithCfg(&mut p, 64, ptr::null_mut()),
            NOT_SUPPORTED
        );
        assert_eq!(
            aclrtMallocWithCfg(&mut p, 64, 0, ptr::null_mut()),
            NOT_SUPPORTED
        );
        assert_eq!(aclrtFreeWithDevSync(d), NOT_SUPPORTED);
        assert_eq!(aclrtFreeHostWithDevSync(h), NOT_SUPPORTED);
        // Older than any release the emulator knows.
        assert_eq!(aclrtMallocCached(&mut p, 64, 0), 0);
        assert_eq!(aclrtMemFlush(p, 64), 0);
        assert_eq!(aclrtFree(p), 0);
        assert_eq!(aclrtFree(d), 0);
        assert_eq!(aclrtFreeHost(h), 0);
    }
    finalize();
    init("cann83", "Ascend910B3", "8.3");
    let d = device(64);
    let h = host(64);
    assert_eq!(OneBatch::new(d, h).run(), (0, usize::MAX));
    assert_eq!(aclrtValueWrite(d, 1, 0, ptr::null_mut()), NOT_SUPPORTED);
    assert_eq!(aclrtFree(d), 0);
    assert_eq!(aclrtFreeHost(h), 0);
    finalize();
}

/// A chip without the runtime's feature: 207000 after the ACL layer's
/// checks.
fn products_without_them() {
    init("310p", "Ascend310P3", "9.0");
    let d = device(64);
    let h = host(64);
    // SAFETY: C prototypes with live locals.
    unsafe {
        assert_eq!(
            aclrtValueWrite(ptr::null_mut(), 1, 0, ptr::null_mut()),
            INVALID
        );
        assert_eq!(aclrtValueWrite(d, 1, 0, ptr::null_mut()), NOT_SUPPORTED);
        assert_eq!(aclrtValueWait(d, 0, 0, ptr::null_mut()), NOT_SUPPORTED);
        let mut b = OneBatch::new(d, h);
        b.maxs[0] = 1;
        assert_eq!(b.run().0, INVALID, "the ACL layer first");
        assert_eq!(OneBatch::new(d, h).run().0, NOT_SUPPORTED);
        let mut attrs = [aclrtMallocAttribute {
            attr: 3,
            value: [1, 0],
        }];
        let mut c = aclrtMallocConfig {
            attrs: attrs.as_mut_ptr(),
            num_attrs: 1,
        };
        let mut p = ptr::null_mut();
        assert_eq!(aclrtMallocHostWithCfg(&mut p, 64, &mut c), NOT_SUPPORTED);
        let mut off = [aclrtMallocAttribute {
            attr: 3,
            value: [0, 0],
        }];
        c.attrs = off.as_mut_ptr();
        assert_eq!(aclrtMallocHostWithCfg(&mut p, 64, &mut c), 0);
        assert_eq!(aclrtFreeHost(p), 0);
        assert_eq!(aclrtFree(d), 0);
        assert_eq!(aclrtFreeHost(h), 0);
    }
    finalize();
}
