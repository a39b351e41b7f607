//! The run-time projection of the rules table: the rows the table
//! generates, and [`check`] over them for code that learns its product and
//! release only at run time.

use super::*;

pub(super) struct ProductRow {
    pub(super) product: Product,
    pub(super) api: bool,
    pub(super) since: CannVersion,
    pub(super) offers: &'static [(MemAttr, Verdict)],
}

pub(super) struct LocationRow {
    pub(super) location: Location,
    pub(super) since: CannVersion,
    pub(super) accepts: &'static [MemAttr],
    pub(super) otherwise: Denial,
}

pub(super) struct SizeLimitRow {
    pub(super) product: Product,
    pub(super) location: Location,
    pub(super) attrs: &'static [MemAttr],
}

pub(super) const fn contains(set: &[MemAttr], attr: MemAttr) -> bool {
    let mut i = 0;
    while i < set.len() {
        if set[i] as u32 == attr as u32 {
            return true;
        }
        i += 1;
    }
    false
}

pub(super) const fn older(a: CannVersion, b: CannVersion) -> bool {
    (a as u8) < (b as u8)
}

/// Checks one combination at run time, in CANN version `cann`.
///
/// Products without an RC form are expected with [`RunMode::Ep`]; any
/// product in [`RunMode::Rc`] is refused, since every physical-memory call is
/// documented as unsupported in RC form. Order of checks, the same as the
/// compile-time bounds: run mode and product (207000), the product's
/// release, the attribute value (100000), location (100000), product gating
/// (207000), the attribute's release, the location's release.
///
/// ```
/// use aclmem_core::{check, CannVersion, Denial, Location, MemAttr, Product, RunMode, Verdict};
/// use CannVersion::*;
/// assert_eq!(
///     check(Product::AtlasA2, RunMode::Ep, V9_0, Location::Device, MemAttr::HbmMemHuge1G),
///     Ok(Verdict::Allowed)
/// );
/// assert_eq!(
///     check(Product::AtlasA2, RunMode::Ep, V9_0, Location::Host, MemAttr::HbmMemHuge1G),
///     Err(Denial::DeviceOnlyAttr)
/// );
/// assert_eq!(
///     check(Product::Atlas200IA2, RunMode::Rc, V9_0, Location::Device, MemAttr::HbmMemHuge),
///     Err(Denial::RcForm)
/// );
/// let refused = check(Product::AtlasA2, RunMode::Ep, V8_3, Location::Device, MemAttr::MemHuge);
/// assert_eq!(refused.unwrap_err().since(), Some(V8_5));
/// ```
pub const fn check(
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
    location: Location,
    attr: MemAttr,
) -> Result<Verdict, Denial> {
    let row = match platform_row(product, run_mode, cann) {
        Ok(row) => row,
        Err(d) => return Err(d),
    };
    // The attribute value itself.
    if !attr.is_allocatable() {
        return Err(Denial::RejectedAttr);
    }
    // Location.
    let location_row = location_row(location);
    if !contains(location_row.accepts, attr) {
        return Err(location_row.otherwise);
    }
    // Product gating.
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
    // The releases that introduced the attribute and the location.
    let attr_since = attr_since(attr);
    if older(cann, attr_since) {
        return Err(Denial::NeedsNewerCann {
            feature: Feature::Attr(attr),
            since: attr_since,
            target: cann,
        });
    }
    if older(cann, location_row.since) {
        return Err(Denial::NeedsNewerCann {
            feature: Feature::Location(location),
            since: location_row.since,
            target: cann,
        });
    }
    // Platform size limits.
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

/// The run mode (207000 in RC form), the product (207000 where the API does
/// not exist) and the product's release.
pub(super) const fn platform_row(
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
) -> Result<&'static ProductRow, Denial> {
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
            if !row.api {
                return Err(Denial::ProductUnsupported);
            }
            if older(cann, row.since) {
                return Err(Denial::NeedsNewerCann {
                    feature: Feature::Product(product),
                    since: row.since,
                    target: cann,
                });
            }
            return Ok(row);
        }
        i += 1;
    }
    Err(Denial::ProductUnsupported)
}

pub(super) const fn location_row(location: Location) -> &'static LocationRow {
    let mut i = 0;
    while i < LOCATION_ROWS.len() {
        if LOCATION_ROWS[i].location as u32 == location as u32 {
            return &LOCATION_ROWS[i];
        }
        i += 1;
    }
    panic!("every location has a row")
}

/// The release that introduced `attr` in `aclrtMallocPhysical`. Values the
/// call never accepts report the oldest modelled release (they are refused
/// for their value, whatever the version).
pub const fn attr_since(attr: MemAttr) -> CannVersion {
    let mut i = 0;
    while i < ATTR_SINCE.len() {
        if ATTR_SINCE[i].0 as u32 == attr as u32 {
            return ATTR_SINCE[i].1;
        }
        i += 1;
    }
    CannVersion::V8_0
}

/// The release that introduced `location` as an `aclrtMallocPhysical`
/// location.
pub const fn location_since(location: Location) -> CannVersion {
    location_row(location).since
}

/// Whether the physical-memory API exists at all on `product` in
/// `run_mode` and version `cann`: `Err(Denial::RcForm)` in RC form,
/// `Err(Denial::ProductUnsupported)` on Atlas 200/300/500, a version denial
/// before the product's release. Every call of a faithful backend answers
/// 207000 when this fails.
pub const fn check_platform(
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
) -> Result<(), Denial> {
    match platform_row(product, run_mode, cann) {
        Ok(_) => Ok(()),
        Err(d) => Err(d),
    }
}

/// [`check`] on raw C values, as the runtime sees them: an unknown or
/// rejected location type or `memAttr` is refused with 100000.
pub const fn check_raw(
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
    raw_location: u32,
    raw_attr: u32,
) -> Result<Verdict, Denial> {
    match decode_raw(product, run_mode, cann, raw_location, raw_attr) {
        Ok((location, attr)) => check(product, run_mode, cann, location, attr),
        Err(d) => Err(d),
    }
}

/// The raw location type and `memAttr` as values, after the platform
/// check, in the order `check_raw` reports them.
pub(crate) const fn decode_raw(
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
    raw_location: u32,
    raw_attr: u32,
) -> Result<(Location, MemAttr), Denial> {
    // Product and form first, so the order of checks matches `check`.
    if let Err(d) = check_platform(product, run_mode, cann) {
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
    /// Checks one location × attribute on this platform in version `cann`.
    pub const fn check(
        &self,
        cann: CannVersion,
        location: Location,
        attr: MemAttr,
    ) -> Result<Verdict, Denial> {
        check(self.product, self.run_mode, cann, location, attr)
    }
}
