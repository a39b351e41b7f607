//! The rules table and its two projections.
//!
//! [`rules_table!`] is invoked exactly once, at the bottom of this file. From
//! that one invocation come
//!
//! * the capability-trait impls ([`AvailableOn`], [`FormAllowsPhysical`],
//!   [`OfferedBy`], [`DeviceAccepts`], [`HostAccepts`], [`Holds`], and
//!   through them [`Supports`]) that make an invalid
//!   product × location × attribute combination fail to compile, and
//! * the constant arrays read by the run-time [`check`], for code that learns
//!   its product only at run time (from the SoC name).
//!
//! A test in this crate visits every one of the 312 combinations and proves
//! the two projections agree.
//!
//! The facts encoded are the CANN 9.0 rules for `aclrtMallocPhysical` (see
//! `shared/reference/acl-physical-memory.md`, section 1.5):
//! no physical memory at all on Atlas 200/300/500 inference products nor in
//! the Ascend RC form; `*_HUGE1G` device only; `ACL_MEM_HUGE1G` only on A2/A3;
//! `ACL_HBM_MEM_HUGE1G` only on Atlas 350/A3/A2; `ACL_MEM_P2P_HUGE1G` only on
//! A3 where the device confirms it; `DDR_*` host only (host NUMA counts as
//! host); A3 host-NUMA memory with a P2P attribute is size-limited by the
//! platform.

use core::fmt;

use crate::attr::*;
use crate::error::AclError;
use crate::location::{Device, Host, HostNuma, Location, LocationType};
use crate::product::*;

/// A positive answer of the rules: the combination may be allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum Verdict {
    /// Supported without conditions.
    Allowed,
    /// Supported only where the device reports the feature (for example
    /// `ACL_MEM_P2P_HUGE1G` on some A3 interconnects); otherwise the runtime
    /// answers 207000 at allocation time.
    AllowedIfDeviceConfirms,
    /// Supported, but the largest size depends on the server model and BIOS
    /// (A3 super-node host-NUMA P2P memory); try the allocation to find out.
    SizeLimitedByPlatform,
}

impl Verdict {
    /// Stable identifier used in JSON and tables.
    pub const fn id(self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::AllowedIfDeviceConfirms => "allowed-if-device-confirms",
            Verdict::SizeLimitedByPlatform => "size-limited-by-platform",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Allowed => "allowed",
            Verdict::AllowedIfDeviceConfirms => "allowed if the device confirms",
            Verdict::SizeLimitedByPlatform => "allowed, size limited by the platform",
        })
    }
}

/// Why a combination is refused, with the ACL code the runtime returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[non_exhaustive]
pub enum Denial {
    /// The product has no physical-memory API (Atlas 200/300/500 inference).
    ProductUnsupported,
    /// The Ascend RC form does not support the physical-memory API.
    RcForm,
    /// A raw `memAttr` the call rejects (`ACL_DDR_MEM`, `ACL_HBM_MEM`,
    /// `ACL_HBM_MEM_P2P_*`) or a value outside the enum.
    RejectedAttr,
    /// A raw location type the call rejects (`UNREGISTERED`, `MANAGED`) or a
    /// value outside the enum.
    RejectedLocation,
    /// A `DDR_*` attribute asked for on the device.
    HostOnlyAttr,
    /// A `*_HUGE1G` attribute asked for on the host.
    DeviceOnlyAttr,
    /// The product does not offer this (1 GiB) attribute.
    NotOffered,
}

impl Denial {
    /// The error the runtime returns for this refusal.
    ///
    /// Parameter-shape errors are caught by the ACL layer (100000);
    /// product, form and feature gaps come from the runtime/driver (207000).
    /// The RC-form code is not documented (INFERRED: the driver's "not
    /// supported", 207000).
    pub const fn code(self) -> AclError {
        match self {
            Denial::ProductUnsupported | Denial::RcForm | Denial::NotOffered => {
                AclError::RT_FEATURE_NOT_SUPPORT
            }
            Denial::RejectedAttr
            | Denial::RejectedLocation
            | Denial::HostOnlyAttr
            | Denial::DeviceOnlyAttr => AclError::INVALID_PARAM,
        }
    }

    /// The rule that refuses the combination, in one sentence.
    pub const fn rule(self) -> &'static str {
        match self {
            Denial::ProductUnsupported => {
                "this product does not support aclrtMallocPhysical (Atlas 200/300/500 inference)"
            }
            Denial::RcForm => "the Ascend RC form does not support aclrtMallocPhysical",
            Denial::RejectedAttr => "aclrtMallocPhysical does not accept this memAttr value",
            Denial::RejectedLocation => "aclrtMallocPhysical does not accept this location type",
            Denial::HostOnlyAttr => "DDR_* attributes are host-only",
            Denial::DeviceOnlyAttr => "*_HUGE1G attributes are device-only",
            Denial::NotOffered => "this product does not offer this 1 GiB huge-page attribute",
        }
    }

    /// Stable identifier used in JSON and tables.
    pub const fn id(self) -> &'static str {
        match self {
            Denial::ProductUnsupported => "product-unsupported",
            Denial::RcForm => "rc-form",
            Denial::RejectedAttr => "rejected-attr",
            Denial::RejectedLocation => "rejected-location",
            Denial::HostOnlyAttr => "host-only-attr",
            Denial::DeviceOnlyAttr => "device-only-attr",
            Denial::NotOffered => "not-offered",
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.rule(), self.code())
    }
}

impl core::error::Error for Denial {}

impl From<Denial> for AclError {
    fn from(d: Denial) -> AclError {
        d.code()
    }
}

// ---------------------------------------------------------------------------
// Capability traits. Each carries a diagnostic naming its rule; the table
// below implements them.
// ---------------------------------------------------------------------------

/// The physical-memory API (`aclrtMallocPhysical` and its family), as a
/// type, so that its availability can be stated per product:
/// `MallocPhysical: AvailableOn<P>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct MallocPhysical;

/// The physical-memory API is available on product `P` (in `P`'s run
/// mode). Implemented for [`MallocPhysical`] by the rules table.
#[diagnostic::on_unimplemented(
    message = "`{P}` cannot allocate physical memory: this product does not support aclrtMallocPhysical",
    label = "`{P}` has no physical-memory API",
    note = "CANN 9.0: Atlas 200/300/500 inference products do not support the physical-memory API; the runtime answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000)",
    note = "in generic code, require the capability you use: `P: Supports<L, A>`"
)]
pub trait AvailableOn<P: ProductType> {}

/// The run mode (`Ep` or `Rc`) permits the physical-memory API.
#[diagnostic::on_unimplemented(
    message = "the Ascend RC form (`{Self}`) cannot allocate physical memory: aclrtMallocPhysical is not supported in RC form",
    label = "RC form has no physical-memory API",
    note = "only the EP form (`Ep`) of Atlas 200I/500 A2 supports aclrtMallocPhysical; in RC form the runtime answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000)"
)]
pub trait FormAllowsPhysical: RunModeType {}

/// Product `P` offers memory attribute `Self`. Implemented by the rules
/// table.
#[diagnostic::on_unimplemented(
    message = "`{P}` does not offer `{Self}` memory: 1 GiB huge pages are product-gated",
    label = "`{Self}` is not available on `{P}`",
    note = "HbmHuge1G needs Atlas 350, A3 or A2; Huge1G needs A3 or A2; P2pHuge1G needs A3 (see `aclmem matrix` or docs/rules.md); elsewhere the runtime answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000)"
)]
pub trait OfferedBy<P: ProductType>: AttrType {}

/// Attribute `Self` can be placed on the device.
#[diagnostic::on_unimplemented(
    message = "`{Self}` memory cannot be allocated on the device: DDR_* attributes are host-only",
    label = "host-only attribute used with `Device`",
    note = "use `Host` or `HostNuma` for DDR memory, or a device attribute such as `HbmHuge` or `Huge`; aclrtMallocPhysical answers ACL_ERROR_INVALID_PARAM (100000)"
)]
pub trait DeviceAccepts: AttrType {}

/// Attribute `Self` can be placed in host memory (plain or NUMA).
#[diagnostic::on_unimplemented(
    message = "`{Self}` memory cannot be allocated on the host: 1 GiB huge pages (*_HUGE1G) are device-only",
    label = "device-only attribute used with a host location",
    note = "use `Device` for 1 GiB pages, or a 2 MiB attribute such as `Huge` or `DdrHuge` on the host; aclrtMallocPhysical answers ACL_ERROR_INVALID_PARAM (100000)"
)]
pub trait HostAccepts: AttrType {}

/// Location `Self` holds memory with attribute `A`.
#[diagnostic::on_unimplemented(
    message = "`{A}` memory cannot be placed at `{Self}`",
    label = "attribute not accepted at this location"
)]
pub trait Holds<A: AttrType>: LocationType {}

/// The product `Self` can allocate attribute `A` at location `L`: the one
/// bound typed code needs. Implemented exactly for the combinations the rules
/// table allows; [`Supports::VERDICT`] says how.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot allocate `{A}` memory at `{L}`",
    label = "combination refused by the Ascend rules table"
)]
pub trait Supports<L: LocationType, A: AttrType>: ProductType {
    /// How the combination is allowed.
    const VERDICT: Verdict;
}

impl<P, L, A> Supports<L, A> for P
where
    P: ProductType,
    MallocPhysical: AvailableOn<P>,
    L: Holds<A>,
    A: OfferedBy<P>,
{
    const VERDICT: Verdict = match check(P::PRODUCT, P::RUN_MODE, L::LOCATION, A::ATTR) {
        Ok(v) => v,
        // Unreachable while the two projections agree, which the
        // `every_combination` test proves for all 312 combinations.
        Err(_) => panic!("rules table projections disagree"),
    };
}

// ---------------------------------------------------------------------------
// The run-time projection.
// ---------------------------------------------------------------------------

struct ProductRow {
    product: Product,
    api: bool,
    offers: &'static [(MemAttr, Verdict)],
}

struct LocationRow {
    location: Location,
    accepts: &'static [MemAttr],
    otherwise: Denial,
}

struct SizeLimitRow {
    product: Product,
    location: Location,
    attrs: &'static [MemAttr],
}

const fn contains(set: &[MemAttr], attr: MemAttr) -> bool {
    let mut i = 0;
    while i < set.len() {
        if set[i] as u32 == attr as u32 {
            return true;
        }
        i += 1;
    }
    false
}

/// Checks one combination at run time.
///
/// Products without an RC form are expected with [`RunMode::Ep`]; any
/// product in [`RunMode::Rc`] is refused, since every physical-memory call is
/// documented as unsupported in RC form. Order of checks: run mode and
/// product (207000), attribute value (100000), location (100000), product
/// gating (207000).
///
/// ```
/// use aclmem_core::{check, Denial, Location, MemAttr, Product, RunMode, Verdict};
/// assert_eq!(
///     check(Product::AtlasA2, RunMode::Ep, Location::Device, MemAttr::HbmMemHuge1G),
///     Ok(Verdict::Allowed)
/// );
/// assert_eq!(
///     check(Product::AtlasA2, RunMode::Ep, Location::Host, MemAttr::HbmMemHuge1G),
///     Err(Denial::DeviceOnlyAttr)
/// );
/// assert_eq!(
///     check(Product::Atlas200IA2, RunMode::Rc, Location::Device, MemAttr::HbmMemHuge),
///     Err(Denial::RcForm)
/// );
/// ```
pub const fn check(
    product: Product,
    run_mode: RunMode,
    location: Location,
    attr: MemAttr,
) -> Result<Verdict, Denial> {
    let row = match platform_row(product, run_mode) {
        Ok(row) => row,
        Err(d) => return Err(d),
    };
    // 3. The attribute value itself.
    if !attr.is_allocatable() {
        return Err(Denial::RejectedAttr);
    }
    // 4. Location.
    let mut i = 0;
    while i < LOCATION_ROWS.len() {
        let l = &LOCATION_ROWS[i];
        if l.location as u32 == location as u32 && !contains(l.accepts, attr) {
            return Err(l.otherwise);
        }
        i += 1;
    }
    // 5. Product gating.
    let mut verdict = if contains(EVERYWHERE, attr) {
        Some(Verdict::Allowed)
    } else {
        None
    };
    let mut i = 0;
    while i < row.offers.len() {
        if row.offers[i].0 as u32 == attr as u32 {
            verdict = Some(row.offers[i].1);
        }
        i += 1;
    }
    let verdict = match verdict {
        Some(v) => v,
        None => return Err(Denial::NotOffered),
    };
    // 6. Platform size limits.
    let mut i = 0;
    while i < SIZE_LIMITED.len() {
        let s = &SIZE_LIMITED[i];
        if s.product as u8 == product as u8
            && s.location as u32 == location as u32
            && contains(s.attrs, attr)
        {
            return Ok(Verdict::SizeLimitedByPlatform);
        }
        i += 1;
    }
    Ok(verdict)
}

/// Steps 1 and 2 of [`check`]: the run mode (207000 in RC form) and the
/// product (207000 where the API does not exist).
const fn platform_row(product: Product, run_mode: RunMode) -> Result<&'static ProductRow, Denial> {
    let mut i = 0;
    while i < RUN_MODE_ROWS.len() {
        let (mode, api) = RUN_MODE_ROWS[i];
        if mode as u8 == run_mode as u8 && !api {
            return Err(Denial::RcForm);
        }
        i += 1;
    }
    let mut i = 0;
    while i < PRODUCT_ROWS.len() {
        let row = &PRODUCT_ROWS[i];
        if row.product as u8 == product as u8 {
            return if row.api {
                Ok(row)
            } else {
                Err(Denial::ProductUnsupported)
            };
        }
        i += 1;
    }
    Err(Denial::ProductUnsupported)
}

/// Whether the physical-memory API exists at all on `product` in
/// `run_mode`: `Err(Denial::RcForm)` in RC form,
/// `Err(Denial::ProductUnsupported)` on Atlas 200/300/500. Every call of a
/// faithful backend answers 207000 when this fails.
pub const fn check_platform(product: Product, run_mode: RunMode) -> Result<(), Denial> {
    match platform_row(product, run_mode) {
        Ok(_) => Ok(()),
        Err(d) => Err(d),
    }
}

/// [`check`] on raw C values, as the runtime sees them: an unknown or
/// rejected location type or `memAttr` is refused with 100000.
pub const fn check_raw(
    product: Product,
    run_mode: RunMode,
    raw_location: u32,
    raw_attr: u32,
) -> Result<Verdict, Denial> {
    match decode_raw(product, run_mode, raw_location, raw_attr) {
        Ok((location, attr)) => check(product, run_mode, location, attr),
        Err(d) => Err(d),
    }
}

/// The raw location type and `memAttr` as values, after the platform
/// check, in the order `check_raw` reports them.
pub(crate) const fn decode_raw(
    product: Product,
    run_mode: RunMode,
    raw_location: u32,
    raw_attr: u32,
) -> Result<(Location, MemAttr), Denial> {
    // Product and form first, so the order of checks matches `check`.
    if let Err(d) = check_platform(product, run_mode) {
        return Err(d);
    }
    let Some(attr) = MemAttr::from_raw(raw_attr) else {
        return Err(Denial::RejectedAttr);
    };
    if !attr.is_allocatable() {
        return Err(Denial::RejectedAttr);
    }
    let Some(location) = Location::from_raw(raw_location) else {
        return Err(Denial::RejectedLocation);
    };
    Ok((location, attr))
}

/// One product in one run mode: a row group of the support matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct Platform {
    /// The product.
    pub product: Product,
    /// The run mode.
    pub run_mode: RunMode,
    /// The marker type's name, as written in Rust (`"Atlas200IA2<Rc>"`).
    pub marker: &'static str,
}

impl Platform {
    /// Checks one location × attribute on this platform.
    pub const fn check(&self, location: Location, attr: MemAttr) -> Result<Verdict, Denial> {
        check(self.product, self.run_mode, location, attr)
    }
}

macro_rules! rules_table {
    (
        run_modes { $($rm:ident => $rm_api:ident;)* }
        products { $(
            $pty:ident $(<$pgen:ident>)? => $papi:ident [ $($gattr:ident => $gverdict:ident),* $(,)? ];
        )* }
        everywhere [ $($battr:ident),* $(,)? ];
        locations { $(
            $ltrait:ident otherwise $lden:ident [ $($lattr:ident),* $(,)? ] at [ $($loc:ident),+ ];
        )* }
        size_limited { $( $sp:ident at $sl:ident [ $($sattr:ident),* $(,)? ]; )* }
    ) => {
        // --- compile-time projection ---
        $( rules_table!(@run_mode $rm $rm_api); )*
        $(
            rules_table!(@product $papi $pty $(<$pgen>)?);
            rules_table!(@offers $pty $(<$pgen>)? [$($gattr)*]);
        )*
        $( impl<P: ProductType> OfferedBy<P> for $battr {} )*
        $(
            $( impl $ltrait for $lattr {} )*
            $( impl<A: $ltrait> Holds<A> for $loc {} )+
            // The run-time copy of the same list (value namespace, so it may
            // share the trait's name).
            #[allow(non_upper_case_globals)]
            const $ltrait: &[MemAttr] = &[$(<$lattr as AttrType>::ATTR),*];
        )*

        // --- run-time projection ---
        const RUN_MODE_ROWS: &[(RunMode, bool)] = &[$((RunMode::$rm, rules_table!(@bool $rm_api))),*];
        const PRODUCT_ROWS: &[ProductRow] = &[$(ProductRow {
            product: rules_table!(@value $pty $(<$pgen>)?),
            api: rules_table!(@bool $papi),
            offers: &[$((<$gattr as AttrType>::ATTR, Verdict::$gverdict)),*],
        }),*];
        const EVERYWHERE: &[MemAttr] = &[$(<$battr as AttrType>::ATTR),*];
        const LOCATION_ROWS: &[LocationRow] = &[$($(LocationRow {
            location: <$loc as LocationType>::LOCATION,
            accepts: $ltrait,
            otherwise: Denial::$lden,
        }),+),*];
        const SIZE_LIMITED: &[SizeLimitRow] = &[$(SizeLimitRow {
            product: <$sp as ProductType>::PRODUCT,
            location: <$sl as LocationType>::LOCATION,
            attrs: &[$(<$sattr as AttrType>::ATTR),*],
        }),*];

        /// Every product marker in every run mode it has, in table order:
        /// the eight row groups of the support matrix.
        pub const PLATFORMS: &[Platform] = &{
            const N: usize = 0 $(+ rules_table!(@platforms $pty $(<$pgen>)?).len())*;
            let mut out = [Platform {
                product: Product::Atlas200_300_500,
                run_mode: RunMode::Ep,
                marker: "",
            }; N];
            let mut n = 0;
            $(
                let rows = rules_table!(@platforms $pty $(<$pgen>)?);
                let mut i = 0;
                while i < rows.len() {
                    out[n] = rows[i];
                    n += 1;
                    i += 1;
                }
            )*
            assert!(n == N);
            out
        };
    };

    (@run_mode $rm:ident supported) => { impl FormAllowsPhysical for $rm {} };
    (@run_mode $rm:ident unsupported) => {};
    (@product supported $pty:ident <$pgen:ident>) => {
        impl<$pgen: FormAllowsPhysical> AvailableOn<$pty<$pgen>> for MallocPhysical {}
    };
    (@product supported $pty:ident) => { impl AvailableOn<$pty> for MallocPhysical {} };
    (@offers $pty:ident <$pgen:ident> [$($gattr:ident)*]) => {
        $( impl<$pgen: RunModeType> OfferedBy<$pty<$pgen>> for $gattr {} )*
    };
    (@offers $pty:ident [$($gattr:ident)*]) => {
        $( impl OfferedBy<$pty> for $gattr {} )*
    };
    (@product unsupported $pty:ident $(<$pgen:ident>)?) => {};
    (@bool supported) => { true };
    (@bool unsupported) => { false };
    (@value $pty:ident <$pgen:ident>) => { <$pty<Ep> as ProductType>::PRODUCT };
    (@value $pty:ident) => { <$pty as ProductType>::PRODUCT };
    (@platforms $pty:ident <$pgen:ident>) => {[
        Platform {
            product: <$pty<Ep> as ProductType>::PRODUCT,
            run_mode: RunMode::Ep,
            marker: concat!(stringify!($pty), "<Ep>"),
        },
        Platform {
            product: <$pty<Rc> as ProductType>::PRODUCT,
            run_mode: RunMode::Rc,
            marker: concat!(stringify!($pty), "<Rc>"),
        }
    ]};
    (@platforms $pty:ident) => {[
        Platform {
            product: <$pty as ProductType>::PRODUCT,
            run_mode: <$pty as ProductType>::RUN_MODE,
            marker: stringify!($pty),
        }
    ]};
}

// ===========================================================================
// THE RULES TABLE (CANN 9.0). This is the only place these facts are written.
// ===========================================================================
rules_table! {
    // Which run modes have the physical-memory API at all.
    run_modes {
        Ep => supported;
        Rc => unsupported;
    }
    // Which products have the API, and which product-gated (1 GiB)
    // attributes each offers, with how.
    products {
        Atlas350 => supported [HbmHuge1G => Allowed];
        AtlasA3 => supported [
            HbmHuge1G => Allowed,
            Huge1G => Allowed,
            P2pHuge1G => AllowedIfDeviceConfirms,
        ];
        AtlasA2 => supported [HbmHuge1G => Allowed, Huge1G => Allowed];
        AtlasTraining => supported [];
        AtlasInference => supported [];
        Atlas200IA2<M> => supported [];
        Atlas200_300_500 => unsupported [];
    }
    // Attributes every product with the API offers. On products without HBM
    // (inference series, 200I/500 A2) HBM requests are served from DDR.
    everywhere [
        HbmHuge, HbmNormal, DdrHuge, DdrNormal, DdrP2pHuge, DdrP2pNormal,
        Normal, Huge, P2pNormal, P2pHuge,
    ];
    // Which attributes each location accepts, and why the rest are refused.
    // Host NUMA memory counts as host memory.
    locations {
        DeviceAccepts otherwise HostOnlyAttr [
            HbmHuge, HbmNormal, HbmHuge1G, Normal, Huge, Huge1G,
            P2pNormal, P2pHuge, P2pHuge1G,
        ] at [Device];
        HostAccepts otherwise DeviceOnlyAttr [
            HbmHuge, HbmNormal, DdrHuge, DdrNormal, DdrP2pHuge, DdrP2pNormal,
            Normal, Huge, P2pNormal, P2pHuge,
        ] at [Host, HostNuma];
    }
    // Allowed combinations whose largest size the platform decides.
    size_limited {
        AtlasA3 at HostNuma [DdrP2pHuge, DdrP2pNormal, P2pNormal, P2pHuge];
    }
}
