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

/// Calls `$callback! { name: fn_type = Policy; ... }` with every ACL
/// function the project knows, in one fixed order. The callback is a
/// `macro_rules!` macro of the caller's.
///
/// ```
/// macro_rules! count {
///     ($($name:ident: $ty:ident = $policy:ident;)*) => { [$(stringify!($name)),*].len() };
/// }
/// assert_eq!(aclmem_sys::with_acl_functions!(count), aclmem_sys::FUNCTIONS.len());
/// ```
#[macro_export]
macro_rules! with_acl_functions {
    ($callback:ident) => {
        $callback! {
            aclInit: aclInit_t = Required;
            aclFinalize: aclFinalize_t = Required;
            aclrtSetDevice: aclrtSetDevice_t = Required;
            aclrtResetDevice: aclrtResetDevice_t = Required;
            aclrtGetDevice: aclrtGetDevice_t = Required;
            aclrtGetDeviceCount: aclrtGetDeviceCount_t = Required;
            aclrtGetRunMode: aclrtGetRunMode_t = Required;
            aclrtGetSocName: aclrtGetSocName_t = Required;
            aclrtMallocPhysical: aclrtMallocPhysical_t = Required;
            aclrtFreePhysical: aclrtFreePhysical_t = Required;
            aclrtReserveMemAddress: aclrtReserveMemAddress_t = Required;
            aclrtReleaseMemAddress: aclrtReleaseMemAddress_t = Required;
            aclrtMapMem: aclrtMapMem_t = Required;
            aclrtUnmapMem: aclrtUnmapMem_t = Required;
            aclrtGetMemInfo: aclrtGetMemInfo_t = Optional;
            aclrtMemGetAllocationGranularity: aclrtMemGetAllocationGranularity_t = Optional;
            aclrtMemExportToShareableHandle: aclrtMemExportToShareableHandle_t = Optional;
            aclrtMemSetPidToShareableHandle: aclrtMemSetPidToShareableHandle_t = Optional;
            aclrtMemImportFromShareableHandle: aclrtMemImportFromShareableHandle_t = Optional;
            aclrtDeviceGetBareTgid: aclrtDeviceGetBareTgid_t = Optional;
            aclrtGetVersion: aclrtGetVersion_t = Optional;
            aclsysGetCANNVersion: aclsysGetCANNVersion_t = Optional;
        }
    };
}

macro_rules! function_table {
    ($($name:ident: $ty:ident = $policy:ident;)*) => {
        /// Every ACL function the project knows, with its policy, in the
        /// order of [`with_acl_functions!`].
        pub const FUNCTIONS: &[(&str, Policy)] = &[$((stringify!($name), Policy::$policy)),*];
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
pub type aclrtMallocPhysical_t = unsafe extern "C" fn(
    handle: *mut aclrtDrvMemHandle,
    size: usize,
    prop: *const aclrtPhysicalMemProp,
    flags: u64,
) -> aclError;
pub type aclrtFreePhysical_t = unsafe extern "C" fn(handle: aclrtDrvMemHandle) -> aclError;
pub type aclrtMemGetAllocationGranularity_t = unsafe extern "C" fn(
    prop: *mut aclrtPhysicalMemProp,
    option: aclrtMemGranularityOptions,
    granularity: *mut usize,
) -> aclError;
pub type aclrtReserveMemAddress_t = unsafe extern "C" fn(
    vir_ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expect_ptr: *mut c_void,
    flags: u64,
) -> aclError;
pub type aclrtReleaseMemAddress_t = unsafe extern "C" fn(vir_ptr: *mut c_void) -> aclError;
pub type aclrtMapMem_t = unsafe extern "C" fn(
    vir_ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> aclError;
pub type aclrtUnmapMem_t = unsafe extern "C" fn(vir_ptr: *mut c_void) -> aclError;

// --- 1.2 sharing ------------------------------------------------------------
pub type aclrtMemExportToShareableHandle_t = unsafe extern "C" fn(
    handle: aclrtDrvMemHandle,
    handle_type: aclrtMemHandleType,
    flags: u64,
    shareable_handle: *mut u64,
) -> aclError;
pub type aclrtMemImportFromShareableHandle_t = unsafe extern "C" fn(
    shareable_handle: u64,
    device_id: i32,
    handle: *mut aclrtDrvMemHandle,
) -> aclError;
pub type aclrtMemSetPidToShareableHandle_t =
    unsafe extern "C" fn(shareable_handle: u64, pid: *mut i32, pid_num: usize) -> aclError;
pub type aclrtMemExportToShareableHandleV2_t = unsafe extern "C" fn(
    handle: aclrtDrvMemHandle,
    flags: u64,
    share_type: aclrtMemSharedHandleType,
    shareable_handle: *mut c_void,
) -> aclError;
pub type aclrtMemImportFromShareableHandleV2_t = unsafe extern "C" fn(
    shareable_handle: *mut c_void,
    share_type: aclrtMemSharedHandleType,
    flags: u64,
    handle: *mut aclrtDrvMemHandle,
) -> aclError;
pub type aclrtMemSetPidToShareableHandleV2_t = unsafe extern "C" fn(
    shareable_handle: *mut c_void,
    share_type: aclrtMemSharedHandleType,
    pid: *mut i32,
    pid_num: usize,
) -> aclError;
pub type aclrtDeviceGetBareTgid_t = unsafe extern "C" fn(pid: *mut i32) -> aclError;

// --- 1.4 init / device / query ---------------------------------------------
pub type aclInit_t = unsafe extern "C" fn(config_path: *const c_char) -> aclError;
pub type aclFinalize_t = unsafe extern "C" fn() -> aclError;
pub type aclrtSetDevice_t = unsafe extern "C" fn(device_id: i32) -> aclError;
pub type aclrtGetDevice_t = unsafe extern "C" fn(device_id: *mut i32) -> aclError;
pub type aclrtResetDevice_t = unsafe extern "C" fn(device_id: i32) -> aclError;
pub type aclrtGetDeviceCount_t = unsafe extern "C" fn(count: *mut u32) -> aclError;
pub type aclrtGetRunMode_t = unsafe extern "C" fn(run_mode: *mut aclrtRunMode) -> aclError;
pub type aclrtGetMemInfo_t =
    unsafe extern "C" fn(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) -> aclError;
pub type aclrtGetSocName_t = unsafe extern "C" fn() -> *const c_char;

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

pub type aclrtGetVersion_t = unsafe extern "C" fn(
    major_version: *mut i32,
    minor_version: *mut i32,
    patch_version: *mut i32,
) -> aclError;
pub type aclsysGetCANNVersion_t =
    unsafe extern "C" fn(name: aclCANNPackageName, version: *mut aclCANNPackageVersion) -> aclError;

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
