//! CANN versions: the rules of the physical-memory API changed between
//! releases, so the version is part of every rule.
//!
//! A version is a value ([`CannVersion`]) and a marker type ([`Cann8_0`] …
//! [`Cann9_0`]). Product markers carry the version they target as a type
//! parameter that defaults to [`Cann9_0`] (`AtlasA2` is `AtlasA2<Cann9_0>`),
//! so typed code names its CANN version once, in the product type:
//!
//! ```
//! use aclmem_core::{AtlasA2, Cann8_3, Device, HbmHuge, PhysicalMemProp};
//! type Npu = AtlasA2<Cann8_3>;
//! let prop = PhysicalMemProp::<Npu, Device, HbmHuge>::on_device(0);
//! # let _ = prop;
//! ```
//!
//! Generic code that needs a feature of a later release says so with
//! [`AtLeast`]: `P: ProductType<Cann: AtLeast<Cann8_5>>`.
//!
//! The facts (which release introduced which product, location, attribute,
//! granularity answer and reservation rule) and their sources are in
//! `docs/facts.md`, section "CANN versions".

use core::fmt;

use crate::attr::MemAttr;
use crate::error::AclError;
use crate::sealed::Sealed;

/// A CANN release line whose physical-memory rules aclmem models.
///
/// Releases are grouped where their rules do not differ as far as the
/// documentation shows: [`CannVersion::V8_0`] covers 8.0.RC1–8.0.0,
/// [`CannVersion::V8_1`] 8.1.RC1, [`CannVersion::V8_2`] 8.2.RC1,
/// [`CannVersion::V8_3`] 8.3.RC1, [`CannVersion::V8_5`] 8.5.0,
/// [`CannVersion::V9_0`] 9.0.0. Ordered by release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum CannVersion {
    /// CANN 8.0 (8.0.RC1 – 8.0.0).
    V8_0,
    /// CANN 8.1 (8.1.RC1).
    V8_1,
    /// CANN 8.2 (8.2.RC1).
    V8_2,
    /// CANN 8.3 (8.3.RC1).
    V8_3,
    /// CANN 8.5 (8.5.0).
    V8_5,
    /// CANN 9.0 (9.0.0), the default.
    V9_0,
}

/// A version string that names no release aclmem models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct UnknownCannVersion;

impl fmt::Display for UnknownCannVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a CANN version aclmem models (8.0, 8.1, 8.2, 8.3, 8.5, 9.0)")
    }
}

impl core::error::Error for UnknownCannVersion {}

/// What a non-NULL `expectPtr` of `aclrtReserveMemAddress` must satisfy in
/// one CANN version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum ExpectedAddress {
    /// Only NULL (the system chooses): 8.0 – 8.3.
    NullOnly,
    /// Any free address aligned to 1 GiB: 8.5.
    Aligned1G,
    /// Inside 16 TiB – 24 TiB, aligned to the next power of two of the
    /// size below 1 GiB and to 1 GiB from there on: 9.0 (except on Atlas
    /// 350, where only NULL is accepted).
    Window16To24TiB,
}

impl CannVersion {
    /// Every modelled version, oldest first.
    pub const ALL: [CannVersion; 6] = [
        CannVersion::V8_0,
        CannVersion::V8_1,
        CannVersion::V8_2,
        CannVersion::V8_3,
        CannVersion::V8_5,
        CannVersion::V9_0,
    ];

    /// The default: the newest modelled release.
    pub const DEFAULT: CannVersion = CannVersion::V9_0;

    /// `"8.3"`: the identifier the CLI and JSON use.
    pub const fn id(self) -> &'static str {
        match self {
            CannVersion::V8_0 => "8.0",
            CannVersion::V8_1 => "8.1",
            CannVersion::V8_2 => "8.2",
            CannVersion::V8_3 => "8.3",
            CannVersion::V8_5 => "8.5",
            CannVersion::V9_0 => "9.0",
        }
    }

    /// The marker type's name (`"Cann8_3"`).
    pub const fn marker_name(self) -> &'static str {
        match self {
            CannVersion::V8_0 => "Cann8_0",
            CannVersion::V8_1 => "Cann8_1",
            CannVersion::V8_2 => "Cann8_2",
            CannVersion::V8_3 => "Cann8_3",
            CannVersion::V8_5 => "Cann8_5",
            CannVersion::V9_0 => "Cann9_0",
        }
    }

    /// The release string an installation of this version reports
    /// (`version.info`, `aclsysGetCANNVersion`): `"8.3.RC1"`, `"9.0.0"`.
    pub const fn release(self) -> &'static str {
        match self {
            CannVersion::V8_0 => "8.0.0",
            CannVersion::V8_1 => "8.1.RC1",
            CannVersion::V8_2 => "8.2.RC1",
            CannVersion::V8_3 => "8.3.RC1",
            CannVersion::V8_5 => "8.5.0",
            CannVersion::V9_0 => "9.0.0",
        }
    }

    /// The ACL interface version (`aclrtGetVersion`: major, minor, patch)
    /// the headers of this release declare. 1.17.0 (9.0) and 1.16.0 (8.5)
    /// are documented; 1.15.0 for 8.0 – 8.3 is UNCONFIRMED (the value of the
    /// headers vendored in the 8.x era; earlier values were not found).
    pub const fn acl_interface(self) -> (i32, i32, i32) {
        match self {
            CannVersion::V9_0 => (1, 17, 0),
            CannVersion::V8_5 => (1, 16, 0),
            _ => (1, 15, 0),
        }
    }

    /// Parses `"8.3"`, `"8.3.RC1"`, `"8.0.0"`, `"9.0.0"`, `"8.5.0-beta.1"`
    /// (case-insensitive): the major and minor number decide, the rest must
    /// be a release suffix. Anything else is [`UnknownCannVersion`].
    ///
    /// ```
    /// use aclmem_core::CannVersion;
    /// assert_eq!(CannVersion::parse("8.3.RC1"), Ok(CannVersion::V8_3));
    /// assert_eq!(CannVersion::parse("9.0"), Ok(CannVersion::V9_0));
    /// assert!(CannVersion::parse("8.4").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<CannVersion, UnknownCannVersion> {
        let (major, minor) = major_minor(text).ok_or(UnknownCannVersion)?;
        CannVersion::ALL
            .into_iter()
            .find(|v| v.major_minor() == (major, minor))
            .ok_or(UnknownCannVersion)
    }

    /// The modelled version whose rules apply to an installed release:
    /// the release itself, or for a release newer than every modelled one
    /// (9.1, 9.2, …) the newest modelled version. `None` for releases older
    /// than 8.0 and unknown 8.x lines.
    pub fn for_installed(text: &str) -> Option<CannVersion> {
        if let Ok(v) = CannVersion::parse(text) {
            return Some(v);
        }
        let (major, minor) = major_minor(text)?;
        (major, minor)
            .gt(&CannVersion::DEFAULT.major_minor())
            .then_some(CannVersion::DEFAULT)
    }

    const fn major_minor(self) -> (u32, u32) {
        match self {
            CannVersion::V8_0 => (8, 0),
            CannVersion::V8_1 => (8, 1),
            CannVersion::V8_2 => (8, 2),
            CannVersion::V8_3 => (8, 3),
            CannVersion::V8_5 => (8, 5),
            CannVersion::V9_0 => (9, 0),
        }
    }

    /// Which attributes `aclrtMemGetAllocationGranularity` answers in this
    /// version: from 9.0 every attribute `aclrtMallocPhysical` accepts;
    /// before, only the `ACL_HBM_MEM_*` ones (anything else is 100000). The
    /// attribute must also exist in the version (see [`crate::check`]).
    pub const fn granularity_answers(self, attr: MemAttr) -> bool {
        match self {
            CannVersion::V9_0 => attr.is_allocatable(),
            _ => matches!(
                attr,
                MemAttr::HbmMemHuge | MemAttr::HbmMemNormal | MemAttr::HbmMemHuge1G
            ),
        }
    }

    /// What a non-NULL expected address of `aclrtReserveMemAddress` must
    /// satisfy.
    pub const fn expected_address(self) -> ExpectedAddress {
        match self {
            CannVersion::V9_0 => ExpectedAddress::Window16To24TiB,
            CannVersion::V8_5 => ExpectedAddress::Aligned1G,
            _ => ExpectedAddress::NullOnly,
        }
    }

    /// Whether `aclrtReserveMemAddress` insists on `alignment == 0`. Up to
    /// 8.3 the documentation requires it; from 8.5 the parameter is
    /// "reserved" and passed to the driver unchecked, whose answer is
    /// UNCONFIRMED: aclmem requires 0 in every version (conservative).
    pub const fn reserve_alignment_must_be_zero(self) -> bool {
        true
    }

    /// The code `aclrtReserveMemAddress` answers for an expected address
    /// the version refuses. 8.5 documents 107000 for a misaligned address;
    /// the other versions' codes are UNCONFIRMED and taken to be the same.
    pub const fn bad_expected_address_code(self) -> AclError {
        AclError::RT_PARAM_INVALID
    }
}

impl fmt::Display for CannVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CANN {}", self.id())
    }
}

/// `"8.3.RC1"` → (8, 3). The part after the minor number must start with
/// `.`, `-` or nothing.
fn major_minor(text: &str) -> Option<(u32, u32)> {
    let t = text.trim();
    let mut parts = t.splitn(3, '.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor_part = parts.next()?;
    let digits = minor_part
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(minor_part.len());
    let (minor, rest) = minor_part.split_at(digits);
    if !(rest.is_empty() || rest.starts_with('-')) {
        return None;
    }
    Some((major, minor.parse().ok()?))
}

/// A CANN-version marker type. Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a CANN version marker",
    label = "expected `Cann8_0`, `Cann8_1`, `Cann8_2`, `Cann8_3`, `Cann8_5` or `Cann9_0`"
)]
pub trait CannType: Sealed + Copy + Default + 'static {
    /// The version this marker stands for.
    const VERSION: CannVersion;
}

/// `Self` is the version `Min` or a later one: the bound for generic code
/// that needs a feature introduced in `Min`.
///
/// ```
/// use aclmem_core::{AtLeast, Cann8_5, Device, Huge, PhysicalMemProp, ProductType, Supports};
/// fn generic_huge<P>() -> PhysicalMemProp<P, Device, Huge>
/// where
///     P: ProductType<Cann: AtLeast<Cann8_5>> + Supports<Device, Huge>,
/// {
///     PhysicalMemProp::on_device(0)
/// }
/// # let _ = generic_huge::<aclmem_core::AtlasA2>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is older than `{Min}`",
    label = "this code needs `{Min}` or later"
)]
pub trait AtLeast<Min: CannType>: CannType {}

/// Version `Self` accepts `What` (a product, location or attribute marker),
/// which exists from version `Since` on. The leaf of every per-version rule,
/// so a refusal names what, since when, and the version the code targets.
#[diagnostic::on_unimplemented(
    message = "`{What}` needs `{Since}` or later; this code targets `{Self}`",
    label = "not available in `{Self}`",
    note = "the CANN version is the product marker's parameter (`AtlasA2<Cann8_3>`; `AtlasA2` alone targets `Cann9_0`); see `aclmem diff` or docs/rules.md for what each release accepts"
)]
pub trait Accepts<What, Since: CannType>: CannType {}

macro_rules! cann_markers {
    ($($(#[$doc:meta])* $name:ident => $v:ident;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
            #[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
            pub struct $name;
            impl Sealed for $name {}
            impl CannType for $name {
                const VERSION: CannVersion = CannVersion::$v;
            }
        )*
        cann_markers!(@order [] $($name)*);
    };
    // Every version is at least itself and every earlier one.
    // (`do_not_recommend`: a refusal names its rule; a list of the
    // versions that would have worked adds nothing.)
    (@order [$($earlier:ident)*] $first:ident $($rest:ident)*) => {
        #[diagnostic::do_not_recommend]
        impl AtLeast<$first> for $first {}
        #[diagnostic::do_not_recommend]
        impl<W> Accepts<W, $first> for $first {}
        $(
            #[diagnostic::do_not_recommend]
            impl AtLeast<$earlier> for $first {}
            #[diagnostic::do_not_recommend]
            impl<W> Accepts<W, $earlier> for $first {}
        )*
        cann_markers!(@order [$($earlier)* $first] $($rest)*);
    };
    (@order [$($earlier:ident)*]) => {};
}

cann_markers! {
    /// Marker: CANN 8.0 (8.0.RC1 – 8.0.0).
    Cann8_0 => V8_0;
    /// Marker: CANN 8.1 (8.1.RC1).
    Cann8_1 => V8_1;
    /// Marker: CANN 8.2 (8.2.RC1).
    Cann8_2 => V8_2;
    /// Marker: CANN 8.3 (8.3.RC1).
    Cann8_3 => V8_3;
    /// Marker: CANN 8.5 (8.5.0).
    Cann8_5 => V8_5;
    /// Marker: CANN 9.0 (9.0.0), the default of every product marker.
    Cann9_0 => V9_0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_strings_parse_back() {
        for v in CannVersion::ALL {
            assert_eq!(CannVersion::parse(v.release()), Ok(v));
            assert_eq!(CannVersion::parse(v.id()), Ok(v));
        }
        assert_eq!(CannVersion::parse("8.0.RC2"), Ok(CannVersion::V8_0));
        assert_eq!(CannVersion::parse("8.5.0-beta.1"), Ok(CannVersion::V8_5));
        assert_eq!(CannVersion::parse(" 8.3.rc1 "), Ok(CannVersion::V8_3));
        for bad in ["", "8", "8.4", "7.0.0", "9.1", "x.y", "8.3x", "eight"] {
            assert_eq!(CannVersion::parse(bad), Err(UnknownCannVersion), "{bad}");
        }
    }

    #[test]
    fn newer_installations_use_the_newest_rules() {
        assert_eq!(CannVersion::for_installed("9.2.0"), Some(CannVersion::V9_0));
        assert_eq!(
            CannVersion::for_installed("10.0.RC1"),
            Some(CannVersion::V9_0)
        );
        assert_eq!(
            CannVersion::for_installed("8.3.RC1"),
            Some(CannVersion::V8_3)
        );
        assert_eq!(CannVersion::for_installed("7.0.0"), None);
        assert_eq!(CannVersion::for_installed("8.4.0"), None);
    }

    #[test]
    fn versions_are_ordered_by_release() {
        assert!(CannVersion::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(CannVersion::DEFAULT, CannVersion::V9_0);
    }
}
