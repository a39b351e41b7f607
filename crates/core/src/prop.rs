//! `aclrtPhysicalMemProp`: the typed builder and its raw C mirror.

use core::fmt;
use core::marker::PhantomData;

use crate::attr::{AttrType, MemAttr};
use crate::cann::CannVersion;
use crate::error::AclError;
use crate::location::{Device, Host, HostNuma, Location, LocationType};
use crate::product::{Product, ProductType, RunMode};
use crate::rules::{Denial, Supports, Verdict, decode_raw};

/// `ACL_MEM_HANDLE_TYPE_NONE`, the only handle type `aclrtMallocPhysical`
/// accepts.
pub const MEM_HANDLE_TYPE_NONE: u32 = 0;
/// `ACL_MEM_ALLOCATION_TYPE_PINNED`, the only allocation type.
pub const MEM_ALLOCATION_TYPE_PINNED: u32 = 0;

/// `aclrtMemLocation`, field by field (`id`, `type`): 8 bytes, align 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[repr(C)]
pub struct RawMemLocation {
    /// Device id or NUMA node id; 0 for plain host memory.
    pub id: u32,
    /// `aclrtMemLocationType` value.
    pub type_: u32,
}

/// `aclrtPhysicalMemProp`, field by field: 32 bytes, align 8, fields at
/// offsets 0, 4, 8, 12 and 24 on LP64. The driver passes a pointer to this
/// struct straight to the C API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[repr(C)]
pub struct RawPhysicalMemProp {
    /// `aclrtMemHandleType`; must be [`MEM_HANDLE_TYPE_NONE`].
    pub handle_type: u32,
    /// `aclrtMemAllocationType`; must be [`MEM_ALLOCATION_TYPE_PINNED`].
    pub allocation_type: u32,
    /// `aclrtMemAttr` value.
    pub mem_attr: u32,
    /// Where the memory lives.
    pub location: RawMemLocation,
    /// Reserved; must be 0.
    pub reserve: u64,
}

/// A raw property that passed [`RawPhysicalMemProp::validate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct ValidProp {
    /// The location type.
    pub location: Location,
    /// The location id (0 for plain host memory).
    pub location_id: u32,
    /// The attribute.
    pub attr: MemAttr,
    /// How the rules allow it.
    pub verdict: Verdict,
}

impl RawPhysicalMemProp {
    /// A property for run-time values, checked against the rules. For plain
    /// host memory the id is stored as 0, as the docs require.
    pub const fn new_checked(
        product: Product,
        run_mode: RunMode,
        cann: CannVersion,
        location: Location,
        location_id: u32,
        attr: MemAttr,
    ) -> Result<(RawPhysicalMemProp, Verdict), Denial> {
        match crate::rules::check(product, run_mode, cann, location, attr) {
            Ok(verdict) => Ok((
                RawPhysicalMemProp::unchecked(location, location_id, attr),
                verdict,
            )),
            Err(d) => Err(d),
        }
    }

    const fn unchecked(location: Location, location_id: u32, attr: MemAttr) -> Self {
        RawPhysicalMemProp {
            handle_type: MEM_HANDLE_TYPE_NONE,
            allocation_type: MEM_ALLOCATION_TYPE_PINNED,
            mem_attr: attr as u32,
            location: RawMemLocation {
                id: match location {
                    Location::Host => 0,
                    _ => location_id,
                },
                type_: location as u32,
            },
            reserve: 0,
        }
    }

    /// Validates every field the way `aclrtMallocPhysical` does, for the
    /// given product, run mode and CANN version.
    ///
    /// `reserve` must be 0: the runtime's handling of a non-zero value is
    /// UNCONFIRMED, so we take the conservative choice and refuse it with
    /// `ACL_ERROR_INVALID_PARAM` rather than let code pass here and fail on
    /// hardware. The location id is not range-checked here (the caller knows
    /// the device count).
    pub const fn validate(
        &self,
        product: Product,
        run_mode: RunMode,
        cann: CannVersion,
    ) -> Result<ValidProp, AclError> {
        let (location, attr) =
            match decode_raw(product, run_mode, cann, self.location.type_, self.mem_attr) {
                Ok(decoded) => decoded,
                Err(d) => return Err(d.code()),
            };
        let verdict = match crate::rules::check(product, run_mode, cann, location, attr) {
            Ok(v) => v,
            Err(d) => return Err(d.code()),
        };
        if self.handle_type != MEM_HANDLE_TYPE_NONE
            || self.allocation_type != MEM_ALLOCATION_TYPE_PINNED
            || self.reserve != 0
        {
            return Err(AclError::INVALID_PARAM);
        }
        Ok(ValidProp {
            location,
            location_id: self.location.id,
            attr,
            verdict,
        })
    }
}

/// `fn() -> ...` keeps the prop `Send + Sync` whatever the markers are.
type Markers<P, L, A> = fn() -> (P, L, A);

/// A physical-memory property that can only exist for a combination the
/// rules allow: `P: Supports<L, A>` is checked by the compiler.
///
/// ```
/// use aclmem_core::{AtlasA2, Device, HbmHuge1G, PhysicalMemProp, Verdict};
/// let prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge1G>::on_device(0);
/// assert_eq!(prop.raw().mem_attr, 10); // ACL_HBM_MEM_HUGE1G
/// assert_eq!(PhysicalMemProp::<AtlasA2, Device, HbmHuge1G>::VERDICT, Verdict::Allowed);
/// ```
///
/// ```compile_fail
/// use aclmem_core::{AtlasA2, Host, HbmHuge1G, PhysicalMemProp};
/// // 1 GiB pages are device-only:
/// let prop = PhysicalMemProp::<AtlasA2, Host, HbmHuge1G>::on_host();
/// ```
pub struct PhysicalMemProp<P, L, A>
where
    P: ProductType,
    L: LocationType,
    A: AttrType,
{
    location_id: u32,
    _marker: PhantomData<Markers<P, L, A>>,
}

impl<P, L, A> PhysicalMemProp<P, L, A>
where
    P: Supports<L, A>,
    L: LocationType,
    A: AttrType,
{
    /// How the rules allow this combination.
    pub const VERDICT: Verdict = <P as Supports<L, A>>::VERDICT;
}

impl<P, L, A> PhysicalMemProp<P, L, A>
where
    P: ProductType,
    L: LocationType,
    A: AttrType,
{
    /// Every constructor demands `P: Supports<L, A>` at the call, so the
    /// value can only exist for an allowed combination. (The bound sits on
    /// the constructors rather than on the struct so that a refused
    /// combination produces one error, naming the rule.)
    const fn with_id(location_id: u32) -> Self {
        PhysicalMemProp {
            location_id,
            _marker: PhantomData,
        }
    }

    /// The property for code generic over the product (or location, or
    /// attribute), where the compiler cannot prove `P: Supports<L, A>`: the
    /// same rules table answers at run time, for `P`'s CANN version. `id` is the device id or NUMA
    /// node (ignored for plain host memory).
    ///
    /// ```
    /// use aclmem_core::{Denial, Device, Host, HbmHuge1G, PhysicalMemProp, ProductType};
    /// fn one_gib<P: ProductType>() -> Result<PhysicalMemProp<P, Device, HbmHuge1G>, Denial> {
    ///     PhysicalMemProp::checked(0).map(|(prop, _verdict)| prop)
    /// }
    /// assert!(one_gib::<aclmem_core::AtlasA2>().is_ok());
    /// assert_eq!(one_gib::<aclmem_core::AtlasTraining>().unwrap_err(), Denial::NotOffered);
    /// ```
    pub const fn checked(id: u32) -> Result<(Self, Verdict), Denial> {
        match crate::rules::check(P::PRODUCT, P::RUN_MODE, P::CANN, L::LOCATION, A::ATTR) {
            Ok(verdict) => {
                let id = match L::LOCATION {
                    Location::Host => 0,
                    _ => id,
                };
                Ok((Self::with_id(id), verdict))
            }
            Err(d) => Err(d),
        }
    }

    /// The location id: device id, NUMA node, or 0 for host memory.
    pub const fn location_id(&self) -> u32 {
        self.location_id
    }

    /// Lowers to the C struct (handle type NONE, allocation type PINNED,
    /// reserve 0).
    pub const fn raw(&self) -> RawPhysicalMemProp {
        RawPhysicalMemProp::unchecked(L::LOCATION, self.location_id, A::ATTR)
    }
}

impl<P: ProductType, A: AttrType> PhysicalMemProp<P, Device, A> {
    /// Memory on device `device_id`.
    pub const fn on_device(device_id: u32) -> Self
    where
        P: Supports<Device, A>,
    {
        Self::with_id(device_id)
    }
}

impl<P: ProductType, A: AttrType> PhysicalMemProp<P, Host, A> {
    /// Plain host memory (the location id is 0).
    pub const fn on_host() -> Self
    where
        P: Supports<Host, A>,
    {
        Self::with_id(0)
    }
}

impl<P: ProductType, A: AttrType> PhysicalMemProp<P, HostNuma, A> {
    /// Host memory on NUMA node `node`.
    pub const fn on_numa_node(node: u32) -> Self
    where
        P: Supports<HostNuma, A>,
    {
        Self::with_id(node)
    }
}

impl<P: ProductType, L: LocationType, A: AttrType> Clone for PhysicalMemProp<P, L, A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: ProductType, L: LocationType, A: AttrType> Copy for PhysicalMemProp<P, L, A> {}
impl<P: ProductType, L: LocationType, A: AttrType> PartialEq for PhysicalMemProp<P, L, A> {
    fn eq(&self, other: &Self) -> bool {
        self.location_id == other.location_id
    }
}
impl<P: ProductType, L: LocationType, A: AttrType> Eq for PhysicalMemProp<P, L, A> {}
impl<P: ProductType, L: LocationType, A: AttrType> fmt::Debug for PhysicalMemProp<P, L, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PhysicalMemProp")
            .field("product", &P::PRODUCT)
            .field("run_mode", &P::RUN_MODE)
            .field("location", &L::LOCATION)
            .field("location_id", &self.location_id)
            .field("attr", &A::ATTR)
            .finish()
    }
}
#[cfg(feature = "defmt-1")]
impl<P: ProductType, L: LocationType, A: AttrType> defmt::Format for PhysicalMemProp<P, L, A> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "PhysicalMemProp {{ {} {} {}={=u32} {} }}",
            P::PRODUCT,
            P::RUN_MODE,
            L::LOCATION,
            self.location_id,
            A::ATTR
        )
    }
}
