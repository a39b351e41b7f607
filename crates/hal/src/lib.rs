#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

//! ## For users of the traits
//!
//! Most code uses the typed API ([`Session`] and the values it hands out),
//! which calls these traits for you. Code generic over backends names the
//! traits it needs:
//!
//! ```
//! use aclmem_core::{AclError, GranularityOption, MemAttr, RawMemLocation, RawPhysicalMemProp};
//! use aclmem_hal::{Error, PhysicalAllocator};
//!
//! /// The minimum granularity of 2 MiB HBM pages on device 0.
//! fn hbm_granularity<B: PhysicalAllocator>(backend: &B) -> Result<usize, B::Error> {
//!     let prop = RawPhysicalMemProp {
//!         mem_attr: MemAttr::HbmMemHuge.raw(),
//!         location: RawMemLocation { id: 0, type_: 1 },
//!         ..RawPhysicalMemProp::default()
//!     };
//!     backend.granularity(&prop, GranularityOption::Minimum)
//! }
//! // The RC stub answers every call with 207000.
//! let e = hbm_granularity(&aclmem_rc_stub::RcStub).unwrap_err();
//! assert_eq!(e.kind(), aclmem_core::ErrorKind::NotSupported);
//! assert_eq!(e, AclError::RT_FEATURE_NOT_SUPPORT);
//! ```
//!
//! ## For implementers of a backend
//!
//! A backend picks an error type ([`ErrorType`]) that keeps the exact ACL
//! code and can be made from one ([`Error`]), then implements the traits of
//! the calls it has. The typed API needs [`DeviceInfo`] to open a session:
//!
//! ```
//! use aclmem_core::{AclError, CannVersion, Product, RunMode};
//! use aclmem_hal::{DeviceInfo, ErrorType, Session};
//!
//! struct OneA2;
//! impl ErrorType for OneA2 {
//!     type Error = AclError;
//! }
//! impl DeviceInfo for OneA2 {
//!     fn platform(&self) -> Result<(Product, RunMode), AclError> {
//!         Ok((Product::AtlasA2, RunMode::Ep))
//!     }
//!     fn cann(&self) -> Result<CannVersion, AclError> {
//!         Ok(CannVersion::V9_0)
//!     }
//!     fn device_count(&self) -> Result<u32, AclError> {
//!         Ok(1)
//!     }
//! }
//! let session = Session::<_, aclmem_core::AtlasA2>::new(OneA2).unwrap();
//! assert_eq!(session.device_count(), 1);
//! ```

use core::fmt::Debug;
use core::num::{NonZeroU64, NonZeroUsize};

pub use aclmem_core as core_types;
use aclmem_core::{
    AclError, CannVersion, ErrorKind, GranularityOption, Product, RawPhysicalMemProp, RunMode,
};

mod error;
mod managed;
mod pools;
mod segment;
mod typed;

pub use error::{SessionError, TeardownError};
pub use managed::{ManagedAdvice, ManagedLocation, ManagedMemoryApi};
pub use pools::{MemPools, PoolAttr, RawPool, RawStream, Streams};
pub use segment::ExpandableSegment;
pub use typed::{
    DEFERRED_ERRORS, Exported, MANAGED_PAGE, ManagedMemory, Mapping, MemPool, PhysicalMemory,
    PoolMemory, Reservation, ReserveOptions, Session, Stream,
};

/// An error from a backend: a classification and the exact ACL code.
///
/// Every backend error must be constructible from an [`AclError`], so that
/// the typed API can report a rule it enforces itself (for example a mapping
/// outside its reservation) in the backend's own error type, with the code
/// the runtime would return.
pub trait Error: Debug + From<AclError> {
    /// What kind of failure this is.
    fn kind(&self) -> ErrorKind;
    /// The ACL error code the runtime returned (or would return).
    fn code(&self) -> AclError;
}

impl Error for AclError {
    fn kind(&self) -> ErrorKind {
        AclError::kind(*self)
    }
    fn code(&self) -> AclError {
        *self
    }
}

/// The error type of a backend.
pub trait ErrorType {
    /// The error every call of this backend returns.
    type Error: Error;
}

impl<T: ErrorType + ?Sized> ErrorType for &T {
    type Error = T::Error;
}

/// An opaque physical-memory handle (`aclrtDrvMemHandle`). Never NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct RawHandle(pub NonZeroU64);

/// A device virtual address returned by [`VirtualMemory::reserve`]. Never
/// NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct VirtAddr(pub NonZeroUsize);

impl VirtAddr {
    /// The address as an integer.
    pub const fn get(self) -> usize {
        self.0.get()
    }

    /// The address `bytes` further on, or `None` on overflow.
    pub const fn checked_add(self, bytes: usize) -> Option<VirtAddr> {
        match self.0.checked_add(bytes) {
            Some(v) => Some(VirtAddr(v)),
            None => None,
        }
    }
}

/// A shareable handle (`uint64_t`) produced by
/// [`ShareableMemory::export`], to be passed to another process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct ShareableHandle(pub u64);

/// The handle types of the V2 sharing calls (`aclrtMemSharedHandleType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[repr(u32)]
pub enum ShareHandleType {
    /// `ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT` (1): a `uint64_t`, valid within
    /// one server.
    Default = 1,
    /// `ACL_MEM_SHARE_HANDLE_TYPE_FABRIC` (2): a 128-byte
    /// `aclrtMemFabricHandle`, valid across the servers of an Atlas A3
    /// super node; refused elsewhere (207000).
    Fabric = 2,
}

impl ShareHandleType {
    /// The C value.
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// The type of a C value (`None` for values the runtime refuses).
    pub const fn from_raw(raw: u32) -> Option<ShareHandleType> {
        match raw {
            1 => Some(ShareHandleType::Default),
            2 => Some(ShareHandleType::Fabric),
            _ => None,
        }
    }
}

/// A shareable handle of the V2 calls: what
/// `aclrtMemExportToShareableHandleV2` writes, in the layout of its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShareableHandleV2 {
    /// `ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT`: a `uint64_t`.
    Default(u64),
    /// `ACL_MEM_SHARE_HANDLE_TYPE_FABRIC`: the 128 bytes of an
    /// `aclrtMemFabricHandle`.
    Fabric([u8; 128]),
}

impl ShareableHandleV2 {
    /// The handle's type.
    pub const fn kind(&self) -> ShareHandleType {
        match self {
            ShareableHandleV2::Default(_) => ShareHandleType::Default,
            ShareableHandleV2::Fabric(_) => ShareHandleType::Fabric,
        }
    }

    /// The bytes the C calls read and write, in a 128-byte buffer (the
    /// larger type's size): the `uint64_t` in native byte order for
    /// DEFAULT, the whole handle for FABRIC.
    pub fn to_c_buffer(&self) -> [u8; 128] {
        match self {
            ShareableHandleV2::Default(v) => {
                let mut out = [0u8; 128];
                out[..8].copy_from_slice(&v.to_ne_bytes());
                out
            }
            ShareableHandleV2::Fabric(b) => *b,
        }
    }

    /// Reads what the C export call wrote into a 128-byte buffer.
    pub fn from_c_buffer(kind: ShareHandleType, buffer: &[u8; 128]) -> ShareableHandleV2 {
        match kind {
            ShareHandleType::Default => {
                let mut v = [0u8; 8];
                v.copy_from_slice(&buffer[..8]);
                ShareableHandleV2::Default(u64::from_ne_bytes(v))
            }
            ShareHandleType::Fabric => ShareableHandleV2::Fabric(*buffer),
        }
    }
}

/// `ACL_RT_VMM_EXPORT_FLAG_DEFAULT`: the importer's pid must be whitelisted
/// with [`ShareableMemory::set_pids`].
pub const EXPORT_FLAG_DEFAULT: u64 = 0x0;
/// `ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION`: any process may import.
pub const EXPORT_FLAG_DISABLE_PID_VALIDATION: u64 = 0x1;

/// What the backend runs on.
pub trait DeviceInfo: ErrorType {
    /// The product (from `aclrtGetSocName`) and run mode
    /// (`aclrtGetRunMode`).
    fn platform(&self) -> Result<(Product, RunMode), Self::Error>;
    /// The CANN release whose rules apply (from the installed version).
    fn cann(&self) -> Result<CannVersion, Self::Error>;
    /// `aclrtGetDeviceCount`.
    fn device_count(&self) -> Result<u32, Self::Error>;
}

/// Physical memory: `aclrtMemGetAllocationGranularity`,
/// `aclrtMallocPhysical`, `aclrtFreePhysical`.
pub trait PhysicalAllocator: ErrorType {
    /// The minimum or recommended allocation granularity for `prop`, in
    /// bytes.
    fn granularity(
        &self,
        prop: &RawPhysicalMemProp,
        option: GranularityOption,
    ) -> Result<usize, Self::Error>;

    /// Allocates `size` bytes of physical memory described by `prop`.
    /// `flags` is reserved and must be 0.
    fn malloc_physical(
        &self,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> Result<RawHandle, Self::Error>;

    /// Frees a handle. If it is still mapped, the memory is released when
    /// the last mapping goes; the handle itself is dead at once.
    fn free_physical(&self, handle: RawHandle) -> Result<(), Self::Error>;
}

/// Virtual address ranges: `aclrtReserveMemAddress`,
/// `aclrtReleaseMemAddress`, `aclrtMapMem`, `aclrtUnmapMem`.
pub trait VirtualMemory: ErrorType {
    /// Reserves `size` bytes of device virtual address space.
    ///
    /// `alignment` is reserved (0). `expected` asks for a fixed address
    /// (experimental in CANN; `None` lets the system choose). `flags` is 0
    /// or 1 (the early page-type flag, accepted for compatibility).
    fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
        flags: u64,
    ) -> Result<VirtAddr, Self::Error>;

    /// Releases a reservation. Every mapping inside must be unmapped first.
    fn release(&self, addr: VirtAddr) -> Result<(), Self::Error>;

    /// Maps the whole of `handle` at `addr`, which lies inside a
    /// reservation. `size` must equal the handle's size, `offset` and
    /// `flags` must be 0. The backend refuses a range that overlaps a live
    /// mapping.
    fn map(
        &self,
        addr: VirtAddr,
        size: usize,
        offset: usize,
        handle: RawHandle,
        flags: u64,
    ) -> Result<(), Self::Error>;

    /// Unmaps the mapping that starts at `addr`.
    fn unmap(&self, addr: VirtAddr) -> Result<(), Self::Error>;
}

/// Sharing physical memory between processes:
/// `aclrtMemExportToShareableHandle`, `aclrtMemSetPidToShareableHandle`,
/// `aclrtMemImportFromShareableHandle`, and their V2 forms with a handle
/// type.
pub trait ShareableMemory: ErrorType {
    /// Exports a handle (handle type `ACL_MEM_HANDLE_TYPE_NONE`). `flags` is
    /// [`EXPORT_FLAG_DEFAULT`] or [`EXPORT_FLAG_DISABLE_PID_VALIDATION`]. A
    /// handle can be exported once per process.
    fn export(&self, handle: RawHandle, flags: u64) -> Result<ShareableHandle, Self::Error>;

    /// Whitelists the processes that may import `shareable`.
    fn set_pids(&self, shareable: ShareableHandle, pids: &[i32]) -> Result<(), Self::Error>;

    /// Imports a handle exported by another process, for device `device_id`.
    fn import(&self, shareable: ShareableHandle, device_id: u32) -> Result<RawHandle, Self::Error>;

    /// `aclrtMemExportToShareableHandleV2`: exports a handle as `kind`.
    /// `flags` as for [`export`](ShareableMemory::export).
    fn export_v2(
        &self,
        handle: RawHandle,
        flags: u64,
        kind: ShareHandleType,
    ) -> Result<ShareableHandleV2, Self::Error>;

    /// `aclrtMemSetPidToShareableHandleV2`: whitelists processes.
    fn set_pids_v2(&self, shareable: &ShareableHandleV2, pids: &[i32]) -> Result<(), Self::Error>;

    /// `aclrtMemImportFromShareableHandleV2` onto device `device_id` (the
    /// C call imports onto the calling thread's current device; a backend
    /// makes `device_id` current for the call).
    fn import_v2(
        &self,
        shareable: &ShareableHandleV2,
        device_id: u32,
    ) -> Result<RawHandle, Self::Error>;
}

impl<T: DeviceInfo + ?Sized> DeviceInfo for &T {
    fn platform(&self) -> Result<(Product, RunMode), Self::Error> {
        T::platform(self)
    }
    fn cann(&self) -> Result<CannVersion, Self::Error> {
        T::cann(self)
    }
    fn device_count(&self) -> Result<u32, Self::Error> {
        T::device_count(self)
    }
}
impl<T: PhysicalAllocator + ?Sized> PhysicalAllocator for &T {
    fn granularity(
        &self,
        prop: &RawPhysicalMemProp,
        option: GranularityOption,
    ) -> Result<usize, Self::Error> {
        T::granularity(self, prop, option)
    }
    fn malloc_physical(
        &self,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> Result<RawHandle, Self::Error> {
        T::malloc_physical(self, size, prop, flags)
    }
    fn free_physical(&self, handle: RawHandle) -> Result<(), Self::Error> {
        T::free_physical(self, handle)
    }
}
impl<T: VirtualMemory + ?Sized> VirtualMemory for &T {
    fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
        flags: u64,
    ) -> Result<VirtAddr, Self::Error> {
        T::reserve(self, size, alignment, expected, flags)
    }
    fn release(&self, addr: VirtAddr) -> Result<(), Self::Error> {
        T::release(self, addr)
    }
    fn map(
        &self,
        addr: VirtAddr,
        size: usize,
        offset: usize,
        handle: RawHandle,
        flags: u64,
    ) -> Result<(), Self::Error> {
        T::map(self, addr, size, offset, handle, flags)
    }
    fn unmap(&self, addr: VirtAddr) -> Result<(), Self::Error> {
        T::unmap(self, addr)
    }
}
impl<T: ShareableMemory + ?Sized> ShareableMemory for &T {
    fn export(&self, handle: RawHandle, flags: u64) -> Result<ShareableHandle, Self::Error> {
        T::export(self, handle, flags)
    }
    fn set_pids(&self, shareable: ShareableHandle, pids: &[i32]) -> Result<(), Self::Error> {
        T::set_pids(self, shareable, pids)
    }
    fn import(&self, shareable: ShareableHandle, device_id: u32) -> Result<RawHandle, Self::Error> {
        T::import(self, shareable, device_id)
    }
    fn export_v2(
        &self,
        handle: RawHandle,
        flags: u64,
        kind: ShareHandleType,
    ) -> Result<ShareableHandleV2, Self::Error> {
        T::export_v2(self, handle, flags, kind)
    }
    fn set_pids_v2(&self, shareable: &ShareableHandleV2, pids: &[i32]) -> Result<(), Self::Error> {
        T::set_pids_v2(self, shareable, pids)
    }
    fn import_v2(
        &self,
        shareable: &ShareableHandleV2,
        device_id: u32,
    ) -> Result<RawHandle, Self::Error> {
        T::import_v2(self, shareable, device_id)
    }
}
