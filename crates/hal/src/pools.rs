//! The backend traits of streams and of stream-ordered memory pools
//! (`acl_rt_memory_soma.h`): [`Streams`] (`aclrtCreateStream`,
//! `aclrtDestroyStream`, `aclrtSynchronizeStream`) and [`MemPools`]
//! (`aclrtMemPoolCreate` … `aclrtMemPoolTrimTo`). The typed API over them
//! is [`MemPool`](crate::MemPool).

use core::num::NonZeroU64;

use crate::{ErrorType, VirtAddr};

/// An opaque stream handle (`aclrtStream`). Never NULL (the default stream
/// is no stream of the pool calls: CANN refuses NULL there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct RawStream(pub NonZeroU64);

/// An opaque pool handle (`aclrtMemPool`). Never NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct RawPool(pub NonZeroU64);

/// `aclrtMemPoolAttr`: what [`MemPools::pool_set_attr`] and
/// [`MemPools::pool_get_attr`] read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[repr(u32)]
pub enum PoolAttr {
    /// `ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES` (a `uint32_t`
    /// switch): a stream that waited for an event recorded after a free
    /// may take the freed block.
    ReuseFollowEventDependencies = 0x1,
    /// `ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC` (switch): any stream
    /// may take a block whose free is complete.
    ReuseAllowOpportunistic = 0x2,
    /// `ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES` (switch): the
    /// runtime may add dependencies to reuse a block.
    ReuseAllowInternalDependencies = 0x3,
    /// `ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD` (bytes): cached memory
    /// above it is released at a synchronisation.
    ReleaseThreshold = 0x4,
    /// `ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT` (bytes, read only).
    ReservedMemCurrent = 0x5,
    /// `ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH` (bytes; set to 0 only).
    ReservedMemHigh = 0x6,
    /// `ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT` (bytes, read only).
    UsedMemCurrent = 0x7,
    /// `ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH` (bytes; set to 0 only).
    UsedMemHigh = 0x8,
}

impl PoolAttr {
    /// Every attribute, in the order of their values.
    pub const ALL: [PoolAttr; 8] = [
        PoolAttr::ReuseFollowEventDependencies,
        PoolAttr::ReuseAllowOpportunistic,
        PoolAttr::ReuseAllowInternalDependencies,
        PoolAttr::ReleaseThreshold,
        PoolAttr::ReservedMemCurrent,
        PoolAttr::ReservedMemHigh,
        PoolAttr::UsedMemCurrent,
        PoolAttr::UsedMemHigh,
    ];

    /// The C value.
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// The attribute of a C value (`None` for one the runtime refuses).
    pub const fn from_raw(raw: u32) -> Option<PoolAttr> {
        if raw >= 1 && raw <= 8 {
            Some(PoolAttr::ALL[raw as usize - 1])
        } else {
            None
        }
    }

    /// Whether the C value is a `uint32_t` (the reuse switches); the
    /// others are `uint64_t`.
    pub const fn is_u32(self) -> bool {
        (self as u32) <= 3
    }
}

/// Streams of the backend's device: `aclrtCreateStream`,
/// `aclrtDestroyStream`, `aclrtSynchronizeStream`.
pub trait Streams: ErrorType {
    /// A new stream on the backend's (the thread's current) device.
    fn create_stream(&self) -> Result<RawStream, Self::Error>;
    /// Destroys a stream (its work is waited for).
    fn destroy_stream(&self, stream: RawStream) -> Result<(), Self::Error>;
    /// Waits until the stream's work is done; pools release cached memory
    /// above their release threshold.
    fn synchronize_stream(&self, stream: RawStream) -> Result<(), Self::Error>;
}

/// Stream-ordered memory pools: `aclrtMemPoolCreate`, `Destroy`,
/// `SetAttr`, `GetAttr` (CANN 9.0), `aclrtMemPoolMallocAsync`,
/// `FreeAsync`, `TrimTo` (CANN 9.1). Documented for Atlas A2 only; a
/// backend elsewhere answers what its runtime answers (207000).
pub trait MemPools: ErrorType {
    /// A pool of device memory on device `device_id` (pinned, handle type
    /// NONE) of at most `max_size` bytes (0: the device's memory).
    fn pool_create(&self, device_id: u32, max_size: usize) -> Result<RawPool, Self::Error>;
    /// Destroys a pool with all its memory.
    fn pool_destroy(&self, pool: RawPool) -> Result<(), Self::Error>;
    /// Sets an attribute (a switch is 0 or 1).
    fn pool_set_attr(&self, pool: RawPool, attr: PoolAttr, value: u64) -> Result<(), Self::Error>;
    /// Reads an attribute.
    fn pool_get_attr(&self, pool: RawPool, attr: PoolAttr) -> Result<u64, Self::Error>;
    /// `size` bytes from `pool`, for work on `stream`.
    fn pool_malloc_async(
        &self,
        pool: RawPool,
        size: usize,
        stream: RawStream,
    ) -> Result<VirtAddr, Self::Error>;
    /// Gives memory back to its pool in the order of `stream`.
    fn pool_free_async(&self, ptr: VirtAddr, stream: RawStream) -> Result<(), Self::Error>;
    /// Releases cached memory until the pool reserves at most `keep`
    /// bytes.
    fn pool_trim_to(&self, pool: RawPool, keep: usize) -> Result<(), Self::Error>;
}

impl<T: Streams + ?Sized> Streams for &T {
    fn create_stream(&self) -> Result<RawStream, Self::Error> {
        T::create_stream(self)
    }
    fn destroy_stream(&self, stream: RawStream) -> Result<(), Self::Error> {
        T::destroy_stream(self, stream)
    }
    fn synchronize_stream(&self, stream: RawStream) -> Result<(), Self::Error> {
        T::synchronize_stream(self, stream)
    }
}

impl<T: MemPools + ?Sized> MemPools for &T {
    fn pool_create(&self, device_id: u32, max_size: usize) -> Result<RawPool, Self::Error> {
        T::pool_create(self, device_id, max_size)
    }
    fn pool_destroy(&self, pool: RawPool) -> Result<(), Self::Error> {
        T::pool_destroy(self, pool)
    }
    fn pool_set_attr(&self, pool: RawPool, attr: PoolAttr, value: u64) -> Result<(), Self::Error> {
        T::pool_set_attr(self, pool, attr, value)
    }
    fn pool_get_attr(&self, pool: RawPool, attr: PoolAttr) -> Result<u64, Self::Error> {
        T::pool_get_attr(self, pool, attr)
    }
    fn pool_malloc_async(
        &self,
        pool: RawPool,
        size: usize,
        stream: RawStream,
    ) -> Result<VirtAddr, Self::Error> {
        T::pool_malloc_async(self, pool, size, stream)
    }
    fn pool_free_async(&self, ptr: VirtAddr, stream: RawStream) -> Result<(), Self::Error> {
        T::pool_free_async(self, ptr, stream)
    }
    fn pool_trim_to(&self, pool: RawPool, keep: usize) -> Result<(), Self::Error> {
        T::pool_trim_to(self, pool, keep)
    }
}
