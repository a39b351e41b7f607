//! The mstx memory API's C types (`mstx/ms_tools_ext.h` of CANN): the one
//! Rust copy of their layout, for the emulated library (which answers the
//! calls) and the sanitizer (which checks them). A program describes the
//! pools it carves device memory into: a *heap* is memory the program
//! allocated and sub-allocates, a *region* a block of it handed out.
//! `docs/mstx.md` has the functions, their answers and their sources.

use core::ffi::c_void;

/// `MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR`: the heap is a pool whose
/// memory may be accessed only inside the regions registered in it (the
/// one usage the header defines).
pub const MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR: u32 = 0;
/// `MSTX_MEM_TYPE_VIRTUAL_ADDRESS`: memory described by a linear virtual
/// range, [`mstxMemVirtualRangeDesc_t`] (the one type the header defines).
pub const MSTX_MEM_TYPE_VIRTUAL_ADDRESS: u32 = 0;
/// `MSTX_MEM_REGION_REF_TYPE_POINTER`: a region named by its start.
pub const MSTX_MEM_REGION_REF_TYPE_POINTER: u32 = 0;
/// `MSTX_MEM_REGION_REF_TYPE_HANDLE`: a region named by the handle its
/// registration wrote.
pub const MSTX_MEM_REGION_REF_TYPE_HANDLE: u32 = 1;
/// The longest domain name `mstxDomainCreateA` takes (bytes, the NUL
/// excluded); the name is digits, ASCII letters and `_` only.
pub const MSTX_DOMAIN_NAME_MAX: usize = 1023;

/// `mstxMemVirtualRangeDesc_t`: a linear range of a device's memory.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mstxMemVirtualRangeDesc_t {
    /// `deviceId`.
    pub device_id: u32,
    /// `ptr`: the first byte.
    pub ptr: *const c_void,
    /// `size`: bytes.
    pub size: u64,
}

impl Default for mstxMemVirtualRangeDesc_t {
    fn default() -> Self {
        Self {
            device_id: 0,
            ptr: core::ptr::null(),
            size: 0,
        }
    }
}

/// `mstxMemHeapDesc_t`: what `mstxMemHeapRegister` registers.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mstxMemHeapDesc_t {
    /// `usage` (`mstxMemHeapUsageType`).
    pub usage: u32,
    /// `type` (`mstxMemType`).
    pub type_: u32,
    /// `typeSpecificDesc`: a [`mstxMemVirtualRangeDesc_t`] for
    /// [`MSTX_MEM_TYPE_VIRTUAL_ADDRESS`].
    pub type_specific_desc: *const c_void,
}

/// `mstxMemRegionsRegisterBatch_t`: regions registered in one heap.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mstxMemRegionsRegisterBatch_t {
    /// `heap`: the heap the regions are carved from.
    pub heap: *mut c_void,
    /// `regionType` (`mstxMemType`).
    pub region_type: u32,
    /// `regionCount`.
    pub region_count: usize,
    /// `regionDescArray`: `regionCount` [`mstxMemVirtualRangeDesc_t`].
    pub region_desc_array: *const c_void,
    /// `regionHandleArrayOut`: `regionCount` handles written back (may be
    /// NULL: the regions are then named by pointer).
    pub region_handle_array_out: *mut *mut c_void,
}

/// `mstxMemRegionRef_t`: a region, by pointer or by handle (the C union's
/// two members share [`Self::pointer_or_handle`]).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mstxMemRegionRef_t {
    /// `refType` (`mstxMemRegionRefType`).
    pub ref_type: u32,
    /// The union: `pointer` or `handle`.
    pub pointer_or_handle: *const c_void,
}

impl Default for mstxMemRegionRef_t {
    fn default() -> Self {
        Self {
            ref_type: 0,
            pointer_or_handle: core::ptr::null(),
        }
    }
}

/// `mstxMemRegionsUnregisterBatch_t`: regions unregistered together.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mstxMemRegionsUnregisterBatch_t {
    /// `refCount`.
    pub ref_count: usize,
    /// `refArray`: `refCount` [`mstxMemRegionRef_t`].
    pub ref_array: *const mstxMemRegionRef_t,
}

/// The most regions one batch may name: a bound on what is read through a
/// caller's array (a larger count is refused as a bad descriptor).
pub const MSTX_BATCH_MAX: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{offset_of, size_of};

    #[test]
    fn layouts_are_the_header_s_on_64_bit_targets() {
        assert_eq!(size_of::<mstxMemVirtualRangeDesc_t>(), 24);
        assert_eq!(offset_of!(mstxMemVirtualRangeDesc_t, ptr), 8);
        assert_eq!(size_of::<mstxMemHeapDesc_t>(), 16);
        assert_eq!(offset_of!(mstxMemHeapDesc_t, type_specific_desc), 8);
        assert_eq!(size_of::<mstxMemRegionsRegisterBatch_t>(), 40);
        assert_eq!(offset_of!(mstxMemRegionsRegisterBatch_t, region_count), 16);
        assert_eq!(size_of::<mstxMemRegionRef_t>(), 16);
        assert_eq!(size_of::<mstxMemRegionsUnregisterBatch_t>(), 16);
    }
}
