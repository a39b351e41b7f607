//! Typed virtual memory: reservations, which remember what their mappings
//! are bound to, and mappings, unmapped when they drop.

use super::*;

/// What one reservation's mappings are bound to: CANN forbids mixing the
/// memory of two devices (two locations) in one reservation, and mixing
/// local with imported memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BindingKey {
    pub(super) imported: bool,
    pub(super) location: Location,
    pub(super) id: u32,
}

impl BindingKey {
    /// Set in every packed key, so that 0 means "no key".
    pub(super) const PRESENT: u32 = 1 << 31;
    pub(super) const IMPORTED: u32 = 1 << 30;
    /// The raw C location type (0, 1 or 4) fits in 3 bits.
    pub(super) const LOCATION_SHIFT: u32 = 27;
    pub(super) const LOCATION_MASK: u32 = 0b111;
    /// Device ids and NUMA nodes up to 2^27 - 1.
    pub(super) const ID_MASK: u32 = (1 << Self::LOCATION_SHIFT) - 1;

    /// The key in 32 bits, or 100000 for an id too large to record.
    pub(super) fn pack(self) -> Result<u32, AclError> {
        if self.id > Self::ID_MASK {
            return Err(AclError::INVALID_PARAM);
        }
        let imported = if self.imported { Self::IMPORTED } else { 0 };
        Ok(Self::PRESENT
            | imported
            | (self.location.raw() & Self::LOCATION_MASK) << Self::LOCATION_SHIFT
            | self.id)
    }
}

/// A reservation's live mapping count and the key of what they map, packed
/// into one atomic word so that binding and counting are one
/// compare-and-swap: the count in the high 32 bits, the packed
/// [`BindingKey`] (0 when nothing is mapped) in the low 32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Binding {
    pub(super) mappings: u32,
    pub(super) key: u32,
}

impl Binding {
    pub(super) const EMPTY: Binding = Binding {
        mappings: 0,
        key: 0,
    };
    pub(super) const COUNT_SHIFT: u32 = 32;
    pub(super) const KEY_MASK: u64 = 0xFFFF_FFFF;

    pub(super) const fn pack(self) -> u64 {
        (self.mappings as u64) << Self::COUNT_SHIFT | self.key as u64
    }

    pub(super) const fn unpack(word: u64) -> Binding {
        Binding {
            mappings: (word >> Self::COUNT_SHIFT) as u32,
            key: (word & Self::KEY_MASK) as u32,
        }
    }

    /// One more mapping of `key`: `None` if the reservation is bound to
    /// another key.
    pub(super) fn bind(self, key: u32) -> Option<Binding> {
        if self.mappings == 0 {
            Some(Binding { mappings: 1, key })
        } else if self.key == key {
            Some(Binding {
                mappings: self.mappings.checked_add(1)?,
                key,
            })
        } else {
            None
        }
    }

    /// One mapping fewer; the last one clears the key.
    pub(super) fn unbind(self) -> Binding {
        match self.mappings {
            0 | 1 => Binding::EMPTY,
            n => Binding {
                mappings: n - 1,
                key: self.key,
            },
        }
    }
}

/// An owned range of virtual address space.
///
/// [`Reservation::release`] consumes it; dropping it releases it. Mappings
/// borrow it, so a mapped range cannot be released.
pub struct Reservation<'s, B: VirtualMemory> {
    pub(super) core: &'s Core<B>,
    pub(super) addr: VirtAddr,
    pub(super) size: usize,
    /// A packed [`Binding`].
    pub(super) binding: AtomicU64,
}

impl<B: VirtualMemory> fmt::Debug for Reservation<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("addr", &self.addr)
            .field("size", &self.size)
            .field("mappings", &self.mapping_count())
            .finish()
    }
}

impl<'s, B: VirtualMemory> Reservation<'s, B> {
    /// The first address.
    pub fn addr(&self) -> VirtAddr {
        self.addr
    }

    /// The size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Number of live mappings in this reservation.
    pub fn mapping_count(&self) -> u32 {
        Binding::unpack(self.binding.load(Ordering::Acquire)).mappings
    }

    /// Maps the whole of `memory` at `offset` bytes into the reservation.
    ///
    /// Enforced here: memory of the same session, offset 0 into the handle
    /// and the handle's whole size (by construction), the range inside the
    /// reservation, one device (one location) per reservation, and no mixing
    /// of local and imported handles: `ACL_ERROR_INVALID_PARAM` otherwise.
    /// Overlap with a live mapping is refused by the backend, which owns the
    /// page tables.
    pub fn map<'r, 'p, L, A>(
        &'r self,
        offset: usize,
        memory: &'p PhysicalMemory<'_, B, L, A>,
    ) -> Result<Mapping<'r, 'p, B>, B::Error>
    where
        B: PhysicalAllocator,
        L: LocationType,
        A: AttrType,
    {
        // Memory of another session (another backend instance) means
        // nothing to this one's page tables.
        if !core::ptr::eq(self.core, memory.core) {
            return Err(AclError::INVALID_PARAM.into());
        }
        let size = memory.size.get();
        let end = offset.checked_add(size).ok_or(AclError::INVALID_PARAM)?;
        if end > self.size {
            return Err(AclError::INVALID_PARAM.into());
        }
        let addr = self
            .addr
            .checked_add(offset)
            .ok_or(AclError::INVALID_PARAM)?;
        let key = memory.binding_key()?.pack()?;
        self.bind(key)?;
        match self.core.backend.map(addr, size, 0, memory.handle, 0) {
            Ok(()) => Ok(Mapping {
                reservation: self,
                addr,
                size,
                _memory: PhantomData,
            }),
            Err(e) => {
                self.unbind();
                Err(e)
            }
        }
    }

    pub(super) fn bind(&self, key: u32) -> Result<(), AclError> {
        self.binding
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                Binding::unpack(word).bind(key).map(Binding::pack)
            })
            .map(drop)
            .map_err(|_| AclError::INVALID_PARAM)
    }

    pub(super) fn unbind(&self) {
        let _ = self
            .binding
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                Some(Binding::unpack(word).unbind().pack())
            });
    }

    /// Releases the range now. On failure it is handed back in the error.
    pub fn release(self) -> Result<(), TeardownError<B::Error, Self>> {
        match self.core.backend.release(self.addr) {
            Ok(()) => {
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(TeardownError::new(e, self)),
        }
    }
}

impl<B: VirtualMemory> Drop for Reservation<'_, B> {
    fn drop(&mut self) {
        if let Err(e) = self.core.backend.release(self.addr) {
            self.core.defer(e.code());
        }
    }
}

/// A live mapping of physical memory (borrowed for `'p`) into a reservation
/// (borrowed for `'r`). Dropping it unmaps it.
pub struct Mapping<'r, 'p, B: VirtualMemory> {
    pub(super) reservation: &'r Reservation<'r, B>,
    pub(super) addr: VirtAddr,
    pub(super) size: usize,
    pub(super) _memory: PhantomData<&'p ()>,
}

impl<B: VirtualMemory> fmt::Debug for Mapping<'_, '_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mapping")
            .field("addr", &self.addr)
            .field("size", &self.size)
            .finish()
    }
}

impl<B: VirtualMemory> Mapping<'_, '_, B> {
    /// The first mapped address.
    pub fn addr(&self) -> VirtAddr {
        self.addr
    }

    /// The mapped size in bytes (the whole handle).
    pub fn size(&self) -> usize {
        self.size
    }

    /// Unmaps now. On failure the mapping is handed back in the error.
    pub fn unmap(self) -> Result<(), TeardownError<B::Error, Self>> {
        match self.reservation.core.backend.unmap(self.addr) {
            Ok(()) => {
                self.reservation.unbind();
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(TeardownError::new(e, self)),
        }
    }
}

impl<B: VirtualMemory> Drop for Mapping<'_, '_, B> {
    fn drop(&mut self) {
        match self.reservation.core.backend.unmap(self.addr) {
            Ok(()) => self.reservation.unbind(),
            Err(e) => self.reservation.core.defer(e.code()),
        }
    }
}
