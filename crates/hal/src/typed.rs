//! The typestate API: a session over one backend and one product type, and
//! owned handles whose lifetimes make misuse a compile error.

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;
use core::sync::atomic::{AtomicI32, AtomicU32, Ordering};

// 64-bit atomics are missing on some targets (thumbv7em); portable-atomic
// uses the native ones where they exist and a lock-based fallback elsewhere.
use portable_atomic::AtomicU64;

use aclmem_core::{
    AclError, AlignedSize, AttrType, Device, Location, LocationType, PhysicalMemProp, ProductType,
    RawPhysicalMemProp,
};

use crate::{
    DeviceInfo, Error, PhysicalAllocator, RawHandle, ShareableHandle, ShareableMemory, VirtAddr,
    VirtualMemory,
};

/// What the handles of a session share: the backend and the slot for errors
/// raised in `Drop`.
pub(crate) struct Core<B> {
    pub(crate) backend: B,
    deferred: AtomicI32,
    deferred_count: AtomicU32,
}

impl<B> Core<B> {
    pub(crate) fn defer(&self, code: AclError) {
        let _ = self
            .deferred
            .compare_exchange(0, code.code(), Ordering::AcqRel, Ordering::Acquire);
        self.deferred_count.fetch_add(1, Ordering::AcqRel);
    }
}

/// A backend bound to one product type `P`.
///
/// Everything allocated through a session borrows it, so the session
/// outlives its memory, reservations and mappings. Errors raised while
/// dropping a resource are kept here (the first code, and a count) for
/// [`Session::take_deferred_error`].
pub struct Session<B, P: ProductType> {
    core: Core<B>,
    device_count: u32,
    _product: PhantomData<fn() -> P>,
}

impl<B, P: ProductType> fmt::Debug for Session<B, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("product", &P::PRODUCT)
            .field("run_mode", &P::RUN_MODE)
            .field("device_count", &self.device_count)
            .finish_non_exhaustive()
    }
}

/// Options of [`Session::reserve_with`]: the other arguments of
/// `aclrtReserveMemAddress`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct ReserveOptions {
    /// Reserved by CANN; 0.
    pub alignment: usize,
    /// A requested address (experimental in CANN); `None` lets the system
    /// choose.
    pub expected: Option<VirtAddr>,
    /// 0, or 1 (the early page-type flag torch_npu still passes).
    pub flags: u64,
}

impl<B: DeviceInfo, P: ProductType> Session<B, P> {
    /// Binds `backend` to product type `P`.
    ///
    /// Fails with the backend's error if it cannot report its platform, and
    /// with `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000) if it runs on another
    /// product or run mode than `P`: the compile-time guarantees of `P`
    /// would not hold there.
    pub fn new(backend: B) -> Result<Self, B::Error> {
        let (product, run_mode) = backend.platform()?;
        if (product, run_mode) != (P::PRODUCT, P::RUN_MODE) {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT.into());
        }
        let device_count = backend.device_count()?;
        Ok(Session {
            core: Core {
                backend,
                deferred: AtomicI32::new(0),
                deferred_count: AtomicU32::new(0),
            },
            device_count,
            _product: PhantomData,
        })
    }
}

impl<B, P: ProductType> Session<B, P> {
    pub(crate) fn core(&self) -> &Core<B> {
        &self.core
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.core.backend
    }

    /// Number of devices the backend reported when the session was made.
    pub fn device_count(&self) -> u32 {
        self.device_count
    }

    /// Takes the first error raised while dropping a resource, if any, and
    /// clears the slot.
    pub fn take_deferred_error(&self) -> Option<AclError> {
        AclError::from_code(self.core.deferred.swap(0, Ordering::AcqRel))
    }

    /// How many errors were raised while dropping resources since the
    /// session was made.
    pub fn deferred_error_count(&self) -> u32 {
        self.core.deferred_count.load(Ordering::Acquire)
    }

    /// Gives the backend back. Only possible once nothing borrows the
    /// session.
    pub fn into_backend(self) -> B {
        self.core.backend
    }
}

impl<B: PhysicalAllocator, P: ProductType> Session<B, P> {
    /// Allocates physical memory. The combination was checked when `prop`
    /// was built; the size is a multiple of the granularity by type; the
    /// reserved flags are 0.
    pub fn malloc<L: LocationType, A: AttrType>(
        &self,
        prop: PhysicalMemProp<P, L, A>,
        size: AlignedSize<A>,
    ) -> Result<PhysicalMemory<'_, B, L, A>, B::Error> {
        let raw = prop.raw();
        let handle = self.core.backend.malloc_physical(size.get(), &raw, 0)?;
        Ok(PhysicalMemory {
            core: &self.core,
            handle,
            size,
            raw,
            origin: Origin::Local,
            _marker: PhantomData,
        })
    }

    /// The backend's minimum granularity for `prop`.
    pub fn granularity<L: LocationType, A: AttrType>(
        &self,
        prop: PhysicalMemProp<P, L, A>,
    ) -> Result<usize, B::Error> {
        self.core
            .backend
            .granularity(&prop.raw(), aclmem_core::GranularityOption::Minimum)
    }
}

impl<B: PhysicalAllocator + ShareableMemory, P: ProductType> Session<B, P> {
    /// Imports device memory exported by another process, for device
    /// `device_id`. `size` must be the size the exporter allocated (CANN's
    /// import does not report it; torch_npu sends it alongside the handles);
    /// mapping checks it.
    pub fn import<A: AttrType>(
        &self,
        shareable: ShareableHandle,
        device_id: u32,
        size: AlignedSize<A>,
    ) -> Result<PhysicalMemory<'_, B, Device, A>, B::Error> {
        let handle = self.core.backend.import(shareable, device_id)?;
        let mut raw = RawPhysicalMemProp {
            mem_attr: A::ATTR.raw(),
            ..RawPhysicalMemProp::default()
        };
        raw.location.id = device_id;
        raw.location.type_ = Location::Device.raw();
        Ok(PhysicalMemory {
            core: &self.core,
            handle,
            size,
            raw,
            origin: Origin::Imported,
            _marker: PhantomData,
        })
    }
}

impl<B: VirtualMemory, P: ProductType> Session<B, P> {
    /// Reserves `size` bytes of virtual address space (alignment 0, any
    /// address, flags 0).
    pub fn reserve(&self, size: usize) -> Result<Reservation<'_, B>, B::Error> {
        self.reserve_with(size, ReserveOptions::default())
    }

    /// Reserves virtual address space with explicit options.
    pub fn reserve_with(
        &self,
        size: usize,
        options: ReserveOptions,
    ) -> Result<Reservation<'_, B>, B::Error> {
        let addr =
            self.core
                .backend
                .reserve(size, options.alignment, options.expected, options.flags)?;
        Ok(Reservation {
            core: &self.core,
            addr,
            size,
            binding: AtomicU64::new(0),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Local,
    Imported,
}

/// Owned physical memory at location `L` with attribute `A`.
///
/// [`PhysicalMemory::free`] consumes it; dropping it frees it too (an error
/// goes to the session). While a [`Mapping`] of it lives it cannot be freed:
/// the mapping borrows it.
pub struct PhysicalMemory<'s, B: PhysicalAllocator, L: LocationType, A: AttrType> {
    core: &'s Core<B>,
    handle: RawHandle,
    size: AlignedSize<A>,
    raw: RawPhysicalMemProp,
    origin: Origin,
    _marker: PhantomData<fn() -> L>,
}

impl<B: PhysicalAllocator, L: LocationType, A: AttrType> fmt::Debug
    for PhysicalMemory<'_, B, L, A>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PhysicalMemory")
            .field("handle", &self.handle)
            .field("size", &self.size.get())
            .field("location", &L::LOCATION)
            .field("location_id", &self.raw.location.id)
            .field("attr", &A::ATTR)
            .field("imported", &(self.origin == Origin::Imported))
            .finish()
    }
}

impl<'s, B: PhysicalAllocator, L: LocationType, A: AttrType> PhysicalMemory<'s, B, L, A> {
    /// The backend's handle.
    pub fn handle(&self) -> RawHandle {
        self.handle
    }

    /// The size in bytes.
    pub fn size(&self) -> AlignedSize<A> {
        self.size
    }

    /// The device id, NUMA node, or 0 for host memory.
    pub fn location_id(&self) -> u32 {
        self.raw.location.id
    }

    /// The property it was allocated with.
    pub fn prop(&self) -> RawPhysicalMemProp {
        self.raw
    }

    /// Whether it was imported from another process.
    pub fn is_imported(&self) -> bool {
        self.origin == Origin::Imported
    }

    /// Frees it now. On failure the memory is handed back with the error, so
    /// nothing leaks and the caller may retry.
    pub fn free(self) -> Result<(), (B::Error, Self)> {
        match self.core.backend.free_physical(self.handle) {
            Ok(()) => {
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err((e, self)),
        }
    }

    /// What the reservation records to keep one device, and one origin, per
    /// reservation: origin (1 bit), location type (3 bits), id (28 bits).
    fn binding_key(&self) -> Result<u32, AclError> {
        let id = self.raw.location.id;
        if id >= 1 << 28 {
            return Err(AclError::INVALID_PARAM);
        }
        let origin = match self.origin {
            Origin::Local => 0,
            Origin::Imported => 1,
        };
        let location = match L::LOCATION {
            Location::Device => 1,
            Location::Host => 2,
            Location::HostNuma => 3,
        };
        Ok(1 << 31 | origin << 30 | location << 28 | id)
    }
}

impl<'s, B, A> PhysicalMemory<'s, B, Device, A>
where
    B: PhysicalAllocator + ShareableMemory,
    A: AttrType,
{
    /// Exports device memory for other processes. Exporting is a state
    /// change: the result cannot be exported again.
    pub fn export(self, flags: u64) -> Result<Exported<'s, B, A>, (B::Error, Self)> {
        match self.core.backend.export(self.handle, flags) {
            Ok(shareable) => Ok(Exported {
                memory: self,
                shareable,
            }),
            Err(e) => Err((e, self)),
        }
    }
}

impl<B: PhysicalAllocator, L: LocationType, A: AttrType> Drop for PhysicalMemory<'_, B, L, A> {
    fn drop(&mut self) {
        if let Err(e) = self.core.backend.free_physical(self.handle) {
            self.core.defer(e.code());
        }
    }
}

/// Exported device memory: still owned here, and usable (map it through
/// `Deref`), with the shareable handle other processes import.
pub struct Exported<'s, B: PhysicalAllocator + ShareableMemory, A: AttrType> {
    memory: PhysicalMemory<'s, B, Device, A>,
    shareable: ShareableHandle,
}

impl<B: PhysicalAllocator + ShareableMemory, A: AttrType> fmt::Debug for Exported<'_, B, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exported")
            .field("memory", &self.memory)
            .field("shareable", &self.shareable)
            .finish()
    }
}

impl<'s, B: PhysicalAllocator + ShareableMemory, A: AttrType> Exported<'s, B, A> {
    /// The handle to pass to the importing process.
    pub fn shareable(&self) -> ShareableHandle {
        self.shareable
    }

    /// Whitelists the processes that may import it.
    pub fn set_pids(&self, pids: &[i32]) -> Result<(), B::Error> {
        self.memory.core.backend.set_pids(self.shareable, pids)
    }

    /// Frees this process's reference. The memory lives on while an
    /// importer holds it.
    pub fn free(self) -> Result<(), (B::Error, Self)> {
        let shareable = self.shareable;
        self.memory
            .free()
            .map_err(|(e, memory)| (e, Exported { memory, shareable }))
    }
}

impl<'s, B: PhysicalAllocator + ShareableMemory, A: AttrType> Deref for Exported<'s, B, A> {
    type Target = PhysicalMemory<'s, B, Device, A>;
    fn deref(&self) -> &Self::Target {
        &self.memory
    }
}

/// An owned range of virtual address space.
///
/// [`Reservation::release`] consumes it; dropping it releases it. Mappings
/// borrow it, so a mapped range cannot be released.
pub struct Reservation<'s, B: VirtualMemory> {
    core: &'s Core<B>,
    addr: VirtAddr,
    size: usize,
    /// Live mapping count (high 32 bits) and the binding key of what they
    /// map (low 32 bits): one device and one origin per reservation.
    binding: AtomicU64,
}

impl<B: VirtualMemory> fmt::Debug for Reservation<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("addr", &self.addr)
            .field("size", &self.size)
            .field("mappings", &(self.binding.load(Ordering::Acquire) >> 32))
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
        (self.binding.load(Ordering::Acquire) >> 32) as u32
    }

    /// Maps the whole of `memory` at `offset` bytes into the reservation.
    ///
    /// Enforced here: memory of the same session, offset 0 into the handle
    /// and the handle's whole size (by construction), the range inside the
    /// reservation, one device (one location) per reservation, and no mixing
    /// of local and imported handles: `ACL_ERROR_INVALID_PARAM` otherwise. Overlap with a live
    /// mapping is refused by the backend, which owns the page tables.
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
        let key = u64::from(memory.binding_key()?);
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

    fn bind(&self, key: u64) -> Result<(), AclError> {
        let mut state = self.binding.load(Ordering::Acquire);
        loop {
            let count = state >> 32;
            let next = if count == 0 {
                1 << 32 | key
            } else if state & 0xFFFF_FFFF == key {
                (count + 1) << 32 | key
            } else {
                return Err(AclError::INVALID_PARAM);
            };
            match self.binding.compare_exchange_weak(
                state,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => state = now,
            }
        }
    }

    fn unbind(&self) {
        let _ = self
            .binding
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                let count = (state >> 32).saturating_sub(1);
                Some(if count == 0 {
                    0
                } else {
                    count << 32 | (state & 0xFFFF_FFFF)
                })
            });
    }

    /// Releases the range now. On failure it is handed back with the error.
    pub fn release(self) -> Result<(), (B::Error, Self)> {
        match self.core.backend.release(self.addr) {
            Ok(()) => {
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err((e, self)),
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
    reservation: &'r Reservation<'r, B>,
    addr: VirtAddr,
    size: usize,
    _memory: PhantomData<&'p ()>,
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

    /// Unmaps now. On failure the mapping is handed back with the error.
    pub fn unmap(self) -> Result<(), (B::Error, Self)> {
        match self.reservation.core.backend.unmap(self.addr) {
            Ok(()) => {
                self.reservation.unbind();
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err((e, self)),
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
