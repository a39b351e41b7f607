//! The rules table and its two projections.
//!
//! [`rules_table!`] is invoked exactly once, at the bottom of this file. From
//! that one invocation come
//!
//! * the capability-trait impls ([`AvailableOn`], [`FormAllowsPhysical`],
//!   [`OfferedBy`], [`DeviceAccepts`], [`HostAccepts`], [`Holds`],
//!   [`Introduced`], and through them [`Supports`]) that make an invalid
//!   product × location × attribute × CANN version fail to compile, and
//! * the constant arrays read by the run-time [`check`], for code that learns
//!   its product and version only at run time.
//!
//! A test in this crate visits every product × run mode × location ×
//! attribute in every modelled CANN version and proves the two projections
//! agree.
//!
//! The facts encoded, with their sources, are in `docs/facts.md`
//! ("aclrtMallocPhysical" and "CANN versions"). In CANN 9.0: no physical
//! memory at all on Atlas 200/300/500 inference products nor in the Ascend
//! RC form; `*_HUGE1G` device only; `ACL_MEM_HUGE1G` only on A2/A3;
//! `ACL_HBM_MEM_HUGE1G` only on Atlas 350/A3/A2; `ACL_MEM_P2P_HUGE1G` only on
//! A3 where the device confirms it; `DDR_*` host only (host NUMA counts as
//! host); A3 host-NUMA memory with a P2P attribute is size-limited by the
//! platform. Each product, location and attribute also has the release that
//! introduced it; a combination is allowed in a version when all three
//! exist there.

use crate::attr::*;
use crate::cann::*;
use crate::location::{Device, Host, HostNuma, Location, LocationType};
use crate::product::*;

mod verdict;
pub use verdict::*;

mod calls;
pub use calls::*;

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

/// The physical-memory API is available on product `P` (in `P`'s run mode
/// and CANN version): the product has it ([`HasPhysicalApi`]), the run mode
/// allows it ([`FormAllowsPhysical`]) and the release has it on the product
/// ([`Accepts`]). Implemented for [`MallocPhysical`] by the rules table.
#[diagnostic::on_unimplemented(
    message = "`{P}` cannot allocate physical memory",
    label = "no physical-memory API on `{P}`"
)]
pub trait AvailableOn<P: ProductType> {}

/// Product `P` has the physical-memory API (in some form and release).
/// Implemented for [`MallocPhysical`] by the rules table, for every product
/// but Atlas 200/300/500.
#[diagnostic::on_unimplemented(
    message = "`{P}` cannot allocate physical memory: this product does not support aclrtMallocPhysical",
    label = "`{P}` has no physical-memory API",
    note = "Atlas 200/300/500 inference products do not support the physical-memory API; the runtime answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000)"
)]
pub trait HasPhysicalApi<P: ProductType> {}

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

/// The CANN release that introduced a product, location or attribute
/// marker (for products: the physical-memory API on that product).
/// Implemented by the rules table for every marker.
pub trait Introduced {
    /// The first release that has it.
    type Since: CannType;
}

/// The location or attribute marker `Self` exists in release `V`: the
/// release gate of every rule, implemented by the rules table through
/// [`Accepts`] (whose message names the marker, the release that introduced
/// it and the one the code targets).
///
/// A bound on the marker rather than on `V: Accepts<Self, Since>` with the
/// release as an associated type, so that the gate waits until the marker
/// is known (an attribute inferred from a later argument still gets the
/// [`Accepts`] message).
pub trait ExistsIn<V: CannType> {}

/// The product `Self` can allocate attribute `A` at location `L`, in the
/// CANN version `Self` targets: the one bound typed code needs. Implemented
/// exactly for the combinations the rules table allows; [`Supports::VERDICT`]
/// says how.
///
/// In code generic over the product, state this bound:
///
/// ```
/// use aclmem_core::{Device, HbmHuge, PhysicalMemProp, Supports};
/// fn device_prop<P: Supports<Device, HbmHuge>>() -> PhysicalMemProp<P, Device, HbmHuge> {
///     PhysicalMemProp::on_device(0)
/// }
/// # let _ = device_prop::<aclmem_core::AtlasA2>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not known to allocate `{A}` memory at `{L}`: require `{Self}: Supports<{L}, {A}>`",
    label = "the rules hold only for concrete products, or where this bound is required",
    note = "generic code states the capability it uses, `P: Supports<L, A>`, and the caller's concrete product is checked against the rules table"
)]
pub trait Supports<L: LocationType, A: AttrType>: ProductType {
    /// How the combination is allowed.
    const VERDICT: Verdict;
}

/// The rules table's row for one product family: `Self` may allocate `A`
/// at `L` when every rule holds (the API on the product in its run mode and
/// release, the location, the product's attributes, and the releases that
/// introduced the location and the attribute). Implemented by the table;
/// [`Supports`] is implemented for every product through it, so that a
/// refusal reports the rule that failed and nothing else.
///
/// As a bound, `P: Rules<L, A>` is the same as `P: Supports<L, A>`; state
/// the latter.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not known to allocate `{A}` memory at `{L}`: require `{Self}: Supports<{L}, {A}>`",
    label = "the rules hold only for concrete products, or where this bound is required",
    note = "generic code states the capability it uses, `P: Supports<L, A>`, and the caller's concrete product is checked against the rules table"
)]
pub trait Rules<L: LocationType, A: AttrType>: ProductType {}

impl<P: ProductType + Rules<L, A>, L: LocationType, A: AttrType> Supports<L, A> for P {
    const VERDICT: Verdict = verdict_of(P::PRODUCT, P::RUN_MODE, P::CANN, L::LOCATION, A::ATTR);
}

/// The verdict of an implemented `Supports`: read from the run-time table.
const fn verdict_of(
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
    location: Location,
    attr: MemAttr,
) -> Verdict {
    match check(product, run_mode, cann, location, attr) {
        Ok(v) => v,
        // Unreachable while the two projections agree, which the
        // `every_combination` test proves for every combination.
        Err(_) => panic!("rules table projections disagree"),
    }
}

mod check;
pub use check::*;

macro_rules! rules_table {
    (
        run_modes { $($rm:ident => $rm_api:ident;)* }
        products { $(
            $pty:ident $(<$pgen:ident>)? since $psince:ident => $papi:ident
                [ $($gattr:ident => $gverdict:ident),* $(,)? ];
        )* }
        everywhere [ $($battr:ident),* $(,)? ];
        attributes { $( $asince:ident [ $($aattr:ident),* $(,)? ]; )* }
        locations { $(
            $ltrait:ident otherwise $lden:ident [ $($lattr:ident),* $(,)? ]
                at [ $($loc:ident since $lsince:ident),+ ];
        )* }
        size_limited { $( $sp:ident at $sl:ident [ $($sattr:ident),* $(,)? ]; )* }
        calls { $( $capi:ident since $csince:ident on [ $($cprod:ident),+ $(,)? ]; )* }
    ) => {
        // --- compile-time projection ---
        $( rules_table!(@run_mode $rm $rm_api); )*
        $(
            rules_table!(@product $papi $psince $pty $(<$pgen>)?);
            rules_table!(@offers $pty $(<$pgen>)? [$($gattr)*]);
        )*
        $(
            // (`do_not_recommend`: a product that lacks a 1 GiB attribute
            // gets its rule, not a list of the attributes every product has.)
            #[diagnostic::do_not_recommend]
            impl<P: ProductType> OfferedBy<P> for $battr {}
        )*
        $( $(
            impl Introduced for $aattr { type Since = $asince; }
            impl<V: Accepts<$aattr, $asince>> ExistsIn<V> for $aattr {}
        )* )*
        $(
            $(
                #[diagnostic::do_not_recommend]
                impl $ltrait for $lattr {}
            )*
            $(
                impl<A: $ltrait> Holds<A> for $loc {}
                impl Introduced for $loc { type Since = $lsince; }
                impl<V: Accepts<$loc, $lsince>> ExistsIn<V> for $loc {}
            )+
            // The run-time copy of the same list (value namespace, so it may
            // share the trait's name).
            #[allow(non_upper_case_globals)]
            const $ltrait: &[MemAttr] = &[$(<$lattr as AttrType>::ATTR),*];
        )*

        $(
            impl Introduced for $capi { type Since = $csince; }
            impl<V: Accepts<$capi, $csince>> ExistsIn<V> for $capi {}
            $(
                // (`do_not_recommend`: a product without the calls gets
                // the rule, not a list of the products that have them.)
                #[diagnostic::do_not_recommend]
                impl<V: CannType> ApiOn<$cprod<V>> for $capi {}
            )+
        )*

        // --- run-time projection ---
        const API_ROWS: &[ApiRow] = &[$(ApiRow {
            api: <$capi as ApiType>::API,
            since: <$csince as CannType>::VERSION,
            products: &[$(<$cprod as ProductType>::PRODUCT),+],
        }),*];
        const RUN_MODE_ROWS: &[(RunMode, bool)] = &[$((RunMode::$rm, rules_table!(@bool $rm_api))),*];
        const PRODUCT_ROWS: &[ProductRow] = &[$(ProductRow {
            product: rules_table!(@value $pty $(<$pgen>)?),
            api: rules_table!(@bool $papi),
            since: <$psince as CannType>::VERSION,
            offers: &[$((<$gattr as AttrType>::ATTR, Verdict::$gverdict)),*],
        }),*];
        const EVERYWHERE: &[MemAttr] = &[$(<$battr as AttrType>::ATTR),*];
        const ATTR_SINCE: &[(MemAttr, CannVersion)] = &[$($(
            (<$aattr as AttrType>::ATTR, <$asince as CannType>::VERSION)
        ),*),*];
        const LOCATION_ROWS: &[LocationRow] = &[$($(LocationRow {
            location: <$loc as LocationType>::LOCATION,
            since: <$lsince as CannType>::VERSION,
            accepts: $ltrait,
            otherwise: Denial::$lden,
        }),+),*];
        const SIZE_LIMITED: &[SizeLimitRow] = &[$(SizeLimitRow {
            product: <$sp as ProductType>::PRODUCT,
            location: <$sl as LocationType>::LOCATION,
            attrs: &[$(<$sattr as AttrType>::ATTR),*],
        }),*];

        /// Every product marker in every run mode it has, in table order:
        /// the row groups of the support matrix.
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

    (@run_mode $rm:ident supported) => {
        #[diagnostic::do_not_recommend]
        impl FormAllowsPhysical for $rm {}
    };
    (@run_mode $rm:ident unsupported) => {};

    // A product with the API: available from its release on (and, with a run
    // mode, only in a form that allows it), and `Supports` exactly where its
    // location, attribute and version bounds hold. The bounds are in the
    // order `check` tests them, so both report the same rule.
    (@product supported $since:ident $pty:ident <$pgen:ident>) => {
        // (`do_not_recommend`: a product without the API gets its rule, not
        // a list of the products that have it.)
        #[diagnostic::do_not_recommend]
        impl<$pgen: RunModeType, V: CannType> HasPhysicalApi<$pty<$pgen, V>> for MallocPhysical {}
        rules_table!(@available $since $pty <$pgen>);
    };
    (@product supported $since:ident $pty:ident) => {
        #[diagnostic::do_not_recommend]
        impl<V: CannType> HasPhysicalApi<$pty<V>> for MallocPhysical {}
        rules_table!(@available $since $pty);
    };
    // A product without the API: no `HasPhysicalApi`, so `Supports` fails
    // on it with its rule.
    (@product unsupported $since:ident $pty:ident $(<$pgen:ident>)?) => {
        rules_table!(@available $since $pty $(<$pgen>)?);
    };
    // The API on a product: the product has it, the run mode allows it, and
    // the release has it on this product (in `check`'s order).
    (@available $since:ident $pty:ident <$pgen:ident>) => {
        impl<$pgen: FormAllowsPhysical, V: CannType> AvailableOn<$pty<$pgen, V>> for MallocPhysical
        where
            MallocPhysical: HasPhysicalApi<$pty<$pgen, V>>,
            V: Accepts<$pty<$pgen, V>, $since>,
        {
        }
        rules_table!(@supports $since $pty [$pgen: RunModeType] <$pgen, V>);
    };
    (@available $since:ident $pty:ident) => {
        impl<V: CannType> AvailableOn<$pty<V>> for MallocPhysical
        where
            MallocPhysical: HasPhysicalApi<$pty<V>>,
            V: Accepts<$pty<V>, $since>,
        {
        }
        rules_table!(@supports $since $pty [] <V>);
    };
    (@supports $since:ident $pty:ident [$($g:ident: $gb:ident)?] <$($full:ident),+>) => {
        impl<$($g: $gb,)? V: CannType> Introduced for $pty<$($full),+> {
            type Since = $since;
        }
        impl<$($g: $gb,)? V: CannType, C: ApiType> HasApi<C> for $pty<$($full),+>
        where
            C: ApiOn<$pty<$($full),+>>,
            C: ExistsIn<V>,
        {
        }
        impl<$($g: $gb,)? V: CannType, L: LocationType, A: AttrType>
            Rules<L, A> for $pty<$($full),+>
        where
            MallocPhysical: AvailableOn<$pty<$($full),+>>,
            L: Holds<A>,
            A: OfferedBy<$pty<$($full),+>>,
            A: ExistsIn<V>,
            L: ExistsIn<V>,
        {
        }
    };
    (@offers $pty:ident <$pgen:ident> [$($gattr:ident)*]) => {
        $(
            #[diagnostic::do_not_recommend]
            impl<$pgen: RunModeType, V: CannType> OfferedBy<$pty<$pgen, V>> for $gattr {}
        )*
    };
    (@offers $pty:ident [$($gattr:ident)*]) => {
        $(
            #[diagnostic::do_not_recommend]
            impl<V: CannType> OfferedBy<$pty<V>> for $gattr {}
        )*
    };
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
// THE RULES TABLE. This is the only place these facts are written; their
// sources are in docs/facts.md.
// ===========================================================================
rules_table! {
    // Which run modes have the physical-memory API at all.
    run_modes {
        Ep => supported;
        Rc => unsupported;
    }
    // Which products have the API, from which release, and which
    // product-gated (1 GiB) attributes each offers, with how.
    //
    // A3 from 8.2: 8.0 and 8.1 documentation says "all products but
    // Atlas 200/300/500", an 8.2.RC1 preview omits A3 and a later one lists
    // it. UNCONFIRMED; conservatively A3 counts from 8.2.RC1.
    //
    // Atlas 350 HbmHuge1G: the 9.0 GA pages (C and pyACL) list it; a 9.0
    // beta pyACL page says Atlas 350 lacks the HBM 1 GiB attributes.
    // UNCONFIRMED; the GA documentation is followed.
    products {
        Atlas350 since Cann9_0 => supported [HbmHuge1G => Allowed];
        AtlasA3 since Cann8_2 => supported [
            HbmHuge1G => Allowed,
            Huge1G => Allowed,
            P2pHuge1G => AllowedIfDeviceConfirms,
        ];
        AtlasA2 since Cann8_0 => supported [HbmHuge1G => Allowed, Huge1G => Allowed];
        AtlasTraining since Cann8_0 => supported [];
        AtlasInference since Cann8_0 => supported [];
        Atlas200IA2<M> since Cann8_0 => supported [];
        Atlas200_300_500 since Cann8_0 => unsupported [];
    }
    // Attributes every product with the API offers. On products without HBM
    // (inference series, 200I/500 A2) HBM requests are served from DDR.
    everywhere [
        HbmHuge, HbmNormal, DdrHuge, DdrNormal, DdrP2pHuge, DdrP2pNormal,
        Normal, Huge, P2pNormal, P2pHuge,
    ];
    // The release from which aclrtMallocPhysical accepts each attribute.
    // 8.5.0's list of ACL_MEM_* values ends before ACL_MEM_P2P_HUGE1G in
    // every copy found, and its pages do not list DDR_*: UNCONFIRMED;
    // conservatively both count from 9.0, where they are documented.
    attributes {
        Cann8_0 [HbmHuge, HbmNormal];
        Cann8_1 [HbmHuge1G];
        Cann8_5 [Normal, Huge, Huge1G, P2pNormal, P2pHuge];
        Cann9_0 [P2pHuge1G, DdrHuge, DdrNormal, DdrP2pHuge, DdrP2pNormal];
    }
    // Which attributes each location accepts, why the rest are refused, and
    // the release that introduced each location. Host NUMA memory counts as
    // host memory.
    locations {
        DeviceAccepts otherwise HostOnlyAttr [
            HbmHuge, HbmNormal, HbmHuge1G, Normal, Huge, Huge1G,
            P2pNormal, P2pHuge, P2pHuge1G,
        ] at [Device since Cann8_0];
        HostAccepts otherwise DeviceOnlyAttr [
            HbmHuge, HbmNormal, DdrHuge, DdrNormal, DdrP2pHuge, DdrP2pNormal,
            Normal, Huge, P2pNormal, P2pHuge,
        ] at [Host since Cann8_5, HostNuma since Cann9_0];
    }
    // Allowed combinations whose largest size the platform decides.
    size_limited {
        AtlasA3 at HostNuma [DdrP2pHuge, DdrP2pNormal, P2pNormal, P2pHuge];
    }
    // Calls beyond the physical-memory API: the release that introduced
    // each group and the products whose runtime has it. The stream-ordered
    // pools (acl_rt_memory_soma.h) are documented for Atlas A2 only, as an
    // experimental feature; create/destroy/attributes from 9.0,
    // MallocAsync/FreeAsync/TrimTo from 9.1 (docs/facts.md, "Stream-ordered
    // memory pools").
    // Managed memory: aclrtMemAllocManaged from 9.0, its advice and
    // prefetches from 9.1, on Atlas A2 and A3 (the header's product
    // tables; docs/facts.md, "Managed memory").
    calls {
        MemPoolCreate since Cann9_0 on [AtlasA2];
        MemPoolMallocAsync since Cann9_1 on [AtlasA2];
        MemAllocManaged since Cann9_0 on [AtlasA3, AtlasA2];
        MemManagedAdvise since Cann9_1 on [AtlasA3, AtlasA2];
    }
}
