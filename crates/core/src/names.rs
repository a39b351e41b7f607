//! One parser per name: `FromStr` for [`Product`], [`Location`],
//! [`MemAttr`], [`RunMode`] (and, in `cann.rs`, `CannVersion`), used by
//! the CLI, the sanitizer, the Python module and the emulator's
//! environment. Case and punctuation are ignored (`A2`, `atlas-a2`,
//! `AtlasA2` are one product); an unknown name suggests the closest known
//! one, computed without allocating.

use core::fmt;
use core::str::FromStr;

use crate::attr::MemAttr;
use crate::cann::{CannVersion, UnknownCannVersion};
use crate::location::Location;
use crate::product::{Product, RunMode};
use crate::text::Buf;

/// What kind of name [`UnknownName`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[non_exhaustive]
pub enum NameKind {
    /// A product ([`Product`]).
    ProductName,
    /// A location ([`Location`]).
    LocationName,
    /// A memory attribute ([`MemAttr`]).
    AttrName,
    /// A run mode ([`RunMode`]).
    RunModeName,
}

impl NameKind {
    /// `"product"`, `"location"`, `"memory attribute"`, `"run mode"`.
    pub const fn noun(self) -> &'static str {
        match self {
            NameKind::ProductName => "product",
            NameKind::LocationName => "location",
            NameKind::AttrName => "memory attribute",
            NameKind::RunModeName => "run mode",
        }
    }
}

/// A name that names nothing of its kind, with the closest known name
/// when one is close.
///
/// ```
/// use aclmem_core::Product;
/// let err = "a22".parse::<Product>().unwrap_err();
/// assert_eq!(err.suggestion(), Some("a2"));
/// assert!(err.to_string().starts_with("unknown product; did you mean `a2`?"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct UnknownName {
    kind: NameKind,
    suggestion: Option<&'static str>,
}

impl UnknownName {
    /// What was being parsed.
    pub const fn kind(&self) -> NameKind {
        self.kind
    }

    /// The known name closest to the input, if one is close (a small edit
    /// distance, case and punctuation ignored).
    pub const fn suggestion(&self) -> Option<&'static str> {
        self.suggestion
    }
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {}", self.kind.noun())?;
        if let Some(s) = self.suggestion {
            write!(f, "; did you mean `{s}`?")?;
        }
        f.write_str(" (expected one of: ")?;
        let mut first = true;
        let mut item = |f: &mut fmt::Formatter<'_>, name: &str| {
            let sep = if first { "" } else { ", " };
            first = false;
            write!(f, "{sep}{name}")
        };
        match self.kind {
            NameKind::ProductName => {
                for p in Product::ALL {
                    item(f, p.id())?;
                }
            }
            NameKind::LocationName => {
                for l in Location::ALL {
                    item(f, l.id())?;
                }
            }
            NameKind::AttrName => {
                for a in MemAttr::ALL {
                    item(f, a.c_name())?;
                }
                f.write_str(", a marker name such as HbmHuge, or the value")?;
            }
            NameKind::RunModeName => {
                for m in RunMode::ALL {
                    item(f, m.id())?;
                }
            }
        }
        f.write_str(")")
    }
}

impl core::error::Error for UnknownName {}

/// The letters and digits of `s`, lowercased: the form names are compared
/// in.
fn folded(s: &str) -> impl Iterator<Item = u8> + Clone + '_ {
    s.bytes()
        .filter(u8::is_ascii_alphanumeric)
        .map(|b| b.to_ascii_lowercase())
}

/// Whether `a` and `b` are the same name, case and punctuation ignored.
fn same(a: &str, b: &str) -> bool {
    folded(a).eq(folded(b))
}

/// Longest folded name the suggestion compares (longer input gets none).
const MAX: usize = 48;

/// The edit distance between the folded forms of `a` and `b`, or `None`
/// when either is longer than [`MAX`].
fn distance(a: &str, b: &str) -> Option<usize> {
    if folded(a).count() > MAX || folded(b).count() > MAX {
        return None;
    }
    let n = folded(b).count();
    let mut row = [0usize; MAX + 1];
    for (j, cell) in row.iter_mut().enumerate().take(n + 1) {
        *cell = j;
    }
    for (i, ca) in folded(a).enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in folded(b).enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    Some(row[n])
}

/// The candidate closest to `given`, if it is within a third of its length
/// (at least 2 edits).
fn closest(given: &str, candidates: impl Iterator<Item = &'static str>) -> Option<&'static str> {
    let limit = (folded(given).count() / 3).max(2);
    candidates
        .filter_map(|c| Some((distance(given, c)?, c)))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// A `Debug` rendering on the stack (variant names: the longest is 16
/// bytes).
fn debug_name(value: impl fmt::Debug) -> Buf<32> {
    let mut name = Buf::new();
    let _ = fmt::write(&mut name, format_args!("{value:?}"));
    name
}

impl FromStr for Product {
    type Err = UnknownName;

    /// A product by its id (`a2`, `200i-a2`), its marker type's name
    /// (`AtlasA2`, `Atlas200IA2`) or its documentation name (`Atlas A2
    /// training/inference series`), case and punctuation ignored (`A2`,
    /// `atlas-a2`). SoC names are a different fact:
    /// [`Product::from_soc_name`].
    ///
    /// ```
    /// use aclmem_core::Product;
    /// for name in ["a2", "A2", "atlas-a2", "AtlasA2", "Atlas A2 training/inference series"] {
    ///     assert_eq!(name.parse(), Ok(Product::AtlasA2));
    /// }
    /// assert!("Ascend910B3".parse::<Product>().is_err());
    /// ```
    fn from_str(text: &str) -> Result<Product, UnknownName> {
        Product::ALL
            .into_iter()
            .find(|p| {
                same(text, p.id()) || same(text, debug_name(p).as_str()) || same(text, p.doc_name())
            })
            .ok_or(UnknownName {
                kind: NameKind::ProductName,
                suggestion: closest(text, Product::ALL.into_iter().map(Product::id)),
            })
    }
}

impl FromStr for Location {
    type Err = UnknownName;

    /// A location by its id (`device`, `host`, `host-numa`) or its C name
    /// (`ACL_MEM_LOCATION_TYPE_HOST_NUMA`), case and punctuation ignored.
    ///
    /// ```
    /// use aclmem_core::Location;
    /// assert_eq!("Host_NUMA".parse(), Ok(Location::HostNuma));
    /// assert_eq!("ACL_MEM_LOCATION_TYPE_DEVICE".parse(), Ok(Location::Device));
    /// ```
    fn from_str(text: &str) -> Result<Location, UnknownName> {
        Location::ALL
            .into_iter()
            .find(|l| same(text, l.id()) || same(text, l.c_name()))
            .ok_or(UnknownName {
                kind: NameKind::LocationName,
                suggestion: closest(text, Location::ALL.into_iter().map(Location::id)),
            })
    }
}

impl FromStr for MemAttr {
    type Err = UnknownName;

    /// An attribute by its C name (`ACL_HBM_MEM_HUGE`), its marker type's
    /// name (`HbmHuge`) or its decimal value (`4`), case and punctuation
    /// ignored. Values `aclrtMallocPhysical` rejects (`ACL_DDR_MEM`) parse:
    /// refusing them is the rules' job.
    ///
    /// ```
    /// use aclmem_core::MemAttr;
    /// assert_eq!("acl_hbm_mem_huge".parse(), Ok(MemAttr::HbmMemHuge));
    /// assert_eq!("HbmHuge1G".parse(), Ok(MemAttr::HbmMemHuge1G));
    /// assert_eq!("13".parse(), Ok(MemAttr::MemHuge));
    /// assert_eq!("ACL_MEM_HUGE1".parse::<MemAttr>().unwrap_err().suggestion(), Some("ACL_MEM_HUGE"));
    /// ```
    fn from_str(text: &str) -> Result<MemAttr, UnknownName> {
        if let Some(attr) = text.trim().parse::<u32>().ok().and_then(MemAttr::from_raw) {
            return Ok(attr);
        }
        let names = || {
            MemAttr::ALL
                .iter()
                .flat_map(|a| [Some(a.c_name()), a.marker_name()])
                .flatten()
        };
        MemAttr::ALL
            .iter()
            .copied()
            .find(|a| same(text, a.c_name()) || a.marker_name().is_some_and(|m| same(text, m)))
            .ok_or(UnknownName {
                kind: NameKind::AttrName,
                suggestion: closest(text, names()),
            })
    }
}

impl FromStr for RunMode {
    type Err = UnknownName;

    /// `ep` or `rc`, or the `aclrtRunMode` names: `ACL_HOST` (`host`, EP
    /// form) and `ACL_DEVICE` (`device`, RC form); case ignored.
    ///
    /// ```
    /// use aclmem_core::RunMode;
    /// assert_eq!("EP".parse(), Ok(RunMode::Ep));
    /// assert_eq!("device".parse(), Ok(RunMode::Rc));
    /// ```
    fn from_str(text: &str) -> Result<RunMode, UnknownName> {
        RunMode::ALL
            .into_iter()
            .find(|m| {
                let acl = m.acl_name();
                same(text, m.id()) || same(text, acl) || same(text, &acl["ACL_".len()..])
            })
            .ok_or(UnknownName {
                kind: NameKind::RunModeName,
                suggestion: closest(text, RunMode::ALL.into_iter().map(RunMode::id)),
            })
    }
}

/// A platform a program must also run on, as the sanitizer's `--targets`
/// lists them: `product[:run-mode][@release]`, where the product is any
/// of its names or a SoC name (`a2`, `Ascend910B3`, `200i-a2:rc@8.3`).
/// What is left out is the running machine's.
///
/// ```
/// use aclmem_core::{CannVersion, Product, RunMode, Target};
/// let t: Target = "200i-a2:rc@8.3".parse().unwrap();
/// assert_eq!(
///     (t.product, t.run_mode, t.cann),
///     (Product::Atlas200IA2, Some(RunMode::Rc), Some(CannVersion::V8_3))
/// );
/// assert_eq!("Ascend910B3".parse::<Target>().unwrap().product, Product::AtlasA2);
/// assert!("a2:xp".parse::<Target>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct Target {
    /// The product.
    pub product: Product,
    /// Its run mode, if given.
    pub run_mode: Option<RunMode>,
    /// The CANN release, if given.
    pub cann: Option<CannVersion>,
}

/// Why a [`Target`] does not parse: which of its parts names nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[non_exhaustive]
pub enum TargetError {
    /// The product (nor a SoC name).
    Product(UnknownName),
    /// The run mode after `:`.
    RunMode(UnknownName),
    /// The release after `@`.
    Cann(UnknownCannVersion),
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::Product(e) => write!(f, "{e} (or a SoC name such as Ascend910B3)"),
            TargetError::RunMode(e) => e.fmt(f),
            TargetError::Cann(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for TargetError {}

impl FromStr for Target {
    type Err = TargetError;

    fn from_str(text: &str) -> Result<Target, TargetError> {
        let (rest, cann) = match text.trim().split_once('@') {
            Some((rest, c)) => (
                rest,
                Some(CannVersion::parse(c).map_err(TargetError::Cann)?),
            ),
            None => (text.trim(), None),
        };
        let (product, run_mode) = match rest.split_once(':') {
            Some((p, m)) => (p, Some(m.parse().map_err(TargetError::RunMode)?)),
            None => (rest, None),
        };
        let product = product
            .parse::<Product>()
            .or_else(|e| Product::from_soc_name(product).map_err(|_| TargetError::Product(e)))?;
        Ok(Target {
            product,
            run_mode,
            cann,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn every_name_parses_back() {
        for p in Product::ALL {
            assert_eq!(p.id().parse(), Ok(p));
            assert_eq!(p.id().to_ascii_uppercase().parse(), Ok(p));
            assert_eq!(p.doc_name().parse(), Ok(p));
        }
        for l in Location::ALL {
            assert_eq!(l.id().parse(), Ok(l));
            assert_eq!(l.c_name().to_ascii_lowercase().parse(), Ok(l));
        }
        for a in MemAttr::ALL.iter().copied() {
            assert_eq!(a.c_name().parse(), Ok(a));
            assert_eq!(a.c_name().to_ascii_lowercase().parse(), Ok(a));
            assert_eq!(a.raw().to_string().parse(), Ok(a));
            if let Some(m) = a.marker_name() {
                assert_eq!(m.parse(), Ok(a));
            }
        }
        for m in RunMode::ALL {
            assert_eq!(m.id().parse(), Ok(m));
            assert_eq!(m.acl_name().parse(), Ok(m));
        }
    }

    #[test]
    fn the_three_old_spellings_agree() {
        // The sanitizer refused `A2`; the CLI took it; Python took
        // `atlas-a2` and a case-sensitive memAttr.
        for text in ["A2", "a2", "atlas-a2", "AtlasA2", "ATLASA2"] {
            assert_eq!(text.parse(), Ok(Product::AtlasA2), "{text}");
        }
        assert_eq!("Atlas200IA2".parse(), Ok(Product::Atlas200IA2));
        assert_eq!("200-300-500".parse(), Ok(Product::Atlas200_300_500));
        assert_eq!("acl_mem_huge1g".parse(), Ok(MemAttr::MemHuge1G));
        assert_eq!("p2phuge1g".parse(), Ok(MemAttr::MemP2pHuge1G));
    }

    #[test]
    fn unknown_names_suggest_the_closest_and_list_the_rest() {
        let e = "a22".parse::<Product>().unwrap_err();
        assert_eq!(
            (e.kind(), e.suggestion()),
            (NameKind::ProductName, Some("a2"))
        );
        let text = e.to_string();
        for p in Product::ALL {
            assert!(text.contains(p.id()), "{text}");
        }
        assert_eq!(
            "hots".parse::<Location>().unwrap_err().suggestion(),
            Some("host")
        );
        assert_eq!(
            "ACL_HBM_MEM_HUGE2G"
                .parse::<MemAttr>()
                .unwrap_err()
                .suggestion(),
            Some("ACL_HBM_MEM_HUGE1G")
        );
        assert_eq!(
            "epp".parse::<RunMode>().unwrap_err().suggestion(),
            Some("ep")
        );
        // Nothing close: no suggestion, and long input is not compared.
        assert_eq!(
            "zzzzzzzz".parse::<Product>().unwrap_err().suggestion(),
            None
        );
        let long = "x".repeat(200);
        assert_eq!(long.parse::<MemAttr>().unwrap_err().suggestion(), None);
        assert!("".parse::<RunMode>().is_err());
        assert!("18".parse::<MemAttr>().is_err());
    }

    #[test]
    fn distance_is_the_edit_distance() {
        assert_eq!(distance("kitten", "sitting"), Some(3));
        assert_eq!(distance("", "abc"), Some(3));
        assert_eq!(distance("A-2", "a2"), Some(0));
        assert_eq!(distance("flaw", "lawn"), Some(2));
    }
}
