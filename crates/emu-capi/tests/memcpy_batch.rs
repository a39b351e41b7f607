//! Batched copies (`aclrtMemcpyBatch`, `aclrtMemcpyBatchAsync`), called
//! in-process: a vllm-ascend-style swap of KV blocks between device memory
//! and pinned host memory, both directions, bytes compared; every
//! documented refusal with its code and `failIndex`. One test, because
//! the library's state is process-wide.

mod common;

use std::ffi::c_void;
use std::ptr;

use aclmem_emu_capi::*;
use aclmem_sys::{ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_LOCATION_TYPE_HOST};

use common::*;

#[test]
fn memcpy_batch() {
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_DEVICES", "2");
    set("ACLMEM_EMU_HBM", "256MiB");
    init("a2", "Ascend910B3", "9.0");
    batch_swap_of_kv_blocks();
    batch_refusals();
    v2_forms();
    finalize();
}

/// The V2 forms are CANN 9.1's: every release the emulator knows answers
/// them as a library without the symbol (207000), before any check.
fn v2_forms() {
    let d = device(64);
    let h = host(64);
    let mut b = OneBatch::new(d, h);
    // SAFETY: C prototypes; every array holds two entries.
    unsafe {
        let code = aclrtMemcpyBatchV2(
            b.dsts.as_mut_ptr(),
            b.maxs.as_mut_ptr(),
            b.srcs.as_mut_ptr(),
            b.sizes.as_mut_ptr(),
            1,
            b.attrs.as_mut_ptr(),
            b.indexes.as_mut_ptr(),
            1,
        );
        assert_eq!(code, NOT_SUPPORTED);
        let code = aclrtMemcpyBatchAsyncV2(
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            ptr::null_mut(),
        );
        assert_eq!(code, NOT_SUPPORTED, "absent: no argument is looked at");
    }
    assert_eq!(aclrtFree(d), 0);
    assert_eq!(aclrtFreeHost(h), 0);
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

/// A refusal: what it is, how the batch is changed, and the code and
/// failIndex it answers.
type Case = (&'static str, fn(&mut OneBatch), (i32, usize));

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
        // Arrays at addresses the process may not read: 100000, no crash.
        let garbage = 0xdead_0000usize;
        let code = aclrtMemcpyBatch(
            garbage as *mut *mut c_void,
            b.maxs.as_mut_ptr(),
            b.srcs.as_mut_ptr(),
            b.sizes.as_mut_ptr(),
            1,
            garbage as *mut aclrtMemcpyBatchAttr,
            b.indexes.as_mut_ptr(),
            1,
            &mut fail,
        );
        assert_eq!(code, INVALID, "unreadable arrays");
        let code = aclrtMemcpyBatch(
            b.dsts.as_mut_ptr(),
            b.maxs.as_mut_ptr(),
            b.srcs.as_mut_ptr(),
            b.sizes.as_mut_ptr(),
            1,
            b.attrs.as_mut_ptr(),
            b.indexes.as_mut_ptr(),
            1,
            garbage as *mut usize,
        );
        assert_eq!(code, INVALID, "an unwritable failIndex");
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
    let cases: [Case; 14] = [
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
