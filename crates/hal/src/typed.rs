//! The typestate API: a session over one backend and one product type, and
//! owned handles whose lifetimes make misuse a compile error.
//!
//! Every public way to obtain a typed value, and what guards it:
//!
//! | value | obtained by | guard |
//! |---|---|---|
//! | [`PhysicalMemProp`] | `on_device` / `on_host` / `on_numa_node` | `P: Supports<L, A>` at compile time |
//! | [`PhysicalMemProp`] | `checked` | the same rules table at run time |
//! | [`Session`] | [`Session::new`] | the backend's platform and CANN version match `P` |
//! | [`PhysicalMemory`] | [`Session::malloc`] | takes a [`PhysicalMemProp<P, L, A>`] |
//! | [`PhysicalMemory`] | [`Session::import`] | `P: Supports<Device, A>` at compile time |
//! | [`Exported`] | [`PhysicalMemory::export`] | device memory only |
//! | [`Reservation`] | [`Session::reserve`] / [`Session::reserve_with`] | the backend |
//! | [`Mapping`] | [`Reservation::map`] | memory of the same session; range and binding checked |
//! | [`ExpandableSegment`](crate::ExpandableSegment) | [`Session::expandable_segment`] | takes a [`PhysicalMemProp<P, L, A>`] |
//! | [`Stream`] | [`Session::stream`] | the backend |
//! | [`MemPool`] | [`Session::mem_pool`] | `P: HasApi<MemPoolCreate>` at compile time (CANN 9.0, Atlas A2) |
//! | [`PoolMemory`] | [`MemPool::malloc_async`] | `P: HasApi<MemPoolMallocAsync>` at compile time (CANN 9.1); borrows its pool and its stream |
//! | [`ManagedMemory`] | [`Session::malloc_managed`] | `P: HasApi<MemAllocManaged>` at compile time (CANN 9.0, Atlas A2/A3); advice and prefetch `P: HasApi<MemManagedAdvise>` (9.1) |
//!
//! (`crates/hal/tests/constructors.rs` keeps this list and the UI cases that
//! prove each compile-time guard in step.)

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;
use core::sync::atomic::{AtomicU32, Ordering};

// 64-bit atomics are missing on some targets (thumbv7em); portable-atomic
// uses the native ones where they exist and a lock-based fallback elsewhere.
use portable_atomic::AtomicU64;

use aclmem_core::{
    AclError, AlignedSize, AttrType, Device, Location, LocationType, PhysicalMemProp, ProductType,
    RawPhysicalMemProp, Supports,
};

use crate::error::{SessionError, TeardownError};
use crate::{
    DeviceInfo, Error, PhysicalAllocator, RawHandle, ShareableHandle, ShareableMemory, VirtAddr,
    VirtualMemory,
};

/// How many errors raised in `Drop` a session keeps until they are taken;
/// further ones are only counted.
pub const DEFERRED_ERRORS: usize = 16;

/// Errors raised while dropping resources: a fixed-capacity queue
/// (pushable from `Drop` on any thread, no lock, no allocator) and a count
/// of all of them.
///
/// heapless marks its MPMC queue deprecated because it is not strictly
/// lock-free: an operation racing a pre-empted one may fail instead of
/// waiting. Here that costs nothing: a push that fails is still counted in
/// `raised`, exactly like a push into a full queue.
struct DeferredErrors {
    queue: heapless::mpmc::Queue<AclError, DEFERRED_ERRORS>,
    raised: AtomicU32,
}

/// What the handles of a session share: the backend and its deferred
/// errors.
pub(crate) struct Core<B> {
    pub(crate) backend: B,
    deferred: DeferredErrors,
}

impl<B> Core<B> {
    /// Keeps an error raised in `Drop` for the session.
    pub(crate) fn defer(&self, code: AclError) {
        self.deferred.raised.fetch_add(1, Ordering::AcqRel);
        // A full queue keeps the oldest errors; the count still says how
        // many there were.
        let _ = self.deferred.queue.enqueue(code);
    }
}

/// A backend bound to one product type `P` (product, run mode and the CANN
/// version the code targets).
///
/// Everything allocated through a session borrows it, so the session
/// outlives its memory, reservations and mappings. Errors raised while
/// dropping a resource are kept here for [`Session::take_deferred_error`].
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
            .field("cann", &P::CANN)
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
    /// Fails with [`SessionError::Backend`] if the backend cannot report
    /// its platform, with [`SessionError::WrongPlatform`] if it runs on
    /// another product or run mode than `P`, and with
    /// [`SessionError::OlderCann`] if it runs an older CANN release than `P`
    /// targets: the compile-time guarantees of `P` would not hold there.
    ///
    /// ```
    /// use aclmem_core::{AclError, AtlasA2};
    /// use aclmem_hal::{Session, SessionError};
    /// use aclmem_rc_stub::RcStub;
    /// // The RC stub answers 207000 to every call, its platform query too.
    /// let refused = Session::<_, AtlasA2>::new(RcStub).unwrap_err();
    /// assert_eq!(refused, SessionError::Backend(AclError::RT_FEATURE_NOT_SUPPORT));
    /// ```
    pub fn new(backend: B) -> Result<Self, SessionError<B::Error>> {
        let found = backend.platform().map_err(SessionError::Backend)?;
        let expected = (P::PRODUCT, P::RUN_MODE);
        if found != expected {
            return Err(SessionError::WrongPlatform { expected, found });
        }
        let cann = backend.cann().map_err(SessionError::Backend)?;
        if cann < P::CANN {
            return Err(SessionError::OlderCann {
                expected: P::CANN,
                found: cann,
            });
        }
        let device_count = backend.device_count().map_err(SessionError::Backend)?;
        Ok(Session {
            core: Core {
                backend,
                deferred: DeferredErrors {
                    #[expect(deprecated, reason = "see `DeferredErrors`: a lost push is counted")]
                    queue: heapless::mpmc::Queue::new(),
                    raised: AtomicU32::new(0),
                },
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

    /// Takes the oldest error raised while dropping a resource, if any.
    /// The session keeps up to [`DEFERRED_ERRORS`] of them.
    pub fn take_deferred_error(&self) -> Option<AclError> {
        self.core.deferred.queue.dequeue()
    }

    /// How many errors were raised while dropping resources since the
    /// session was made (including any the full queue could not keep).
    pub fn deferred_error_count(&self) -> u32 {
        self.core.deferred.raised.load(Ordering::Acquire)
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
    /// `device_id`, as attribute `A`, which the product must allow on the
    /// device (`P: Supports<Device, A>`). `size` must be the size the
    /// exporter allocated (CANN's import does not report it; torch_npu
    /// sends it alongside the handles); mapping checks it.
    pub fn import<A: AttrType>(
        &self,
        shareable: ShareableHandle,
        device_id: u32,
        size: AlignedSize<A>,
    ) -> Result<PhysicalMemory<'_, B, Device, A>, B::Error>
    where
        P: Supports<Device, A>,
    {
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
            binding: AtomicU64::new(Binding::EMPTY.pack()),
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

    /// Frees it now. On failure the memory is handed back in the error, so
    /// nothing leaks and the caller may retry.
    pub fn free(self) -> Result<(), TeardownError<B::Error, Self>> {
        match self.core.backend.free_physical(self.handle) {
            Ok(()) => {
                core::mem::forget(self);
                Ok(())
            }
            Err(e) => Err(TeardownError::new(e, self)),
        }
    }

    /// What a reservation records to keep one device, and one origin, per
    /// reservation.
    fn binding_key(&self) -> Result<BindingKey, AclError> {
        let key = BindingKey {
            imported: self.origin == Origin::Imported,
            location: L::LOCATION,
            id: self.raw.location.id,
        };
        key.pack().map(|_| key)
    }
}

impl<'s, B, A> PhysicalMemory<'s, B, Device, A>
where
    B: PhysicalAllocator + ShareableMemory,
    A: AttrType,
{
    /// Exports device memory for other processes. Exporting is a state
    /// change: the result cannot be exported again. On failure the memory
    /// is handed back.
    pub fn export(self, flags: u64) -> Result<Exported<'s, B, A>, TeardownError<B::Error, Self>> {
        match self.core.backend.export(self.handle, flags) {
            Ok(shareable) => Ok(Exported {
                memory: self,
                shareable,
            }),
            Err(e) => Err(TeardownError::new(e, self)),
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
    /// importer holds it. On failure the export is handed back.
    pub fn free(self) -> Result<(), TeardownError<B::Error, Self>> {
        let shareable = self.shareable;
        self.memory.free().map_err(|e| {
            let (error, memory) = e.into_parts();
            TeardownError::new(error, Exported { memory, shareable })
        })
    }
}

impl<'s, B: PhysicalAllocator + ShareableMemory, A: AttrType> Deref for Exported<'s, B, A> {
    type Target = PhysicalMemory<'s, B, Device, A>;
    fn deref(&self) -> &Self::Target {
        &self.memory
    }
}

mod pools;
pub use pools::{MemPool, PoolMemory, Stream};

mod managed;
pub use managed::{MANAGED_PAGE, ManagedMemory};

mod virtual_memory;
use virtual_memory::{Binding, BindingKey};
pub use virtual_memory::{Mapping, Reservation};

#[cfg(test)]
mod tests;
