//! The C types, constants and structs of CANN's `acl_rt.h` /
//! `acl_base_rt.h` (names kept as in C): the enums as `u32`/`i32` aliases
//! with their values, the handles, the structs the memory calls take, and
//! the version strings. The tests pin their layouts to the C headers.

use core::ffi::{c_char, c_void};

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
