//! Typed streams and stream-ordered memory pools.
//!
//! A [`Stream`] and a [`MemPool`] borrow their session; [`PoolMemory`]
//! borrows both the pool it came from and the stream it was made on, so
//! neither can be destroyed while it lives (a pool owns its allocations:
//! destroying one with live memory does not compile), and
//! [`PoolMemory::free`] consumes it (memory used after its free does not
//! compile). The calls exist from a release and on a product only: the
//! rules table's `calls` section, as the bounds `P: HasApi<MemPoolCreate>`
//! (9.0) and `P: HasApi<MemPoolMallocAsync>` (9.1).

use aclmem_core::{HasApi, MemPoolCreate, MemPoolMallocAsync};

use super::*;
use crate::{MemPools, PoolAttr, RawPool, RawStream, Streams};

impl<B: Streams, P: ProductType> Session<B, P> {
    /// `aclrtCreateStream`: a stream on the backend's device, destroyed
    /// when dropped.
    pub fn stream(&self) -> Result<Stream<'_, B>, B::Error> {
        let raw = self.core().backend.create_stream()?;
        Ok(Stream {
            core: self.core(),
            raw,
        })
    }
}

impl<B: MemPools, P: ProductType> Session<B, P> {
    /// `aclrtMemPoolCreate`: a pool of at most `max_size` bytes (0: the
    /// device's memory) of device `device_id`'s memory. Needs the pools on
    /// the product in the release `P` targets (CANN 9.0, Atlas A2).
    pub fn mem_pool(&self, device_id: u32, max_size: usize) -> Result<MemPool<'_, B, P>, B::Error>
    where
        P: HasApi<MemPoolCreate>,
    {
        let raw = self.core().backend.pool_create(device_id, max_size)?;
        Ok(MemPool {
            core: self.core(),
            raw,
            device_id,
            _product: PhantomData,
        })
    }
}

/// An owned stream (`aclrtStream`): [`Stream::destroy`] consumes it;
/// dropping it destroys it too (an error goes to the session). Memory made
/// on it borrows it.
pub struct Stream<'s, B: Streams> {
    core: &'s Core<B>,
    raw: RawStream,
}

impl<B: Streams> fmt::Debug for Stream<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream").field("raw", &self.raw).finish()
    }
}

impl<B: Streams> Stream<'_, B> {
    /// The backend's handle.
    pub fn raw(&self) -> RawStream {
        self.raw
    }

    /// `aclrtSynchronizeStream`.
    pub fn synchronize(&self) -> Result<(), B::Error> {
        self.core.backend.synchronize_stream(self.raw)
    }

    /// `aclrtDestroyStream` now. On failure the stream is handed back.
    pub fn destroy(self) -> Result<(), TeardownError<B::Error, Self>> {
        match self.core.backend.destroy_stream(self.raw) {
            Ok(()) => {
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(TeardownError::new(e, self)),
        }
    }
}

impl<B: Streams> Drop for Stream<'_, B> {
    fn drop(&mut self) {
        if let Err(e) = self.core.backend.destroy_stream(self.raw) {
            self.core.defer(e.code());
        }
    }
}

/// An owned stream-ordered memory pool of product type `P`
/// (`aclrtMemPool`). Its memory ([`PoolMemory`]) borrows it, so it outlives
/// every allocation made from it; [`MemPool::destroy`] consumes it,
/// dropping it destroys it (an error goes to the session).
pub struct MemPool<'s, B: MemPools, P: ProductType> {
    core: &'s Core<B>,
    raw: RawPool,
    device_id: u32,
    _product: PhantomData<fn() -> P>,
}

impl<B: MemPools, P: ProductType> fmt::Debug for MemPool<'_, B, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemPool")
            .field("raw", &self.raw)
            .field("device_id", &self.device_id)
            .finish()
    }
}

impl<'s, B: MemPools, P: ProductType> MemPool<'s, B, P> {
    /// The backend's handle.
    pub fn raw(&self) -> RawPool {
        self.raw
    }

    /// The device whose memory the pool holds.
    pub fn device_id(&self) -> u32 {
        self.device_id
    }

    /// `aclrtMemPoolSetAttr` (a switch is 0 or 1; the current sizes are
    /// read only, the high marks can only be reset to 0).
    pub fn set_attr(&self, attr: PoolAttr, value: u64) -> Result<(), B::Error> {
        self.core.backend.pool_set_attr(self.raw, attr, value)
    }

    /// `aclrtMemPoolGetAttr`.
    pub fn attr(&self, attr: PoolAttr) -> Result<u64, B::Error> {
        self.core.backend.pool_get_attr(self.raw, attr)
    }

    /// The bytes the pool holds from the device now
    /// (`ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT`).
    pub fn reserved(&self) -> Result<u64, B::Error> {
        self.attr(PoolAttr::ReservedMemCurrent)
    }

    /// The bytes in use now (`ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT`).
    pub fn used(&self) -> Result<u64, B::Error> {
        self.attr(PoolAttr::UsedMemCurrent)
    }

    /// `aclrtMemPoolMallocAsync`: `size` bytes for work on `stream`. The
    /// memory borrows the pool and the stream. Needs CANN 9.1.
    pub fn malloc_async<'a>(
        &'a self,
        size: usize,
        stream: &'a Stream<'s, B>,
    ) -> Result<PoolMemory<'a, B, P>, B::Error>
    where
        B: Streams,
        P: HasApi<MemPoolMallocAsync>,
    {
        let addr = self
            .core
            .backend
            .pool_malloc_async(self.raw, size, stream.raw)?;
        Ok(PoolMemory {
            pool: self,
            stream,
            addr,
            size,
        })
    }

    /// `aclrtMemPoolTrimTo`: releases cached memory until the pool holds
    /// at most `keep` bytes. Needs CANN 9.1.
    pub fn trim_to(&self, keep: usize) -> Result<(), B::Error>
    where
        P: HasApi<MemPoolMallocAsync>,
    {
        self.core.backend.pool_trim_to(self.raw, keep)
    }

    /// `aclrtMemPoolDestroy` now, with the memory it caches. On failure
    /// the pool is handed back.
    pub fn destroy(self) -> Result<(), TeardownError<B::Error, Self>> {
        match self.core.backend.pool_destroy(self.raw) {
            Ok(()) => {
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(TeardownError::new(e, self)),
        }
    }
}

impl<B: MemPools, P: ProductType> Drop for MemPool<'_, B, P> {
    fn drop(&mut self) {
        if let Err(e) = self.core.backend.pool_destroy(self.raw) {
            self.core.defer(e.code());
        }
    }
}

/// Memory of a [`MemPool`], made for work on one [`Stream`]: it borrows
/// both. [`PoolMemory::free`] gives it back in the stream's order and
/// consumes it; dropping it does the same (an error goes to the session).
pub struct PoolMemory<'a, B: MemPools + Streams, P: ProductType> {
    pool: &'a MemPool<'a, B, P>,
    stream: &'a Stream<'a, B>,
    addr: VirtAddr,
    size: usize,
}

impl<B: MemPools + Streams, P: ProductType> fmt::Debug for PoolMemory<'_, B, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolMemory")
            .field("addr", &self.addr)
            .field("size", &self.size)
            .field("pool", &self.pool.raw)
            .field("stream", &self.stream.raw)
            .finish()
    }
}

impl<'a, B: MemPools + Streams, P: ProductType> PoolMemory<'a, B, P> {
    /// The first address (device memory).
    pub fn addr(&self) -> VirtAddr {
        self.addr
    }

    /// The size asked for (the pool hands out whole blocks, 2 MiB in CANN).
    pub fn size(&self) -> usize {
        self.size
    }

    /// The pool it came from.
    pub fn pool(&self) -> &'a MemPool<'a, B, P> {
        self.pool
    }

    /// The stream it was made on.
    pub fn stream(&self) -> &'a Stream<'a, B> {
        self.stream
    }

    /// `aclrtMemPoolFreeAsync` on the stream it was made on. On failure
    /// the memory is handed back.
    pub fn free(self) -> Result<(), TeardownError<B::Error, Self>> {
        match self
            .pool
            .core
            .backend
            .pool_free_async(self.addr, self.stream.raw)
        {
            Ok(()) => {
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(TeardownError::new(e, self)),
        }
    }
}

impl<B: MemPools + Streams, P: ProductType> Drop for PoolMemory<'_, B, P> {
    fn drop(&mut self) {
        let backend = &self.pool.core.backend;
        if let Err(e) = backend.pool_free_async(self.addr, self.stream.raw) {
            self.pool.core.defer(e.code());
        }
    }
}
