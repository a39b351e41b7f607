//! Stream-ordered memory pools: `aclrtMemPoolCreate`, `Destroy`,
//! `SetAttr`, `GetAttr` (CANN 9.0), `aclrtMemPoolMallocAsync`,
//! `FreeAsync`, `TrimTo` (CANN 9.1). The runtime layer's checks, in its
//! order, after the ACL layer's (which the C library makes); the pools
//! themselves are `process::pools`.
//!
//! The codes are the runtime's (`docs/facts.md`, "Stream-ordered memory
//! pools"): its own checks answer 107000 / 107001 / 107002 / 107003; its
//! pool errors (`RT_ERROR_MEM_POOL_NULL`, `RT_ERROR_POOL_OP_INVALID`,
//! `RT_ERROR_POOL_PROP_INVALID`, `RT_ERROR_MEM_POOL_ALLOC`) are not in
//! its table of external codes, so they reach the caller as 507000.
//! Pools are documented for Atlas A2 only: elsewhere creating one or
//! allocating from one is 207000.

use std::num::{NonZeroU64, NonZeroUsize};

use aclmem_core::{AclError, Api, Product, check_api};
use aclmem_hal::{MemPools, RawPool, RawStream, Streams, VirtAddr};

use crate::machine::PoolId;
use crate::process::Result;
pub use crate::process::pools::{POOL_BLOCK, PoolAttr};
use crate::{Emulator, Op, Target};

/// `RT_ERROR_MEM_POOL_NULL`, `RT_ERROR_POOL_OP_INVALID`,
/// `RT_ERROR_POOL_PROP_INVALID`, `RT_ERROR_MEM_POOL_ALLOC`: not mapped to
/// an external code, so 507000.
const POOL_ERROR: AclError = AclError::RT_INTERNAL_ERROR;

/// `aclrtMemPoolProps.handleType`: `ACL_MEM_HANDLE_TYPE_NONE`.
pub const POOL_HANDLE_NONE: u32 = 0;
/// `ACL_MEM_HANDLE_TYPE_POSIX` (pools from CANN 9.1).
pub const POOL_HANDLE_POSIX: u32 = 2;

impl Emulator {
    /// 207000 on a product whose runtime has no pools (documented: Atlas A2
    /// only).
    fn pools_exist(&self) -> Result<()> {
        if self.process.machine().product == Product::AtlasA2 {
            Ok(())
        } else {
            Err(AclError::RT_FEATURE_NOT_SUPPORT)
        }
    }

    /// `stream` is a live stream of the thread's current device: NULL (0)
    /// is the runtime's `RT_ERROR_STREAM_NULL` (507000), an unknown handle
    /// 107000, another device's stream 107003.
    fn pool_stream(&self, stream: u64) -> Result<u32> {
        let p = &self.process;
        if stream == 0 {
            return Err(AclError::RT_INTERNAL_ERROR);
        }
        self.check_stream(stream)?;
        let (current, _) = p.current()?;
        match self.stream_device(stream) {
            Some(d) if d == current => Ok(d),
            _ => Err(AclError::RT_STREAM_CONTEXT),
        }
    }

    /// `aclrtMemPoolCreate` after the ACL layer's checks (allocation type
    /// pinned, location device, reserved bytes zero): a pool of device
    /// `device` (a user id) of `max_size` bytes, rounded up to 2 MiB; 0 is
    /// the device's whole memory rounded down. A thread without a device
    /// is 107002, an unknown device 107001, a size above the device's
    /// memory 107000; `handle_type` NONE, or POSIX from CANN 9.1 (it is
    /// recorded nowhere: no call exports a pool), else 107000.
    pub fn mem_pool_create(&self, device: u32, max_size: u64, handle_type: u32) -> Result<u64> {
        let p = &self.process;
        p.enter_rt(Op::MallocDevice)?;
        let device = p.device(device)?;
        let posix = p.machine().config.cann.major_minor() >= (9, 1);
        if handle_type != POOL_HANDLE_NONE && !(posix && handle_type == POOL_HANDLE_POSIX) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let (total, _) = p.machine().region.pool(PoolId::Device(device));
        let size = if max_size == 0 {
            total / POOL_BLOCK * POOL_BLOCK
        } else {
            max_size
                .checked_next_multiple_of(POOL_BLOCK)
                .ok_or(AclError::RT_PARAM_INVALID)?
        };
        if size > total {
            return Err(AclError::RT_PARAM_INVALID);
        }
        self.pools_exist()?;
        Ok(p.pool_create(device, size))
    }

    /// `aclrtMemPoolDestroy`: the pool goes with all its memory, blocks in
    /// use included (the runtime checks none). A pool that is not live is
    /// 507000.
    pub fn mem_pool_destroy(&self, pool: u64) -> Result<()> {
        let p = &self.process;
        p.enter(Op::FreeDevice)?;
        p.pool_destroy(pool, POOL_ERROR)
    }

    /// `aclrtMemPoolSetAttr(pool, attr, value)` after the ACL layer's and
    /// the runtime's NULL checks: a pool that is not live is 107000, the
    /// current reserved and used sizes (read only) 107000, an unknown
    /// attribute, a threshold above the pool's size or a high mark other
    /// than 0 507000. `value` reads the caller's value, a `uint32_t` for
    /// the reuse switches ([`PoolAttr::is_u32`]), else a `uint64_t`.
    pub fn mem_pool_set_attr(
        &self,
        pool: u64,
        attr: u32,
        value: impl FnOnce(bool) -> Result<u64>,
    ) -> Result<()> {
        let p = &self.process;
        p.enter(Op::Query)?;
        p.pool_device(pool, AclError::RT_PARAM_INVALID)?;
        let attr = PoolAttr::from_raw(attr).ok_or(POOL_ERROR)?;
        if matches!(
            attr,
            PoolAttr::ReservedMemCurrent | PoolAttr::UsedMemCurrent
        ) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let value = value(attr.is_u32())?;
        p.pool_set_attr(
            pool,
            attr,
            value,
            AclError::RT_PARAM_INVALID,
            (AclError::RT_PARAM_INVALID, POOL_ERROR),
        )
    }

    /// `aclrtMemPoolGetAttr(pool, attr)`: the attribute and whether it is a
    /// `uint32_t`. A pool that is not live is 107000, an unknown attribute
    /// 507000; an attribute never set is its default (0).
    pub fn mem_pool_get_attr(&self, pool: u64, attr: u32) -> Result<(u64, bool)> {
        let p = &self.process;
        p.enter(Op::Query)?;
        p.pool_device(pool, AclError::RT_PARAM_INVALID)?;
        let attr = PoolAttr::from_raw(attr).ok_or(POOL_ERROR)?;
        let value = p.pool_attr(pool, attr, AclError::RT_PARAM_INVALID)?;
        Ok((value, attr.is_u32()))
    }

    /// `aclrtMemPoolMallocAsync(&ptr, size, pool, stream)` after the ACL
    /// layer's checks (a size of 0 succeeds there without a call): a block
    /// of `size` rounded up to 2 MiB, for `stream` (see
    /// `Emulator::pool_stream`'s codes). A pool that is not live, or
    /// without a block that fits, is 507000; the device out of memory is
    /// 207001.
    pub fn mem_pool_malloc_async(&self, size: u64, pool: u64, stream: u64) -> Result<usize> {
        let p = &self.process;
        p.enter_rt(Op::MallocDevice)?;
        self.pool_stream(stream)?;
        let size = size
            .checked_next_multiple_of(POOL_BLOCK)
            .ok_or(AclError::RT_PARAM_INVALID)?;
        p.pool_device(pool, POOL_ERROR)?;
        self.pools_exist()?;
        p.pool_malloc(pool, size, stream, (POOL_ERROR, POOL_ERROR))
    }

    /// `aclrtMemPoolFreeAsync(ptr, stream)`: a block in use goes back to
    /// its pool, freed on `stream` (cached: its memory kept); an address
    /// elsewhere inside a pool (a block's middle, a block freed already) is
    /// 107000; an address outside every pool is memory of the synchronous
    /// API, freed as `aclrtFree` frees it (its codes).
    pub fn mem_pool_free_async(&self, addr: usize, stream: u64) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::FreeDevice)?;
        self.pool_stream(stream)?;
        match p.pool_owns(addr) {
            Some(_) => p.pool_free(addr, stream, AclError::RT_PARAM_INVALID),
            None => p.free_device(addr),
        }
    }

    /// `aclrtMemPoolTrimTo(pool, minBytesToKeep)`: cached memory is
    /// released until the pool reserves at most `keep` bytes (blocks go
    /// whole, smallest first; one larger than what is left to release
    /// stays). A pool that is not live, `keep` above the pool's size or
    /// below what is in use: 507000; `keep` at or above what is reserved:
    /// nothing.
    pub fn mem_pool_trim_to(&self, pool: u64, keep: u64) -> Result<()> {
        let p = &self.process;
        p.enter(Op::FreeDevice)?;
        p.pool_trim(pool, keep, (POOL_ERROR, POOL_ERROR))
    }
}

/// A handle the engine made, never 0 (a 0 would break its contract).
fn nonzero(v: u64) -> Result<NonZeroU64> {
    NonZeroU64::new(v).ok_or(AclError::RT_INTERNAL_ERROR)
}

/// `aclmem-hal`'s streams: on the calling thread's current device.
impl Streams for Emulator {
    fn create_stream(&self) -> Result<RawStream> {
        nonzero(Emulator::create_stream(self, Target::Current)?).map(RawStream)
    }
    fn destroy_stream(&self, stream: RawStream) -> Result<()> {
        Emulator::destroy_stream(self, stream.0.get())
    }
    fn synchronize_stream(&self, stream: RawStream) -> Result<()> {
        Emulator::synchronize_stream(self, stream.0.get())
    }
}

impl Emulator {
    /// The release gate the C library's exports make (a release without
    /// the calls has no symbol: 207000), from the rules table.
    pub(crate) fn api(&self, api: Api) -> Result<()> {
        check_api(self.product(), self.config().cann, api).map_err(|d| d.code())
    }
}

/// `aclmem-hal`'s pools: the C library's calls after its ACL layer, whose
/// checks the typed values make (a pinned device pool of handle type
/// NONE, no NULL), behind the release gates of the rules table.
impl MemPools for Emulator {
    fn pool_create(&self, device_id: u32, max_size: usize) -> Result<RawPool> {
        self.api(Api::MemPoolCreate)?;
        let pool = self.mem_pool_create(device_id, max_size as u64, POOL_HANDLE_NONE)?;
        nonzero(pool).map(RawPool)
    }
    fn pool_destroy(&self, pool: RawPool) -> Result<()> {
        self.api(Api::MemPoolCreate)?;
        self.mem_pool_destroy(pool.0.get())
    }
    fn pool_set_attr(&self, pool: RawPool, attr: aclmem_hal::PoolAttr, value: u64) -> Result<()> {
        self.api(Api::MemPoolCreate)?;
        self.mem_pool_set_attr(pool.0.get(), attr.raw(), |_| Ok(value))
    }
    fn pool_get_attr(&self, pool: RawPool, attr: aclmem_hal::PoolAttr) -> Result<u64> {
        self.api(Api::MemPoolCreate)?;
        self.mem_pool_get_attr(pool.0.get(), attr.raw())
            .map(|(v, _)| v)
    }
    fn pool_malloc_async(&self, pool: RawPool, size: usize, stream: RawStream) -> Result<VirtAddr> {
        self.api(Api::MemPoolMallocAsync)?;
        // The ACL layer answers a size of 0 with success and no memory;
        // a typed allocation always has an address.
        if size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let addr = self.mem_pool_malloc_async(size as u64, pool.0.get(), stream.0.get())?;
        NonZeroUsize::new(addr)
            .map(VirtAddr)
            .ok_or(AclError::RT_INTERNAL_ERROR)
    }
    fn pool_free_async(&self, ptr: VirtAddr, stream: RawStream) -> Result<()> {
        self.api(Api::MemPoolMallocAsync)?;
        self.mem_pool_free_async(ptr.get(), stream.0.get())
    }
    fn pool_trim_to(&self, pool: RawPool, keep: usize) -> Result<()> {
        self.api(Api::MemPoolMallocAsync)?;
        self.mem_pool_trim_to(pool.0.get(), keep as u64)
    }
}
