//! The exported C ABI, called in-process: prototypes, NULL handling,
//! configuration. One test, because the library's state is process-wide.

use std::ffi::CStr;
use std::ptr;

use aclmem_core::{AclError, MIB, MemAttr, RawPhysicalMemProp};
use aclmem_driver::sys;
use aclmem_emu_capi::*;

const INVALID: i32 = 100000;

fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

#[test]
fn c_abi() {
    // Every export has exactly the prototype the driver declares.
    let _: sys::aclInit_t = aclInit;
    let _: sys::aclFinalize_t = aclFinalize;
    let _: sys::aclrtSetDevice_t = aclrtSetDevice;
    let _: sys::aclrtResetDevice_t = aclrtResetDevice;
    let _: sys::aclrtGetDevice_t = aclrtGetDevice;
    let _: sys::aclrtGetDeviceCount_t = aclrtGetDeviceCount;
    let _: sys::aclrtGetSocName_t = aclrtGetSocName;
    let _: sys::aclrtGetRunMode_t = aclrtGetRunMode;
    let _: sys::aclrtGetMemInfo_t = aclrtGetMemInfo;
    let _: sys::aclrtMallocPhysical_t = aclrtMallocPhysical;
    let _: sys::aclrtFreePhysical_t = aclrtFreePhysical;
    let _: sys::aclrtMemGetAllocationGranularity_t = aclrtMemGetAllocationGranularity;
    let _: sys::aclrtReserveMemAddress_t = aclrtReserveMemAddress;
    let _: sys::aclrtReleaseMemAddress_t = aclrtReleaseMemAddress;
    let _: sys::aclrtMapMem_t = aclrtMapMem;
    let _: sys::aclrtUnmapMem_t = aclrtUnmapMem;
    let _: sys::aclrtMemExportToShareableHandle_t = aclrtMemExportToShareableHandle;
    let _: sys::aclrtMemSetPidToShareableHandle_t = aclrtMemSetPidToShareableHandle;
    let _: sys::aclrtMemImportFromShareableHandle_t = aclrtMemImportFromShareableHandle;

    // SAFETY: every call follows the C prototypes; out pointers are live
    // locals or deliberately NULL, which the library must reject with 100000;
    // the raw reads and writes stay inside ranges mapped just before.
    unsafe {
        // Before aclInit.
        let mut n = 0u32;
        assert_eq!(aclrtGetDeviceCount(&mut n), AclError::UNINITIALIZE.code());
        assert!(aclrtGetSocName().is_null());
        assert_eq!(aclFinalize(), AclError::REPEAT_FINALIZE.code());

        // Bad configuration: aclInit fails with 100000, for each variable.
        for (k, bad) in [
            ("ACLMEM_EMU_SOC", "Ascend999"),
            ("ACLMEM_EMU_DEVICES", "0"),
            ("ACLMEM_EMU_DEVICES", "eight"),
            ("ACLMEM_EMU_HBM", "lots"),
            ("ACLMEM_EMU_HBM", "0"),
            ("ACLMEM_EMU_RUN_MODE", "sideways"),
        ] {
            set(k, bad);
            assert_eq!(aclInit(ptr::null()), INVALID, "{k}={bad}");
            // SAFETY: as above.
            std::env::remove_var(k);
        }

        set("ACLMEM_EMU_SOC", "Ascend910_9382");
        set("ACLMEM_EMU_DEVICES", "2");
        set("ACLMEM_EMU_HBM", "256MiB");
        set("ACLMEM_EMU_RUN_MODE", "host");
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(aclInit(ptr::null()), AclError::REPEAT_INITIALIZE.code());
        assert_eq!(
            CStr::from_ptr(aclrtGetSocName()).to_str(),
            Ok("Ascend910_9382")
        );
        assert_eq!(aclrtGetDeviceCount(&mut n), 0);
        assert_eq!(n, 2);
        let mut mode = 9u32;
        assert_eq!(aclrtGetRunMode(&mut mode), 0);
        assert_eq!(mode, sys::ACL_HOST);

        // No device on this thread yet.
        let mut handle: sys::aclrtDrvMemHandle = ptr::null_mut();
        let prop = RawPhysicalMemProp {
            mem_attr: sys::ACL_HBM_MEM_HUGE,
            location: aclmem_core::RawMemLocation {
                id: 0,
                type_: sys::ACL_MEM_LOCATION_TYPE_DEVICE,
            },
            ..RawPhysicalMemProp::default()
        };
        assert_eq!(
            aclrtMallocPhysical(&mut handle, 2 * MIB, &prop, 0),
            AclError::RT_CONTEXT_NULL.code()
        );
        let mut dev = -1;
        assert_eq!(aclrtGetDevice(&mut dev), AclError::RT_CONTEXT_NULL.code());
        assert_eq!(aclrtSetDevice(2), AclError::RT_INVALID_DEVICEID.code());
        assert_eq!(aclrtSetDevice(-1), AclError::RT_INVALID_DEVICEID.code());
        assert_eq!(aclrtSetDevice(1), 0);
        assert_eq!(aclrtGetDevice(&mut dev), 0);
        assert_eq!(dev, 1);

        // NULL pointers are 100000, never a crash.
        assert_eq!(aclrtGetDevice(ptr::null_mut()), INVALID);
        assert_eq!(aclrtGetDeviceCount(ptr::null_mut()), INVALID);
        assert_eq!(aclrtGetRunMode(ptr::null_mut()), INVALID);
        assert_eq!(
            aclrtGetMemInfo(sys::ACL_HBM_MEM, ptr::null_mut(), ptr::null_mut()),
            INVALID
        );
        assert_eq!(
            aclrtMallocPhysical(ptr::null_mut(), 2 * MIB, &prop, 0),
            INVALID
        );
        assert_eq!(
            aclrtMallocPhysical(&mut handle, 2 * MIB, ptr::null(), 0),
            INVALID
        );
        assert_eq!(aclrtFreePhysical(ptr::null_mut()), INVALID);
        let mut g = 0usize;
        let mut p2 = prop;
        assert_eq!(
            aclrtMemGetAllocationGranularity(ptr::null_mut(), 0, &mut g),
            INVALID
        );
        assert_eq!(
            aclrtMemGetAllocationGranularity(&mut p2, 0, ptr::null_mut()),
            INVALID
        );
        assert_eq!(
            aclrtMemGetAllocationGranularity(
                &mut p2,
                sys::ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF,
                &mut g
            ),
            INVALID
        );
        assert_eq!(
            aclrtReserveMemAddress(ptr::null_mut(), 2 * MIB, 0, ptr::null_mut(), 0),
            INVALID
        );
        assert_eq!(aclrtReleaseMemAddress(ptr::null_mut()), INVALID);
        assert_eq!(
            aclrtMapMem(ptr::null_mut(), 2 * MIB, 0, 8 as sys::aclrtDrvMemHandle, 0),
            INVALID
        );
        assert_eq!(aclrtUnmapMem(ptr::null_mut()), INVALID);
        assert_eq!(
            aclrtMemExportToShareableHandle(8 as _, 0, 0, ptr::null_mut()),
            INVALID
        );
        assert_eq!(
            aclrtMemSetPidToShareableHandle(1, ptr::null_mut(), 1),
            INVALID
        );
        assert_eq!(
            aclrtMemImportFromShareableHandle(1, 0, ptr::null_mut()),
            INVALID
        );
        // Bad values too.
        assert_eq!(aclrtGetMemInfo(99, &mut g, &mut g), INVALID);

        // The happy path, through C pointers.
        assert_eq!(
            aclrtMemGetAllocationGranularity(
                &mut p2,
                sys::ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
                &mut g
            ),
            0
        );
        assert_eq!(g, 2 * MIB);
        let (mut free, mut total) = (0usize, 0usize);
        assert_eq!(
            aclrtGetMemInfo(MemAttr::HbmMem.raw(), &mut free, &mut total),
            0
        );
        assert_eq!((free, total), (256 * MIB, 256 * MIB));
        assert_eq!(aclrtMallocPhysical(&mut handle, 2 * MIB, &prop, 0), 0);
        assert!(!handle.is_null());
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
        assert_eq!(
            aclrtMemExportToShareableHandle(handle, 2, 0, &mut sh),
            INVALID,
            "handle type POSIX"
        );
        assert_eq!(aclrtMemExportToShareableHandle(handle, 0, 0, &mut sh), 0);
        let mut pids = [1234i32];
        assert_eq!(
            aclrtMemSetPidToShareableHandle(sh, pids.as_mut_ptr(), 0),
            INVALID
        );
        assert_eq!(aclrtMemSetPidToShareableHandle(sh, pids.as_mut_ptr(), 1), 0);
        let mut imported = ptr::null_mut();
        assert_eq!(
            aclrtMemImportFromShareableHandle(sh, -1, &mut imported),
            AclError::RT_INVALID_DEVICEID.code()
        );
        assert_eq!(
            aclrtMemImportFromShareableHandle(sh, 0, &mut imported),
            AclError::RT_FEATURE_NOT_SUPPORT.code()
        );
        assert_eq!(
            aclrtReleaseMemAddress(va),
            AclError::RT_PARAM_INVALID.code()
        );
        assert_eq!(aclrtUnmapMem(va), 0);
        assert_eq!(aclrtUnmapMem(va.byte_add(2 * MIB)), 0);
        assert_eq!(aclrtReleaseMemAddress(va), 0);
        assert_eq!(aclrtFreePhysical(handle), 0);
        assert_eq!(
            aclrtFreePhysical(handle),
            AclError::RT_INVALID_HANDLE.code()
        );
        assert_eq!(aclrtResetDevice(1), 0);
        assert_eq!(
            aclrtMallocPhysical(&mut handle, 2 * MIB, &prop, 0),
            AclError::RT_CONTEXT_NULL.code()
        );

        // Finalize, and the device binding of this thread is gone with it.
        assert_eq!(aclrtSetDevice(0), 0);
        assert_eq!(aclFinalize(), 0);
        assert_eq!(aclrtGetDevice(&mut dev), AclError::UNINITIALIZE.code());
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(aclrtGetDevice(&mut dev), AclError::RT_CONTEXT_NULL.code());
        assert_eq!(aclFinalize(), 0);
    }
}
