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
//! Code generic over the release states the oldest release it needs with
//! [`AtLeast`]: `V: AtLeast<Cann8_5>` is enough for everything 8.5 and every
//! earlier release introduced.
//!
//! Every release is one row of the table at the bottom of this file
//! ([`releases!`]); the enum, the marker types, their order and every method
//! of [`CannVersion`] are generated from it. `docs/extending.md` says how to
//! add a release. The facts (which release introduced which product,
//! location, attribute, granularity answer and reservation rule) and their
//! sources are in `docs/facts.md`, section "CANN versions".

use core::fmt;
use core::str::FromStr;

use crate::attr::MemAttr;
use crate::error::AclError;
use crate::sealed::{Ordered, Reaches, Sealed};

/// A version string that names no release aclmem models. Its message lists
/// the modelled releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct UnknownCannVersion;

impl fmt::Display for UnknownCannVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a CANN release aclmem models (expected one of: {})",
            CannVersion::choices()
        )
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

/// Which attributes `aclrtMemGetAllocationGranularity` answers in one CANN
/// version (anything else is 100000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum GranularityRule {
    /// Only the `ACL_HBM_MEM_*` attributes `aclrtMallocPhysical` accepts:
    /// 8.0 – 8.5.
    HbmOnly,
    /// Every attribute `aclrtMallocPhysical` accepts: 9.0.
    Allocatable,
}

impl GranularityRule {
    /// Whether the query answers for `attr` under this rule.
    pub const fn answers(self, attr: MemAttr) -> bool {
        match self {
            GranularityRule::HbmOnly => matches!(
                attr,
                MemAttr::HbmMemHuge | MemAttr::HbmMemNormal | MemAttr::HbmMemHuge1G
            ),
            GranularityRule::Allocatable => attr.is_allocatable(),
        }
    }
}

/// One release: a row of the table.
struct Release {
    id: &'static str,
    marker: &'static str,
    major_minor: (u32, u32),
    release: &'static str,
    covers: &'static str,
    acl_interface: (i32, i32, i32),
    expected_address: ExpectedAddress,
    granularity: GranularityRule,
    reserve_alignment_must_be_zero: bool,
}

/// Generates, from the one table of releases: the [`CannVersion`] enum, its
/// row array, the marker types, and the order between them. A row can carry
/// attributes (`#[cfg(test)]`) that apply to everything generated from it.
macro_rules! releases {
    (
        $(
            $(#[$attr:meta])*
            $variant:ident $marker:ident = ($major:literal, $minor:literal)
            release $release:literal covers $covers:literal
            acl ($am:literal, $an:literal, $ap:literal)
            expected_address $expected:ident
            granularity $granularity:ident
            reserve_alignment_zero $zero:literal;
        )*
        @default $default:ident;
    ) => {
        /// A CANN release line whose physical-memory rules aclmem models.
        ///
        /// Releases are grouped where their rules do not differ as far as
        /// the documentation shows ([`CannVersion::covers`]). Ordered by
        /// release.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
        pub enum CannVersion {
            $(
                $(#[$attr])*
                #[doc = concat!("CANN ", $major, ".", $minor, " (", $covers, ").")]
                $variant,
            )*
        }

        impl CannVersion {
            /// How many releases aclmem models.
            pub const COUNT: usize = {
                let mut n = 0;
                $( $(#[$attr])* { n += 1; } )*
                n
            };

            /// Every modelled version, oldest first.
            pub const ALL: [CannVersion; CannVersion::COUNT] = {
                let mut out = [CannVersion::DEFAULT; CannVersion::COUNT];
                let mut n = 0;
                $( $(#[$attr])* { out[n] = CannVersion::$variant; n += 1; } )*
                assert!(n == CannVersion::COUNT);
                out
            };

            /// The default: the release every product marker targets unless
            /// told otherwise.
            pub const DEFAULT: CannVersion = <$default as CannType>::VERSION;
        }

        const RELEASES: [Release; CannVersion::COUNT] = {
            const EMPTY: Release = Release {
                id: "",
                marker: "",
                major_minor: (0, 0),
                release: "",
                covers: "",
                acl_interface: (0, 0, 0),
                expected_address: ExpectedAddress::NullOnly,
                granularity: GranularityRule::HbmOnly,
                reserve_alignment_must_be_zero: true,
            };
            let mut out = [EMPTY; CannVersion::COUNT];
            $(
                $(#[$attr])*
                {
                    out[CannVersion::$variant as usize] = Release {
                        id: concat!($major, ".", $minor),
                        marker: stringify!($marker),
                        major_minor: ($major, $minor),
                        release: $release,
                        covers: $covers,
                        acl_interface: ($am, $an, $ap),
                        expected_address: ExpectedAddress::$expected,
                        granularity: GranularityRule::$granularity,
                        reserve_alignment_must_be_zero: $zero,
                    };
                }
            )*
            out
        };

        $(
            $(#[$attr])*
            #[doc = concat!("Marker: CANN ", $major, ".", $minor, " (", $covers, ").")]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
            #[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
            pub struct $marker;
            $(#[$attr])*
            impl Sealed for $marker {}
            $(#[$attr])*
            impl CannType for $marker {
                const VERSION: CannVersion = CannVersion::$variant;
                type Marker = $marker;
            }
        )*

        releases!(@order $( [$(#[$attr])*] $marker )*);

        /// Runs `visitor` with the marker type of `version`: the one place
        /// a value becomes a type, generated from the table.
        pub(crate) fn visit_marker<R: MarkerVisitor>(version: CannVersion, visitor: R) -> R::Output {
            match version {
                $( $(#[$attr])* CannVersion::$variant => visitor.visit::<$marker>(), )*
            }
        }
    };

    // The order, one pair at a time: every version reaches itself and each
    // version before it, and names the one just before it (the oldest names
    // itself; every version reaches it). Generic code bounded by
    // `V: AtLeast<Cann8_5>` learns every older pair from `AtLeast`'s
    // supertraits, which walk `Previous`; a concrete version that is too
    // old fails at the pair itself, so the compiler names the release the
    // code needs (a chain of impls made it name the newest release).
    (@order $first_attrs:tt $first:ident $($rest:tt)*) => {
        // Every version, generic ones too, reaches the oldest.
        impl<V: CannType> Reaches<$first> for V {}
        releases!(@previous $first_attrs $first $first);
        releases!(@later [] $first $($rest)*);
    };
    (@later [$($done_attrs:tt $done:ident)*] $last:ident $attrs:tt $marker:ident $($rest:tt)*) => {
        releases!(@pair $attrs $attrs $marker $marker);
        $( releases!(@pair $attrs $done_attrs $marker $done); )*
        releases!(@previous $attrs $marker $last);
        releases!(@later [$($done_attrs $done)* $attrs $marker] $marker $($rest)*);
    };
    (@later [$($done:tt)*] $last:ident) => {};
    (@pair [$($a:tt)*] [$($b:tt)*] $version:ident $reached:ident) => {
        $($a)* $($b)*
        impl Reaches<$reached> for $version {}
    };
    (@previous [$($a:tt)*] $version:ident $previous:ident) => {
        $($a)*
        impl Ordered for $version {
            type Previous = $previous;
        }
    };
}

/// Code generic over a CANN marker, run by `visit_marker` for a version
/// known at run time.
pub(crate) trait MarkerVisitor {
    type Output;
    fn visit<V: CannType>(self) -> Self::Output;
}

impl CannVersion {
    const fn row(self) -> &'static Release {
        &RELEASES[self as usize]
    }

    /// The newest modelled release.
    pub const NEWEST: CannVersion = CannVersion::ALL[CannVersion::COUNT - 1];

    /// `"8.3"`: the identifier the CLI and JSON use.
    pub const fn id(self) -> &'static str {
        self.row().id
    }

    /// The marker type's name (`"Cann8_3"`).
    pub const fn marker_name(self) -> &'static str {
        self.row().marker
    }

    /// The release string an installation of this version reports
    /// (`version.info`, `aclsysGetCANNVersion`): `"8.3.RC1"`, `"9.0.0"`.
    pub const fn release(self) -> &'static str {
        self.row().release
    }

    /// The releases this line stands for (`"8.0.RC1 – 8.0.0"`).
    pub const fn covers(self) -> &'static str {
        self.row().covers
    }

    /// The ACL interface version (`aclrtGetVersion`: major, minor, patch)
    /// the headers of this release declare. 1.17.0 (9.0) and 1.16.0 (8.5)
    /// are documented; 1.15.0 for 8.0 – 8.3 is UNCONFIRMED (the value of the
    /// headers vendored in the 8.x era; earlier values were not found).
    pub const fn acl_interface(self) -> (i32, i32, i32) {
        self.row().acl_interface
    }

    /// Which attributes `aclrtMemGetAllocationGranularity` answers.
    pub const fn granularity_rule(self) -> GranularityRule {
        self.row().granularity
    }

    /// Whether `aclrtMemGetAllocationGranularity` answers for `attr` in this
    /// version: from 9.0 every attribute `aclrtMallocPhysical` accepts;
    /// before, only the `ACL_HBM_MEM_*` ones (anything else is 100000). The
    /// attribute must also exist in the version (see [`crate::check`]).
    pub const fn granularity_answers(self, attr: MemAttr) -> bool {
        self.row().granularity.answers(attr)
    }

    /// What a non-NULL expected address of `aclrtReserveMemAddress` must
    /// satisfy.
    pub const fn expected_address(self) -> ExpectedAddress {
        self.row().expected_address
    }

    /// Whether `aclrtReserveMemAddress` insists on `alignment == 0`. Up to
    /// 8.3 the documentation requires it; from 8.5 the parameter is
    /// "reserved" and passed to the driver unchecked, whose answer is
    /// UNCONFIRMED: aclmem requires 0 in every version (conservative).
    pub const fn reserve_alignment_must_be_zero(self) -> bool {
        self.row().reserve_alignment_must_be_zero
    }

    /// The code `aclrtReserveMemAddress` answers for an expected address
    /// the version refuses. 8.5 documents 107000 for a misaligned address;
    /// the other versions' codes are UNCONFIRMED and taken to be the same.
    pub const fn bad_expected_address_code(self) -> AclError {
        AclError::RT_PARAM_INVALID
    }

    /// The major and minor number (`(8, 3)`).
    pub const fn major_minor(self) -> (u32, u32) {
        self.row().major_minor
    }

    /// The modelled releases as the CLI and the error messages list them:
    /// `8.0, 8.1, 8.2, 8.3, 8.5, 9.0`.
    pub const fn choices() -> Choices {
        Choices
    }

    /// [`CannVersion::choices`] as a constant string: `"8.0, 8.1, …, 9.0"`.
    pub const LIST: &'static str = {
        const TEXT: Phrase = Phrase::ids("", ", ");
        TEXT.as_str()
    };

    /// What a release argument may be, as a phrase for error messages:
    /// `"a CANN release aclmem models: 8.0, 8.1, … or 9.0"`.
    pub const EXPECTED: &'static str = {
        const TEXT: Phrase = Phrase::ids("a CANN release aclmem models: ", " or ");
        TEXT.as_str()
    };

    /// Parses a CANN release string (ASCII case and surrounding whitespace
    /// ignored). Accepted, for a major and minor number aclmem models:
    ///
    /// * the line: `8.3`;
    /// * a release: `8.3.RC1`, `8.0.0`, `9.0.0` (a patch number or `RC`
    ///   and a number);
    /// * a pre-release of it, as the documentation names them
    ///   (`8.2.RC1.alpha002`, `8.1.RC1.beta1`) or as the runtime's
    ///   tags do (`8.5.0-beta.1`): `.` or `-`, `alpha` or `beta`, an
    ///   optional `.`, and a number.
    ///
    /// Numbers are decimal without leading zeros (`0` itself is fine; the
    /// pre-release number is as written: `alpha002`). Anything else is
    /// [`UnknownCannVersion`], including trailing text (`8.3.RC1; rm`),
    /// signs (`+8.3`) and releases aclmem does not model (`8.4`, `7.0.0`;
    /// see [`CannVersion::for_installed`] for newer ones).
    ///
    /// ```
    /// use aclmem_core::CannVersion;
    /// assert_eq!(CannVersion::parse("8.3.RC1"), Ok(CannVersion::V8_3));
    /// assert_eq!(CannVersion::parse("9.0"), Ok(CannVersion::V9_0));
    /// assert_eq!(CannVersion::parse("8.5.0-beta.1"), Ok(CannVersion::V8_5));
    /// assert!(CannVersion::parse("8.4").is_err());
    /// assert!(CannVersion::parse("8.3.garbage").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<CannVersion, UnknownCannVersion> {
        let (major, minor) = release_line(text).ok_or(UnknownCannVersion)?;
        CannVersion::ALL
            .into_iter()
            .find(|v| v.major_minor() == (major, minor))
            .ok_or(UnknownCannVersion)
    }

    /// The modelled version whose rules apply to an installed release, for
    /// a string of the form [`CannVersion::parse`] accepts (with any major
    /// and minor number): the release itself if modelled; for a release
    /// newer than every modelled one (9.1, 10.0.RC1, …) the newest modelled
    /// version, since rules so far only ever grew; `None` for releases older
    /// than the oldest modelled one, unmodelled lines in between (8.4) and
    /// anything that is not a release string.
    ///
    /// ```
    /// use aclmem_core::CannVersion;
    /// assert_eq!(CannVersion::for_installed("8.3.RC1"), Some(CannVersion::V8_3));
    /// assert_eq!(CannVersion::for_installed("9.2.0"), Some(CannVersion::NEWEST));
    /// assert_eq!(CannVersion::for_installed("8.4.0"), None);
    /// assert_eq!(CannVersion::for_installed("9.2.garbage"), None);
    /// ```
    pub fn for_installed(text: &str) -> Option<CannVersion> {
        let line = release_line(text)?;
        CannVersion::ALL
            .into_iter()
            .find(|v| v.major_minor() == line)
            .or_else(|| (line > CannVersion::NEWEST.major_minor()).then_some(CannVersion::NEWEST))
    }
}

mod phrase;
use phrase::Phrase;

/// The list of modelled releases, `8.0, 8.1, …` (see
/// [`CannVersion::choices`]).
#[derive(Debug, Clone, Copy)]
pub struct Choices;

impl fmt::Display for Choices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(CannVersion::LIST)
    }
}

impl fmt::Display for CannVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CANN {}", self.id())
    }
}

impl FromStr for CannVersion {
    type Err = UnknownCannVersion;

    /// [`CannVersion::parse`].
    fn from_str(text: &str) -> Result<CannVersion, UnknownCannVersion> {
        CannVersion::parse(text)
    }
}

/// A decimal number without leading zeros, at the start of `text`.
fn number(text: &str) -> Option<(u32, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (n, rest) = text.split_at(digits);
    if n.is_empty() || (n.len() > 1 && n.starts_with('0')) {
        return None;
    }
    Some((n.parse().ok()?, rest))
}

/// `prefix` at the start of `text`, ASCII case ignored.
fn keyword<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// The grammar of [`CannVersion::parse`]: `MAJOR.MINOR[.PATCH[PRE]]` with
/// `PATCH = N | RC N` and `PRE = (.|-)(alpha|beta)[.]DIGITS`; the line it
/// names.
fn release_line(text: &str) -> Option<(u32, u32)> {
    let t = text.trim();
    let (major, t) = number(t)?;
    let (minor, t) = number(t.strip_prefix('.')?)?;
    if t.is_empty() {
        return Some((major, minor));
    }
    let t = t.strip_prefix('.')?;
    let t = match keyword(t, "rc") {
        Some(rc) => number(rc)?.1,
        None => number(t)?.1,
    };
    if t.is_empty() {
        return Some((major, minor));
    }
    let t = t.strip_prefix(['.', '-'])?;
    let t = keyword(t, "alpha").or_else(|| keyword(t, "beta"))?;
    let t = t.strip_prefix('.').unwrap_or(t);
    (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then_some((major, minor))
}

/// A CANN-version marker type. Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a CANN version marker",
    label = "expected a marker such as `Cann8_3` or `Cann9_0`"
)]
pub trait CannType: Sealed + Ordered + Copy + Default + 'static {
    /// The version this marker stands for.
    const VERSION: CannVersion;
    /// The marker itself. Product markers name their default release as
    /// `<Cann9_0 as CannType>::Marker` rather than `Cann9_0`: the same
    /// type, but rustc then prints it (`AtlasA2<Cann9_0>`, not `AtlasA2`)
    /// in type-mismatch labels, so both releases of a mismatch show.
    type Marker: CannType;
}

mod order;
pub use order::{Accepts, AtLeast};

// ===========================================================================
// THE RELEASES. Each release is one row; everything about releases derives
// from here. Sources in docs/facts.md ("CANN versions").
// ===========================================================================
releases! {
    V8_0 Cann8_0 = (8, 0) release "8.0.0" covers "8.0.RC1 – 8.0.0"
        acl (1, 15, 0) expected_address NullOnly granularity HbmOnly
        reserve_alignment_zero true;
    V8_1 Cann8_1 = (8, 1) release "8.1.RC1" covers "8.1.RC1"
        acl (1, 15, 0) expected_address NullOnly granularity HbmOnly
        reserve_alignment_zero true;
    V8_2 Cann8_2 = (8, 2) release "8.2.RC1" covers "8.2.RC1"
        acl (1, 15, 0) expected_address NullOnly granularity HbmOnly
        reserve_alignment_zero true;
    V8_3 Cann8_3 = (8, 3) release "8.3.RC1" covers "8.3.RC1"
        acl (1, 15, 0) expected_address NullOnly granularity HbmOnly
        reserve_alignment_zero true;
    V8_5 Cann8_5 = (8, 5) release "8.5.0" covers "8.5.0"
        acl (1, 16, 0) expected_address Aligned1G granularity HbmOnly
        reserve_alignment_zero true;
    V9_0 Cann9_0 = (9, 0) release "9.0.0" covers "9.0.0"
        acl (1, 17, 0) expected_address Window16To24TiB granularity Allocatable
        reserve_alignment_zero true;
    V9_1 Cann9_1 = (9, 1) release "9.1.0" covers "9.1.0"
        acl (1, 17, 0) expected_address Window16To24TiB granularity Allocatable
        reserve_alignment_zero true;
    // A release that does not exist, in this crate's own tests only: it
    // proves that a row is all a new release needs (`docs/extending.md`).
    #[cfg(test)]
    V9_9 Cann9_9 = (9, 9) release "9.9.0" covers "9.9.0 (test only)"
        acl (1, 99, 0) expected_address Window16To24TiB granularity Allocatable
        reserve_alignment_zero true;
    // The release a product marker targets unless told otherwise.
    @default Cann9_0;
}

#[cfg(test)]
mod tests;
