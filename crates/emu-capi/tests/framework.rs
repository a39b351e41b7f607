//! The framework functions of the catalogue, called in-process: events,
//! streams with a configuration, compile options, system parameters,
//! versions, the thread's last error, capture state, and the generated
//! answers of the accepted and the not-supported ones with their record.
//! One test, because the library's state is process-wide.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;

use aclmem_core::AclError;
use aclmem_emu::errors::Situation;
use aclmem_emu_capi::record;
use aclmem_emu_capi::*;
use aclmem_sys::catalogue::{self, Answer, Returns};
use aclmem_sys::{self as sys, aclrtEvent};

const INVALID: i32 = 100000;

fn code(s: Situation) -> i32 {
    s.code().code()
}

fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

#[test]
fn framework_functions() {
    set(
        "ACLMEM_EMU_MACHINE",
        &format!("capi-fw-{}", std::process::id()),
    );
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_DEVICES", "2");
    set("ACLMEM_EMU_HBM", "256MiB");
    set("ACLMEM_EMU_CANN", "8.5");
    // SAFETY: every call follows its C prototype; out pointers are live
    // locals or deliberately NULL.
    unsafe {
        let mut e: aclrtEvent = ptr::null_mut();
        assert_eq!(aclrtCreateEvent(&mut e), AclError::UNINITIALIZE.code());
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(
            aclrtCreateEvent(&mut e),
            AclError::RT_CONTEXT_NULL.code(),
            "an event belongs to the thread's device"
        );
        assert_eq!(aclrtSetDevice(1), 0);
        events();
        streams();
        settings();
        versions();
        last_error();
        generated_answers();
        assert_eq!(aclFinalize(), 0);
    }
}

unsafe fn events() {
    // SAFETY: as in the test above.
    unsafe {
        let mut a: aclrtEvent = ptr::null_mut();
        let mut b: aclrtEvent = ptr::null_mut();
        assert_eq!(aclrtCreateEventExWithFlag(&mut a, 9), 0);
        assert_eq!(aclrtCreateEventWithFlag(&mut b, 1), 0);
        assert_ne!(a, b);
        assert_eq!(aclrtCreateEvent(ptr::null_mut()), INVALID);
        let mut status = 7u32;
        assert_eq!(aclrtQueryEventStatus(a, &mut status), 0);
        assert_eq!(
            status, 0,
            "ACL_EVENT_RECORDED_STATUS_NOT_READY before a record"
        );
        let mut ms = 0f32;
        assert_eq!(
            aclrtEventElapsedTime(&mut ms, a, b),
            code(Situation::EventNotRecorded)
        );
        assert_eq!(aclrtRecordEvent(a, ptr::null_mut()), 0);
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(aclrtRecordEvent(b, ptr::null_mut()), 0);
        assert_eq!(aclrtQueryEventStatus(a, &mut status), 0);
        assert_eq!(
            status, 1,
            "ACL_EVENT_RECORDED_STATUS_COMPLETE once recorded"
        );
        assert_eq!(aclrtQueryEventWaitStatus(a, &mut status), 0);
        assert_eq!(status, 0, "ACL_EVENT_WAIT_STATUS_COMPLETE");
        assert_eq!(aclrtEventElapsedTime(&mut ms, a, b), 0);
        assert!(ms >= 2.0, "{ms} ms between records 2 ms apart");
        assert_eq!(aclrtEventElapsedTime(&mut ms, b, a), 0);
        assert!(ms <= -2.0, "{ms}: end recorded before start");
        assert_eq!(aclrtEventElapsedTime(ptr::null_mut(), a, b), INVALID);
        assert_eq!(aclrtSynchronizeEvent(a), 0);
        assert_eq!(aclrtStreamWaitEvent(ptr::null_mut(), a), 0);
        assert_eq!(aclrtResetEvent(a, ptr::null_mut()), 0);
        assert_eq!(aclrtQueryEventStatus(a, &mut status), 0);
        assert_eq!(status, 0, "reset: not recorded any more");
        // Shared with another process: the handle names the event; opening
        // it gives an event of the opener's, complete.
        let mut handle = aclrtIpcEventHandle { reserved: [0; 64] };
        assert_eq!(aclrtIpcGetEventHandle(b, &mut handle), 0);
        let mut opened: aclrtEvent = ptr::null_mut();
        assert_eq!(aclrtIpcOpenEventHandle(handle, &mut opened), 0);
        assert_eq!(aclrtQueryEventStatus(opened, &mut status), 0);
        assert_eq!(status, 1);
        assert_eq!(aclrtDestroyEvent(opened), 0);
        let garbage = aclrtIpcEventHandle {
            reserved: [0xA5; 64],
        };
        assert_eq!(
            aclrtIpcOpenEventHandle(garbage, &mut opened),
            code(Situation::BadEvent)
        );
        assert_eq!(aclrtIpcGetEventHandle(b, ptr::null_mut()), INVALID);
        // Destroyed, made up, NULL: codes, never a crash.
        assert_eq!(aclrtDestroyEvent(a), 0);
        assert_eq!(aclrtDestroyEvent(a), code(Situation::BadEvent));
        assert_eq!(
            aclrtRecordEvent(a, ptr::null_mut()),
            code(Situation::BadEvent)
        );
        assert_eq!(
            aclrtSynchronizeEvent(0xdead_beef as aclrtEvent),
            code(Situation::BadEvent)
        );
        assert_eq!(aclrtDestroyEvent(ptr::null_mut()), INVALID);
        assert_eq!(aclrtDestroyEvent(b), 0);
    }
}

unsafe fn streams() {
    // SAFETY: as in the test above.
    unsafe {
        let mut s: sys::aclrtStream = ptr::null_mut();
        assert_eq!(aclrtCreateStreamWithConfig(&mut s, 0, 3), 0);
        assert_eq!(aclrtStreamQuery(s), 0, "every stream is complete");
        let mut e: aclrtEvent = ptr::null_mut();
        assert_eq!(aclrtCreateEvent(&mut e), 0);
        assert_eq!(aclrtRecordEvent(e, s), 0);
        assert_eq!(aclrtStreamWaitEvent(s, e), 0);
        let mut flag = 9u32;
        assert_eq!(aclrtGetStreamOverflowSwitch(s, &mut flag), 0);
        assert_eq!(flag, 0);
        let mut status = 9u32;
        let mut model: *mut c_void = ptr::dangling_mut();
        assert_eq!(aclmdlRICaptureGetInfo(s, &mut status, &mut model), 0);
        assert_eq!((status, model), (0, ptr::null_mut()), "never capturing");
        assert_eq!(aclrtDestroyStream(s), 0);
        assert_eq!(aclrtStreamQuery(s), code(Situation::BadContextOrStream));
        assert_eq!(aclrtRecordEvent(e, s), code(Situation::BadContextOrStream));
        assert_eq!(
            aclmdlRICaptureGetInfo(s, &mut status, &mut model),
            code(Situation::BadContextOrStream)
        );
        assert_eq!(aclrtCreateStreamWithConfig(ptr::null_mut(), 0, 3), INVALID);
        assert_eq!(aclrtDestroyEvent(e), 0);
        // aclrtMemsetAsync: aclrtMemset on a live stream.
        let mut dev: *mut c_void = ptr::null_mut();
        assert_eq!(aclrtMalloc(&mut dev, 4096, 0), 0);
        assert_eq!(aclrtMemsetAsync(dev, 4096, 0x5a, 4096, ptr::null_mut()), 0);
        let mut back = [0u8; 16];
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 16, dev, 16, 2), 0);
        assert_eq!(back, [0x5a; 16]);
        assert_eq!(
            aclrtMemsetAsync(dev, 4096, 0, 4096, s),
            code(Situation::BadContextOrStream)
        );
        assert_eq!(aclrtFree(dev), 0);
    }
}

unsafe fn settings() {
    // SAFETY: as in the test above.
    unsafe {
        const JIT: u32 = 10;
        const PRECISION: u32 = 0;
        let mut buf = [0 as c_char; 64];
        assert!(aclGetCompileoptSize(JIT) > 0);
        assert_eq!(aclGetCompileopt(JIT, buf.as_mut_ptr(), buf.len()), 0);
        assert_eq!(CStr::from_ptr(buf.as_ptr()).to_str(), Ok("disable"));
        assert_eq!(
            aclSetCompileopt(PRECISION, c"must_keep_origin_dtype".as_ptr()),
            0
        );
        assert_eq!(aclGetCompileopt(PRECISION, buf.as_mut_ptr(), buf.len()), 0);
        assert_eq!(
            CStr::from_ptr(buf.as_ptr()).to_str(),
            Ok("must_keep_origin_dtype")
        );
        assert_eq!(aclGetCompileopt(PRECISION, buf.as_mut_ptr(), 4), INVALID);
        assert_eq!(aclGetCompileopt(PRECISION, ptr::null_mut(), 64), INVALID);
        assert_eq!(aclSetCompileopt(PRECISION, ptr::null()), INVALID);

        let mut v = -1i64;
        assert_eq!(aclrtGetSysParamOpt(0, &mut v), 0);
        assert_eq!(v, 0, "the runtime's default for a parameter never set");
        assert_eq!(aclrtSetSysParamOpt(0, 1), 0);
        assert_eq!(aclrtCtxSetSysParamOpt(2, 5), 0);
        assert_eq!(aclrtGetSysParamOpt(0, &mut v), 0);
        assert_eq!(v, 1);
        assert_eq!(aclrtGetSysParamOpt(2, &mut v), 0);
        assert_eq!(v, 5);
        assert_eq!(aclrtGetSysParamOpt(0, ptr::null_mut()), INVALID);

        let mut actual = 0u64;
        assert_eq!(aclrtSetOpExecuteTimeOutV2(547_000_000, &mut actual), 0);
        assert_eq!(actual, 547_000_000);

        let mut attr = -1;
        assert_eq!(aclGetCannAttribute(0, &mut attr), 0);
        assert_eq!(attr, 1, "INF_NAN on an Atlas A2 (the default SoC)");
        assert_eq!(aclGetCannAttribute(2, &mut attr), 0);
        assert_eq!(attr, 0, "nothing is compiled just in time");
        assert_eq!(aclGetCannAttribute(7, &mut attr), INVALID);
        assert_eq!(aclGetCannAttribute(0, ptr::null_mut()), INVALID);

        // Device information: what the emulated machine has, and 0 with
        // 207000 for the hardware it does not have.
        let mut value = -1i64;
        assert_eq!(aclrtGetDeviceInfo(1, 301, &mut value), 0);
        assert_eq!(value, 256 << 20, "ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE");
        assert_eq!(aclrtGetDeviceInfo(1, 402, &mut value), 0);
        assert_eq!(value, 1, "ACL_DEV_ATTR_PHY_CHIP_ID");
        value = -1;
        assert_eq!(aclrtGetDeviceInfo(1, 102, &mut value), 207_000);
        assert_eq!(
            value, 0,
            "ACL_DEV_ATTR_CUBE_CORE_NUM: unknown, never garbage"
        );
        assert_eq!(
            aclrtGetDeviceInfo(2, 301, &mut value),
            AclError::RT_INVALID_DEVICEID.code()
        );
        assert_eq!(aclrtGetDeviceInfo(0, 301, ptr::null_mut()), INVALID);
        value = -1;
        assert_eq!(aclGetDeviceCapability(0, 0, &mut value), 207_000);
        assert_eq!(value, 0);
    }
}

unsafe fn versions() {
    // SAFETY: as in the test above.
    unsafe {
        let mut out = [0 as c_char; 128];
        assert_eq!(
            aclsysGetVersionStr(c"runtime".as_ptr(), out.as_mut_ptr()),
            0
        );
        assert_eq!(CStr::from_ptr(out.as_ptr()).to_str(), Ok("8.5.0"));
        let mut num = 0;
        assert_eq!(aclsysGetVersionNum(c"runtime".as_ptr(), &mut num), 0);
        assert_eq!(num, 80_500_000);
        // The driver package: ACLMEM_EMU_DRIVER, by default 26.0.rc1 (the HDK
        // paired with CANN 9.0.0); none
        // installed is "no version.info" (100003), as is a malformed one.
        assert_eq!(aclsysGetVersionStr(c"driver".as_ptr(), out.as_mut_ptr()), 0);
        assert_eq!(CStr::from_ptr(out.as_ptr()).to_str(), Ok("26.0.rc1"));
        let mut v = sys::aclCANNPackageVersion::default();
        assert_eq!(aclsysGetCANNVersion(sys::ACL_PKG_NAME_DRIVER, &mut v), 0);
        let field = |f: &[c_char]| CStr::from_ptr(f.as_ptr()).to_str().unwrap().to_owned();
        assert_eq!(
            [
                field(&v.version),
                field(&v.majorVersion),
                field(&v.minorVersion),
                field(&v.releaseVersion),
                field(&v.patchVersion)
            ],
            ["26.0.rc1", "26", "0", "rc1", "0"]
        );
        set("ACLMEM_EMU_DRIVER", "26.0.0");
        assert_eq!(aclsysGetVersionStr(c"driver".as_ptr(), out.as_mut_ptr()), 0);
        assert_eq!(CStr::from_ptr(out.as_ptr()).to_str(), Ok("26.0.0"));
        assert_eq!(aclsysGetVersionNum(c"driver".as_ptr(), &mut num), 0);
        assert_eq!(num, 260_000_000);
        for bad in ["none", "25", "25..1", "25.3 rc1"] {
            set("ACLMEM_EMU_DRIVER", bad);
            assert_eq!(
                aclsysGetVersionStr(c"driver".as_ptr(), out.as_mut_ptr()),
                AclError::INVALID_FILE.code(),
                "{bad}"
            );
        }
        set("ACLMEM_EMU_DRIVER", "");
        assert_eq!(aclsysGetVersionStr(ptr::null(), out.as_mut_ptr()), INVALID);
        assert_eq!(
            aclsysGetVersionStr(c"runtime".as_ptr(), ptr::null_mut()),
            INVALID
        );
    }
}

unsafe fn last_error() {
    // SAFETY: as in the test above.
    unsafe {
        assert_eq!(aclrtGetLastError(0), INVALID, "the NULL of the last case");
        assert_eq!(aclrtGetLastError(0), 0, "cleared by the read");
        assert_eq!(CStr::from_ptr(aclGetRecentErrMsg()).to_bytes(), b"");
        assert_eq!(
            aclrtDestroyEvent(0x1234 as aclrtEvent),
            code(Situation::BadEvent)
        );
        assert_eq!(aclrtPeekAtLastError(0), code(Situation::BadEvent));
        assert_eq!(aclrtPeekAtLastError(0), code(Situation::BadEvent), "kept");
        let msg = CStr::from_ptr(aclGetRecentErrMsg()).to_str().unwrap();
        assert!(msg.contains("107000"), "{msg}");
        // Another thread has its own.
        let other = std::thread::spawn(|| aclrtPeekAtLastError(0))
            .join()
            .unwrap();
        assert_eq!(other, 0);
        assert_eq!(aclrtGetLastError(0), code(Situation::BadEvent));
    }
}

/// The accepted and not-supported functions answer the catalogue's value
/// for what they return, and the record counts them with the caller.
unsafe fn generated_answers() {
    use aclmem_emu_capi::{
        aclopCompile, aclprofCreateConfig, aclrtGetDeviceUtilizationRate, aclrtSetDeviceSatMode,
    };
    let compile = catalogue::find("aclopCompile").unwrap();
    assert_eq!(
        (compile.answer, compile.returns),
        (Answer::Unsupported, Returns::OpStatus)
    );
    // An operator: ACL_ERROR_OP_NOT_FOUND, which frameworks raise on.
    assert_eq!(aclopCompile(), AclError::OP_NOT_FOUND.code());
    assert_eq!(aclrtPeekAtLastError(0), 100_024, "is the last error");
    assert_eq!(aclopCompile(), 100_024);
    // Another status: ACL_ERROR_RT_FEATURE_NOT_SUPPORT.
    assert_eq!(
        catalogue::find("aclrtGetDeviceUtilizationRate")
            .unwrap()
            .returns,
        Returns::Code
    );
    assert_eq!(aclrtGetDeviceUtilizationRate(), 207_000);
    assert_eq!(aclrtGetLastError(0), 207_000);
    assert_eq!(
        catalogue::find("aclprofCreateConfig").unwrap().returns,
        Returns::Pointer
    );
    assert!(aclprofCreateConfig().is_null());
    assert_eq!(
        catalogue::find("aclrtSetDeviceSatMode").unwrap().answer,
        Answer::Accepted
    );
    assert_eq!(aclrtSetDeviceSatMode(), 0);
    let calls = record::calls();
    assert!(!calls.contains_key("aclrtGetDeviceInfo"), "emulated");
    let c = &calls["aclopCompile"];
    assert_eq!((c.count, c.answer), (2, Answer::Unsupported));
    assert!(
        c.first_site.contains("framework-"),
        "the call site is in this test binary: {}",
        c.first_site
    );
    assert_eq!(calls["aclrtSetDeviceSatMode"].answer, Answer::Accepted);
    assert!(
        !calls.contains_key("aclrtCreateEvent"),
        "emulated calls are not recorded"
    );
    let report = record::report().unwrap();
    let lines: Vec<&str> = report.lines().skip(1).collect();
    assert!(lines[0].contains("not supported") && lines.last().unwrap().contains("accepted only"));
    assert!(report.contains("aclopCompile ") && report.contains("2 calls"));
}

/// mstx ranges and markers need no machine (a second test: they touch
/// none of the state above). Ids are new and non-zero; a message the tools
/// refuse (NULL, unreadable, longer than the 156 bytes the emulator takes)
/// gets 0, the documented failure.
#[test]
fn mstx_ranges_hand_out_ids_and_refuse_bad_messages() {
    use aclmem_emu_capi::framework::mstx::{
        MSTX_MESSAGE_MAX, mstxMarkA, mstxRangeEnd, mstxRangeStartA,
    };
    let first = mstxRangeStartA(c"sleep".as_ptr(), ptr::null_mut());
    let second = mstxRangeStartA(c"wake_up".as_ptr(), ptr::null_mut());
    assert!(
        first != 0 && second != 0 && first != second,
        "{first} {second}"
    );
    mstxRangeEnd(second);
    mstxRangeEnd(first);
    mstxRangeEnd(12345);
    assert_eq!(mstxRangeStartA(ptr::null(), ptr::null_mut()), 0);
    assert_eq!(mstxRangeStartA(8 as *const c_char, ptr::null_mut()), 0);
    let longest = std::ffi::CString::new("m".repeat(MSTX_MESSAGE_MAX)).unwrap();
    assert_ne!(mstxRangeStartA(longest.as_ptr(), ptr::null_mut()), 0);
    let too_long = std::ffi::CString::new("m".repeat(MSTX_MESSAGE_MAX + 1)).unwrap();
    assert_eq!(mstxRangeStartA(too_long.as_ptr(), ptr::null_mut()), 0);
    mstxMarkA(c"step".as_ptr(), ptr::null_mut());
    mstxMarkA(ptr::null(), ptr::null_mut());
}

/// The mstx memory API: domains by name (the same name, the same handle;
/// bad names NULL), heaps over well-formed descriptors only, regions with
/// handles written back (NULL for an empty one, all NULL in an unknown
/// heap), unregistered by pointer or by handle; a heap takes its regions
/// with it, and so does a destroyed domain. Garbage anywhere is answered,
/// never a crash.
#[test]
fn mstx_heaps_and_regions_are_registered_from_well_formed_descriptors() {
    use aclmem_emu_capi::framework::mstx::*;
    use aclmem_sys::mstx::*;
    use std::ffi::c_void;
    let domain = mstxDomainCreateA(c"pool_test".as_ptr());
    assert!(!domain.is_null());
    assert_eq!(mstxDomainCreateA(c"pool_test".as_ptr()), domain);
    for bad in [c"", c"has space", c"dash-ed"] {
        assert!(mstxDomainCreateA(bad.as_ptr()).is_null(), "{bad:?}");
    }
    assert!(mstxDomainCreateA(ptr::null()).is_null());
    let long = std::ffi::CString::new("d".repeat(MSTX_DOMAIN_NAME_MAX + 1)).unwrap();
    assert!(mstxDomainCreateA(long.as_ptr()).is_null());
    assert_ne!(
        mstxDomainRangeStartA(domain, c"step".as_ptr(), ptr::null_mut()),
        0
    );
    assert_eq!(
        mstxDomainRangeStartA(8 as *mut c_void, c"step".as_ptr(), ptr::null_mut()),
        0
    );

    let (heaps0, regions0) = mstx_registered();
    let pool = vec![0u8; 4096];
    let base = pool.as_ptr().cast::<c_void>();
    let range = mstxMemVirtualRangeDesc_t {
        device_id: 0,
        ptr: base,
        size: 4096,
    };
    let desc = |usage, type_, range: *const mstxMemVirtualRangeDesc_t| mstxMemHeapDesc_t {
        usage,
        type_,
        type_specific_desc: range.cast(),
    };
    let empty = mstxMemVirtualRangeDesc_t { size: 0, ..range };
    for bad in [
        desc(1, 0, &range),
        desc(0, 1, &range),
        desc(0, 0, ptr::null()),
        desc(0, 0, ptr::dangling()),
        desc(0, 0, &empty),
    ] {
        assert!(mstxMemHeapRegister(domain, &bad).is_null(), "{bad:?}");
    }
    assert!(mstxMemHeapRegister(domain, ptr::null()).is_null());
    assert!(mstxMemHeapRegister((usize::MAX & !15) as *mut c_void, &desc(0, 0, &range)).is_null());
    let heap = mstxMemHeapRegister(domain, &desc(0, 0, &range));
    assert!(!heap.is_null());
    assert_eq!(mstx_registered(), (heaps0 + 1, regions0));

    let blocks = [
        mstxMemVirtualRangeDesc_t { size: 256, ..range },
        mstxMemVirtualRangeDesc_t {
            ptr: base.wrapping_byte_add(256),
            size: 256,
            ..range
        },
        empty,
    ];
    let mut out = [8 as *mut c_void; 3];
    let batch = mstxMemRegionsRegisterBatch_t {
        heap,
        region_type: MSTX_MEM_TYPE_VIRTUAL_ADDRESS,
        region_count: 3,
        region_desc_array: blocks.as_ptr().cast(),
        region_handle_array_out: out.as_mut_ptr(),
    };
    mstxMemRegionsRegister(domain, &batch);
    assert!(!out[0].is_null() && !out[1].is_null() && out[0] != out[1]);
    assert!(out[2].is_null(), "an empty region has no handle");
    assert_eq!(mstx_registered(), (heaps0 + 1, regions0 + 2));
    // In a heap that is not one: nothing, and NULL handles.
    let mut stray = [8 as *mut c_void; 3];
    mstxMemRegionsRegister(
        domain,
        &mstxMemRegionsRegisterBatch_t {
            heap: (usize::MAX & !31) as *mut c_void,
            region_handle_array_out: stray.as_mut_ptr(),
            ..batch
        },
    );
    assert_eq!(stray, [ptr::null_mut(); 3]);
    mstxMemRegionsRegister(domain, ptr::dangling());
    mstxMemRegionsRegister(
        domain,
        &mstxMemRegionsRegisterBatch_t {
            region_desc_array: 8 as *const c_void,
            region_handle_array_out: ptr::dangling_mut(),
            ..batch
        },
    );
    assert_eq!(mstx_registered(), (heaps0 + 1, regions0 + 2));

    // One by handle, one by pointer; unknown references are ignored.
    let refs = [
        mstxMemRegionRef_t {
            ref_type: MSTX_MEM_REGION_REF_TYPE_HANDLE,
            pointer_or_handle: out[0],
        },
        mstxMemRegionRef_t {
            ref_type: MSTX_MEM_REGION_REF_TYPE_POINTER,
            pointer_or_handle: base.wrapping_byte_add(256),
        },
        mstxMemRegionRef_t {
            ref_type: MSTX_MEM_REGION_REF_TYPE_POINTER,
            pointer_or_handle: base.wrapping_byte_add(8),
        },
        mstxMemRegionRef_t {
            ref_type: 7,
            pointer_or_handle: out[0],
        },
    ];
    mstxMemRegionsUnregister(
        domain,
        &mstxMemRegionsUnregisterBatch_t {
            ref_count: 4,
            ref_array: refs.as_ptr(),
        },
    );
    assert_eq!(mstx_registered(), (heaps0 + 1, regions0));
    mstxMemRegionsUnregister(
        domain,
        &mstxMemRegionsUnregisterBatch_t {
            ref_count: 4,
            ref_array: ptr::dangling(),
        },
    );

    // A heap ends with its regions; a domain with its heaps.
    mstxMemRegionsRegister(domain, &batch);
    assert_eq!(mstx_registered(), (heaps0 + 1, regions0 + 2));
    mstxMemHeapUnregister(domain, heap);
    assert_eq!(mstx_registered(), (heaps0, regions0));
    let heap = mstxMemHeapRegister(domain, &desc(0, 0, &range));
    mstxMemRegionsRegister(domain, &mstxMemRegionsRegisterBatch_t { heap, ..batch });
    assert_eq!(mstx_registered(), (heaps0 + 1, regions0 + 2));
    mstxDomainDestroy(domain);
    assert_eq!(mstx_registered(), (heaps0, regions0));
    // NULL is the global domain (docs/mstx.md); a heap of one domain is
    // not the other's.
    let global = mstxMemHeapRegister(ptr::null_mut(), &desc(0, 0, &range));
    assert!(!global.is_null());
    let other = mstxDomainCreateA(c"other_pool".as_ptr());
    mstxMemHeapUnregister(other, global);
    assert_eq!(mstx_registered(), (heaps0 + 1, regions0));
    mstxMemHeapUnregister(ptr::null_mut(), global);
    assert_eq!(mstx_registered(), (heaps0, regions0));
    assert!(
        mstxMemHeapRegister(domain, &desc(0, 0, &range)).is_null(),
        "a destroyed domain"
    );
}
