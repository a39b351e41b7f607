//! Stream-ordered memory pools through the C ABI (`acl_rt_memory_soma.h`):
//! blocks written and read back byte for byte, reuse and the exact
//! attributes, every documented refusal with its code, and the answers of
//! releases and products without them. One test, because the library's
//! state is process-wide.

mod common;

use std::ffi::c_void;
use std::ptr;

use aclmem_core::RawMemLocation;
use aclmem_emu_capi::*;

use common::*;

const MIB: usize = 1 << 20;
const POOL_ERROR: i32 = 507_000;
const STREAM_CONTEXT: i32 = 107_003;
const FOLLOW_EVENTS: u32 = 1;
const OPPORTUNISTIC: u32 = 2;
const THRESHOLD: u32 = 4;
const RESERVED: u32 = 5;
const RESERVED_HIGH: u32 = 6;
const USED: u32 = 7;
const USED_HIGH: u32 = 8;

fn props(max: usize) -> aclrtMemPoolProps {
    aclrtMemPoolProps {
        alloc_type: 0,
        handle_type: 0,
        location: RawMemLocation { id: 0, type_: 1 },
        max_size: max,
        reserved: [0; 32],
    }
}

fn create(p: &aclrtMemPoolProps) -> (i32, *mut c_void) {
    let mut pool = ptr::null_mut();
    (mem_pool_create(&mut pool, p), pool)
}

fn stream() -> *mut c_void {
    let mut s = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, 0);
    s
}

fn get64(pool: *mut c_void, attr: u32) -> u64 {
    let mut v = u64::MAX;
    assert_eq!(aclrtMemPoolGetAttr(pool, attr, (&raw mut v).cast()), 0);
    v
}

fn set64(pool: *mut c_void, attr: u32, v: u64) -> i32 {
    let mut v = v;
    aclrtMemPoolSetAttr(pool, attr, (&raw mut v).cast())
}

fn set32(pool: *mut c_void, attr: u32, v: u32) -> i32 {
    let mut v = v;
    aclrtMemPoolSetAttr(pool, attr, (&raw mut v).cast())
}

fn malloc(pool: *mut c_void, size: usize, s: *mut c_void) -> (i32, *mut c_void) {
    let mut p = ptr::null_mut();
    (mem_pool_malloc_async(&mut p, size, pool, s), p)
}

#[test]
fn stream_ordered_pools() {
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_HBM", "256MiB");
    // CANN 9.0: the pool itself, but no allocations yet.
    init("pools90", "Ascend910B3", "9.0");
    let (code, pool) = create(&props(0));
    assert_eq!(code, 0);
    assert_eq!(get64(pool, THRESHOLD), 0);
    let s = stream();
    assert_eq!(malloc(pool, MIB, s).0, NOT_SUPPORTED);
    assert_eq!(aclrtMemPoolTrimTo(pool, 0), NOT_SUPPORTED);
    assert_eq!(aclrtMemPoolFreeAsync(ptr::null_mut(), s), NOT_SUPPORTED);
    assert_eq!(aclrtMemPoolDestroy(pool), 0);
    finalize();
    // CANN 8.5: no pools at all.
    init("pools85", "Ascend910B3", "8.5");
    assert_eq!(create(&props(0)).0, NOT_SUPPORTED);
    finalize();
    // Atlas A3 (documented: A2 only).
    init("poolsa3", "Ascend910_9392", "9.1");
    assert_eq!(create(&props(0)).0, NOT_SUPPORTED);
    finalize();
    init("pools91", "Ascend910B3", "9.1");
    blocks_and_bytes();
    reuse_across_streams();
    refusals();
    finalize();
}

fn blocks_and_bytes() {
    let (code, pool) = create(&props(64 * MIB));
    assert_eq!(code, 0);
    let s = stream();
    let (code, a) = malloc(pool, 3 * MIB, s);
    assert_eq!(code, 0);
    let data = pattern(3 * MIB, 5);
    to_device(a, &data);
    assert_eq!(from_device(a, data.len()), data);
    assert_eq!(get64(pool, USED), 4 * MIB as u64, "rounded to 2 MiB");
    assert_eq!(get64(pool, RESERVED), 4 * MIB as u64);
    // aclrtPointerGetAttributes: device memory (SOMA memory is DEVICE).
    let mut attrs = aclmem_sys::aclrtPtrAttributes::default();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtPointerGetAttributes(a, &mut attrs) }, 0);
    assert_eq!(attrs.location.type_, 1);
    // Size 0: success, *ptr untouched.
    let mut untouched = 0x1234usize as *mut c_void;
    assert_eq!(mem_pool_malloc_async(&mut untouched, 0, pool, s), 0);
    assert_eq!(untouched as usize, 0x1234);
    assert_eq!(aclrtMemPoolFreeAsync(a, s), 0);
    assert_eq!(get64(pool, USED), 0);
    assert_eq!(get64(pool, RESERVED), 4 * MIB as u64);
    let (code, b) = malloc(pool, 4 * MIB, s);
    assert_eq!((code, b), (0, a), "the same stream takes the block again");
    assert_eq!(aclrtMemPoolFreeAsync(b, s), 0);
    // The release threshold (0) applies at the stream's synchronisation.
    assert_eq!(aclrtSynchronizeStream(s), 0);
    assert_eq!(get64(pool, RESERVED), 0);
    assert_eq!(get64(pool, RESERVED_HIGH), 4 * MIB as u64);
    assert_eq!(get64(pool, USED_HIGH), 4 * MIB as u64);
    assert_eq!(set64(pool, USED_HIGH, 0), 0);
    assert_eq!(get64(pool, USED_HIGH), 0);
    // Trims: keep 2 MiB of 6 cached.
    let (_, c) = malloc(pool, 2 * MIB, s);
    let (_, d) = malloc(pool, 4 * MIB, s);
    assert_eq!(aclrtMemPoolFreeAsync(c, s), 0);
    assert_eq!(aclrtMemPoolTrimTo(pool, 4 * MIB), 0);
    assert_eq!(get64(pool, RESERVED), 4 * MIB as u64);
    assert_eq!(aclrtMemPoolTrimTo(pool, 3 * MIB), POOL_ERROR, "below used");
    assert_eq!(aclrtMemPoolTrimTo(pool, 65 * MIB), POOL_ERROR, "above size");
    // FreeAsync of aclrtMalloc memory frees it; aclrtFree of a block
    // takes it out of its pool.
    let m = device(64);
    assert_eq!(aclrtMemPoolFreeAsync(m, s), 0);
    assert_ne!(aclrtFree(m), 0);
    assert_eq!(aclrtFree(d), 0);
    assert_eq!(get64(pool, RESERVED), 0);
    // Destroyed with a block in use.
    let (_, e) = malloc(pool, MIB, s);
    assert!(!e.is_null());
    assert_eq!(aclrtMemPoolDestroy(pool), 0);
    assert_eq!(aclrtMemPoolDestroy(pool), POOL_ERROR);
    assert_eq!(aclrtDestroyStream(s), 0);
}

fn reuse_across_streams() {
    let (_, pool) = create(&props(0));
    let (s1, s2) = (stream(), stream());
    let (_, a) = malloc(pool, MIB, s1);
    assert_eq!(aclrtMemPoolFreeAsync(a, s1), 0);
    let (_, b) = malloc(pool, MIB, s2);
    assert_ne!(a, b, "another stream: new memory by default");
    assert_eq!(set32(pool, FOLLOW_EVENTS, 1), 0);
    let mut ev = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtCreateEvent(&mut ev) }, 0);
    assert_eq!(aclrtRecordEvent(ev, s1), 0);
    assert_eq!(aclrtStreamWaitEvent(s2, ev), 0);
    assert_eq!(malloc(pool, MIB, s2), (0, a), "after the event: s1's block");
    assert_eq!(aclrtMemPoolFreeAsync(a, s1), 0);
    let (_, c) = malloc(pool, MIB, s2);
    assert!(c != a && c != b, "a free after the event: new memory");
    assert_eq!(aclrtMemPoolFreeAsync(c, s2), 0);
    assert_eq!(set32(pool, FOLLOW_EVENTS, 0), 0);
    assert_eq!(set32(pool, OPPORTUNISTIC, 9), 0);
    let mut on = 0u32;
    assert_eq!(
        aclrtMemPoolGetAttr(pool, OPPORTUNISTIC, (&raw mut on).cast()),
        0
    );
    assert_eq!(on, 1);
    assert_eq!(malloc(pool, MIB, s2).1, c, "s2's own first");
    assert_eq!(malloc(pool, MIB, s2).1, a, "then s1's, opportunistically");
    assert_eq!(aclrtDestroyEvent(ev), 0);
    assert_eq!(aclrtMemPoolDestroy(pool), 0);
}

fn refusals() {
    let p = props(0);
    let mut pool = ptr::null_mut();
    assert_eq!(mem_pool_create(ptr::null_mut(), &p), INVALID);
    assert_eq!(mem_pool_create(&mut pool, ptr::null()), INVALID);
    assert_eq!(mem_pool_create(&mut pool, 0x18 as *const _), INVALID);
    for bad in [
        aclrtMemPoolProps { alloc_type: 1, ..p },
        aclrtMemPoolProps {
            location: RawMemLocation { id: 0, type_: 0 },
            ..p
        },
        aclrtMemPoolProps {
            reserved: [0, 0, 0, 1]
                .iter()
                .copied()
                .chain([0; 28])
                .collect::<Vec<_>>()[..32]
                .try_into()
                .unwrap(),
            ..p
        },
    ] {
        assert_eq!(create(&bad).0, INVALID);
    }
    assert_eq!(
        create(&aclrtMemPoolProps {
            max_size: 257 * MIB,
            ..p
        })
        .0,
        RT_INVALID
    );
    assert_eq!(
        create(&aclrtMemPoolProps {
            location: RawMemLocation { id: 99, type_: 1 },
            ..p
        })
        .0,
        107_001
    );
    // POSIX handles from 9.1.
    let (code, posix) = create(&aclrtMemPoolProps {
        handle_type: 2,
        ..p
    });
    assert_eq!(code, 0);
    assert_eq!(aclrtMemPoolDestroy(posix), 0);
    let (_, pool) = create(&p);
    let s = stream();
    // Attributes.
    assert_eq!(
        aclrtMemPoolSetAttr(ptr::null_mut(), THRESHOLD, 0x18 as *mut _),
        INVALID
    );
    assert_eq!(
        aclrtMemPoolSetAttr(pool, THRESHOLD, ptr::null_mut()),
        RT_INVALID
    );
    assert_eq!(
        aclrtMemPoolGetAttr(pool, THRESHOLD, ptr::null_mut()),
        RT_INVALID
    );
    assert_eq!(set64(pool, RESERVED, 0), RT_INVALID, "read only");
    assert_eq!(set64(pool, USED, 0), RT_INVALID, "read only");
    assert_eq!(set64(pool, RESERVED_HIGH, 1), POOL_ERROR);
    assert_eq!(set64(pool, THRESHOLD, u64::MAX), POOL_ERROR);
    assert_eq!(set64(pool, 9, 0), POOL_ERROR);
    assert_eq!(set64(0xdead_0000 as *mut _, THRESHOLD, 0), RT_INVALID);
    assert_eq!(
        aclrtMemPoolSetAttr(pool, THRESHOLD, 0x18 as *mut _),
        INVALID
    );
    assert_eq!(
        aclrtMemPoolGetAttr(pool, THRESHOLD, 0x18 as *mut _),
        INVALID
    );
    // Allocations.
    let mut out = ptr::null_mut();
    assert_eq!(
        mem_pool_malloc_async(ptr::null_mut(), MIB, pool, s),
        INVALID
    );
    assert_eq!(
        mem_pool_malloc_async(&mut out, MIB, ptr::null_mut(), s),
        INVALID
    );
    assert_eq!(
        mem_pool_malloc_async(&mut out, MIB, pool, ptr::null_mut()),
        INVALID
    );
    assert_eq!(malloc(0xdead_0000 as *mut _, MIB, s).0, POOL_ERROR);
    assert_eq!(malloc(pool, MIB, 0x77 as *mut _).0, RT_INVALID);
    assert_eq!(malloc(pool, usize::MAX, s).0, RT_INVALID);
    // A stream of another device.
    assert_eq!(aclrtSetDevice(1), 0);
    let other = stream();
    assert_eq!(aclrtSetDevice(0), 0);
    assert_eq!(malloc(pool, MIB, other).0, STREAM_CONTEXT);
    let (_, a) = malloc(pool, MIB, s);
    assert_eq!(mem_pool_malloc_async(0x18 as *mut _, MIB, pool, s), INVALID);
    assert_eq!(get64(pool, USED), 2 * MIB as u64, "unwritable ptr: undone");
    assert_eq!(aclrtMemPoolFreeAsync(ptr::null_mut(), s), INVALID);
    assert_eq!(aclrtMemPoolFreeAsync(a, ptr::null_mut()), POOL_ERROR);
    assert_eq!(aclrtMemPoolFreeAsync(a, other), STREAM_CONTEXT);
    assert_eq!(
        aclrtMemPoolFreeAsync((a as usize + 64) as *mut _, s),
        RT_INVALID
    );
    assert_eq!(aclrtMemPoolFreeAsync(a, s), 0);
    assert_eq!(aclrtMemPoolFreeAsync(a, s), RT_INVALID, "freed twice");
    assert_eq!(aclrtMemPoolTrimTo(ptr::null_mut(), 0), INVALID);
    assert_eq!(aclrtMemPoolTrimTo(0xdead_0000 as *mut _, 0), POOL_ERROR);
    assert_eq!(aclrtMemPoolDestroy(ptr::null_mut()), INVALID);
    assert_eq!(aclrtMemPoolDestroy(pool), 0);
    assert_eq!(get64_code(pool), RT_INVALID, "destroyed");
}

fn get64_code(pool: *mut c_void) -> i32 {
    let mut v = 0u64;
    aclrtMemPoolGetAttr(pool, RESERVED, (&raw mut v).cast())
}
