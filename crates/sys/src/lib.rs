//! Raw declarations of CANN's ACL runtime as aclmem uses them, as in CANN's
//! `acl_rt.h` / `acl_base_rt.h` (names kept as in C), and **the one list of
//! ACL functions** the project knows ([`with_acl_functions!`],
//! [`FUNCTIONS`]): the driver resolves it, the emulated `libascendcl.so`
//! exports it, the shipped C headers declare it, and tests check all three
//! against it.
//!
//! Enums are C `int`s; they are given as `u32`/`i32` aliases with constants
//! (an out-of-range value from C must never be an invalid Rust enum). The
//! property struct is [`aclmem_core::RawPhysicalMemProp`] itself, so the
//! layout exists once in the workspace; the tests of `types` pin it.
//! Prototypes and values, with their sources, are in `docs/facts.md`.

#![no_std]
#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    missing_docs
)]

pub mod catalogue;
pub mod hccl;
pub mod mstx;
pub mod pools;
mod types;
mod values;
pub use types::*;
pub use values::*;

use core::ffi::{c_char, c_void};

/// Whether a driver must find a function in the loaded library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Every CANN release with the physical-memory API has it; a library
    /// without it is not a usable `libascendcl.so`.
    Required,
    /// Absent from some releases (or only on some products): a missing
    /// symbol makes only its own call answer 207000.
    Optional,
}

/// Calls `$callback! { name: fn_type = Policy, fn(arg: Type, ...) -> Ret; ... }`
/// with every ACL function the project knows, in one fixed order: its
/// name, the name of its pointer type (defined from the prototype here),
/// its policy and its C prototype in Rust types. The one place a call's
/// prototype is written: the pointer types, the driver's table, the
/// emulated library's and the sanitizer's definitions (checked against the
/// types), and the sanitizer's forwarding of the calls it does not check
/// (generated) come from it. The callback is a `macro_rules!` macro of the
/// caller's.
///
/// ```
/// macro_rules! count {
///     ($($name:ident: $ty:ident = $policy:ident, fn($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
///         [$(stringify!($name)),*].len()
///     };
/// }
/// assert_eq!(aclmem_sys::with_acl_functions!(count), aclmem_sys::FUNCTIONS.len());
/// ```
#[macro_export]
macro_rules! with_acl_functions {
    ($callback:ident) => {
        $callback! {
            aclInit: aclInit_t = Required, fn(config_path: *const c_char) -> aclError;
            aclFinalize: aclFinalize_t = Required, fn() -> aclError;
            aclrtSetDevice: aclrtSetDevice_t = Required, fn(device_id: i32) -> aclError;
            aclrtResetDevice: aclrtResetDevice_t = Required, fn(device_id: i32) -> aclError;
            aclrtResetDeviceForce: aclrtResetDeviceForce_t = Optional, fn(device_id: i32) -> aclError;
            aclrtGetDevice: aclrtGetDevice_t = Required, fn(device_id: *mut i32) -> aclError;
            aclrtGetDeviceCount: aclrtGetDeviceCount_t = Required, fn(count: *mut u32) -> aclError;
            aclrtGetRunMode: aclrtGetRunMode_t = Required, fn(run_mode: *mut aclrtRunMode) -> aclError;
            aclrtGetSocName: aclrtGetSocName_t = Required, fn() -> *const c_char;
            aclrtGetVersion: aclrtGetVersion_t = Optional, fn(major_version: *mut i32, minor_version: *mut i32, patch_version: *mut i32) -> aclError;
            aclsysGetCANNVersion: aclsysGetCANNVersion_t = Optional, fn(name: aclCANNPackageName, version: *mut aclCANNPackageVersion) -> aclError;
            aclrtSynchronizeDevice: aclrtSynchronizeDevice_t = Optional, fn() -> aclError;
            aclrtSynchronizeDeviceWithTimeout: aclrtSynchronizeDeviceWithTimeout_t = Optional, fn(timeout: i32) -> aclError;
            aclrtCreateContext: aclrtCreateContext_t = Optional, fn(context: *mut aclrtContext, device_id: i32) -> aclError;
            aclrtDestroyContext: aclrtDestroyContext_t = Optional, fn(context: aclrtContext) -> aclError;
            aclrtSetCurrentContext: aclrtSetCurrentContext_t = Optional, fn(context: aclrtContext) -> aclError;
            aclrtGetCurrentContext: aclrtGetCurrentContext_t = Optional, fn(context: *mut aclrtContext) -> aclError;
            aclrtCreateStream: aclrtCreateStream_t = Optional, fn(stream: *mut aclrtStream) -> aclError;
            aclrtDestroyStream: aclrtDestroyStream_t = Optional, fn(stream: aclrtStream) -> aclError;
            aclrtDestroyStreamForce: aclrtDestroyStreamForce_t = Optional, fn(stream: aclrtStream) -> aclError;
            aclrtSynchronizeStream: aclrtSynchronizeStream_t = Optional, fn(stream: aclrtStream) -> aclError;
            aclrtSynchronizeStreamWithTimeout: aclrtSynchronizeStreamWithTimeout_t = Optional, fn(stream: aclrtStream, timeout: i32) -> aclError;
            aclrtDeviceCanAccessPeer: aclrtDeviceCanAccessPeer_t = Optional, fn(can_access_peer: *mut i32, device_id: i32, peer_device_id: i32) -> aclError;
            aclrtDeviceEnablePeerAccess: aclrtDeviceEnablePeerAccess_t = Optional, fn(peer_device_id: i32, flags: u32) -> aclError;
            aclrtDeviceDisablePeerAccess: aclrtDeviceDisablePeerAccess_t = Optional, fn(peer_device_id: i32) -> aclError;
            aclrtGetMemInfo: aclrtGetMemInfo_t = Optional, fn(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) -> aclError;
            aclrtMalloc: aclrtMalloc_t = Optional, fn(dev_ptr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) -> aclError;
            aclrtMallocAlign32: aclrtMallocAlign32_t = Optional, fn(dev_ptr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) -> aclError;
            aclrtFree: aclrtFree_t = Optional, fn(dev_ptr: *mut c_void) -> aclError;
            aclrtMallocHost: aclrtMallocHost_t = Optional, fn(host_ptr: *mut *mut c_void, size: usize) -> aclError;
            aclrtFreeHost: aclrtFreeHost_t = Optional, fn(host_ptr: *mut c_void) -> aclError;
            aclrtMemcpy: aclrtMemcpy_t = Optional, fn(dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind) -> aclError;
            aclrtMemcpyAsync: aclrtMemcpyAsync_t = Optional, fn(dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError;
            aclrtMemset: aclrtMemset_t = Optional, fn(dev_ptr: *mut c_void, max_count: usize, value: i32, count: usize) -> aclError;
            aclrtMallocPhysical: aclrtMallocPhysical_t = Required, fn(handle: *mut aclrtDrvMemHandle, size: usize, prop: *const aclrtPhysicalMemProp, flags: u64) -> aclError;
            aclrtFreePhysical: aclrtFreePhysical_t = Required, fn(handle: aclrtDrvMemHandle) -> aclError;
            aclrtMemGetAllocationGranularity: aclrtMemGetAllocationGranularity_t = Optional, fn(prop: *mut aclrtPhysicalMemProp, option: aclrtMemGranularityOptions, granularity: *mut usize) -> aclError;
            aclrtReserveMemAddress: aclrtReserveMemAddress_t = Required, fn(vir_ptr: *mut *mut c_void, size: usize, alignment: usize, expect_ptr: *mut c_void, flags: u64) -> aclError;
            aclrtReleaseMemAddress: aclrtReleaseMemAddress_t = Required, fn(vir_ptr: *mut c_void) -> aclError;
            aclrtMapMem: aclrtMapMem_t = Required, fn(vir_ptr: *mut c_void, size: usize, offset: usize, handle: aclrtDrvMemHandle, flags: u64) -> aclError;
            aclrtUnmapMem: aclrtUnmapMem_t = Required, fn(vir_ptr: *mut c_void) -> aclError;
            aclrtMemSetAccess: aclrtMemSetAccess_t = Optional, fn(vir_ptr: *mut c_void, size: usize, desc: *mut aclrtMemAccessDesc, count: usize) -> aclError;
            aclrtMemGetAccess: aclrtMemGetAccess_t = Optional, fn(vir_ptr: *mut c_void, location: *mut aclrtMemLocation, flag: *mut u64) -> aclError;
            aclrtMemGetAddressRange: aclrtMemGetAddressRange_t = Optional, fn(ptr: *mut c_void, pbase: *mut *mut c_void, psize: *mut usize) -> aclError;
            aclrtMemRetainAllocationHandle: aclrtMemRetainAllocationHandle_t = Optional, fn(vir_ptr: *mut c_void, handle: *mut aclrtDrvMemHandle) -> aclError;
            aclrtMemGetAllocationPropertiesFromHandle: aclrtMemGetAllocationPropertiesFromHandle_t = Optional, fn(handle: aclrtDrvMemHandle, prop: *mut aclrtPhysicalMemProp) -> aclError;
            aclrtPointerGetAttributes: aclrtPointerGetAttributes_t = Optional, fn(ptr: *const c_void, attributes: *mut aclrtPtrAttributes) -> aclError;
            aclrtMemExportToShareableHandle: aclrtMemExportToShareableHandle_t = Optional, fn(handle: aclrtDrvMemHandle, handle_type: aclrtMemHandleType, flags: u64, shareable_handle: *mut u64) -> aclError;
            aclrtMemSetPidToShareableHandle: aclrtMemSetPidToShareableHandle_t = Optional, fn(shareable_handle: u64, pid: *mut i32, pid_num: usize) -> aclError;
            aclrtMemImportFromShareableHandle: aclrtMemImportFromShareableHandle_t = Optional, fn(shareable_handle: u64, device_id: i32, handle: *mut aclrtDrvMemHandle) -> aclError;
            aclrtMemExportToShareableHandleV2: aclrtMemExportToShareableHandleV2_t = Optional, fn(handle: aclrtDrvMemHandle, flags: u64, share_type: aclrtMemSharedHandleType, shareable_handle: *mut c_void) -> aclError;
            aclrtMemSetPidToShareableHandleV2: aclrtMemSetPidToShareableHandleV2_t = Optional, fn(shareable_handle: *mut c_void, share_type: aclrtMemSharedHandleType, pid: *mut i32, pid_num: usize) -> aclError;
            aclrtMemImportFromShareableHandleV2: aclrtMemImportFromShareableHandleV2_t = Optional, fn(shareable_handle: *mut c_void, share_type: aclrtMemSharedHandleType, flags: u64, handle: *mut aclrtDrvMemHandle) -> aclError;
            aclrtDeviceGetBareTgid: aclrtDeviceGetBareTgid_t = Optional, fn(pid: *mut i32) -> aclError;
            aclrtIpcMemGetExportKey: aclrtIpcMemGetExportKey_t = Optional, fn(dev_ptr: *mut c_void, size: usize, key: *mut c_char, len: usize, flags: u64) -> aclError;
            aclrtIpcMemSetImportPid: aclrtIpcMemSetImportPid_t = Optional, fn(key: *const c_char, pid: *mut i32, num: usize) -> aclError;
            aclrtIpcMemImportByKey: aclrtIpcMemImportByKey_t = Optional, fn(dev_ptr: *mut *mut c_void, key: *const c_char, flags: u64) -> aclError;
            aclrtIpcMemClose: aclrtIpcMemClose_t = Optional, fn(key: *const c_char) -> aclError;
        }
    };
}

macro_rules! function_table {
    ($($name:ident: $ty:ident = $policy:ident, fn($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`, as a function pointer.")]
            pub type $ty = unsafe extern "C" fn($($arg: $t),*) -> $ret;
        )*

        /// Every ACL function the project knows, with its policy, in the
        /// order of [`with_acl_functions!`].
        pub const FUNCTIONS: &[(&str, Policy)] = &[$((stringify!($name), Policy::$policy)),*];

        /// One pointer per ACL function (`None` where a library lacks it):
        /// what code written against ACL calls, from whichever library
        /// provides it (the real one through `aclmem-driver`, the emulated
        /// one linked in).
        #[derive(Clone, Copy)]
        pub struct AclFunctions {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub $name: Option<$ty>,
            )*
        }

        impl AclFunctions {
            /// The table from a lookup by name (`dlsym`, for example):
            /// `None` where `lookup` answers NULL.
            ///
            /// # Safety
            /// For every name, `lookup` must answer NULL or the address of
            /// a function with that name's documented prototype (the type
            /// of its field), valid for as long as the table is used.
            pub unsafe fn from_lookup(
                mut lookup: impl FnMut(&'static str) -> *mut core::ffi::c_void,
            ) -> AclFunctions {
                AclFunctions {
                    $(
                        $name: {
                            let p = lookup(stringify!($name));
                            // SAFETY: the caller's contract: `p` is NULL
                            // (handled here) or a function of this type; a
                            // function pointer and a data pointer have the
                            // same size on every target the project builds
                            // for.
                            (!p.is_null()).then(|| unsafe { core::mem::transmute::<*mut core::ffi::c_void, $ty>(p) })
                        },
                    )*
                }
            }
        }

        impl core::fmt::Debug for AclFunctions {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                let present = [$(self.$name.is_some()),*].iter().filter(|p| **p).count();
                write!(f, "AclFunctions({present} of {} present)", FUNCTIONS.len())
            }
        }
    };
}
with_acl_functions!(function_table);

// The README (this crate's page on crates.io) is compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
