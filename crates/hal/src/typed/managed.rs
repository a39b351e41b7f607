//! Typed managed memory: [`ManagedMemory`], a location of its own (the
//! host and the device both reach it), from `Session::malloc_managed`
//! (`P: HasApi<MemAllocManaged>`, CANN 9.0), with advice and prefetches
//! (`P: HasApi<MemManagedAdvise>`, 9.1); `free` consumes it.

use aclmem_core::{HasApi, MemAllocManaged, MemManagedAdvise};

use super::*;
use crate::{ManagedAdvice, ManagedLocation, ManagedMemoryApi, Stream, Streams};

/// The granularity of managed memory: allocations are rounded up to it,
/// and advice and prefetches cover whole multiples of it (2 MiB).
pub const MANAGED_PAGE: usize = 2 << 20;

impl<B: ManagedMemoryApi, P: ProductType> Session<B, P> {
    /// `aclrtMemAllocManaged(&ptr, size, ACL_RT_MEM_ATTACH_GLOBAL)`:
    /// managed memory of at least `size` bytes. Needs CANN 9.0 on Atlas A2
    /// or A3.
    pub fn malloc_managed(&self, size: usize) -> Result<ManagedMemory<'_, B, P>, B::Error>
    where
        P: HasApi<MemAllocManaged>,
    {
        let addr = self.core().backend.malloc_managed(size)?;
        Ok(ManagedMemory {
            core: self.core(),
            addr,
            size,
            _product: PhantomData,
        })
    }
}

/// Owned managed memory: `free` consumes it; dropping it frees it (an
/// error goes to the session).
pub struct ManagedMemory<'s, B: ManagedMemoryApi, P: ProductType> {
    core: &'s Core<B>,
    addr: VirtAddr,
    size: usize,
    _product: PhantomData<fn() -> P>,
}

impl<B: ManagedMemoryApi, P: ProductType> fmt::Debug for ManagedMemory<'_, B, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedMemory")
            .field("addr", &self.addr)
            .field("size", &self.size)
            .finish()
    }
}

impl<B: ManagedMemoryApi, P: ProductType> ManagedMemory<'_, B, P> {
    /// The first address, the same for the host and the device.
    pub fn addr(&self) -> VirtAddr {
        self.addr
    }

    /// The size asked for.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The bytes advice and prefetches cover: the size rounded up to
    /// [`MANAGED_PAGE`], as the runtime allocated it.
    pub fn pages(&self) -> usize {
        self.size
            .div_ceil(MANAGED_PAGE)
            .saturating_mul(MANAGED_PAGE)
    }

    /// `aclrtMemManagedAdvise` over the whole allocation. Needs CANN 9.1.
    pub fn advise(&self, advice: ManagedAdvice, location: ManagedLocation) -> Result<(), B::Error>
    where
        P: HasApi<MemManagedAdvise>,
    {
        self.core
            .backend
            .managed_advise(self.addr, self.pages(), advice, location)
    }

    /// `aclrtMemManagedPrefetchAsync` of the whole allocation to
    /// `location`, in `stream`'s order. Needs CANN 9.1.
    pub fn prefetch_async(
        &self,
        location: ManagedLocation,
        stream: &Stream<'_, B>,
    ) -> Result<(), B::Error>
    where
        B: Streams,
        P: HasApi<MemManagedAdvise>,
    {
        self.core
            .backend
            .managed_prefetch_async(self.addr, self.pages(), location, stream.raw())
    }

    /// `aclrtFree` now. On failure the memory is handed back.
    pub fn free(self) -> Result<(), TeardownError<B::Error, Self>> {
        match self.core.backend.free_managed(self.addr) {
            Ok(()) => {
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(TeardownError::new(e, self)),
        }
    }
}

impl<B: ManagedMemoryApi, P: ProductType> Drop for ManagedMemory<'_, B, P> {
    fn drop(&mut self) {
        if let Err(e) = self.core.backend.free_managed(self.addr) {
            self.core.defer(e.code());
        }
    }
}
