//! The argument checks CANN's runtime makes before anything needs a device,
//! a context or a driver, in its order: the ACL layer's (100000) and the
//! runtime layer's (107000, 107016). These codes are facts (the sources are
//! in `docs/facts.md`, "Codes fixed before the driver"); the C library runs
//! the NULL-pointer checks of its own parameters first, then these, then
//! looks for the calling thread's device.

use aclmem_core::{AclError, Location, MemAttr, RawPhysicalMemProp};

type Result<T> = core::result::Result<T, AclError>;

const INVALID: AclError = AclError::INVALID_PARAM;

/// `aclrtMallocPhysical`: size, flags, handle type, allocation type,
/// location type, DDR on the device, the memAttr table.
pub fn malloc_physical(size: usize, prop: &RawPhysicalMemProp, flags: u64) -> Result<()> {
    if size == 0 || flags != 0 {
        return Err(INVALID);
    }
    if prop.handle_type != aclmem_core::MEM_HANDLE_TYPE_NONE
        || prop.allocation_type != aclmem_core::MEM_ALLOCATION_TYPE_PINNED
    {
        return Err(INVALID);
    }
    prop_attr(prop)
}

/// The location type and memAttr checks `aclrtMallocPhysical` and the
/// granularity query share: UNREGISTERED (and MANAGED) refused, `DDR_*` on
/// the device refused, values outside the accepted table refused.
fn prop_attr(prop: &RawPhysicalMemProp) -> Result<()> {
    const UNREGISTERED: u32 = Location::RAW_UNREGISTERED;
    const MANAGED: u32 = Location::RAW_MANAGED;
    if matches!(prop.location.type_, UNREGISTERED | MANAGED) {
        return Err(INVALID);
    }
    let attr = MemAttr::from_raw(prop.mem_attr).ok_or(INVALID)?;
    let ddr = matches!(
        attr,
        MemAttr::DdrMemHuge
            | MemAttr::DdrMemNormal
            | MemAttr::DdrMemP2pHuge
            | MemAttr::DdrMemP2pNormal
    );
    if prop.location.type_ == Location::Device.raw() && ddr {
        return Err(INVALID);
    }
    if !attr.is_allocatable() {
        return Err(INVALID);
    }
    Ok(())
}

/// `aclrtMemGetAllocationGranularity`: the memAttr table and DDR on the
/// device (the option, location type and handle type are not checked there).
pub fn granularity(prop: &RawPhysicalMemProp) -> Result<()> {
    prop_attr(prop)
}

/// `aclrtReserveMemAddress`: size, flags (0 and 1 pass).
pub fn reserve(size: usize, flags: u64) -> Result<()> {
    if size == 0 || flags > 1 {
        return Err(INVALID);
    }
    Ok(())
}

/// An address that must not be NULL (release, unmap, free).
pub fn address(addr: usize) -> Result<()> {
    if addr == 0 { Err(INVALID) } else { Ok(()) }
}

/// `aclrtFreePhysical`: the handle.
pub fn free_physical(handle: u64) -> Result<()> {
    if handle == 0 { Err(INVALID) } else { Ok(()) }
}

/// `aclrtMapMem`: address, handle, size, flags (the offset is the
/// driver's).
pub fn map(addr: usize, size: usize, handle: u64, flags: u64) -> Result<()> {
    if addr == 0 || handle == 0 || size == 0 || flags != 0 {
        return Err(INVALID);
    }
    Ok(())
}

/// `aclrtMemExportToShareableHandle`: handle, handle type (only NONE).
pub fn export(handle: u64, handle_type: u32) -> Result<()> {
    if handle == 0 || handle_type != aclmem_core::MEM_HANDLE_TYPE_NONE {
        return Err(INVALID);
    }
    Ok(())
}

/// `aclrtMemSetPidToShareableHandle`: a pid count above zero.
pub fn set_pids(count: usize) -> Result<()> {
    if count == 0 { Err(INVALID) } else { Ok(()) }
}

/// `aclrtMalloc*` / `aclrtMallocHost`: a size above zero.
pub fn malloc(size: usize) -> Result<()> {
    if size == 0 { Err(INVALID) } else { Ok(()) }
}

/// The V2 share types: DEFAULT (1) and FABRIC (2); anything else is the
/// runtime layer's invalid value.
pub fn share_type(share_type: u32) -> Result<()> {
    if matches!(share_type, 1 | 2) {
        Ok(())
    } else {
        Err(AclError::RT_PARAM_INVALID)
    }
}

/// `aclrtMemImportFromShareableHandleV2`: flags are reserved (0).
pub fn import_v2_flags(flags: u64) -> Result<()> {
    if flags != 0 { Err(INVALID) } else { Ok(()) }
}

/// `aclrtGetMemInfo`: the attribute must be one of the 18 values
/// (107016 otherwise, the runtime layer's code).
pub fn mem_info_attr(attr: u32) -> Result<MemAttr> {
    MemAttr::from_raw(attr).ok_or(AclError::RT_INVALID_MEMORY_TYPE)
}

/// What `aclrtMemcpy` decided before any copy: nothing to do, or copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copy {
    /// A count of 0, or source and destination the same: success, no copy.
    Nothing,
    /// Copy `count` bytes.
    Bytes,
}

/// `aclrtMemcpy` / `aclrtMemcpyAsync`: count 0 succeeds at once; NULL
/// destination or source (100000); a kind outside 0..=5 (100000); then the
/// runtime layer: destMax 0 or count > destMax (107000); the same address
/// copies nothing.
pub fn memcpy(dst: usize, dest_max: usize, src: usize, count: usize, kind: u32) -> Result<Copy> {
    if count == 0 {
        return Ok(Copy::Nothing);
    }
    if dst == 0 || src == 0 || kind > 5 {
        return Err(INVALID);
    }
    if dest_max == 0 || count > dest_max {
        return Err(AclError::RT_PARAM_INVALID);
    }
    Ok(if dst == src {
        Copy::Nothing
    } else {
        Copy::Bytes
    })
}

/// `aclrtMemset`: count 0 succeeds at once; a NULL address (100000); count
/// above maxCount (107000, UNCONFIRMED: see the error table).
pub fn memset(dst: usize, max_count: usize, count: usize) -> Result<Copy> {
    if count == 0 {
        return Ok(Copy::Nothing);
    }
    if dst == 0 {
        return Err(INVALID);
    }
    if count > max_count {
        return Err(crate::errors::Situation::MemsetOverflow.code());
    }
    Ok(Copy::Bytes)
}

/// `aclrtSynchronizeDeviceWithTimeout` / `...StreamWithTimeout`: -1 (wait
/// forever) or above (107000 otherwise).
pub fn sync_timeout(timeout: i32) -> Result<()> {
    if timeout < -1 {
        Err(AclError::RT_PARAM_INVALID)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aclmem_core::RawMemLocation;

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

    #[test]
    fn memcpy_decides_in_the_runtime_order() {
        assert_eq!(memcpy(0, 0, 0, 0, 0x7FFF_FFFF), Ok(Copy::Nothing));
        assert_eq!(memcpy(0, 8, 8, 1, 0), Err(INVALID));
        assert_eq!(memcpy(8, 8, 0, 1, 0), Err(INVALID));
        assert_eq!(memcpy(8, 8, 16, 1, 6), Err(INVALID));
        assert_eq!(memcpy(8, 8, 16, 1, 7), Err(INVALID));
        assert_eq!(memcpy(8, 0, 16, 1, 1), Err(AclError::RT_PARAM_INVALID));
        assert_eq!(memcpy(8, 1, 16, 2, 1), Err(AclError::RT_PARAM_INVALID));
        assert_eq!(memcpy(8, 1, 8, 1, 1), Ok(Copy::Nothing));
        assert_eq!(memcpy(8, 4, 16, 4, 4), Ok(Copy::Bytes));
    }

    #[test]
    fn props_are_checked_as_the_acl_layer_does() {
        // DDR on the device, values outside the table, UNREGISTERED.
        for attr in [0, 1, 2, 3, 6, 7, 8, 9, 11, 18, 99] {
            assert_eq!(
                malloc_physical(1, &prop(1, attr), 0),
                Err(INVALID),
                "{attr}"
            );
        }
        assert_eq!(malloc_physical(1, &prop(2, 4), 0), Err(INVALID));
        assert_eq!(malloc_physical(1, &prop(0, 9), 0), Err(INVALID));
        assert_eq!(malloc_physical(1, &prop(0, 2), 0), Ok(()));
        assert_eq!(malloc_physical(0, &prop(1, 4), 0), Err(INVALID));
        assert_eq!(malloc_physical(1, &prop(1, 4), 1), Err(INVALID));
        let mut p = prop(1, 4);
        p.handle_type = 2;
        assert_eq!(malloc_physical(1, &p, 0), Err(INVALID));
        assert_eq!(mem_info_attr(18), Err(AclError::RT_INVALID_MEMORY_TYPE));
        assert_eq!(
            mem_info_attr(u32::MAX),
            Err(AclError::RT_INVALID_MEMORY_TYPE)
        );
        assert_eq!(sync_timeout(-2), Err(AclError::RT_PARAM_INVALID));
        assert_eq!(sync_timeout(-1), Ok(()));
    }
}
