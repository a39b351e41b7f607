//! The exported C ABI, called in-process: configuration, the VMM flow,
//! plain memory, copies, contexts and streams, introspection, and NULL or
//! garbage pointers. One test, because the library's state is process-wide.

use std::ffi::{CStr, c_void};
use std::ptr;

use aclmem_core::{AclError, MIB, MemAttr, RawMemLocation, RawPhysicalMemProp};
use aclmem_emu::errors::Situation;
use aclmem_emu_capi::*;
use aclmem_sys as sys;

const INVALID: i32 = 100000;

/// The C code of an error-table entry.
fn code(s: Situation) -> i32 {
    s.code().code()
}

fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

fn unset(k: &str) {
    // SAFETY: as above.
    unsafe { std::env::remove_var(k) };
}

fn hbm(device: u32) -> RawPhysicalMemProp {
    RawPhysicalMemProp {
        mem_attr: sys::ACL_HBM_MEM_HUGE,
        location: RawMemLocation {
            id: device,
            type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        ..RawPhysicalMemProp::default()
    }
}

#[test]
fn c_abi() {
    // Own machine, no messages on stderr from the negative cases.
    set(
        "ACLMEM_EMU_MACHINE",
        &format!("capi-{}", std::process::id()),
    );
    set("ACLMEM_EMU_QUIET", "1");
    // SAFETY: every call follows the C prototypes; out pointers are live
    // locals, deliberately NULL, or deliberately garbage, which the library
    // must answer with a code; raw device accesses stay inside ranges
    // mapped just before.
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        before_init();
        configuration_errors();
        set("ACLMEM_EMU_SOC", "Ascend910_9382");
        set("ACLMEM_EMU_DEVICES", "2");
        set("ACLMEM_EMU_HBM", "256MiB");
        set("ACLMEM_EMU_RUN_MODE", "host");
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(aclInit(ptr::null()), AclError::REPEAT_INITIALIZE.code());
        identity();
        devices_and_contexts();
        vmm_flow();
        plain_memory_and_copies();
        introspection();
        garbage_pointers();
        streams();
        finalize_and_again();
    }
}

/// Before `aclInit`, the runtime answers the device count, the SoC name and
/// the CANN version (torch_npu asks them first), from the environment's
/// machine; memory calls answer 100001; a bad environment is 100000.
unsafe fn before_init() {
    let mut n = 0u32;
    let mut dev = -1;
    let mut version = aclmem_sys::aclCANNPackageVersion::default();
    set("ACLMEM_EMU_DEVICES", "3");
    set("ACLMEM_EMU_SOC", "Ascend910B4");
    set("ACLMEM_EMU_CANN", "8.3");
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        assert_eq!(aclrtGetDeviceCount(&mut n), 0);
        assert_eq!(n, 3);
        assert_eq!(
            CStr::from_ptr(aclrtGetSocName()).to_str(),
            Ok("Ascend910B4")
        );
        assert_eq!(
            aclsysGetCANNVersion(aclmem_sys::ACL_PKG_NAME_CANN, &mut version),
            0
        );
        assert_eq!(
            CStr::from_ptr(version.version.as_ptr()).to_str(),
            Ok("8.3.RC1")
        );
        // No thread has a device before aclInit: the runtime's 107002.
        assert_eq!(aclrtGetDevice(&mut dev), AclError::RT_CONTEXT_NULL.code());
        set("ACLMEM_EMU_DEVICES", "eight");
        assert_eq!(aclrtGetDeviceCount(&mut n), AclError::INVALID_PARAM.code());
        assert!(aclrtGetSocName().is_null());
    }
    for k in ["ACLMEM_EMU_DEVICES", "ACLMEM_EMU_SOC", "ACLMEM_EMU_CANN"] {
        // SAFETY: this test binary is one test function on one thread.
        unsafe { std::env::remove_var(k) };
    }
    assert_eq!(aclFinalize(), AclError::REPEAT_FINALIZE.code());
}

unsafe fn configuration_errors() {
    for (k, bad) in [
        ("ACLMEM_EMU_SOC", "Ascend999"),
        ("ACLMEM_EMU_DEVICES", "0"),
        ("ACLMEM_EMU_DEVICES", "eight"),
        ("ACLMEM_EMU_HBM", "lots"),
        ("ACLMEM_EMU_HBM", "0"),
        ("ACLMEM_EMU_RUN_MODE", "sideways"),
        ("ACLMEM_EMU_CANN", "7.0"),
        ("ACLMEM_EMU_MACHINE", "../etc"),
        ("ACLMEM_EMU_UNSUPPORTED", "sometimes"),
        ("ACLMEM_EMU_OPS", "dry"),
    ] {
        let keep = std::env::var(k).ok();
        set(k, bad);
        assert_eq!(aclInit(ptr::null()), INVALID, "{k}={bad}");
        match keep {
            Some(v) => set(k, &v),
            None => unset(k),
        }
    }
}

unsafe fn identity() {
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        assert_eq!(
            CStr::from_ptr(aclrtGetSocName()).to_str(),
            Ok("Ascend910_9382")
        );
        let mut n = 0u32;
        assert_eq!(aclrtGetDeviceCount(&mut n), 0);
        assert_eq!(n, 2);
        let mut mode = 9u32;
        assert_eq!(aclrtGetRunMode(&mut mode), 0);
        assert_eq!(mode, sys::ACL_HOST);
        let (mut a, mut b, mut c) = (0, 0, 0);
        assert_eq!(aclrtGetVersion(&mut a, &mut b, &mut c), 0);
        assert_eq!((a, b, c), (1, 17, 0));
        let mut v = sys::aclCANNPackageVersion::default();
        assert_eq!(aclsysGetCANNVersion(sys::ACL_PKG_NAME_CANN, &mut v), 0);
        assert_eq!(CStr::from_ptr(v.version.as_ptr()).to_str(), Ok("9.0.0"));
        assert_eq!(CStr::from_ptr(v.majorVersion.as_ptr()).to_str(), Ok("9"));
        assert_eq!(
            aclsysGetCANNVersion(sys::ACL_PKG_NAME_HCCL, &mut v),
            AclError::INVALID_FILE.code()
        );
        assert_eq!(aclsysGetCANNVersion(99, &mut v), INVALID);
        let mut pid = 0;
        assert_eq!(aclrtDeviceGetBareTgid(&mut pid), 0);
        assert_eq!(pid, std::process::id() as i32);
    }
}

unsafe fn devices_and_contexts() {
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        let mut dev = -1;
        let mut ctx: sys::aclrtContext = ptr::null_mut();
        assert_eq!(aclrtGetDevice(&mut dev), AclError::RT_CONTEXT_NULL.code());
        assert_eq!(
            aclrtGetCurrentContext(&mut ctx),
            AclError::RT_CONTEXT_NULL.code()
        );
        assert_eq!(aclrtSetDevice(2), AclError::RT_INVALID_DEVICEID.code());
        assert_eq!(aclrtSetDevice(-1), AclError::RT_INVALID_DEVICEID.code());
        assert_eq!(aclrtSetDevice(1), 0);
        assert_eq!(aclrtGetDevice(&mut dev), 0);
        assert_eq!(dev, 1);
        // The default context of device 1, then a context of device 0.
        assert_eq!(aclrtGetCurrentContext(&mut ctx), 0);
        let default1 = ctx;
        let mut made: sys::aclrtContext = ptr::null_mut();
        assert_eq!(aclrtCreateContext(&mut made, 0), 0);
        assert_eq!(aclrtGetDevice(&mut dev), 0);
        assert_eq!(dev, 0, "a new context is current");
        assert_eq!(aclrtGetCurrentContext(&mut ctx), 0);
        assert_eq!(ctx, made);
        assert_eq!(aclrtSetCurrentContext(default1), 0);
        assert_eq!(aclrtGetDevice(&mut dev), 0);
        assert_eq!(dev, 1, "switching contexts switches the device");
        assert_eq!(
            aclrtDestroyContext(default1),
            code(Situation::BadContextOrStream)
        );
        assert_eq!(aclrtDestroyContext(made), 0);
        assert_eq!(
            aclrtDestroyContext(made),
            code(Situation::BadContextOrStream)
        );
        assert_eq!(
            aclrtSetCurrentContext(made),
            code(Situation::BadContextOrStream)
        );
        assert_eq!(
            aclrtCreateContext(&mut made, 5),
            AclError::RT_INVALID_DEVICEID.code()
        );
        assert_eq!(aclrtSynchronizeDevice(), 0);
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(3000), 0);
        assert_eq!(aclrtSynchronizeDeviceWithTimeout(-1), 0);
        assert_eq!(
            aclrtSynchronizeDeviceWithTimeout(-2),
            AclError::RT_PARAM_INVALID.code()
        );
        let mut can = 0;
        assert_eq!(aclrtDeviceCanAccessPeer(&mut can, 0, 1), 0);
        assert_eq!(can, 1);
        assert_eq!(aclrtDeviceCanAccessPeer(&mut can, 1, 1), INVALID);
        assert_eq!(aclrtDeviceEnablePeerAccess(0, 0), 0);
        assert_eq!(
            aclrtDeviceEnablePeerAccess(0, 1),
            AclError::FEATURE_UNSUPPORTED.code()
        );
        assert_eq!(aclrtDeviceEnablePeerAccess(1, 0), INVALID);
        assert_eq!(aclrtDeviceDisablePeerAccess(0), 0);
    }
}

unsafe fn vmm_flow() {
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        let prop = hbm(1);
        let mut g = 0usize;
        let mut p2 = prop;
        assert_eq!(aclrtMemGetAllocationGranularity(&mut p2, 0, &mut g), 0);
        assert_eq!(g, 2 * MIB);
        assert_eq!(
            aclrtMemGetAllocationGranularity(&mut p2, 0xFFFF, &mut g),
            AclError::RT_PARAM_INVALID.code()
        );
        let (mut free, mut total) = (0usize, 0usize);
        assert_eq!(
            aclrtGetMemInfo(MemAttr::HbmMem.raw(), &mut free, &mut total),
            0
        );
        assert_eq!((free, total), (256 * MIB, 256 * MIB));
        let mut handle: sys::aclrtDrvMemHandle = ptr::null_mut();
        assert_eq!(aclrtMallocPhysical(&mut handle, 2 * MIB, &prop, 0), 0);
        assert!(!handle.is_null());
        assert_eq!(
            aclrtGetMemInfo(MemAttr::HbmMem.raw(), &mut free, &mut total),
            0
        );
        assert_eq!(free, 254 * MIB);
        let mut va = ptr::null_mut();
        assert_eq!(
            aclrtReserveMemAddress(&mut va, 4 * MIB, 0, ptr::null_mut(), 0),
            0
        );
        assert_eq!(aclrtMapMem(va, 2 * MIB, 0, handle, 0), 0);
        assert_eq!(aclrtMapMem(va.byte_add(2 * MIB), 2 * MIB, 0, handle, 0), 0);
        va.cast::<u64>().write(0xfeed_f00d);
        assert_eq!(va.byte_add(2 * MIB).cast::<u64>().read(), 0xfeed_f00d);
        let mut sh = 0u64;
        assert_eq!(aclrtMemExportToShareableHandle(handle, 0, 0, &mut sh), 0);
        assert_eq!(
            aclrtMemExportToShareableHandle(handle, 0, 0, &mut sh),
            code(Situation::ExportTwice)
        );
        let mut pids = [1234i32, 1234];
        assert_eq!(aclrtMemSetPidToShareableHandle(sh, pids.as_mut_ptr(), 2), 0);
        let mut zero = [0i32];
        assert_eq!(
            aclrtMemSetPidToShareableHandle(sh, zero.as_mut_ptr(), 1),
            code(Situation::BadPid)
        );
        let mut imported = ptr::null_mut();
        assert_eq!(
            aclrtMemImportFromShareableHandle(sh, 0, &mut imported),
            code(Situation::ImportOwnExport)
        );
        assert_eq!(
            aclrtReleaseMemAddress(va),
            code(Situation::ReleaseWhileMapped)
        );
        // Introspection of a mapping.
        let (mut base, mut size) = (ptr::null_mut(), 0usize);
        assert_eq!(
            aclrtMemGetAddressRange(va.byte_add(100), &mut base, &mut size),
            0
        );
        assert_eq!((base, size), (va, 2 * MIB));
        let mut retained = ptr::null_mut();
        assert_eq!(aclrtMemRetainAllocationHandle(va, &mut retained), 0);
        assert_ne!(retained, handle);
        assert_eq!(
            aclrtMemRetainAllocationHandle(va.byte_add(4096), &mut retained),
            code(Situation::NotAMappingStart)
        );
        let mut props = RawPhysicalMemProp::default();
        assert_eq!(
            aclrtMemGetAllocationPropertiesFromHandle(handle, &mut props),
            0
        );
        assert_eq!(props, prop);
        let mut loc = RawMemLocation::default();
        let mut flag = 0u64;
        assert_eq!(aclrtMemGetAccess(va, &mut loc, &mut flag), 0);
        assert_eq!((loc.type_, loc.id, flag), (1, 1, 3));
        let mut desc = sys::aclrtMemAccessDesc {
            flags: sys::ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
            location: RawMemLocation { id: 1, type_: 1 },
            rsv: [0; 12],
        };
        assert_eq!(aclrtMemSetAccess(va, 2 * MIB, &mut desc, 1), 0);
        assert_eq!(
            aclrtMemSetAccess(va, MIB, &mut desc, 1),
            code(Situation::NotAMappingStart)
        );
        desc.flags = sys::ACL_RT_MEM_ACCESS_FLAGS_READ;
        assert_eq!(
            aclrtMemSetAccess(va, 2 * MIB, &mut desc, 1),
            code(Situation::BadAccessDesc)
        );
        assert_eq!(
            aclrtMemSetAccess(va, 2 * MIB, ptr::null_mut(), 1),
            AclError::RT_PARAM_INVALID.code()
        );
        assert_eq!(
            aclrtMemSetAccess(va, 2 * MIB, &mut desc, 1 << 40),
            AclError::RT_PARAM_INVALID.code()
        );
        // Teardown; the retained handle keeps the memory after the first
        // free.
        assert_eq!(aclrtUnmapMem(va), 0);
        assert_eq!(aclrtUnmapMem(va), code(Situation::NotMapped));
        assert_eq!(aclrtUnmapMem(va.byte_add(2 * MIB)), 0);
        assert_eq!(aclrtReleaseMemAddress(va), 0);
        assert_eq!(aclrtFreePhysical(handle), 0);
        assert_eq!(aclrtFreePhysical(handle), code(Situation::StaleHandle));
        assert_eq!(aclrtFreePhysical(retained), 0);
        assert_eq!(
            aclrtGetMemInfo(MemAttr::HbmMem.raw(), &mut free, &mut total),
            0
        );
        assert_eq!(free, 256 * MIB, "everything returned");
    }
}

unsafe fn plain_memory_and_copies() {
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        let mut dev: *mut c_void = ptr::null_mut();
        assert_eq!(
            aclrtMalloc(&mut dev, 3 * MIB, sys::ACL_MEM_MALLOC_HUGE_FIRST),
            0
        );
        let (mut free, mut total) = (0usize, 0usize);
        assert_eq!(
            aclrtGetMemInfo(MemAttr::HbmMem.raw(), &mut free, &mut total),
            0
        );
        assert_eq!(free, 256 * MIB - 4 * MIB, "3 MiB + 32 bytes on 2 MiB pages");
        let mut host: *mut c_void = ptr::null_mut();
        assert_eq!(aclrtMallocHost(&mut host, 4096), 0);
        let mut small: *mut c_void = ptr::null_mut();
        assert_eq!(
            aclrtMallocAlign32(&mut small, 100, sys::ACL_MEM_MALLOC_NORMAL_ONLY),
            0
        );
        // host -> device -> device -> host, and host -> host.
        let data: Vec<u8> = (0..=255u8).cycle().take(3 * MIB).collect();
        assert_eq!(
            aclrtMemcpy(
                dev,
                3 * MIB,
                data.as_ptr().cast(),
                3 * MIB,
                sys::ACL_MEMCPY_HOST_TO_DEVICE
            ),
            0
        );
        assert_eq!(
            aclrtMemcpy(
                small,
                100,
                dev.byte_add(7).cast_const(),
                100,
                sys::ACL_MEMCPY_DEVICE_TO_DEVICE
            ),
            0
        );
        assert_eq!(
            aclrtMemcpy(host, 4096, small.cast_const(), 100, sys::ACL_MEMCPY_DEFAULT),
            0
        );
        let mut back = vec![0u8; 100];
        assert_eq!(
            aclrtMemcpy(
                back.as_mut_ptr().cast(),
                100,
                host.cast_const(),
                100,
                sys::ACL_MEMCPY_HOST_TO_HOST
            ),
            0
        );
        assert_eq!(&back[..], &data[7..107]);
        // The kind must match the addresses.
        assert_eq!(
            aclrtMemcpy(
                back.as_mut_ptr().cast(),
                100,
                dev.cast_const(),
                100,
                sys::ACL_MEMCPY_HOST_TO_DEVICE
            ),
            code(Situation::CopyKindMismatch)
        );
        // Past the end of the allocation: refused, not a crash.
        assert_eq!(
            aclrtMemcpy(
                back.as_mut_ptr().cast(),
                100,
                dev.byte_add(4 * MIB - 50).cast_const(),
                100,
                sys::ACL_MEMCPY_DEVICE_TO_HOST
            ),
            code(Situation::BadCopyAddress)
        );
        // A host address nobody may read.
        assert_eq!(
            aclrtMemcpy(
                dev,
                100,
                0x10 as *const c_void,
                100,
                sys::ACL_MEMCPY_HOST_TO_DEVICE
            ),
            code(Situation::BadCopyAddress)
        );
        assert_eq!(aclrtMemset(dev, 3 * MIB, 0xAB, 16), 0);
        assert_eq!(
            aclrtMemcpy(
                back.as_mut_ptr().cast(),
                100,
                dev.cast_const(),
                16,
                sys::ACL_MEMCPY_DEVICE_TO_HOST
            ),
            0
        );
        assert!(back[..16].iter().all(|&b| b == 0xAB));
        assert_eq!(aclrtMemset(host, 4096, 0x5A, 4096), 0);
        assert_eq!(*host.cast::<u8>().add(4095), 0x5A);
        assert_eq!(
            aclrtMemset(back.as_mut_ptr().cast(), 100, 0, 10),
            code(Situation::BadCopyAddress),
            "not ACL memory"
        );
        assert_eq!(aclrtMemset(dev, 8, 0, 16), code(Situation::MemsetOverflow));
        // Free: the right call for each kind only.
        assert_eq!(aclrtFreePhysical(dev), code(Situation::StaleHandle));
        assert_eq!(aclrtFreeHost(dev), code(Situation::NotAllocated));
        assert_eq!(aclrtFree(host), code(Situation::NotAllocated));
        assert_eq!(aclrtFree(dev.byte_add(64)), code(Situation::NotAllocated));
        assert_eq!(aclrtFree(dev), 0);
        assert_eq!(aclrtFree(dev), code(Situation::NotAllocated));
        assert_eq!(aclrtFree(small), 0);
        assert_eq!(aclrtFreeHost(host), 0);
        assert_eq!(
            aclrtGetMemInfo(MemAttr::HbmMem.raw(), &mut free, &mut total),
            0
        );
        assert_eq!(free, 256 * MIB);
    }
}

unsafe fn introspection() {
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        let mut attrs = sys::aclrtPtrAttributes::default();
        let local = 0u64;
        assert_eq!(
            aclrtPointerGetAttributes((&local as *const u64).cast(), &mut attrs),
            0
        );
        assert_eq!(
            attrs.location.type_,
            sys::ACL_MEM_LOCATION_TYPE_UNREGISTERED
        );
        let mut dev: *mut c_void = ptr::null_mut();
        assert_eq!(aclrtMalloc(&mut dev, 8 * MIB, 0), 0);
        assert_eq!(
            aclrtPointerGetAttributes(dev.byte_add(5).cast_const(), &mut attrs),
            0
        );
        assert_eq!(
            (attrs.location.type_, attrs.location.id, attrs.pageSize),
            (1, 1, 2 * MIB as u32)
        );
        let mut host: *mut c_void = ptr::null_mut();
        assert_eq!(aclrtMallocHost(&mut host, 100), 0);
        assert_eq!(aclrtPointerGetAttributes(host.cast_const(), &mut attrs), 0);
        assert_eq!(attrs.location.type_, sys::ACL_MEM_LOCATION_TYPE_HOST);
        let mut size = 0usize;
        assert_eq!(
            aclrtMemGetAddressRange(host.byte_add(10), ptr::null_mut(), &mut size),
            0
        );
        assert_eq!(size, 4096);
        assert_eq!(
            aclrtMemGetAddressRange(host, ptr::null_mut(), ptr::null_mut()),
            AclError::RT_PARAM_INVALID.code()
        );
        assert_eq!(
            aclrtMemGetAddressRange(
                (&local as *const u64).cast_mut().cast(),
                ptr::null_mut(),
                &mut size
            ),
            code(Situation::UnknownAddress)
        );
        assert_eq!(aclrtFree(dev), 0);
        assert_eq!(aclrtFreeHost(host), 0);
    }
}

unsafe fn garbage_pointers() {
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        let garbage = 0x18 as *mut c_void;
        let prop = hbm(1);
        assert_eq!(
            aclrtMallocPhysical(garbage.cast(), 2 * MIB, &prop, 0),
            INVALID
        );
        assert_eq!(
            aclrtMallocPhysical(&mut ptr::null_mut(), 2 * MIB, garbage.cast(), 0),
            INVALID
        );
        assert_eq!(
            aclrtReserveMemAddress(garbage.cast(), 2 * MIB, 0, ptr::null_mut(), 0),
            INVALID
        );
        let mut n = 0u32;
        assert_eq!(aclrtGetDeviceCount(garbage.cast()), INVALID);
        assert_eq!(aclrtGetDeviceCount(&mut n), 0);
        // A huge pid count is refused before anything is read.
        let mut pid = 5i32;
        assert_eq!(
            aclrtMemSetPidToShareableHandle(1, &mut pid, usize::MAX),
            code(Situation::WhitelistFull)
        );
        assert_eq!(
            aclrtMemSetPidToShareableHandle(1, garbage.cast(), 4),
            INVALID
        );
        // Nothing leaked by the refused calls above.
        let (mut free, mut total) = (0usize, 0usize);
        assert_eq!(
            aclrtGetMemInfo(MemAttr::HbmMem.raw(), &mut free, &mut total),
            0
        );
        assert_eq!(free, 256 * MIB);
    }
}

unsafe fn streams() {
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        let mut s: sys::aclrtStream = ptr::null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(
            aclrtSynchronizeStream(ptr::null_mut()),
            0,
            "the default stream"
        );
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 10), 0);
        let mut host: *mut c_void = ptr::null_mut();
        assert_eq!(aclrtMallocHost(&mut host, 64), 0);
        let mut dev: *mut c_void = ptr::null_mut();
        assert_eq!(aclrtMalloc(&mut dev, 64, 0), 0);
        let data = [7u8; 64];
        assert_eq!(aclrtMemcpyAsync(dev, 64, data.as_ptr().cast(), 64, 1, s), 0);
        assert_eq!(aclrtMemcpyAsync(host, 64, dev.cast_const(), 64, 2, s), 0);
        assert_eq!(*host.cast::<u8>().add(63), 7, "streams execute at once");
        assert_eq!(aclrtDestroyStream(s), 0);
        assert_eq!(aclrtDestroyStream(s), code(Situation::BadContextOrStream));
        assert_eq!(
            aclrtMemcpyAsync(host, 64, dev.cast_const(), 64, 2, s),
            code(Situation::BadContextOrStream)
        );
        assert_eq!(aclrtDestroyStreamForce(ptr::null_mut()), INVALID);
        // A reset of the device drops its streams.
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtResetDeviceForce(1), 0);
        assert_eq!(aclrtSetDevice(1), 0);
        assert_eq!(
            aclrtSynchronizeStream(s),
            code(Situation::BadContextOrStream)
        );
        assert_eq!(aclrtFree(dev), 0);
        assert_eq!(aclrtFreeHost(host), 0);
    }
}

unsafe fn finalize_and_again() {
    // SAFETY: as in `c_abi` above: C prototypes, with live locals or
    // deliberately bad pointers; device accesses inside mapped ranges.
    unsafe {
        let mut dev = -1;
        assert_eq!(aclrtResetDevice(1), 0);
        let mut handle = ptr::null_mut();
        assert_eq!(
            aclrtMallocPhysical(&mut handle, 2 * MIB, &hbm(0), 0),
            AclError::RT_CONTEXT_NULL.code()
        );
        // A handle from before aclFinalize is not live afterwards.
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclrtMallocPhysical(&mut handle, 2 * MIB, &hbm(0), 0), 0);
        assert_eq!(aclFinalize(), 0);
        // No thread has a device before aclInit: the runtime's 107002.
        assert_eq!(aclrtGetDevice(&mut dev), AclError::RT_CONTEXT_NULL.code());
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(aclrtGetDevice(&mut dev), AclError::RT_CONTEXT_NULL.code());
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclrtFreePhysical(handle), code(Situation::StaleHandle));
        let (mut free, mut total) = (0usize, 0usize);
        assert_eq!(
            aclrtGetMemInfo(MemAttr::HbmMem.raw(), &mut free, &mut total),
            0
        );
        assert_eq!(
            free,
            256 * MIB,
            "the finalized process's memory was returned"
        );
        assert_eq!(aclFinalize(), 0);
    }
}
