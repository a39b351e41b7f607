//! One checked combination, and its one serialisation: the CLI's JSON and
//! the Python module's dicts are both [`CheckReport`] (with the `serde`
//! feature), so their keys and formats agree.

use crate::attr::MemAttr;
use crate::cann::CannVersion;
use crate::location::Location;
use crate::product::{Product, RunMode};
use crate::rules::{Denial, PLATFORMS, Verdict, check};

/// A combination and what the rules say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct Checked {
    /// The product.
    pub product: Product,
    /// Its run mode.
    pub run_mode: RunMode,
    /// The CANN release.
    pub cann: CannVersion,
    /// The location.
    pub location: Location,
    /// The attribute.
    pub attr: MemAttr,
    /// What [`check`] answers.
    pub result: Result<Verdict, Denial>,
}

impl Checked {
    /// Runs [`check`] on one combination.
    pub const fn new(
        product: Product,
        run_mode: RunMode,
        cann: CannVersion,
        location: Location,
        attr: MemAttr,
    ) -> Checked {
        Checked {
            product,
            run_mode,
            cann,
            location,
            attr,
            result: check(product, run_mode, cann, location, attr),
        }
    }

    /// The flat record the CLI and Python print.
    pub fn report(&self) -> CheckReport {
        let denial = self.result.err();
        let code = match self.result {
            Ok(_) => None,
            Err(d) => Some(d.code()),
        };
        CheckReport {
            cann: self.cann.id(),
            product: self.product.id(),
            product_name: self.product.doc_name(),
            marker: PLATFORMS
                .iter()
                .find(|p| p.product == self.product && p.run_mode == self.run_mode)
                .map(|p| p.marker),
            run_mode: self.run_mode.id(),
            location: self.location.id(),
            location_raw: self.location.raw(),
            attribute: self.attr.c_name(),
            attribute_marker: self.attr.marker_name(),
            raw_value: self.attr.raw(),
            granularity: self.attr.granularity(),
            allowed: self.result.is_ok(),
            verdict: match self.result {
                Ok(v) => v.id(),
                Err(_) => "denied",
            },
            denial: denial.map(Denial::id),
            code: code.map_or(0, |c| c.code()),
            code_name: code.and_then(|c| c.name()),
            rule: denial.map(Denial::rule),
            message: denial,
            since: denial.and_then(Denial::since).map(CannVersion::id),
        }
    }
}

/// One checked combination as a flat record: the keys of the CLI's JSON
/// (`aclmem matrix --format json`) and of Python's `aclmem.check` and
/// `aclmem.matrix`. Releases are ids (`"8.5"`), products and locations
/// ids, attributes C names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CheckReport {
    /// The release (`"8.3"`).
    pub cann: &'static str,
    /// The product id (`"a2"`).
    pub product: &'static str,
    /// The product's documentation name.
    pub product_name: &'static str,
    /// The marker type (`"Atlas200IA2<Rc>"`), if the product has one in
    /// this run mode.
    pub marker: Option<&'static str>,
    /// `"ep"` or `"rc"`.
    pub run_mode: &'static str,
    /// The location id (`"host-numa"`).
    pub location: &'static str,
    /// The location's C value.
    pub location_raw: u32,
    /// The attribute's C name.
    pub attribute: &'static str,
    /// The attribute's marker type, if `aclrtMallocPhysical` accepts it.
    pub attribute_marker: Option<&'static str>,
    /// The attribute's C value.
    pub raw_value: u32,
    /// Its granularity in bytes.
    pub granularity: usize,
    /// Whether the rules allow it.
    pub allowed: bool,
    /// [`Verdict::id`], or `"denied"`.
    pub verdict: &'static str,
    /// [`Denial::id`] when refused.
    pub denial: Option<&'static str>,
    /// The ACL code the runtime answers: 0 when allowed.
    pub code: i32,
    /// The code's name when refused.
    pub code_name: Option<&'static str>,
    /// [`Denial::rule`] when refused.
    pub rule: Option<&'static str>,
    /// The refusal in one sentence, with its code (the [`Denial`]'s
    /// `Display`).
    #[cfg_attr(feature = "serde", serde(serialize_with = "display"))]
    pub message: Option<Denial>,
    /// For a refusal by release: the first release that allows it.
    pub since: Option<&'static str>,
}

#[cfg(feature = "serde")]
fn display<S: serde::Serializer>(denial: &Option<Denial>, s: S) -> Result<S::Ok, S::Error> {
    match denial {
        Some(d) => s.collect_str(d),
        None => s.serialize_none(),
    }
}
