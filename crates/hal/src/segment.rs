//! Expandable segments: the torch_npu / PyTorch pattern over any backend.
//!
//! One large reservation is made once; physical chunks are mapped into it as
//! the segment grows and unmapped (and freed) as it shrinks, so the address
//! range stays contiguous while the memory behind it follows demand. Slot
//! `i` holds a handle exactly when chunk `i` is mapped.

use core::fmt;
use core::ops::Range;

use aclmem_core::{
    AclError, AlignedSize, AttrType, LocationType, PhysicalMemProp, ProductType, RawPhysicalMemProp,
};

use crate::typed::{Core, Session};
use crate::{Error, PhysicalAllocator, RawHandle, VirtAddr, VirtualMemory};

/// One chunk's bookkeeping: the handle mapped there, if any.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Slot {
    handle: Option<RawHandle>,
    /// Mapped by the `map` call in progress (rolled back if it fails).
    fresh: bool,
}

impl Slot {
    const EMPTY: Slot = Slot {
        handle: None,
        fresh: false,
    };
}

/// A contiguous virtual range backed, chunk by chunk, by physical memory.
///
/// The segment owns its bookkeeping, one slot per chunk, in a
/// fixed-capacity `heapless::Vec` of at most `N` slots (no allocator needed).
/// Dropping the segment unmaps and frees every chunk and releases the range;
/// errors go to the session.
///
/// ```
/// use aclmem_core::{AlignedSize, AtlasA2, Device, HbmHuge, PhysicalMemProp, MIB};
/// use aclmem_hal::{ExpandableSegment, PhysicalAllocator, Session, VirtualMemory};
///
/// /// Grows a 64-chunk segment to hold `bytes`.
/// fn grow<B: PhysicalAllocator + VirtualMemory>(
///     session: &Session<B, AtlasA2>,
///     bytes: usize,
/// ) -> Result<ExpandableSegment<'_, B, 64>, B::Error> {
///     let prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0);
///     let mut segment = session.expandable_segment(prop, AlignedSize::new::<{ 2 * MIB }>(), 64)?;
///     segment.map(0, bytes)?;
///     Ok(segment)
/// }
/// # let _ = grow::<aclmem_rc_stub::RcStub>;
/// ```
pub struct ExpandableSegment<'s, B: PhysicalAllocator + VirtualMemory, const N: usize> {
    core: &'s Core<B>,
    addr: VirtAddr,
    chunk: usize,
    prop: RawPhysicalMemProp,
    slots: heapless::Vec<Slot, N>,
    mapped: usize,
}

impl<B: PhysicalAllocator + VirtualMemory, const N: usize> fmt::Debug
    for ExpandableSegment<'_, B, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpandableSegment")
            .field("addr", &self.addr)
            .field("chunk", &self.chunk)
            .field("chunks", &self.slots.len())
            .field("mapped", &self.mapped)
            .finish()
    }
}

impl<B: PhysicalAllocator + VirtualMemory, P: ProductType> Session<B, P> {
    /// Reserves `chunks` chunks of `chunk` bytes of address space for an
    /// expandable segment of memory described by `prop`. Nothing is mapped
    /// yet. `chunks` must be between 1 and the segment's capacity `N`
    /// (`ACL_ERROR_INVALID_PARAM` otherwise). (torch_npu reserves total
    /// device memory × 1⅛.)
    pub fn expandable_segment<L: LocationType, A: AttrType, const N: usize>(
        &self,
        prop: PhysicalMemProp<P, L, A>,
        chunk: AlignedSize<A>,
        chunks: usize,
    ) -> Result<ExpandableSegment<'_, B, N>, B::Error> {
        let chunk = chunk.get();
        if chunks == 0 || chunks > N {
            return Err(AclError::INVALID_PARAM.into());
        }
        let size = chunk.checked_mul(chunks).ok_or(AclError::INVALID_PARAM)?;
        let mut slots = heapless::Vec::new();
        slots
            .resize(chunks, Slot::EMPTY)
            .map_err(|_| AclError::INVALID_PARAM)?;
        let core = self.core();
        let addr = core.backend.reserve(size, 0, None, 0)?;
        Ok(ExpandableSegment {
            core,
            addr,
            chunk,
            prop: prop.raw(),
            slots,
            mapped: 0,
        })
    }
}

impl<B: PhysicalAllocator + VirtualMemory, const N: usize> ExpandableSegment<'_, B, N> {
    /// The first address of the segment.
    pub fn addr(&self) -> VirtAddr {
        self.addr
    }

    /// The chunk size in bytes.
    pub fn chunk_size(&self) -> usize {
        self.chunk
    }

    /// Total reserved bytes.
    pub fn capacity(&self) -> usize {
        self.chunk * self.slots.len()
    }

    /// Bytes currently backed by physical memory.
    pub fn mapped_bytes(&self) -> usize {
        self.mapped * self.chunk
    }

    /// Whether chunk `index` is mapped.
    pub fn is_mapped(&self, index: usize) -> bool {
        self.slots.get(index).is_some_and(|s| s.handle.is_some())
    }

    /// The end of `offset..offset + len`, or 100000 if the range is empty
    /// or leaves the segment.
    fn range_end(&self, offset: usize, len: usize) -> Result<usize, AclError> {
        let end = offset.checked_add(len).ok_or(AclError::INVALID_PARAM)?;
        if len == 0 || end > self.capacity() {
            return Err(AclError::INVALID_PARAM);
        }
        Ok(end)
    }

    fn chunk_addr(&self, index: usize) -> VirtAddr {
        // In range: index < slots.len(), and the reservation covers them all.
        VirtAddr(self.addr.0.saturating_add(index * self.chunk))
    }

    /// Backs `offset..offset + len` with memory: allocates and maps every
    /// chunk it touches that is not mapped yet, lowest address first.
    /// Returns the byte range of the chunks it mapped (empty if all were).
    ///
    /// All or nothing: if any allocation or mapping fails, the chunks this
    /// call created are unmapped and freed again before the error is
    /// returned; on `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) the caller can
    /// free cached memory and retry, as torch_npu does.
    pub fn map(&mut self, offset: usize, len: usize) -> Result<Range<usize>, B::Error> {
        // Every chunk the range touches.
        let chunks = offset / self.chunk..self.range_end(offset, len)?.div_ceil(self.chunk);
        for i in chunks.clone() {
            if self.slots[i].handle.is_some() {
                continue;
            }
            if let Err(e) = self.map_chunk(i) {
                for j in chunks.start..i {
                    if self.slots[j].fresh {
                        let _ = self.unmap_chunk(j, true);
                        self.slots[j].fresh = false;
                    }
                }
                return Err(e);
            }
        }
        let mut new: Option<Range<usize>> = None;
        for i in chunks {
            if core::mem::take(&mut self.slots[i].fresh) {
                new.get_or_insert(i..i).end = i + 1;
            }
        }
        Ok(new.map_or(0..0, |r| r.start * self.chunk..r.end * self.chunk))
    }

    fn map_chunk(&mut self, i: usize) -> Result<(), B::Error> {
        let backend = &self.core.backend;
        let handle = backend.malloc_physical(self.chunk, &self.prop, 0)?;
        if let Err(e) = backend.map(self.chunk_addr(i), self.chunk, 0, handle, 0) {
            if let Err(free) = backend.free_physical(handle) {
                self.core.defer(free.code());
            }
            return Err(e);
        }
        self.slots[i] = Slot {
            handle: Some(handle),
            fresh: true,
        };
        self.mapped += 1;
        Ok(())
    }

    /// Unmaps and frees chunk `i`. With `defer`, errors go to the session.
    fn unmap_chunk(&mut self, i: usize, defer: bool) -> Result<(), B::Error> {
        let Some(handle) = self.slots[i].handle else {
            return Ok(());
        };
        let backend = &self.core.backend;
        let result = backend.unmap(self.chunk_addr(i)).and_then(|()| {
            // Unmapped: the slot is empty whatever the free says, so nothing
            // is mapped over a handle the segment no longer knows.
            self.slots[i] = Slot::EMPTY;
            self.mapped -= 1;
            backend.free_physical(handle)
        });
        match result {
            Err(e) if defer => {
                self.core.defer(e.code());
                Ok(())
            }
            other => other,
        }
    }

    /// Releases memory: unmaps and frees every chunk that lies *entirely*
    /// inside `offset..offset + len` (partially covered chunks stay).
    /// Returns the byte range of the chunks it released. The caller must
    /// make sure the device no longer uses the range (torch_npu synchronizes
    /// the device first: unmap does not).
    pub fn unmap(&mut self, offset: usize, len: usize) -> Result<Range<usize>, B::Error> {
        let end = self.range_end(offset, len)?;
        // Only the chunks the range covers entirely.
        let first = offset.div_ceil(self.chunk);
        let last = end / self.chunk; // exclusive
        let mut released: Option<Range<usize>> = None;
        for i in first..last {
            if self.slots[i].handle.is_some() {
                self.unmap_chunk(i, false)?;
                released.get_or_insert(i..i).end = i + 1;
            }
        }
        Ok(released.map_or(0..0, |r| r.start * self.chunk..r.end * self.chunk))
    }
}

impl<B: PhysicalAllocator + VirtualMemory, const N: usize> Drop for ExpandableSegment<'_, B, N> {
    fn drop(&mut self) {
        for i in 0..self.slots.len() {
            let _ = self.unmap_chunk(i, true);
        }
        if let Err(e) = self.core.backend.release(self.addr) {
            self.core.defer(e.code());
        }
    }
}
