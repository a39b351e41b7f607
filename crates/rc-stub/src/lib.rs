#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use aclmem_core::{AclError, CannVersion, GranularityOption, Product, RawPhysicalMemProp, RunMode};
use aclmem_hal::{
    DeviceInfo, ErrorType, ManagedAdvice, ManagedLocation, ManagedMemoryApi, MemPools,
    PhysicalAllocator, PoolAttr, RawHandle, RawPool, RawStream, ShareHandleType, ShareableHandle,
    ShareableHandleV2, ShareableMemory, Streams, VirtAddr, VirtualMemory,
};

/// The RC-form backend: zero-sized, and every call is
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct RcStub;

/// The answer to every call.
pub const NOT_SUPPORTED: AclError = AclError::RT_FEATURE_NOT_SUPPORT;

impl RcStub {
    /// The platform the stub stands for, for code that wants to show it
    /// (the [`DeviceInfo`] calls themselves answer 207000 like every other).
    pub const PLATFORM: (Product, RunMode) = (Product::Atlas200IA2, RunMode::Rc);
}

impl ErrorType for RcStub {
    type Error = AclError;
}

impl DeviceInfo for RcStub {
    fn platform(&self) -> Result<(Product, RunMode), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn cann(&self) -> Result<CannVersion, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn device_count(&self) -> Result<u32, AclError> {
        Err(NOT_SUPPORTED)
    }
}

impl PhysicalAllocator for RcStub {
    fn granularity(&self, _: &RawPhysicalMemProp, _: GranularityOption) -> Result<usize, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn malloc_physical(
        &self,
        _: usize,
        _: &RawPhysicalMemProp,
        _: u64,
    ) -> Result<RawHandle, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn free_physical(&self, _: RawHandle) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
}

impl VirtualMemory for RcStub {
    fn reserve(
        &self,
        _: usize,
        _: usize,
        _: Option<VirtAddr>,
        _: u64,
    ) -> Result<VirtAddr, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn release(&self, _: VirtAddr) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn map(&self, _: VirtAddr, _: usize, _: usize, _: RawHandle, _: u64) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn unmap(&self, _: VirtAddr) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
}

impl ShareableMemory for RcStub {
    fn export(&self, _: RawHandle, _: u64) -> Result<ShareableHandle, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn set_pids(&self, _: ShareableHandle, _: &[i32]) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn import(&self, _: ShareableHandle, _: u32) -> Result<RawHandle, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn export_v2(
        &self,
        _: RawHandle,
        _: u64,
        _: ShareHandleType,
    ) -> Result<ShareableHandleV2, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn set_pids_v2(&self, _: &ShareableHandleV2, _: &[i32]) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn import_v2(&self, _: &ShareableHandleV2, _: u32) -> Result<RawHandle, AclError> {
        Err(NOT_SUPPORTED)
    }
}

impl Streams for RcStub {
    fn create_stream(&self) -> Result<RawStream, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn destroy_stream(&self, _: RawStream) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn synchronize_stream(&self, _: RawStream) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
}

impl MemPools for RcStub {
    fn pool_create(&self, _: u32, _: usize) -> Result<RawPool, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn pool_destroy(&self, _: RawPool) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn pool_set_attr(&self, _: RawPool, _: PoolAttr, _: u64) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn pool_get_attr(&self, _: RawPool, _: PoolAttr) -> Result<u64, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn pool_malloc_async(&self, _: RawPool, _: usize, _: RawStream) -> Result<VirtAddr, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn pool_free_async(&self, _: VirtAddr, _: RawStream) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn pool_trim_to(&self, _: RawPool, _: usize) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
}

impl ManagedMemoryApi for RcStub {
    fn malloc_managed(&self, _: usize) -> Result<VirtAddr, AclError> {
        Err(NOT_SUPPORTED)
    }
    fn free_managed(&self, _: VirtAddr) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn managed_advise(
        &self,
        _: VirtAddr,
        _: usize,
        _: ManagedAdvice,
        _: ManagedLocation,
    ) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
    fn managed_prefetch_async(
        &self,
        _: VirtAddr,
        _: usize,
        _: ManagedLocation,
        _: RawStream,
    ) -> Result<(), AclError> {
        Err(NOT_SUPPORTED)
    }
}
