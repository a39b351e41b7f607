//! The runtime's answers torch_npu relies on, through the C ABI:
//! host memory registered for the device, what uses a device's memory
//! (`aclrtGetMemUsageInfo`), and the devices `ASCEND_RT_VISIBLE_DEVICES`
//! leaves a process. One test, because the library's state and the
//! environment are process-wide.

use std::ffi::c_void;
use std::ptr;

use aclmem_core::AclError;
use aclmem_emu_capi::*;

fn set(k: &str, v: &str) {
    // SAFETY: this binary runs one test, which owns the environment.
    unsafe { std::env::set_var(k, v) };
}

const INVALID: i32 = AclError::INVALID_PARAM.code();
const RT_INVALID: i32 = AclError::RT_PARAM_INVALID.code();

/// `aclrtMemUsageInfo`: 112 bytes on LP64.
#[repr(C)]
#[derive(Clone, Copy)]
struct MemUsageInfo {
    name: [u8; 32],
    cur: u64,
    peak: u64,
    reserved: [usize; 8],
}

impl MemUsageInfo {
    fn name(&self) -> &str {
        let end = self.name.iter().position(|&b| b == 0).unwrap_or(32);
        std::str::from_utf8(&self.name[..end]).unwrap()
    }
}

#[test]
fn registration_usage_and_visible_devices() {
    set("ACLMEM_EMU_QUIET", "1");
    set("ACLMEM_EMU_DEVICES", "4");
    set("ACLMEM_EMU_HBM", "256MiB");
    set("ACLMEM_EMU_SOC", "Ascend910B1");
    // Devices 1 and 3 only: user id 0 is device 1, user id 1 device 3.
    set("ASCEND_RT_VISIBLE_DEVICES", "1,3");
    // SAFETY: the whole test drives the C ABI with live locals.
    unsafe {
        let mut count = 0u32;
        assert_eq!(aclrtGetDeviceCount(&mut count), 0);
        assert_eq!(count, 2, "before aclInit too");
        assert_eq!(aclInit(ptr::null()), 0);
        assert_eq!(aclrtGetDeviceCount(&mut count), 0);
        assert_eq!(count, 2);
        assert_eq!(aclrtSetDevice(2), AclError::RT_INVALID_DEVICEID.code());

        // Nothing registered, and no device yet: the context comes first.
        let page = vec![0u8; 3 * 4096];
        let aligned = (page.as_ptr() as usize).next_multiple_of(4096) as *mut c_void;
        assert_eq!(
            aclrtHostRegisterV2(aligned, 4096, 2),
            AclError::RT_CONTEXT_NULL.code()
        );
        assert_eq!(aclrtSetDevice(1), 0);
        let mut device = -1;
        assert_eq!(aclrtGetDevice(&mut device), 0);
        assert_eq!(device, 1, "the user id comes back");
        registration(aligned);
        usage();
        assert_eq!(aclrtResetDevice(1), 0);
        assert_eq!(aclFinalize(), 0);
    }
    drop_visibility_checks();
}

/// Register, look up, unregister; every bad argument.
unsafe fn registration(host: *mut c_void) {
    // SAFETY: `host` is 8 KiB of this test's memory, page aligned.
    unsafe {
        let mut dev = ptr::null_mut();
        assert_eq!(
            aclrtHostRegister(ptr::null_mut(), 4096, 0, &mut dev),
            INVALID
        );
        assert_eq!(aclrtHostRegister(host, 0, 0, &mut dev), INVALID);
        assert_eq!(aclrtHostRegister(host, 4096, 0, ptr::null_mut()), INVALID);
        // IOMEMORY and READONLY are reserved; anything else fails the check.
        for kind in [0x4, 0x8, 0x1] {
            assert_eq!(
                aclrtHostRegister(host, 4096, kind, &mut dev),
                AclError::RT_FEATURE_NOT_SUPPORT.code()
            );
        }
        // Not 4 KiB aligned, and not memory at all.
        let odd = host.cast::<u8>().add(8).cast();
        assert_eq!(aclrtHostRegister(odd, 4096, 0, &mut dev), RT_INVALID);
        assert_eq!(
            aclrtHostRegister(0x1000 as *mut c_void, 4096, 0, &mut dev),
            RT_INVALID
        );
        assert!(dev.is_null(), "nothing written on failure");

        assert_eq!(aclrtHostRegister(host, 8192, 0, &mut dev), 0);
        assert_eq!(dev, host, "the device pointer is the host address");
        // An overlap, at the start or inside.
        let second = host.cast::<u8>().add(4096).cast();
        assert_eq!(
            aclrtHostRegister(host, 4096, 0, &mut dev),
            AclError::HOST_MEMORY_ALREADY_REGISTERED.code()
        );
        assert_eq!(
            aclrtHostRegisterV2(second, 4096, 2),
            AclError::HOST_MEMORY_ALREADY_REGISTERED.code()
        );
        let mut found = ptr::null_mut();
        assert_eq!(aclrtHostGetDevicePointer(host, &mut found, 0), 0);
        assert_eq!(found, host);
        assert_eq!(aclrtHostGetDevicePointer(host, &mut found, 1), INVALID);
        assert_eq!(
            aclrtHostGetDevicePointer(host, 0x10 as *mut *mut c_void, 0),
            INVALID,
            "an out pointer that is not memory"
        );
        assert_eq!(aclrtHostGetDevicePointer(second, &mut found, 0), RT_INVALID);
        // Unregistering needs the start address.
        assert_eq!(
            aclrtHostUnregister(second),
            AclError::HOST_MEMORY_NOT_REGISTERED.code()
        );
        assert_eq!(aclrtHostUnregister(ptr::null_mut()), INVALID);
        assert_eq!(aclrtHostUnregister(host), 0);
        assert_eq!(
            aclrtHostUnregister(host),
            AclError::HOST_MEMORY_NOT_REGISTERED.code()
        );
        // A devPtr that cannot be written undoes the registration.
        assert_eq!(
            aclrtHostRegister(host, 4096, 0, 0x10 as *mut *mut c_void),
            INVALID
        );
        assert_eq!(
            aclrtHostUnregister(host),
            AclError::HOST_MEMORY_NOT_REGISTERED.code()
        );

        // V2: flags 0 or unknown are the runtime's 107000; PINNED alone has
        // no device pointer.
        assert_eq!(aclrtHostRegisterV2(host, 4096, 0), RT_INVALID);
        assert_eq!(aclrtHostRegisterV2(host, 4096, 0x1), RT_INVALID);
        assert_eq!(
            aclrtHostRegisterV2(host, 4096, 0x8),
            AclError::RT_FEATURE_NOT_SUPPORT.code()
        );
        assert_eq!(aclrtHostRegisterV2(host, 4096, 0x1000_0000), 0);
        assert_eq!(aclrtHostGetDevicePointer(host, &mut found, 0), RT_INVALID);
        assert_eq!(aclrtHostUnregister(host), 0);
        assert_eq!(aclrtHostRegisterV2(host, 4096, 0x2 | 0x1000_0000), 0);
        assert_eq!(aclrtHostGetDevicePointer(host, &mut found, 0), 0);
        assert_eq!(aclrtHostUnregister(host), 0);
    }
}

/// `aclrtGetMemUsageInfo`: the device's components, largest first, the
/// reserved words untouched, every bad argument.
unsafe fn usage() {
    // SAFETY: live locals throughout.
    unsafe {
        let blank = MemUsageInfo {
            name: [0; 32],
            cur: 0,
            peak: 0,
            reserved: [7; 8],
        };
        let mut info = [blank; 4];
        let mut n = 99usize;
        let infos = info.as_mut_ptr().cast::<c_void>();
        assert_eq!(aclrtGetMemUsageInfo(0, ptr::null_mut(), 4, &mut n), INVALID);
        assert_eq!(aclrtGetMemUsageInfo(0, infos, 4, ptr::null_mut()), INVALID);
        assert_eq!(aclrtGetMemUsageInfo(0, infos, 0, &mut n), RT_INVALID);
        assert_eq!(n, 0, "set to 0 before the count is checked");
        assert_eq!(
            aclrtGetMemUsageInfo(2, infos, 4, &mut n),
            AclError::RT_INVALID_DEVICEID.code(),
            "user ids: only 0 and 1 are visible"
        );

        // 8 MiB on user device 1 (device 3), freed again: the peak stays.
        let mut p = ptr::null_mut();
        assert_eq!(aclrtMalloc(&mut p, 8 << 20, 0), 0);
        assert_eq!(aclrtGetMemUsageInfo(1, infos, 4, &mut n), 0);
        assert!(n >= 1);
        assert_eq!(info[0].name(), "device_memory");
        assert!(info[0].cur >= 8 << 20, "{}", info[0].cur);
        assert!(info[0].peak >= info[0].cur);
        assert_eq!(info[0].reserved, [7; 8], "reserved words are not written");
        assert!(
            info[..n].windows(2).all(|w| w[0].cur >= w[1].cur),
            "largest first"
        );
        let held = info[0].cur;
        assert_eq!(aclrtFree(p), 0);
        assert_eq!(aclrtGetMemUsageInfo(1, infos, 1, &mut n), 0);
        assert_eq!(n, 1, "at most inputNum entries");
        assert!(info[0].cur < held);
        assert!(info[0].peak >= held);
        // User device 0 (device 1) never held anything.
        assert_eq!(aclrtGetMemUsageInfo(0, infos, 4, &mut n), 0);
        assert_eq!((info[0].cur, info[0].peak), (0, 0));
    }
}

/// Settings that leave no device: the count is 207004, never 0.
fn drop_visibility_checks() {
    for spec in ["", "abc", "4", "1,0", "2,2"] {
        set("ASCEND_RT_VISIBLE_DEVICES", spec);
        let mut count = 9u32;
        // SAFETY: a live local.
        let code = unsafe { aclrtGetDeviceCount(&mut count) };
        assert_eq!(code, AclError::RT_NO_DEVICE.code(), "{spec:?}");
        assert_eq!(count, 9, "{spec:?}: nothing written");
    }
}
