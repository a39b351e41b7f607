//! The backend trait of managed memory ([`ManagedMemoryApi`]):
//! `aclrtMemAllocManaged` (CANN 9.0), `aclrtMemManagedAdvise` and
//! `aclrtMemManagedPrefetchAsync` (9.1), memory freed with `aclrtFree`.
//! Managed memory is a location of its own: the host and the device both
//! reach it, and advice and prefetches say where its pages should be. The
//! typed API over it is [`ManagedMemory`](crate::ManagedMemory).

use crate::{ErrorType, RawStream, VirtAddr};

/// `aclrtMemManagedAdviseType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[repr(u32)]
pub enum ManagedAdvice {
    /// `ACL_MEM_ADVISE_SET_READ_MOSTLY`: mostly read, copies may be kept
    /// (the location is ignored).
    SetReadMostly = 0,
    /// `ACL_MEM_ADVISE_UNSET_READ_MOSTLY`: the copy at the location stays.
    UnsetReadMostly = 1,
    /// `ACL_MEM_ADVISE_SET_PREFERRED_LOCATION`.
    SetPreferredLocation = 2,
    /// `ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION`.
    UnsetPreferredLocation = 3,
    /// `ACL_MEM_ADVISE_SET_ACCESSED_BY`.
    SetAccessedBy = 4,
    /// `ACL_MEM_ADVISE_UNSET_ACCESSED_BY`.
    UnsetAccessedBy = 5,
}

impl ManagedAdvice {
    /// The C value.
    pub const fn raw(self) -> u32 {
        self as u32
    }
}

/// `aclrtMemManagedLocation`: where managed pages should be, as advice
/// and prefetches name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum ManagedLocation {
    /// `ACL_MEM_LOCATIONTYPE_DEVICE` and the device's id.
    Device(u32),
    /// `ACL_MEM_LOCATIONTYPE_HOST`.
    Host,
    /// `ACL_MEM_LOCATIONTYPE_HOST_NUMA` and the node.
    HostNuma(u32),
    /// `ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT`: the calling thread's node.
    HostNumaCurrent,
}

impl ManagedLocation {
    /// The C value: (`type`, `id`).
    pub const fn raw(self) -> (u32, i32) {
        match self {
            ManagedLocation::Device(id) => (1, id as i32),
            ManagedLocation::Host => (2, 0),
            ManagedLocation::HostNuma(node) => (3, node as i32),
            ManagedLocation::HostNumaCurrent => (4, 0),
        }
    }
}

/// Managed memory: `aclrtMemAllocManaged`, `aclrtFree` of it,
/// `aclrtMemManagedAdvise`, `aclrtMemManagedPrefetchAsync`. Documented
/// for Atlas A2 and A3; a backend elsewhere answers what its runtime
/// answers (207000).
pub trait ManagedMemoryApi: ErrorType {
    /// `size` bytes of managed memory (`ACL_RT_MEM_ATTACH_GLOBAL`), on the
    /// backend's device.
    fn malloc_managed(&self, size: usize) -> Result<VirtAddr, Self::Error>;
    /// Frees managed memory (`aclrtFree`).
    fn free_managed(&self, addr: VirtAddr) -> Result<(), Self::Error>;
    /// Advice on `size` bytes (a multiple of 2 MiB) from `addr`.
    fn managed_advise(
        &self,
        addr: VirtAddr,
        size: usize,
        advice: ManagedAdvice,
        location: ManagedLocation,
    ) -> Result<(), Self::Error>;
    /// Moves `size` bytes from `addr` to `location` in `stream`'s order.
    fn managed_prefetch_async(
        &self,
        addr: VirtAddr,
        size: usize,
        location: ManagedLocation,
        stream: RawStream,
    ) -> Result<(), Self::Error>;
}

impl<T: ManagedMemoryApi + ?Sized> ManagedMemoryApi for &T {
    fn malloc_managed(&self, size: usize) -> Result<VirtAddr, Self::Error> {
        T::malloc_managed(self, size)
    }
    fn free_managed(&self, addr: VirtAddr) -> Result<(), Self::Error> {
        T::free_managed(self, addr)
    }
    fn managed_advise(
        &self,
        addr: VirtAddr,
        size: usize,
        advice: ManagedAdvice,
        location: ManagedLocation,
    ) -> Result<(), Self::Error> {
        T::managed_advise(self, addr, size, advice, location)
    }
    fn managed_prefetch_async(
        &self,
        addr: VirtAddr,
        size: usize,
        location: ManagedLocation,
        stream: RawStream,
    ) -> Result<(), Self::Error> {
        T::managed_prefetch_async(self, addr, size, location, stream)
    }
}
