//! Every driver-independent row of the runtime's argument checks
//! (`docs/facts.md`, "Codes fixed before the driver": rows A1–A60 of the ACL
//! layer and R1–R8 of the runtime layer), one case per row, through the C
//! ABI. Each case runs twice: on a thread without a device and on one with
//! a device set. The code must be the same both times, because these checks
//! run before anything needs a device (R3, a successful copy of nothing, is
//! not a row of the table).
//!
//! One test: the library's state is process-wide.
//!
//! Safety of every `unsafe` block below (one argument for all of them, so
//! the table stays readable): each calls one exported function with its C
//! prototype, passing live locals, or NULL or made-up pointers that the
//! library must answer with a code; nothing here dereferences a pointer.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ffi::c_void;
use std::ptr;

use aclmem_core::{AclError, RawMemLocation, RawPhysicalMemProp};
use aclmem_emu_capi::*;
use aclmem_sys as sys;

const INVALID: i32 = 100000;

fn prop(location: u32, attr: u32) -> RawPhysicalMemProp {
    RawPhysicalMemProp {
        mem_attr: attr,
        location: RawMemLocation {
            id: 0,
            type_: location,
        },
        ..RawPhysicalMemProp::default()
    }
}

fn device(attr: u32) -> RawPhysicalMemProp {
    prop(sys::ACL_MEM_LOCATION_TYPE_DEVICE, attr)
}

type Call = Box<dyn Fn() -> i32 + Send + Sync>;
type Case = (&'static str, i32, Call);

fn malloc_with(p: RawPhysicalMemProp, size: usize, flags: u64) -> Call {
    Box::new(move || {
        let mut h: sys::aclrtDrvMemHandle = ptr::null_mut();
        // SAFETY: live locals; the prop is read, the handle written.
        unsafe { aclrtMallocPhysical(&mut h, size, &p, flags) }
    })
}

fn granularity_of(p: RawPhysicalMemProp) -> Call {
    Box::new(move || {
        let mut p = p;
        let mut g = 0usize;
        // SAFETY: live locals.
        unsafe { aclrtMemGetAllocationGranularity(&mut p, 0, &mut g) }
    })
}

fn cases() -> Vec<Case> {
    let mib2 = 2usize << 20;
    // A made-up handle, as an integer (closures must be Send).
    let fake = 0x1usize;
    let mut v: Vec<Case> = vec![
        (
            "A1 reserve: virPtr NULL",
            INVALID,
            Box::new(|| unsafe {
                aclrtReserveMemAddress(ptr::null_mut(), 2 << 20, 0, ptr::null_mut(), 0)
            }),
        ),
        (
            "A2 reserve: size 0",
            INVALID,
            Box::new(|| unsafe {
                let mut p = ptr::null_mut();
                aclrtReserveMemAddress(&mut p, 0, 0, ptr::null_mut(), 0)
            }),
        ),
        (
            "A3 reserve: flags 2",
            INVALID,
            Box::new(|| unsafe {
                let mut p = ptr::null_mut();
                aclrtReserveMemAddress(&mut p, 2 << 20, 0, ptr::null_mut(), 2)
            }),
        ),
        (
            "A4 release: NULL",
            INVALID,
            Box::new(|| aclrtReleaseMemAddress(ptr::null_mut())),
        ),
        (
            "A5 malloc: handle NULL",
            INVALID,
            Box::new(move || unsafe {
                aclrtMallocPhysical(ptr::null_mut(), mib2, &device(sys::ACL_HBM_MEM_HUGE), 0)
            }),
        ),
        (
            "A6 malloc: prop NULL",
            INVALID,
            Box::new(move || unsafe {
                let mut h = ptr::null_mut();
                aclrtMallocPhysical(&mut h, mib2, ptr::null(), 0)
            }),
        ),
        (
            "A7 malloc: size 0",
            INVALID,
            malloc_with(device(sys::ACL_HBM_MEM_HUGE), 0, 0),
        ),
        (
            "A8 malloc: flags 1",
            INVALID,
            malloc_with(device(sys::ACL_HBM_MEM_HUGE), mib2, 1),
        ),
    ];
    let mut p = device(sys::ACL_HBM_MEM_HUGE);
    p.handle_type = 100;
    v.push((
        "A9 malloc: handleType 100",
        INVALID,
        malloc_with(p, mib2, 0),
    ));
    let mut p = device(sys::ACL_HBM_MEM_HUGE);
    p.handle_type = sys::ACL_MEM_HANDLE_TYPE_POSIX;
    v.push((
        "A10 malloc: handleType POSIX",
        INVALID,
        malloc_with(p, mib2, 0),
    ));
    let mut p = device(sys::ACL_HBM_MEM_HUGE);
    p.allocation_type = 100;
    v.push((
        "A11 malloc: allocationType 100",
        INVALID,
        malloc_with(p, mib2, 0),
    ));
    v.push((
        "A12 malloc: location UNREGISTERED",
        INVALID,
        malloc_with(
            prop(
                sys::ACL_MEM_LOCATION_TYPE_UNREGISTERED,
                sys::ACL_HBM_MEM_HUGE,
            ),
            mib2,
            0,
        ),
    ));
    v.push((
        "A13 malloc: location MANAGED",
        INVALID,
        malloc_with(
            prop(sys::ACL_MEM_LOCATION_TYPE_MANAGED, sys::ACL_HBM_MEM_HUGE),
            mib2,
            0,
        ),
    ));
    for (row, attr) in [
        ("A14 malloc: DEVICE + DDR_MEM_HUGE", sys::ACL_DDR_MEM_HUGE),
        (
            "A15 malloc: DEVICE + DDR_MEM_NORMAL",
            sys::ACL_DDR_MEM_NORMAL,
        ),
        (
            "A16 malloc: DEVICE + DDR_MEM_P2P_HUGE",
            sys::ACL_DDR_MEM_P2P_HUGE,
        ),
        (
            "A17 malloc: DEVICE + DDR_MEM_P2P_NORMAL",
            sys::ACL_DDR_MEM_P2P_NORMAL,
        ),
        ("A18 malloc: DEVICE + DDR_MEM", sys::ACL_DDR_MEM),
        ("A19 malloc: DEVICE + HBM_MEM", sys::ACL_HBM_MEM),
        (
            "A20 malloc: DEVICE + HBM_MEM_P2P_HUGE",
            sys::ACL_HBM_MEM_P2P_HUGE,
        ),
        (
            "A21 malloc: DEVICE + HBM_MEM_P2P_NORMAL",
            sys::ACL_HBM_MEM_P2P_NORMAL,
        ),
        ("A23 malloc: DEVICE + 18", 18),
    ] {
        v.push((row, INVALID, malloc_with(device(attr), mib2, 0)));
    }
    v.push((
        "A22 malloc: DEVICE + HBM_MEM_P2P_HUGE1G, 1 GiB",
        INVALID,
        malloc_with(device(sys::ACL_HBM_MEM_P2P_HUGE1G), 1 << 30, 0),
    ));
    for (row, attr) in [
        ("A24 malloc: HOST + DDR_MEM", sys::ACL_DDR_MEM),
        (
            "A25 malloc: HOST + HBM_MEM_P2P_NORMAL",
            sys::ACL_HBM_MEM_P2P_NORMAL,
        ),
    ] {
        v.push((
            row,
            INVALID,
            malloc_with(prop(sys::ACL_MEM_LOCATION_TYPE_HOST, attr), mib2, 0),
        ));
    }
    v.push((
        "A26 free: handle NULL",
        INVALID,
        Box::new(|| aclrtFreePhysical(ptr::null_mut())),
    ));
    v.push((
        "A27 map: virPtr NULL",
        INVALID,
        Box::new(move || aclrtMapMem(ptr::null_mut(), mib2, 0, fake as sys::aclrtDrvMemHandle, 0)),
    ));
    v.push((
        "A28 map: handle NULL",
        INVALID,
        Box::new(move || aclrtMapMem(0x1000 as *mut c_void, mib2, 0, ptr::null_mut(), 0)),
    ));
    v.push((
        "A29 map: size 0",
        INVALID,
        Box::new(move || {
            aclrtMapMem(
                0x1000 as *mut c_void,
                0,
                0,
                fake as sys::aclrtDrvMemHandle,
                0,
            )
        }),
    ));
    v.push((
        "A30 map: flags 1",
        INVALID,
        Box::new(move || {
            aclrtMapMem(
                0x1000 as *mut c_void,
                mib2,
                0,
                fake as sys::aclrtDrvMemHandle,
                1,
            )
        }),
    ));
    v.push((
        "A31 unmap: NULL",
        INVALID,
        Box::new(|| aclrtUnmapMem(ptr::null_mut())),
    ));
    v.push((
        "A32 export: handle NULL",
        INVALID,
        Box::new(|| unsafe {
            let mut s = 0u64;
            aclrtMemExportToShareableHandle(ptr::null_mut(), 0, 0, &mut s)
        }),
    ));
    v.push((
        "A33 export: handleType 0xFFFFFFFF (handle 0x1)",
        INVALID,
        Box::new(move || unsafe {
            let mut s = 0u64;
            aclrtMemExportToShareableHandle(fake as sys::aclrtDrvMemHandle, 0xFFFF_FFFF, 0, &mut s)
        }),
    ));
    v.push((
        "A34 export: handleType POSIX",
        INVALID,
        Box::new(move || unsafe {
            let mut s = 0u64;
            aclrtMemExportToShareableHandle(
                fake as sys::aclrtDrvMemHandle,
                sys::ACL_MEM_HANDLE_TYPE_POSIX,
                0,
                &mut s,
            )
        }),
    ));
    v.push((
        "A35 export: out NULL",
        INVALID,
        Box::new(move || unsafe {
            aclrtMemExportToShareableHandle(fake as sys::aclrtDrvMemHandle, 0, 0, ptr::null_mut())
        }),
    ));
    v.push((
        "A36 import: handle out NULL",
        INVALID,
        Box::new(|| unsafe { aclrtMemImportFromShareableHandle(0x1234, 0, ptr::null_mut()) }),
    ));
    v.push((
        "A37 set pid: pid NULL, pidNum 1",
        INVALID,
        Box::new(|| unsafe { aclrtMemSetPidToShareableHandle(0, ptr::null_mut(), 1) }),
    ));
    v.push((
        "A38 set pid: pidNum 0",
        INVALID,
        Box::new(|| unsafe {
            let mut pid = 1i32;
            aclrtMemSetPidToShareableHandle(0, &mut pid, 0)
        }),
    ));
    v.push((
        "A39 granularity: prop NULL",
        INVALID,
        Box::new(|| unsafe {
            let mut g = 0usize;
            aclrtMemGetAllocationGranularity(ptr::null_mut(), 0, &mut g)
        }),
    ));
    v.push((
        "A40 granularity: out NULL",
        INVALID,
        Box::new(|| unsafe {
            let mut p = device(sys::ACL_HBM_MEM_HUGE);
            aclrtMemGetAllocationGranularity(&mut p, 0, ptr::null_mut())
        }),
    ));
    v.push((
        "A41 granularity: HBM_MEM_P2P_NORMAL, prop otherwise zero",
        INVALID,
        granularity_of(prop(0, sys::ACL_HBM_MEM_P2P_NORMAL)),
    ));
    for (row, attr) in [
        (
            "A42 granularity: DEVICE + DDR_MEM_HUGE",
            sys::ACL_DDR_MEM_HUGE,
        ),
        (
            "A43 granularity: DEVICE + DDR_MEM_NORMAL",
            sys::ACL_DDR_MEM_NORMAL,
        ),
        (
            "A44 granularity: DEVICE + DDR_MEM_P2P_HUGE",
            sys::ACL_DDR_MEM_P2P_HUGE,
        ),
        (
            "A45 granularity: DEVICE + DDR_MEM_P2P_NORMAL",
            sys::ACL_DDR_MEM_P2P_NORMAL,
        ),
        ("A46 granularity: DEVICE + 0", 0),
        ("A47 granularity: DEVICE + 1", 1),
        ("A48 granularity: DEVICE + 8", 8),
        ("A49 granularity: DEVICE + 9", 9),
        ("A50 granularity: DEVICE + 11", 11),
        ("A51 granularity: DEVICE + 18", 18),
    ] {
        v.push((row, INVALID, granularity_of(device(attr))));
    }
    v.push((
        "A52 mem info: free NULL",
        INVALID,
        Box::new(|| unsafe {
            let mut t = 0usize;
            aclrtGetMemInfo(sys::ACL_HBM_MEM, ptr::null_mut(), &mut t)
        }),
    ));
    v.push((
        "A53 mem info: total NULL",
        INVALID,
        Box::new(|| unsafe {
            let mut f = 0usize;
            aclrtGetMemInfo(sys::ACL_HBM_MEM, &mut f, ptr::null_mut())
        }),
    ));
    v.push((
        "A54 memcpy: count 0, NULLs, HOST_TO_HOST",
        0,
        Box::new(|| unsafe {
            aclrtMemcpy(
                ptr::null_mut(),
                0,
                ptr::null(),
                0,
                sys::ACL_MEMCPY_HOST_TO_HOST,
            )
        }),
    ));
    v.push((
        "A55 memcpy: count 0, NULLs, kind 0x7FFFFFFF",
        0,
        Box::new(|| unsafe { aclrtMemcpy(ptr::null_mut(), 0, ptr::null(), 0, 0x7FFF_FFFF) }),
    ));
    v.push((
        "A56 memcpy: count 0, destMax 1, NULLs, kind 0x7FFFFFFF",
        0,
        Box::new(|| unsafe { aclrtMemcpy(ptr::null_mut(), 1, ptr::null(), 0, 0x7FFF_FFFF) }),
    ));
    v.push((
        "A57 memcpy: dst NULL, count 1",
        INVALID,
        Box::new(|| unsafe {
            let src = [0u8; 4];
            aclrtMemcpy(ptr::null_mut(), 4, src.as_ptr().cast(), 1, 0)
        }),
    ));
    v.push((
        "A58 memcpy: src NULL, count 1",
        INVALID,
        Box::new(|| unsafe {
            let mut dst = [0u8; 4];
            aclrtMemcpy(dst.as_mut_ptr().cast(), 4, ptr::null(), 1, 0)
        }),
    ));
    v.push((
        "A59 memcpy: kind 0x7FFFFFFF, count 1",
        INVALID,
        Box::new(|| unsafe {
            let (mut dst, src) = ([0u8; 4], [0u8; 4]);
            aclrtMemcpy(
                dst.as_mut_ptr().cast(),
                4,
                src.as_ptr().cast(),
                1,
                0x7FFF_FFFF,
            )
        }),
    ));
    v.push((
        "A60 memcpy: kind INNER_DEVICE_TO_DEVICE, count 1",
        INVALID,
        Box::new(|| unsafe {
            let (mut dst, src) = ([0u8; 4], [0u8; 4]);
            aclrtMemcpy(dst.as_mut_ptr().cast(), 4, src.as_ptr().cast(), 1, 6)
        }),
    ));
    let rt_invalid = AclError::RT_PARAM_INVALID.code();
    v.push((
        "R1 memcpy: count 2 > destMax 1",
        rt_invalid,
        Box::new(|| unsafe {
            let (mut dst, src) = ([0u8; 4], [0u8; 4]);
            aclrtMemcpy(dst.as_mut_ptr().cast(), 1, src.as_ptr().cast(), 2, 0)
        }),
    ));
    v.push((
        "R2 memcpy: destMax 0, count 1",
        rt_invalid,
        Box::new(|| unsafe {
            let (mut dst, src) = ([0u8; 4], [0u8; 4]);
            aclrtMemcpy(dst.as_mut_ptr().cast(), 0, src.as_ptr().cast(), 1, 0)
        }),
    ));
    let bad_type = AclError::RT_INVALID_MEMORY_TYPE.code();
    v.push((
        "R4 mem info: attr 18",
        bad_type,
        Box::new(|| unsafe {
            let (mut f, mut t) = (0usize, 0usize);
            aclrtGetMemInfo(18, &mut f, &mut t)
        }),
    ));
    v.push((
        "R4 mem info: attr -1",
        bad_type,
        Box::new(|| unsafe {
            let (mut f, mut t) = (0usize, 0usize);
            aclrtGetMemInfo(u32::MAX, &mut f, &mut t)
        }),
    ));
    v.push((
        "R5 export: flags 2",
        rt_invalid,
        Box::new(move || unsafe {
            let mut s = 0u64;
            aclrtMemExportToShareableHandle(fake as sys::aclrtDrvMemHandle, 0, 2, &mut s)
        }),
    ));
    let bad_device = AclError::RT_INVALID_DEVICEID.code();
    let mut p = device(sys::ACL_HBM_MEM_HUGE);
    p.location.id = 1000;
    v.push((
        "R6 malloc: DEVICE id 1000",
        bad_device,
        malloc_with(p, mib2, 0),
    ));
    v.push((
        "R7 granularity: DEVICE id 1000",
        bad_device,
        granularity_of(p),
    ));
    for (row, dev) in [
        ("R8 import: deviceId 1000", 1000),
        ("R8 import: deviceId -1", -1),
    ] {
        v.push((
            row,
            bad_device,
            Box::new(move || unsafe {
                let mut h = ptr::null_mut();
                aclrtMemImportFromShareableHandle(0x1234, dev, &mut h)
            }),
        ));
    }
    v
}

#[test]
fn every_driver_independent_row_holds_with_and_without_a_device() {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe {
        std::env::set_var(
            "ACLMEM_EMU_MACHINE",
            format!("codes-{}", std::process::id()),
        );
        std::env::set_var("ACLMEM_EMU_DEVICES", "2");
        std::env::set_var("ACLMEM_EMU_HBM", "1GiB");
    }
    assert_eq!(aclInit(ptr::null()), 0);
    let cases = cases();
    assert_eq!(
        cases.len(),
        69,
        "A1-A60 (A14-A17, A42-A45 one case each) and R1, R2, R4 (2), R5-R7, R8 (2)"
    );
    let mut failures = Vec::new();
    for with_device in [false, true] {
        // A fresh thread has no device; `aclrtSetDevice` gives it one.
        std::thread::scope(|s| {
            s.spawn(|| {
                if with_device {
                    assert_eq!(aclrtSetDevice(1), 0);
                }
                for (row, want, call) in &cases {
                    let got = call();
                    if got != *want {
                        failures.push(format!(
                            "{row} (device set: {with_device}): {got}, expected {want}"
                        ));
                    }
                }
            });
        });
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(aclFinalize(), 0);
}
