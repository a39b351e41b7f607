//! The rest of the memory chapter through the C ABI: cache maintenance
//! and memory errors, the custom allocator, CANN 9.x's reservations,
//! mappings and IPC links, the task scheduler's allocations, host memory
//! capabilities and device variables. Bytes compared where data moves,
//! every documented refusal with its code, the answers of releases and
//! products without them. One test, because the library's state is
//! process-wide.

mod common;

use std::ffi::{c_char, c_void};
use std::ptr;

use aclmem_core::{RawMemLocation, RawPhysicalMemProp};
use aclmem_emu_capi::*;
use aclmem_sys as sys;

use common::*;

const MIB: usize = 1 << 20;
const GIB: usize = 1 << 30;
const PREFETCH: u32 = 0;
const INVALIDATE: u32 = 2;
const INVALID_SYMBOL: i32 = 107_043;
const LINK_NOT_SUPPORTED: i32 = 207_021;

fn stream() -> *mut c_void {
    let mut s = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, 0);
    s
}

#[test]
fn the_rest_of_the_memory_chapter() {
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_HBM", "4GiB");
    init("rest90", "Ascend910B3", "9.0");
    cache_maintenance();
    memory_errors();
    allocator();
    allocations_and_capabilities();
    absent_or_elsewhere();
    finalize();
    init("rest91a3", "Ascend910_9392", "9.1");
    a3_links();
    symbols();
    finalize();
}

fn cache_maintenance() {
    let d = device(4096);
    let s = stream();
    assert_eq!(aclrtCmoAsync(d, 4096, PREFETCH, s), 0);
    assert_eq!(aclrtCmoAsync(d, 4096, PREFETCH, ptr::null_mut()), 0);
    assert_eq!(aclrtCmoAsync(d, 4096, 1, s), NOT_SUPPORTED, "prefetch only");
    assert_eq!(aclrtCmoAsync(d, 4096, 9, s), NOT_SUPPORTED);
    assert_eq!(aclrtCmoAsync(ptr::null_mut(), 4096, PREFETCH, s), INVALID);
    assert_eq!(aclrtCmoAsync(d, 0, PREFETCH, s), INVALID);
    assert_eq!(
        aclrtCmoAsync(d, 8 * MIB, PREFETCH, s),
        RT_INVALID,
        "beyond it"
    );
    let h = host(4096);
    assert_eq!(aclrtCmoAsync(h, 64, PREFETCH, s), RT_INVALID, "host memory");
    assert_eq!(aclrtCmoAsync(d, 64, PREFETCH, 0x77 as *mut _), RT_INVALID);
    // Descriptors.
    let mut size = 0usize;
    assert_eq!(cmo_get_desc_size(&mut size), 0);
    assert_eq!(size, 32);
    assert_eq!(cmo_get_desc_size(ptr::null_mut()), RT_INVALID);
    let desc = device(64);
    assert_eq!(aclrtCmoSetDesc(desc, d, 4096), 0);
    let record = from_device(desc, 32);
    assert_eq!(record[12..16], 4096u32.to_le_bytes());
    assert_eq!(record[16..24], (d as u64).to_le_bytes());
    assert_eq!(record[..12], [0; 12]);
    assert_eq!(aclrtCmoAsyncWithDesc(desc, PREFETCH, s, ptr::null()), 0);
    assert_eq!(
        aclrtCmoAsyncWithDesc(desc, 3, s, ptr::null()),
        NOT_SUPPORTED
    );
    assert_eq!(
        aclrtCmoAsyncWithDesc(desc, PREFETCH, s, 0x18 as *const _),
        RT_INVALID
    );
    assert_eq!(
        aclrtCmoAsyncWithDesc(ptr::null_mut(), PREFETCH, s, ptr::null()),
        RT_INVALID
    );
    assert_eq!(
        aclrtCmoAsyncWithDesc(h, PREFETCH, s, ptr::null()),
        RT_INVALID
    );
    assert_eq!(aclrtCmoSetDesc(ptr::null_mut(), d, 64), RT_INVALID);
    assert_eq!(aclrtCmoSetDesc(desc, ptr::null_mut(), 64), RT_INVALID);
    assert_eq!(aclrtCmoSetDesc(desc, d, 0), RT_INVALID);
    assert_eq!(
        aclrtCmoSetDesc(h, d, 64),
        RT_INVALID,
        "a descriptor is device memory"
    );
    // The barrier forms are Atlas 200I/500 A2's.
    assert_eq!(
        aclrtCmoAsyncWithBarrier(d, 64, INVALIDATE, 1, s),
        NOT_SUPPORTED
    );
    assert_eq!(
        aclrtCmoAsyncWithBarrier(ptr::null_mut(), 64, INVALIDATE, 1, s),
        INVALID
    );
    let mut info = aclrtBarrierTaskInfo::default();
    assert_eq!(cmo_wait_barrier(&mut info, s, 0), INVALID, "no barrier");
    info.barrier_num = 7;
    assert_eq!(cmo_wait_barrier(&mut info, s, 0), INVALID);
    info.barrier_num = 1;
    assert_eq!(cmo_wait_barrier(&mut info, s, 0), NOT_SUPPORTED);
    assert_eq!(cmo_wait_barrier(ptr::null_mut(), s, 0), INVALID);
    assert_eq!(cmo_wait_barrier(0x18 as *mut _, s, 0), INVALID);
    // CANN 9.2's.
    assert_eq!(aclrtDeviceL2CacheFlush(ptr::null_mut()), NOT_SUPPORTED);
    assert_eq!(aclrtFree(desc), 0);
    assert_eq!(aclrtFree(d), 0);
    assert_eq!(aclrtFreeHost(h), 0);
}

fn memory_errors() {
    let mut infos = [aclrtMemUceInfo::default(); 4];
    let mut got = 99usize;
    assert_eq!(get_mem_uce_info(0, infos.as_mut_ptr(), 4, &mut got), 0);
    assert_eq!(got, 0, "no uncorrectable errors");
    assert_eq!(get_mem_uce_info(0, infos.as_mut_ptr(), 0, &mut got), 0);
    assert_eq!(get_mem_uce_info(0, ptr::null_mut(), 4, &mut got), INVALID);
    assert_eq!(
        get_mem_uce_info(0, infos.as_mut_ptr(), 4, ptr::null_mut()),
        INVALID
    );
    assert_eq!(
        get_mem_uce_info(99, infos.as_mut_ptr(), 4, &mut got),
        107_001
    );
    assert_eq!(
        aclrtMemUceRepair(0, infos.as_mut_ptr(), 0),
        0,
        "nothing to repair"
    );
    assert_eq!(aclrtMemUceRepair(0, infos.as_mut_ptr(), 21), INVALID);
    assert_eq!(aclrtMemUceRepair(0, ptr::null_mut(), 1), INVALID);
    infos[0].addr = 0x1000 as *mut c_void;
    infos[0].len = 64;
    assert_eq!(
        aclrtMemUceRepair(0, infos.as_mut_ptr(), 1),
        RT_INVALID,
        "no such error"
    );
    infos[0].reserved[1] = 1;
    assert_eq!(aclrtMemUceRepair(0, infos.as_mut_ptr(), 1), INVALID);
    infos[0].reserved[1] = 1 << 56;
    assert_eq!(
        aclrtMemUceRepair(0, infos.as_mut_ptr(), 1),
        RT_INVALID,
        "byte 15 is not compared"
    );
    assert_eq!(aclrtMemUceRepair(99, infos.as_mut_ptr(), 0), 107_001);
}

extern "C" fn alloc_fn(_: *mut c_void, _: usize) -> *mut c_void {
    ptr::null_mut()
}
extern "C" fn free_fn(_: *mut c_void, _: *mut c_void) {}
extern "C" fn addr_fn(_: *mut c_void) -> *mut c_void {
    ptr::null_mut()
}

fn allocator() {
    let desc = aclrtAllocatorCreateDesc();
    assert!(!desc.is_null());
    let obj = 0x5151 as *mut c_void;
    let (a, f, g) = (
        alloc_fn as *mut c_void,
        free_fn as *mut c_void,
        addr_fn as *mut c_void,
    );
    assert_eq!(aclrtAllocatorSetObjToDesc(desc, obj), 0);
    assert_eq!(aclrtAllocatorSetAllocFuncToDesc(desc, a), 0);
    assert_eq!(aclrtAllocatorSetFreeFuncToDesc(desc, f), 0);
    let s = stream();
    assert_eq!(
        aclrtAllocatorRegister(s, desc),
        INVALID,
        "no get-address function"
    );
    assert_eq!(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, g), 0);
    assert_eq!(aclrtAllocatorRegister(s, desc), 0);
    assert_eq!(aclrtAllocatorSetObjToDesc(desc, 0x6262 as *mut _), 0);
    let mut outs = [ptr::null_mut::<c_void>(); 6];
    let [o0, o1, o2, o3, o4, o5] = &mut outs;
    assert_eq!(aclrtAllocatorGetByStream(s, o0, o1, o2, o3, o4, o5), 0);
    assert_eq!(
        outs,
        [desc, obj, a, f, ptr::null_mut(), g],
        "the copy registered"
    );
    let mut only = ptr::null_mut();
    let null = ptr::null_mut();
    assert_eq!(
        aclrtAllocatorGetByStream(s, &mut only, null, null, null, null, null),
        0
    );
    assert_eq!(only, desc);
    assert_eq!(
        aclrtAllocatorGetByStream(s, null, null, null, null, null, null),
        INVALID
    );
    assert_eq!(
        aclrtAllocatorGetByStream(ptr::null_mut(), &mut only, null, null, null, null, null),
        INVALID
    );
    assert_eq!(aclrtAllocatorDestroyDesc(desc), 0);
    assert_eq!(
        aclrtAllocatorGetByStream(s, &mut only, null, null, null, null, null),
        0,
        "kept"
    );
    assert_eq!(aclrtAllocatorUnregister(s), 0);
    assert_eq!(aclrtAllocatorUnregister(s), 0, "twice: success");
    assert_eq!(
        aclrtAllocatorGetByStream(s, &mut only, null, null, null, null, null),
        INVALID
    );
    assert_eq!(aclrtAllocatorUnregister(ptr::null_mut()), INVALID);
    assert_eq!(aclrtAllocatorDestroyDesc(desc), INVALID, "destroyed");
    assert_eq!(aclrtAllocatorDestroyDesc(ptr::null_mut()), INVALID);
    assert_eq!(aclrtAllocatorSetObjToDesc(desc, obj), INVALID);
    let other = aclrtAllocatorCreateDesc();
    assert_eq!(
        aclrtAllocatorSetAllocFuncToDesc(other, ptr::null_mut()),
        INVALID
    );
    assert_eq!(aclrtAllocatorRegister(s, other), INVALID, "no object");
    assert_eq!(aclrtAllocatorRegister(ptr::null_mut(), other), INVALID);
    assert_eq!(aclrtAllocatorDestroyDesc(other), 0);
}

fn allocations_and_capabilities() {
    let mut p = ptr::null_mut();
    // SAFETY: a live local out parameter; no configuration.
    let code = unsafe { aclrtMallocForTaskScheduler(&mut p, 100, 0, ptr::null_mut()) };
    assert_eq!(code, 0);
    let data = pattern(100, 3);
    to_device(p, &data);
    assert_eq!(from_device(p, 100), data);
    assert_eq!(aclrtFree(p), 0);
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            aclrtMallocForTaskScheduler(&mut p, 0, 0, ptr::null_mut()),
            INVALID
        );
        assert_eq!(
            aclrtMallocForTaskScheduler(ptr::null_mut(), 64, 0, ptr::null_mut()),
            INVALID
        );
        let mut attr = aclrtMallocAttribute {
            attr: 3,
            value: [1, 0],
        };
        let mut cfg = aclrtMallocConfig {
            attrs: &mut attr,
            num_attrs: 1,
        };
        assert_eq!(
            aclrtMallocForTaskScheduler(&mut p, 64, 0, &mut cfg),
            RT_INVALID,
            "vaFlag"
        );
    }
    let mut cap = 7u32;
    assert_eq!(host_mem_map_capabilities(0, 6, &mut cap), 0);
    assert_eq!(cap, 1, "ACL_RT_HOST_MEM_MAP_SUPPORTED");
    assert_eq!(host_mem_map_capabilities(0, 10, &mut cap), RT_INVALID);
    assert_eq!(host_mem_map_capabilities(99, 0, &mut cap), 107_001);
    assert_eq!(host_mem_map_capabilities(0, 0, ptr::null_mut()), INVALID);
}

fn absent_or_elsewhere() {
    // Atlas A2: the A3 interconnect calls are 207000 after the ACL layer's
    // checks; CANN 9.1's and 9.2's are absent under 9.0.
    let mut va = ptr::null_mut();
    let at = (40usize << 40) as *mut c_void;
    assert_eq!(
        reserve_mem_address_no_uc_memory(&mut va, GIB, 0, at, 0),
        NOT_SUPPORTED
    );
    assert_eq!(
        reserve_mem_address_no_uc_memory(&mut va, GIB, 0, at, 2),
        INVALID
    );
    assert_eq!(
        reserve_mem_address_no_uc_memory(ptr::null_mut(), GIB, 0, at, 0),
        INVALID
    );
    assert_eq!(aclrtMemMapSelectedLink(at, MIB, at, 0), NOT_SUPPORTED);
    assert_eq!(
        aclrtMemMapNoAccess(at, MIB, 0, 0x18 as *mut _, 0),
        NOT_SUPPORTED
    );
    assert_eq!(aclrtMemMapSetLink(0x18 as *mut _, 0), NOT_SUPPORTED);
    assert_eq!(
        aclrtGetSymbolAddress(0x18 as *const _, &mut va),
        NOT_SUPPORTED
    );
    let d = device(4096);
    let mut key = [0 as c_char; 65];
    // SAFETY: a key buffer of its documented length.
    let code = unsafe { aclrtIpcMemGetExportKey(d, 4096, key.as_mut_ptr(), 65, 0) };
    assert_eq!(code, 0);
    assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 1), NOT_SUPPORTED);
    assert_eq!(aclrtIpcMemSetAttr(ptr::null(), 0, 1), RT_INVALID);
    assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 1, 1), RT_INVALID);
    let mut pid = [1234i32];
    let mut servers = [aclrtServerPid {
        sdid: 0,
        pid: pid.as_mut_ptr(),
        num: 1,
    }];
    assert_eq!(
        aclrtIpcMemImportPidInterServer(key.as_ptr(), servers.as_mut_ptr(), 1),
        NOT_SUPPORTED
    );
    assert_eq!(
        aclrtIpcMemImportPidInterServer(key.as_ptr(), servers.as_mut_ptr(), 0),
        RT_INVALID
    );
    assert_eq!(aclrtFree(d), 0);
}

fn a3_links() {
    // A reservation at the caller's address, outside the 9.x window.
    let mut va = ptr::null_mut();
    let at = (40usize << 40) as *mut c_void;
    assert_eq!(reserve_mem_address_no_uc_memory(&mut va, GIB, 0, at, 1), 0);
    assert_eq!(va, at);
    assert_eq!(aclrtReleaseMemAddress(va), 0);
    assert_eq!(
        reserve_mem_address_no_uc_memory(&mut va, GIB, 0, ptr::null_mut(), 0),
        NOT_SUPPORTED
    );
    assert_eq!(
        reserve_mem_address_no_uc_memory(&mut va, 2 * MIB, 0, at, 0),
        RT_INVALID
    );
    assert_eq!(
        reserve_mem_address_no_uc_memory(&mut va, GIB, 0, at.wrapping_byte_add(MIB), 0),
        RT_INVALID
    );
    // Physical memory mapped at src, mapped again at dst.
    let prop = RawPhysicalMemProp {
        mem_attr: sys::ACL_HBM_MEM_HUGE,
        location: RawMemLocation {
            id: 0,
            type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        ..RawPhysicalMemProp::default()
    };
    let mut handle = ptr::null_mut();
    let (mut src, mut dst) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: live local out parameters.
    unsafe {
        assert_eq!(aclrtMallocPhysical(&mut handle, 2 * MIB, &prop, 0), 0);
        assert_eq!(
            aclrtReserveMemAddress(&mut src, 2 * MIB, 0, ptr::null_mut(), 0),
            0
        );
        assert_eq!(
            aclrtReserveMemAddress(&mut dst, 2 * MIB, 0, ptr::null_mut(), 0),
            0
        );
        assert_eq!(aclrtMapMem(src, 2 * MIB, 0, handle, 0), 0);
    }
    assert_eq!(
        aclrtMemMapSelectedLink(dst, 2 * MIB, dst, 1),
        RT_INVALID,
        "dst is no mapping"
    );
    assert_eq!(aclrtMemMapSelectedLink(dst, 2 * MIB, src, 2), INVALID);
    assert_eq!(
        aclrtMemMapSelectedLink(dst, 4 * MIB, src, 1),
        RT_INVALID,
        "beyond src"
    );
    assert_eq!(aclrtMemMapSelectedLink(dst, 2 * MIB, src, 1), 0);
    let data = pattern(4096, 11);
    to_device(src, &data);
    assert_eq!(from_device(dst, 4096), data, "one memory, two addresses");
    assert_eq!(aclrtUnmapMem(dst), 0);
    assert_eq!(aclrtMemMapSetLink(handle, 1), NOT_SUPPORTED, "CANN 9.2's");
    assert_eq!(aclrtUnmapMem(src), 0);
    assert_eq!(aclrtFreePhysical(handle), 0);
    assert_eq!(aclrtReleaseMemAddress(src), 0);
    assert_eq!(aclrtReleaseMemAddress(dst), 0);
    // IPC links: SIO and HCCS on A3; the UB paths are Atlas 350's.
    let d = device(4096);
    let mut key = [0 as c_char; 65];
    // SAFETY: a key buffer of its documented length.
    let code = unsafe { aclrtIpcMemGetExportKey(d, 4096, key.as_mut_ptr(), 65, 0) };
    assert_eq!(code, 0);
    assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 1), 0);
    assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 2), LINK_NOT_SUPPORTED);
    assert_eq!(aclrtIpcMemSetAttr(key.as_ptr(), 0, 4), RT_INVALID);
    assert_eq!(aclrtIpcMemSetAttr(c"not a key".as_ptr(), 0, 1), RT_INVALID);
    let mut pids = [1234i32, 5678];
    let mut servers = [aclrtServerPid {
        sdid: 7,
        pid: pids.as_mut_ptr(),
        num: 2,
    }];
    assert_eq!(
        aclrtIpcMemImportPidInterServer(key.as_ptr(), servers.as_mut_ptr(), 1),
        0
    );
    servers[0].pid = ptr::null_mut();
    assert_eq!(
        aclrtIpcMemImportPidInterServer(key.as_ptr(), servers.as_mut_ptr(), 1),
        RT_INVALID
    );
    assert_eq!(
        aclrtIpcMemImportPidInterServer(ptr::null(), servers.as_mut_ptr(), 1),
        RT_INVALID
    );
    assert_eq!(aclrtFree(d), 0);
}

fn symbols() {
    let variable = 0u64;
    let symbol = (&raw const variable).cast::<c_void>();
    let mut out = ptr::null_mut();
    let mut size = 0usize;
    let mut buf = [0u8; 8];
    let b = buf.as_mut_ptr().cast::<c_void>();
    assert_eq!(aclrtGetSymbolAddress(symbol, &mut out), INVALID_SYMBOL);
    assert_eq!(aclrtGetSymbolSize(symbol, &mut size), INVALID_SYMBOL);
    assert_eq!(aclrtGetSymbolAddress(ptr::null(), &mut out), INVALID);
    assert_eq!(aclrtGetSymbolSize(symbol, ptr::null_mut()), INVALID);
    assert_eq!(
        aclrtMemcpyFromSymbol(b, 8, symbol, 8, 0, D2H),
        INVALID_SYMBOL
    );
    assert_eq!(
        aclrtMemcpyFromSymbol(b, 8, symbol, 0, 0, 99),
        0,
        "count 0 first"
    );
    assert_eq!(aclrtMemcpyFromSymbol(b, 4, symbol, 8, 0, D2H), INVALID);
    assert_eq!(aclrtMemcpyFromSymbol(b, 8, symbol, 8, 0, H2D), INVALID);
    assert_eq!(
        aclrtMemcpyFromSymbolAsync(b, 8, symbol, 8, 0, 4, ptr::null_mut()),
        INVALID_SYMBOL
    );
    assert_eq!(aclrtMemcpyToSymbol(symbol, b, 8, 0, H2D), INVALID_SYMBOL);
    assert_eq!(aclrtMemcpyToSymbol(symbol, b, 8, 0, D2H), INVALID);
    assert_eq!(aclrtMemcpyToSymbol(ptr::null(), b, 8, 0, H2D), INVALID);
    assert_eq!(
        aclrtMemcpyToSymbolAsync(symbol, b, 0, 0, 0, ptr::null_mut()),
        0
    );
    assert_eq!(
        aclrtMemcpyToSymbolAsync(symbol, b, 8, 0, 4, ptr::null_mut()),
        INVALID_SYMBOL
    );
}
