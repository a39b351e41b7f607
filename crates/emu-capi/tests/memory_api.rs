//! The runtime's memory chapter beyond the typed API, called in-process:
//! stream value operations and allocation variants with cache
//! maintenance; each with its success (bytes compared) and every
//! documented refusal with its code, then the answers of releases and
//! products without them. One test, because the library's state is
//! process-wide.

mod common;

use std::ffi::c_void;
use std::ptr;

use aclmem_emu::errors::Situation;
use aclmem_emu_capi::*;

use common::*;

#[test]
fn memory_api() {
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_DEVICES", "2");
    set("ACLMEM_EMU_HBM", "256MiB");
    init("a2", "Ascend910B3", "9.0");
    value_operations();
    allocation_variants();
    check_mem_type();
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
        // A configuration at an address the process may not read.
        let garbage = 0xdead_0000usize as *mut aclrtMallocConfig;
        assert_eq!(aclrtMallocHostWithCfg(&mut h, 64, garbage), INVALID);
        assert_eq!(aclrtMallocWithCfg(&mut p, 64, 0, garbage), INVALID);
        let mut c = aclrtMallocConfig {
            attrs: 0xdead_0000usize as *const aclrtMallocAttribute,
            num_attrs: 2,
        };
        assert_eq!(aclrtMallocHostWithCfg(&mut h, 64, &mut c), INVALID);
        assert_eq!(aclrtFree(d), 0);
    }
}

fn check_mem_type() {
    const DEV: u32 = 0x2;
    const RSVD: u32 = 0x20;
    let d = device(64);
    let h = host(64);
    // Device memory mapped into a reserved range.
    let prop = aclmem_core::RawPhysicalMemProp {
        mem_attr: aclmem_core::MemAttr::HbmMemHuge.raw(),
        location: aclmem_core::RawMemLocation {
            id: 0,
            type_: aclmem_core::Location::Device.raw(),
        },
        ..Default::default()
    };
    let size = 2 << 20;
    // SAFETY: C prototypes with live locals; NULL where a refusal is
    // wanted.
    unsafe {
        let mut handle = ptr::null_mut();
        assert_eq!(aclrtMallocPhysical(&mut handle, size, &prop, 0), 0);
        let mut va = ptr::null_mut();
        assert_eq!(
            aclrtReserveMemAddress(&mut va, size, 0, ptr::null_mut(), 0),
            0
        );
        assert_eq!(aclrtMapMem(va, size, 0, handle, 0), 0);
        let mut result = 7u32;
        let check = |list: &mut [*mut c_void], types: u32, result: &mut u32| {
            aclrtCheckMemType(list.as_mut_ptr(), list.len() as u32, types, result, 0)
        };
        assert_eq!(
            (check(&mut [d, d.byte_add(32)], DEV, &mut result), result),
            (0, 1)
        );
        assert_eq!((check(&mut [d, va], DEV, &mut result), result), (0, 0));
        assert_eq!(
            (check(&mut [d, va], DEV | RSVD, &mut result), result),
            (0, 1)
        );
        assert_eq!((check(&mut [va], RSVD, &mut result), result), (0, 1));
        assert_eq!(
            (check(&mut [h], DEV | RSVD, &mut result), result),
            (0, 0),
            "host"
        );
        // Refusals: the ACL layer, then the runtime (result 0 first).
        assert_eq!(
            aclrtCheckMemType(ptr::null_mut(), 1, DEV, &mut result, 0),
            INVALID
        );
        let mut list = [d];
        assert_eq!(
            aclrtCheckMemType(list.as_mut_ptr(), 1, DEV, ptr::null_mut(), 0),
            INVALID
        );
        result = 7;
        assert_eq!(
            aclrtCheckMemType(list.as_mut_ptr(), 1, DEV, &mut result, 1),
            RT_INVALID
        );
        assert_eq!(result, 0, "written before the runtime's checks");
        assert_eq!(
            aclrtCheckMemType(list.as_mut_ptr(), 0, DEV, &mut result, 0),
            RT_INVALID
        );
        assert_eq!(
            aclrtCheckMemType(list.as_mut_ptr(), 1, 0x10, &mut result, 0),
            RT_INVALID,
            "ACL_RT_MEM_TYPE_RSVD is not the runtime's mask"
        );
        assert_eq!(aclrtUnmapMem(va), 0);
        assert_eq!(aclrtReleaseMemAddress(va), 0);
        assert_eq!(aclrtFreePhysical(handle), 0);
    }
    assert_eq!(aclrtFree(d), 0);
    assert_eq!(aclrtFreeHost(h), 0);
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
        let (mut list, mut result) = ([d], 0u32);
        assert_eq!(
            aclrtCheckMemType(list.as_mut_ptr(), 1, 0x2, &mut result, 0),
            NOT_SUPPORTED
        );
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
