//! Managed memory, peer mappings and peer access status through the C
//! ABI: memory the host writes directly and the device copies from, byte
//! for byte; advice and prefetches reported back; every documented
//! refusal with its code; the answers of releases and products without
//! them. One test, because the library's state is process-wide.

mod common;

use std::ffi::c_void;
use std::ptr;

use aclmem_emu_capi::*;

use common::*;

const MIB: usize = 1 << 20;
const GLOBAL: u32 = 1;
const DEVICE: u32 = 1;
const HOST: u32 = 2;

fn managed(size: u64) -> (i32, *mut c_void) {
    let mut p = ptr::null_mut();
    (mem_alloc_managed(&mut p, size, GLOBAL), p)
}

fn loc(type_: u32, id: i32) -> aclrtMemManagedLocation {
    aclrtMemManagedLocation { type_, id }
}

fn attr(a: u32, p: *mut c_void, size: usize) -> (i32, i32) {
    let mut v = 77i32;
    let code = aclrtMemManagedGetAttr(a, p, size, (&raw mut v).cast(), 4);
    (code, v)
}

fn status(d: i32, peer: i32) -> i32 {
    let mut s = -1;
    assert_eq!(device_peer_access_status(d, peer, &mut s), 0);
    s
}

#[test]
fn managed_memory_and_peers() {
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_HBM", "256MiB");
    init("managed85", "Ascend910B3", "8.5");
    assert_eq!(managed(MIB as u64).0, NOT_SUPPORTED, "CANN 9.0's");
    assert_eq!(status(0, 1), 0);
    finalize();
    init("managed310p", "Ascend310P3", "9.0");
    assert_eq!(managed(MIB as u64).0, NOT_SUPPORTED, "A2 and A3 only");
    finalize();
    init("managed90", "Ascend910B3", "9.0");
    release_9_0();
    finalize();
    init("managed91", "Ascend910B3", "9.1");
    release_9_1();
    finalize();
}

fn release_9_0() {
    let (code, m) = managed(3 * MIB as u64);
    assert_eq!(code, 0);
    // The host writes it directly; the device copies it out.
    let data = pattern(3 * MIB, 9);
    // SAFETY: `m` is 4 MiB of managed memory, mapped in this process.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), m.cast::<u8>(), data.len()) };
    assert_eq!(from_device(m, data.len()), data);
    let back = pattern(4096, 1);
    to_device(m, &back);
    // SAFETY: as above.
    let seen = unsafe { std::slice::from_raw_parts(m.cast::<u8>(), 4096) };
    assert_eq!(seen, back.as_slice());
    // CANN 9.0's runtime has no pointer type for it.
    let mut a = aclmem_sys::aclrtPtrAttributes::default();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtPointerGetAttributes(m, &mut a) }, RT_INVALID);
    // 9.1's calls are absent.
    assert_eq!(
        aclrtMemManagedAdvise(m, 2 * MIB as u64, 0, loc(0, 0)),
        NOT_SUPPORTED
    );
    // Refusals.
    assert_eq!(mem_alloc_managed(ptr::null_mut(), 64, GLOBAL), INVALID);
    let mut p = ptr::null_mut();
    assert_eq!(mem_alloc_managed(&mut p, 64, 0), INVALID);
    assert_eq!(mem_alloc_managed(&mut p, 0, GLOBAL), RT_INVALID);
    assert_eq!(mem_alloc_managed(0x18 as *mut _, 64, GLOBAL), INVALID);
    // Peer mappings need peer access.
    let d = device(4096);
    assert_eq!(aclrtMemP2PMap(d, 4096, 1, 0), RT_INVALID);
    assert_eq!(aclrtDeviceEnablePeerAccess(1, 0), 0);
    assert_eq!((status(0, 1), status(1, 0)), (1, 0));
    assert_eq!(aclrtMemP2PMap(d, 4096, 1, 0), 0);
    assert_eq!(aclrtMemP2PMap(d, 4096, 0, 0), 0, "its own device");
    assert_eq!(aclrtMemP2PMap(ptr::null_mut(), 4096, 1, 0), INVALID);
    assert_eq!(aclrtMemP2PMap(d, 0, 1, 0), INVALID);
    assert_eq!(aclrtMemP2PMap(d, 4096, 1, 1), INVALID);
    assert_eq!(aclrtMemP2PMap(d, 4096, 99, 0), 107_001);
    assert_eq!(aclrtMemP2PMap(d, 8 * MIB, 1, 0), RT_INVALID, "beyond it");
    let h = host(4096);
    assert_eq!(aclrtMemP2PMap(h, 4096, 1, 0), RT_INVALID, "host memory");
    assert_eq!(aclrtDeviceDisablePeerAccess(1), 0);
    assert_eq!(status(0, 1), 0);
    let mut s = 0;
    assert_eq!(device_peer_access_status(0, 99, &mut s), 107_001);
    assert_eq!(device_peer_access_status(0, 1, ptr::null_mut()), INVALID);
    assert_eq!(aclrtFree(d), 0);
    assert_eq!(aclrtFreeHost(h), 0);
    assert_eq!(aclrtFree(m), 0);
}

fn release_9_1() {
    let (code, m) = managed(4 * MIB as u64);
    assert_eq!(code, 0);
    let mut a = aclmem_sys::aclrtPtrAttributes::default();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtPointerGetAttributes(m, &mut a) }, 0);
    assert_eq!((a.location.type_, a.location.id), (3, 0), "MANAGED on 0");
    let two = 2 * MIB;
    let upper = (m as usize + two) as *mut c_void;
    // Nothing set yet.
    assert_eq!(attr(1, m, two), (0, 0));
    assert_eq!(attr(2, m, two), (0, -2));
    assert_eq!(attr(4, m, two), (0, 0), "INVALID");
    // Advice on the first page only.
    assert_eq!(aclrtMemManagedAdvise(m, two as u64, 0, loc(0, 0)), 0);
    assert_eq!(aclrtMemManagedAdvise(m, two as u64, 2, loc(DEVICE, 0)), 0);
    assert_eq!(
        aclrtMemManagedAdvise(m, 4 * MIB as u64, 4, loc(DEVICE, 1)),
        0
    );
    assert_eq!(aclrtMemManagedAdvise(upper, two as u64, 2, loc(HOST, 0)), 0);
    assert_eq!(attr(1, m, two), (0, 1));
    assert_eq!(attr(1, m, 4 * MIB), (0, 0), "not the whole range");
    assert_eq!(attr(2, m, two), (0, 0));
    assert_eq!(attr(2, upper, two), (0, -1), "the host");
    assert_eq!(attr(2, m, 4 * MIB), (0, -2), "mixed");
    assert_eq!(attr(4, upper, two), (0, HOST as i32));
    assert_eq!(attr(5, m, two), (0, 0));
    let mut ids = [0i32; 3];
    assert_eq!(
        aclrtMemManagedGetAttr(3, m, 4 * MIB, ids.as_mut_ptr().cast(), 12),
        0
    );
    assert_eq!(ids, [1, -2, -2]);
    // Prefetches, one and batched.
    assert_eq!(
        aclrtMemManagedPrefetchAsync(m, 4 * MIB, loc(DEVICE, 0), 0, ptr::null_mut()),
        0
    );
    assert_eq!(attr(6, m, 4 * MIB), (0, 0));
    let mut ptrs = [m.cast_const(), upper.cast_const()];
    let mut sizes = [two, two];
    let mut locs = [loc(HOST, 0), loc(DEVICE, 1)];
    let mut idxs = [0usize, 1];
    let mut batch = |ptrs: &mut [*const c_void; 2], idxs: &mut [usize; 2], n: usize| {
        aclrtMemManagedPrefetchBatchAsync(
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            2,
            locs.as_mut_ptr(),
            idxs.as_mut_ptr(),
            n,
            0,
            ptr::null_mut(),
        )
    };
    assert_eq!(batch(&mut ptrs, &mut idxs, 2), 0);
    assert_eq!(attr(7, m, two), (0, HOST as i32));
    assert_eq!(attr(8, upper, two), (0, 1));
    assert_eq!(batch(&mut ptrs, &mut [1, 0], 2), RT_INVALID, "first not 0");
    assert_eq!(
        batch(&mut ptrs, &mut [0, 0], 2),
        RT_INVALID,
        "not increasing"
    );
    assert_eq!(batch(&mut ptrs, &mut [0, 2], 2), RT_INVALID, "past count");
    assert_eq!(
        batch(&mut [m.cast_const(), ptr::null()], &mut idxs, 2),
        RT_INVALID
    );
    assert_eq!(batch(&mut ptrs, &mut idxs, 0), INVALID);
    // One location for both: the first page goes to the host.
    assert_eq!(batch(&mut ptrs, &mut idxs, 1), 0);
    assert_eq!(attr(8, m, 4 * MIB), (0, -1));
    // GetAttrs: two at once.
    let mut which = [1u32, 2];
    let (mut v1, mut v2) = (9i32, 9i32);
    let mut outs: [*mut c_void; 2] = [(&raw mut v1).cast(), (&raw mut v2).cast()];
    let mut lens = [4usize, 4];
    let code = aclrtMemManagedGetAttrs(
        which.as_mut_ptr(),
        2,
        m,
        two,
        outs.as_mut_ptr(),
        lens.as_mut_ptr(),
    );
    assert_eq!((code, v1, v2), (0, 1, 0));
    which[1] = 9;
    let code = aclrtMemManagedGetAttrs(
        which.as_mut_ptr(),
        2,
        m,
        two,
        outs.as_mut_ptr(),
        lens.as_mut_ptr(),
    );
    assert_eq!(code, RT_INVALID);
    let code = aclrtMemManagedGetAttrs(
        ptr::null_mut(),
        2,
        m,
        two,
        outs.as_mut_ptr(),
        lens.as_mut_ptr(),
    );
    assert_eq!(code, INVALID);
    // Refusals.
    assert_eq!(aclrtMemManagedAdvise(ptr::null(), 1, 0, loc(0, 0)), INVALID);
    assert_eq!(aclrtMemManagedAdvise(m, 0, 0, loc(0, 0)), INVALID);
    assert_eq!(
        aclrtMemManagedAdvise(m, two as u64, 6, loc(0, 0)),
        RT_INVALID
    );
    assert_eq!(
        aclrtMemManagedAdvise(m, two as u64, 2, loc(DEVICE, 9)),
        RT_INVALID
    );
    assert_eq!(
        aclrtMemManagedAdvise(m, two as u64, 2, loc(0, 0)),
        RT_INVALID
    );
    assert_eq!(
        aclrtMemManagedAdvise(m, 4096, 0, loc(0, 0)),
        RT_INVALID,
        "2 MiB"
    );
    assert_eq!(
        aclrtMemManagedAdvise(m, 8 * MIB as u64, 0, loc(0, 0)),
        RT_INVALID
    );
    let d = device(4096);
    assert_eq!(
        aclrtMemManagedAdvise(d, two as u64, 0, loc(0, 0)),
        RT_INVALID,
        "not managed"
    );
    assert_eq!(attr(0, m, two).0, RT_INVALID);
    assert_eq!(attr(9, m, two).0, RT_INVALID);
    let mut v = 0i64;
    assert_eq!(
        aclrtMemManagedGetAttr(1, m, two, (&raw mut v).cast(), 8),
        RT_INVALID
    );
    assert_eq!(
        aclrtMemManagedGetAttr(1, m, two, ptr::null_mut(), 4),
        INVALID
    );
    assert_eq!(
        aclrtMemManagedGetAttr(1, m, two, 0x18 as *mut _, 4),
        INVALID
    );
    assert_eq!(
        aclrtMemManagedGetAttr(1, m, 0, (&raw mut v).cast(), 4),
        INVALID
    );
    assert_eq!(
        aclrtMemManagedPrefetchAsync(m, two, loc(DEVICE, 0), 1, ptr::null_mut()),
        INVALID
    );
    assert_eq!(
        aclrtMemManagedPrefetchAsync(m, two, loc(0, 0), 0, ptr::null_mut()),
        RT_INVALID
    );
    assert_eq!(
        aclrtMemManagedPrefetchAsync(m, two, loc(DEVICE, 0), 0, 0x77 as *mut _),
        RT_INVALID
    );
    // MemsetD32 refuses managed memory (documented).
    assert_eq!(aclrtMemsetD32(m, 64, 1, 16), INVALID);
    assert_eq!(aclrtFree(d), 0);
    assert_eq!(aclrtFree(m), 0);
    assert_eq!(attr(1, m, two).0, RT_INVALID, "freed");
}
