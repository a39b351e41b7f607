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
//! layout exists once in the workspace; the tests below pin it. Prototypes
//! and values, with their sources, are in `docs/facts.md`.

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
mod values;
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

pub type aclError = i32;
pub type aclrtDrvMemHandle = *mut c_void;

pub type aclrtMemAttr = u32;
pub type aclrtMemLocationType = u32;
pub type aclrtMemHandleType = u32;
pub type aclrtMemAllocationType = u32;
pub type aclrtMemGranularityOptions = u32;
pub type aclrtMemSharedHandleType = u32;
pub type aclrtMemAccessFlags = u32;
pub type aclrtRunMode = u32;

pub const ACL_SUCCESS: aclError = 0;

pub const ACL_DDR_MEM: aclrtMemAttr = 0;
pub const ACL_HBM_MEM: aclrtMemAttr = 1;
pub const ACL_DDR_MEM_HUGE: aclrtMemAttr = 2;
pub const ACL_DDR_MEM_NORMAL: aclrtMemAttr = 3;
pub const ACL_HBM_MEM_HUGE: aclrtMemAttr = 4;
pub const ACL_HBM_MEM_NORMAL: aclrtMemAttr = 5;
pub const ACL_DDR_MEM_P2P_HUGE: aclrtMemAttr = 6;
pub const ACL_DDR_MEM_P2P_NORMAL: aclrtMemAttr = 7;
pub const ACL_HBM_MEM_P2P_HUGE: aclrtMemAttr = 8;
pub const ACL_HBM_MEM_P2P_NORMAL: aclrtMemAttr = 9;
pub const ACL_HBM_MEM_HUGE1G: aclrtMemAttr = 10;
pub const ACL_HBM_MEM_P2P_HUGE1G: aclrtMemAttr = 11;
pub const ACL_MEM_NORMAL: aclrtMemAttr = 12;
pub const ACL_MEM_HUGE: aclrtMemAttr = 13;
pub const ACL_MEM_HUGE1G: aclrtMemAttr = 14;
pub const ACL_MEM_P2P_NORMAL: aclrtMemAttr = 15;
pub const ACL_MEM_P2P_HUGE: aclrtMemAttr = 16;
pub const ACL_MEM_P2P_HUGE1G: aclrtMemAttr = 17;

pub const ACL_MEM_LOCATION_TYPE_HOST: aclrtMemLocationType = 0;
pub const ACL_MEM_LOCATION_TYPE_DEVICE: aclrtMemLocationType = 1;
pub const ACL_MEM_LOCATION_TYPE_UNREGISTERED: aclrtMemLocationType = 2;
pub const ACL_MEM_LOCATION_TYPE_MANAGED: aclrtMemLocationType = 3;
pub const ACL_MEM_LOCATION_TYPE_HOST_NUMA: aclrtMemLocationType = 4;

pub const ACL_MEM_HANDLE_TYPE_NONE: aclrtMemHandleType = 0;
pub const ACL_MEM_HANDLE_TYPE_POSIX: aclrtMemHandleType = 2;
pub const ACL_MEM_ALLOCATION_TYPE_PINNED: aclrtMemAllocationType = 0;

pub const ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM: aclrtMemGranularityOptions = 0;
pub const ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED: aclrtMemGranularityOptions = 1;
pub const ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF: aclrtMemGranularityOptions = 0xFFFF;

pub const ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT: aclrtMemSharedHandleType = 0x1;
pub const ACL_MEM_SHARE_HANDLE_TYPE_FABRIC: aclrtMemSharedHandleType = 0x2;

pub const ACL_RT_MEM_ACCESS_FLAGS_NONE: aclrtMemAccessFlags = 0x0;
pub const ACL_RT_MEM_ACCESS_FLAGS_READ: aclrtMemAccessFlags = 0x1;
pub const ACL_RT_MEM_ACCESS_FLAGS_READWRITE: aclrtMemAccessFlags = 0x3;

pub const ACL_DEVICE: aclrtRunMode = 0;
pub const ACL_HOST: aclrtRunMode = 1;

pub const ACL_RT_VMM_EXPORT_FLAG_DEFAULT: u64 = 0x0;
pub const ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION: u64 = 0x1;

/// `aclrtMemLocation`: `{ uint32_t id; aclrtMemLocationType type; }`.
pub type aclrtMemLocation = aclmem_core::RawMemLocation;

/// `aclrtPhysicalMemProp`: 32 bytes, fields at 0/4/8/12/24, align 8.
pub type aclrtPhysicalMemProp = aclmem_core::RawPhysicalMemProp;

/// `aclrtMemAccessDesc`: `{ aclrtMemAccessFlags flags; aclrtMemLocation
/// location; uint8_t rsv[12]; }`, 24 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct aclrtMemAccessDesc {
    pub flags: aclrtMemAccessFlags,
    pub location: aclrtMemLocation,
    pub rsv: [u8; 12],
}

/// `aclrtMemFabricHandle`: `{ uint8_t data[128]; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtMemFabricHandle {
    pub data: [u8; 128],
}

// --- 1.1 core VMM calls --------------------------------------------------

// --- 1.2 sharing ------------------------------------------------------------
/// The `int32_t *pid` argument of the whitelist calls for a list of pids:
/// NULL for an empty list (which the runtime refuses with 100000, count 0),
/// else the list's first element. The calls take a non-const pointer, hence
/// `&mut`.
pub fn pid_list_ptr(pids: &mut [i32]) -> *mut i32 {
    if pids.is_empty() {
        core::ptr::null_mut()
    } else {
        pids.as_mut_ptr()
    }
}

// --- 1.4 init / device / query ---------------------------------------------

// --- runtime surface: devices, contexts, streams ----------------------------
pub type aclrtContext = *mut c_void;
pub type aclrtStream = *mut c_void;
pub type aclrtEvent = *mut c_void;
pub type aclrtMemMallocPolicy = u32;
pub type aclrtMemcpyKind = u32;

pub const ACL_MEM_MALLOC_HUGE_FIRST: aclrtMemMallocPolicy = 0;
pub const ACL_MEM_MALLOC_HUGE_ONLY: aclrtMemMallocPolicy = 1;
pub const ACL_MEM_MALLOC_NORMAL_ONLY: aclrtMemMallocPolicy = 2;
pub const ACL_MEM_MALLOC_HUGE_FIRST_P2P: aclrtMemMallocPolicy = 3;
pub const ACL_MEM_MALLOC_HUGE_ONLY_P2P: aclrtMemMallocPolicy = 4;
pub const ACL_MEM_MALLOC_NORMAL_ONLY_P2P: aclrtMemMallocPolicy = 5;
pub const ACL_MEM_MALLOC_HUGE1G_ONLY: aclrtMemMallocPolicy = 6;
pub const ACL_MEM_MALLOC_HUGE1G_ONLY_P2P: aclrtMemMallocPolicy = 7;

pub const ACL_MEMCPY_HOST_TO_HOST: aclrtMemcpyKind = 0;
pub const ACL_MEMCPY_HOST_TO_DEVICE: aclrtMemcpyKind = 1;
pub const ACL_MEMCPY_DEVICE_TO_HOST: aclrtMemcpyKind = 2;
pub const ACL_MEMCPY_DEVICE_TO_DEVICE: aclrtMemcpyKind = 3;
pub const ACL_MEMCPY_DEFAULT: aclrtMemcpyKind = 4;
pub const ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: aclrtMemcpyKind = 5;
pub const ACL_MEMCPY_INNER_DEVICE_TO_DEVICE: aclrtMemcpyKind = 6;
pub const ACL_MEMCPY_INTER_DEVICE_TO_DEVICE: aclrtMemcpyKind = 7;

pub const ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT: u64 = 0x0;
pub const ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION: u64 = 0x1;
pub const ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT: u64 = 0x0;
pub const ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS: u64 = 0x1;
/// The documented length of an IPC key buffer.
pub const ACL_IPC_KEY_LEN: usize = 65;

/// `aclrtPtrAttributes`: `{ aclrtMemLocation location; uint32_t pageSize;
/// uint32_t rsv[4]; }`, 28 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct aclrtPtrAttributes {
    pub location: aclrtMemLocation,
    pub pageSize: u32,
    pub rsv: [u32; 4],
}

// --- runtime surface: plain memory and copies ---------------------------------

// --- runtime surface: introspection and access ----------------------------------

// --- legacy IPC of aclrtMalloc memory ------------------------------------------

// --- 1.5 versions ------------------------------------------------------------
pub type aclCANNPackageName = u32;
pub const ACL_PKG_NAME_CANN: aclCANNPackageName = 0;
pub const ACL_PKG_NAME_RUNTIME: aclCANNPackageName = 1;
pub const ACL_PKG_NAME_COMPILER: aclCANNPackageName = 2;
pub const ACL_PKG_NAME_HCCL: aclCANNPackageName = 3;
pub const ACL_PKG_NAME_TOOLKIT: aclCANNPackageName = 4;
pub const ACL_PKG_NAME_OPP: aclCANNPackageName = 5;
pub const ACL_PKG_NAME_OPP_KERNEL: aclCANNPackageName = 6;
pub const ACL_PKG_NAME_DRIVER: aclCANNPackageName = 7;
pub const ACL_PKG_VERSION_MAX_SIZE: usize = 128;
pub const ACL_PKG_VERSION_PARTS_MAX_SIZE: usize = 64;

/// `aclCANNPackageVersion`: NUL-terminated strings, 512 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclCANNPackageVersion {
    pub version: [c_char; ACL_PKG_VERSION_MAX_SIZE],
    pub majorVersion: [c_char; ACL_PKG_VERSION_PARTS_MAX_SIZE],
    pub minorVersion: [c_char; ACL_PKG_VERSION_PARTS_MAX_SIZE],
    pub releaseVersion: [c_char; ACL_PKG_VERSION_PARTS_MAX_SIZE],
    pub patchVersion: [c_char; ACL_PKG_VERSION_PARTS_MAX_SIZE],
    pub reserved: [c_char; ACL_PKG_VERSION_MAX_SIZE],
}

impl Default for aclCANNPackageVersion {
    fn default() -> Self {
        aclCANNPackageVersion {
            version: [0; ACL_PKG_VERSION_MAX_SIZE],
            majorVersion: [0; ACL_PKG_VERSION_PARTS_MAX_SIZE],
            minorVersion: [0; ACL_PKG_VERSION_PARTS_MAX_SIZE],
            releaseVersion: [0; ACL_PKG_VERSION_PARTS_MAX_SIZE],
            patchVersion: [0; ACL_PKG_VERSION_PARTS_MAX_SIZE],
            reserved: [0; ACL_PKG_VERSION_MAX_SIZE],
        }
    }
}

// The README (this crate's page on crates.io) is compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    #[test]
    fn layouts_match_the_c_headers() {
        assert_eq!(size_of::<aclrtPhysicalMemProp>(), 32);
        assert_eq!(align_of::<aclrtPhysicalMemProp>(), 8);
        assert_eq!(offset_of!(aclrtPhysicalMemProp, handle_type), 0);
        assert_eq!(offset_of!(aclrtPhysicalMemProp, allocation_type), 4);
        assert_eq!(offset_of!(aclrtPhysicalMemProp, mem_attr), 8);
        assert_eq!(offset_of!(aclrtPhysicalMemProp, location), 12);
        assert_eq!(offset_of!(aclrtPhysicalMemProp, reserve), 24);
        assert_eq!(size_of::<aclrtMemLocation>(), 8);
        assert_eq!(align_of::<aclrtMemLocation>(), 4);
        assert_eq!(offset_of!(aclrtMemLocation, type_), 4);
        assert_eq!(size_of::<aclrtMemAccessDesc>(), 24);
        assert_eq!(offset_of!(aclrtMemAccessDesc, location), 4);
        assert_eq!(offset_of!(aclrtMemAccessDesc, rsv), 12);
        assert_eq!(size_of::<aclrtMemFabricHandle>(), 128);
        assert_eq!(size_of::<aclrtDrvMemHandle>(), size_of::<usize>());
        assert_eq!(size_of::<aclCANNPackageVersion>(), 512);
        assert_eq!(size_of::<aclrtPtrAttributes>(), 28);
        assert_eq!(offset_of!(aclrtPtrAttributes, pageSize), 8);
    }

    #[test]
    fn enum_values_agree_with_the_core_crate() {
        for attr in aclmem_core::MemAttr::ALL {
            assert!(attr.raw() <= ACL_MEM_P2P_HUGE1G);
        }
        assert_eq!(aclmem_core::MemAttr::HbmMemHuge1G.raw(), ACL_HBM_MEM_HUGE1G);
        assert_eq!(aclmem_core::MemAttr::MemP2pHuge1G.raw(), ACL_MEM_P2P_HUGE1G);
        assert_eq!(
            aclmem_core::Location::HostNuma.raw(),
            ACL_MEM_LOCATION_TYPE_HOST_NUMA
        );
        assert_eq!(aclmem_core::RunMode::Rc.to_acl_run_mode(), ACL_DEVICE);
        assert_eq!(aclmem_core::RunMode::Ep.to_acl_run_mode(), ACL_HOST);
    }
}
