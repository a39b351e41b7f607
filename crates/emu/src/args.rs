//! The argument checks CANN's runtime makes before anything needs a device,
//! a context or a driver, in its order: the ACL layer's (100000) and the
//! runtime layer's (107000, 107016). These codes are facts (the sources are
//! in `docs/facts.md`, "Codes fixed before the driver"); the C library runs
//! the NULL-pointer checks of its own parameters first, then these, then
//! looks for the calling thread's device.
//!
//! Each check returns the arguments it accepted as a [`Checked`] value,
//! which is what the emulator's calls take: the C library checks once, at
//! its boundary and before anything else (as the ACL layer does, whether
//! or not `aclInit` ran), and hands the checked values on; the Rust API
//! checks and calls in one step. No check runs twice.

use core::num::NonZeroUsize;

use aclmem_core::{AclError, Location, MemAttr, RawPhysicalMemProp};
use aclmem_hal::{RawHandle, VirtAddr};
use aclmem_sys::MemcpyKind;

type Result<T> = core::result::Result<T, AclError>;

const INVALID: AclError = AclError::INVALID_PARAM;

/// Arguments the ACL layer's checks accepted. Only the functions of this
/// module make one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "checked arguments are for the call they were checked for"]
pub struct Checked<T>(T);

impl<T> Checked<T> {
    /// The arguments.
    pub fn get(&self) -> &T {
        &self.0
    }

    pub(crate) fn into_inner(self) -> T {
        self.0
    }
}

/// `aclrtMallocPhysical`'s accepted arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicalRequest {
    /// Bytes (above zero; the granularity is the runtime's to check).
    pub size: usize,
    /// The properties, of a shape the ACL layer accepts.
    pub prop: RawPhysicalMemProp,
}

/// `aclrtReserveMemAddress`'s accepted arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReserveRequest {
    /// Bytes (above zero).
    pub size: usize,
    /// 0, or 1 (kept for compatibility).
    pub flags: u64,
}

/// `aclrtMapMem`'s accepted arguments (the offset is the driver's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapRequest {
    /// Where.
    pub addr: VirtAddr,
    /// Bytes (above zero).
    pub size: usize,
    /// What.
    pub handle: RawHandle,
}

/// A copy `aclrtMemcpy` will make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyRequest {
    /// Destination (not NULL).
    pub dst: usize,
    /// Source (not NULL, not `dst`).
    pub src: usize,
    /// Bytes (above zero, at most `destMax`).
    pub count: usize,
    /// A kind `aclrtMemcpy` accepts.
    pub kind: MemcpyKind,
}

/// A fill `aclrtMemset` will make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FillRequest {
    /// Destination (not NULL).
    pub dst: usize,
    /// Bytes (above zero, at most `maxCount`).
    pub count: usize,
    /// The byte.
    pub value: u8,
}

/// `aclrtMallocPhysical`: size, flags, handle type, allocation type,
/// location type, DDR on the device, the memAttr table.
pub fn malloc_physical(
    size: usize,
    prop: &RawPhysicalMemProp,
    flags: u64,
) -> Result<Checked<PhysicalRequest>> {
    if size == 0 || flags != 0 {
        return Err(INVALID);
    }
    if prop.handle_type != aclmem_core::MEM_HANDLE_TYPE_NONE
        || prop.allocation_type != aclmem_core::MEM_ALLOCATION_TYPE_PINNED
    {
        return Err(INVALID);
    }
    prop_attr(prop)?;
    Ok(Checked(PhysicalRequest { size, prop: *prop }))
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
    if (prop.location.type_ == Location::Device.raw() && ddr) || !attr.is_allocatable() {
        return Err(INVALID);
    }
    Ok(())
}

/// `aclrtMemGetAllocationGranularity`: the memAttr table and DDR on the
/// device (the option, location type and handle type are not checked there).
pub fn granularity(prop: &RawPhysicalMemProp) -> Result<Checked<RawPhysicalMemProp>> {
    prop_attr(prop)?;
    Ok(Checked(*prop))
}

/// `aclrtReserveMemAddress`: size, flags (0 and 1 pass).
pub fn reserve(size: usize, flags: u64) -> Result<Checked<ReserveRequest>> {
    if size == 0 || flags > 1 {
        return Err(INVALID);
    }
    Ok(Checked(ReserveRequest { size, flags }))
}

/// An address that must not be NULL (release, unmap, free).
pub fn address(addr: usize) -> Result<Checked<NonZeroUsize>> {
    NonZeroUsize::new(addr).map(Checked).ok_or(INVALID)
}

/// A handle that must not be NULL (`aclrtFreePhysical`, and the handle of
/// every call that takes one).
pub fn handle(handle: u64) -> Result<RawHandle> {
    core::num::NonZeroU64::new(handle)
        .map(RawHandle)
        .ok_or(INVALID)
}

/// `aclrtMapMem`: address, handle, size, flags (the offset is the
/// driver's).
pub fn map(addr: usize, size: usize, raw_handle: u64, flags: u64) -> Result<Checked<MapRequest>> {
    let (Some(addr), Ok(handle)) = (NonZeroUsize::new(addr), handle(raw_handle)) else {
        return Err(INVALID);
    };
    if size == 0 || flags != 0 {
        return Err(INVALID);
    }
    Ok(Checked(MapRequest {
        addr: VirtAddr(addr),
        size,
        handle,
    }))
}

/// `aclrtMemExportToShareableHandle`: handle, handle type (only NONE).
pub fn export(raw_handle: u64, handle_type: u32) -> Result<RawHandle> {
    let handle = handle(raw_handle)?;
    if handle_type != aclmem_core::MEM_HANDLE_TYPE_NONE {
        return Err(INVALID);
    }
    Ok(handle)
}

/// `aclrtMemSetPidToShareableHandle(V2)`: at least one pid.
pub fn pids(pids: &[i32]) -> Result<Checked<&[i32]>> {
    if pids.is_empty() {
        Err(INVALID)
    } else {
        Ok(Checked(pids))
    }
}

/// `aclrtIpcMemSetImportPid`: at least one pid (the runtime layer's
/// check there: 107000).
pub fn ipc_pids(pids: &[i32]) -> Result<Checked<&[i32]>> {
    if pids.is_empty() {
        Err(AclError::RT_PARAM_INVALID)
    } else {
        Ok(Checked(pids))
    }
}

/// `aclrtIpcMemGetExportKey`: a size above zero and the export flags the
/// enumeration defines (the runtime layer's checks: 107000).
pub fn ipc_export(size: usize, flags: u64) -> Result<Checked<(usize, bool)>> {
    match (size, aclmem_sys::ExportFlags::from_raw(flags)) {
        (0, _) | (_, aclmem_sys::ExportFlags::Unknown(_)) => Err(AclError::RT_PARAM_INVALID),
        (size, f) => Ok(Checked((size, f == aclmem_sys::ExportFlags::Default))),
    }
}

/// `aclrtIpcMemImportByKey`: flags 0 or 1 (`ENABLE_PEER_ACCESS`): 107000
/// otherwise.
pub fn ipc_import_flags(flags: u64) -> Result<()> {
    if flags > 1 {
        Err(AclError::RT_PARAM_INVALID)
    } else {
        Ok(())
    }
}

/// `aclrtMalloc*` / `aclrtMallocHost`: a size above zero.
pub fn malloc(size: usize) -> Result<Checked<NonZeroUsize>> {
    NonZeroUsize::new(size).map(Checked).ok_or(INVALID)
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

/// `aclrtGetMemInfo`: the attribute must be one of the values the
/// enumeration defines (107016 otherwise, the runtime layer's code).
pub fn mem_info_attr(attr: u32) -> Result<MemAttr> {
    MemAttr::from_raw(attr).ok_or(AclError::RT_INVALID_MEMORY_TYPE)
}

/// What `aclrtMemcpy` decided before any copy: nothing to do, or a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copy {
    /// A count of 0, or source and destination the same: success, no copy.
    Nothing,
    /// Copy.
    Bytes(Checked<CopyRequest>),
}

/// `aclrtMemcpy` / `aclrtMemcpyAsync`: count 0 succeeds at once; NULL
/// destination or source (100000); a kind `aclrtMemcpy` does not take
/// (100000); then the runtime layer: destMax 0 or count > destMax (107000);
/// the same address copies nothing.
pub fn memcpy(
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: MemcpyKind,
) -> Result<Copy> {
    if count == 0 {
        return Ok(Copy::Nothing);
    }
    if dst == 0 || src == 0 || matches!(kind, MemcpyKind::Unknown(_)) {
        return Err(INVALID);
    }
    if dest_max == 0 || count > dest_max {
        return Err(AclError::RT_PARAM_INVALID);
    }
    Ok(if dst == src {
        Copy::Nothing
    } else {
        Copy::Bytes(Checked(CopyRequest {
            dst,
            src,
            count,
            kind,
        }))
    })
}

/// What `aclrtMemset` decided: nothing to do, or a fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// A count of 0: success at once.
    Nothing,
    /// Fill.
    Bytes(Checked<FillRequest>),
}

/// `aclrtMemset`: count 0 succeeds at once; a NULL address (100000); count
/// above maxCount (107000, UNCONFIRMED: see the error table). The value is
/// a byte (its low 8 bits, as `memset(3)`).
pub fn memset(dst: usize, max_count: usize, value: i32, count: usize) -> Result<Fill> {
    if count == 0 {
        return Ok(Fill::Nothing);
    }
    if dst == 0 {
        return Err(INVALID);
    }
    if count > max_count {
        return Err(crate::errors::Situation::MemsetOverflow.code());
    }
    Ok(Fill::Bytes(Checked(FillRequest {
        dst,
        count,
        value: value as u8,
    })))
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
        let k = MemcpyKind::from_raw;
        assert_eq!(memcpy(0, 0, 0, 0, k(0x7FFF_FFFF)), Ok(Copy::Nothing));
        assert_eq!(memcpy(0, 8, 8, 1, k(0)), Err(INVALID));
        assert_eq!(memcpy(8, 8, 0, 1, k(0)), Err(INVALID));
        assert_eq!(memcpy(8, 8, 16, 1, k(6)), Err(INVALID));
        assert_eq!(memcpy(8, 8, 16, 1, k(7)), Err(INVALID));
        assert_eq!(memcpy(8, 0, 16, 1, k(1)), Err(AclError::RT_PARAM_INVALID));
        assert_eq!(memcpy(8, 1, 16, 2, k(1)), Err(AclError::RT_PARAM_INVALID));
        assert_eq!(memcpy(8, 1, 8, 1, k(1)), Ok(Copy::Nothing));
        assert!(matches!(memcpy(8, 4, 16, 4, k(4)), Ok(Copy::Bytes(c)) if c.get().count == 4));
    }

    #[test]
    fn props_are_checked_as_the_acl_layer_does() {
        // DDR on the device, values outside the table, UNREGISTERED.
        for attr in [0, 1, 2, 3, 6, 7, 8, 9, 11, 18, 99] {
            assert_eq!(
                malloc_physical(1, &prop(1, attr), 0).map(drop),
                Err(INVALID),
                "{attr}"
            );
        }
        assert_eq!(malloc_physical(1, &prop(2, 4), 0).map(drop), Err(INVALID));
        assert_eq!(malloc_physical(1, &prop(0, 9), 0).map(drop), Err(INVALID));
        assert!(malloc_physical(1, &prop(0, 2), 0).is_ok());
        assert_eq!(malloc_physical(0, &prop(1, 4), 0).map(drop), Err(INVALID));
        assert_eq!(malloc_physical(1, &prop(1, 4), 1).map(drop), Err(INVALID));
        let mut p = prop(1, 4);
        p.handle_type = 2;
        assert_eq!(malloc_physical(1, &p, 0).map(drop), Err(INVALID));
        assert_eq!(mem_info_attr(18), Err(AclError::RT_INVALID_MEMORY_TYPE));
        assert_eq!(
            mem_info_attr(u32::MAX),
            Err(AclError::RT_INVALID_MEMORY_TYPE)
        );
        assert_eq!(sync_timeout(-2), Err(AclError::RT_PARAM_INVALID));
        assert_eq!(sync_timeout(-1), Ok(()));
    }
}
