//! Functions forwarded unchanged (the sanitizer exports them so that it sits in front of the whole memory API).

use super::*;

/// Forwarded unchanged, not checked.
macro_rules! passthrough {
    ($( $name:ident ( $($arg:ident : $t:ty),* ); )*) => {
        $(
            /// Forwarded unchanged.
            ///
            /// # Safety
            /// The C prototype's contract.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $t),*) -> sys::aclError {
                let r = forward!($name($($arg),*));
                if r != 0 && config().report_api_errors {
                    api_error(stringify!($name), r, Site::outside());
                }
                r
            }
        )*
    };
}

passthrough! {
    aclrtResetDevice(device_id: i32);
    aclrtResetDeviceForce(device_id: i32);
    aclrtGetDevice(device_id: *mut i32);
    aclrtGetDeviceCount(count: *mut u32);
    aclrtGetRunMode(run_mode: *mut sys::aclrtRunMode);
    aclrtGetVersion(major: *mut i32, minor: *mut i32, patch: *mut i32);
    aclsysGetCANNVersion(name: sys::aclCANNPackageName, version: *mut sys::aclCANNPackageVersion);
    aclrtSynchronizeDevice();
    aclrtSynchronizeDeviceWithTimeout(timeout: i32);
    aclrtDestroyContext(context: sys::aclrtContext);
    aclrtGetCurrentContext(context: *mut sys::aclrtContext);
    aclrtCreateStream(stream: *mut sys::aclrtStream);
    aclrtDestroyStream(stream: sys::aclrtStream);
    aclrtDestroyStreamForce(stream: sys::aclrtStream);
    aclrtSynchronizeStream(stream: sys::aclrtStream);
    aclrtSynchronizeStreamWithTimeout(stream: sys::aclrtStream, timeout: i32);
    aclrtDeviceCanAccessPeer(can: *mut i32, device_id: i32, peer: i32);
    aclrtDeviceEnablePeerAccess(peer: i32, flags: u32);
    aclrtDeviceDisablePeerAccess(peer: i32);
    aclrtGetMemInfo(attr: sys::aclrtMemAttr, free: *mut usize, total: *mut usize);
    aclrtMemGetAllocationGranularity(prop: *mut sys::aclrtPhysicalMemProp, option: sys::aclrtMemGranularityOptions, granularity: *mut usize);
    aclrtMemSetAccess(vir_ptr: *mut c_void, size: usize, desc: *mut sys::aclrtMemAccessDesc, count: usize);
    aclrtMemGetAccess(vir_ptr: *mut c_void, location: *mut sys::aclrtMemLocation, flag: *mut u64);
    aclrtMemGetAddressRange(ptr: *mut c_void, pbase: *mut *mut c_void, psize: *mut usize);
    aclrtMemGetAllocationPropertiesFromHandle(handle: sys::aclrtDrvMemHandle, prop: *mut sys::aclrtPhysicalMemProp);
    aclrtPointerGetAttributes(ptr: *const c_void, attributes: *mut sys::aclrtPtrAttributes);
    aclrtDeviceGetBareTgid(pid: *mut i32);
}
