//! Products, run modes and their marker types, and SoC-name detection.

use core::fmt;
use core::marker::PhantomData;

use crate::error::AclError;
use crate::sealed::Sealed;

/// An Ascend product family, as the CANN documentation groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum Product {
    /// Atlas 350 accelerator card (Ascend 950PR / 950DT).
    Atlas350,
    /// Atlas A3 training / inference series (Ascend910_93xx).
    AtlasA3,
    /// Atlas A2 training / inference series (Ascend910B1..B4).
    AtlasA2,
    /// Atlas training series (Ascend910A, 910B, 910Pro*, 910PremiumA).
    AtlasTraining,
    /// Atlas inference series (Ascend310P*).
    AtlasInference,
    /// Atlas 200I/500 A2 inference products (Ascend310B*), EP or RC form.
    Atlas200IA2,
    /// Atlas 200/300/500 inference products (Ascend310).
    Atlas200_300_500,
}

impl Product {
    /// Every product, in table order.
    pub const ALL: [Product; 7] = [
        Product::Atlas350,
        Product::AtlasA3,
        Product::AtlasA2,
        Product::AtlasTraining,
        Product::AtlasInference,
        Product::Atlas200IA2,
        Product::Atlas200_300_500,
    ];

    /// The product's documentation name.
    pub const fn doc_name(self) -> &'static str {
        match self {
            Product::Atlas350 => "Atlas 350",
            Product::AtlasA3 => "Atlas A3 training/inference series",
            Product::AtlasA2 => "Atlas A2 training/inference series",
            Product::AtlasTraining => "Atlas training series",
            Product::AtlasInference => "Atlas inference series",
            Product::Atlas200IA2 => "Atlas 200I/500 A2 inference",
            Product::Atlas200_300_500 => "Atlas 200/300/500 inference",
        }
    }

    /// Short stable identifier used by the CLI and JSON output (`"a2"`).
    pub const fn id(self) -> &'static str {
        match self {
            Product::Atlas350 => "atlas350",
            Product::AtlasA3 => "a3",
            Product::AtlasA2 => "a2",
            Product::AtlasTraining => "training",
            Product::AtlasInference => "inference",
            Product::Atlas200IA2 => "200i-a2",
            Product::Atlas200_300_500 => "200-300-500",
        }
    }

    /// Parses [`Product::id`] back.
    pub fn from_id(id: &str) -> Option<Product> {
        Product::ALL.into_iter().find(|p| p.id() == id)
    }

    /// Whether the device of this product has HBM. On products without HBM,
    /// `ACL_HBM_MEM_*` requests are served from DDR (CANN docs).
    pub const fn has_hbm(self) -> bool {
        !matches!(
            self,
            Product::AtlasInference | Product::Atlas200IA2 | Product::Atlas200_300_500
        )
    }

    /// Whether the product exists in Ascend RC (root-complex) form.
    pub const fn has_rc_form(self) -> bool {
        matches!(self, Product::Atlas200IA2 | Product::Atlas200_300_500)
    }

    /// Maps an `aclrtGetSocName` string to its product.
    ///
    /// Every SoC name listed in the reference is recognised; anything else is
    /// an error, never a guess.
    ///
    /// ```
    /// use aclmem_core::Product;
    /// assert_eq!(Product::from_soc_name("Ascend910B3"), Ok(Product::AtlasA2));
    /// assert_eq!(Product::from_soc_name("Ascend910_9382"), Ok(Product::AtlasA3));
    /// assert_eq!(Product::from_soc_name("Ascend310B1"), Ok(Product::Atlas200IA2));
    /// assert!(Product::from_soc_name("Ascend999").is_err());
    /// ```
    pub fn from_soc_name(soc: &str) -> Result<Product, UnknownSocName> {
        const TRAINING: &[&str] = &[
            "Ascend910A",
            "Ascend910B",
            "Ascend910ProA",
            "Ascend910ProB",
            "Ascend910PremiumA",
        ];
        const A2: &[&str] = &[
            "Ascend910B1",
            "Ascend910B2",
            "Ascend910B2C",
            "Ascend910B3",
            "Ascend910B4",
            "Ascend910B4-1",
        ];
        const A3: &[&str] = &[
            "Ascend910_9362",
            "Ascend910_9363",
            "Ascend910_9372",
            "Ascend910_9381",
            "Ascend910_9382",
            "Ascend910_9391",
            "Ascend910_9392",
        ];
        const INFERENCE: &[&str] = &[
            "Ascend310P1",
            "Ascend310P2",
            "Ascend310P3",
            "Ascend310P4",
            "Ascend310P5",
            "Ascend310P7",
        ];
        const A2_200I: &[&str] = &["Ascend310B1", "Ascend310B2", "Ascend310B3", "Ascend310B4"];
        // The exact SoC string of Atlas 200/300/500 is UNCONFIRMED; the
        // runtime package titles use "Ascend310" (and "Ascend310RC").
        const LEGACY_310: &[&str] = &["Ascend310", "Ascend310RC"];

        let product = if TRAINING.contains(&soc) {
            Product::AtlasTraining
        } else if A2.contains(&soc) {
            Product::AtlasA2
        } else if A3.contains(&soc) {
            Product::AtlasA3
        } else if INFERENCE.contains(&soc) {
            Product::AtlasInference
        } else if A2_200I.contains(&soc) {
            Product::Atlas200IA2
        } else if LEGACY_310.contains(&soc) {
            Product::Atlas200_300_500
        } else if is_950_name(soc) {
            Product::Atlas350
        } else {
            return Err(UnknownSocName);
        };
        Ok(product)
    }
}

/// `Ascend950PR_xxxx` / `Ascend950DT_xxxx` with a non-empty alphanumeric
/// suffix (torch_npu maps every `Ascend950*` name to the same SoC version; we
/// accept only the two documented families).
fn is_950_name(soc: &str) -> bool {
    ["Ascend950PR_", "Ascend950DT_"].iter().any(|prefix| {
        soc.strip_prefix(prefix)
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric()))
    })
}

impl fmt::Display for Product {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.doc_name())
    }
}

/// The SoC name is not one this crate knows (the run-time equivalent of
/// torch_npu's "Unsupported soc version").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct UnknownSocName;

impl UnknownSocName {
    /// The ACL code a caller should report: `ACL_ERROR_INVALID_PARAM`.
    pub const fn code(self) -> AclError {
        AclError::INVALID_PARAM
    }
}

impl fmt::Display for UnknownSocName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown Ascend SoC name")
    }
}

impl core::error::Error for UnknownSocName {}

/// Where the application runs relative to the NPU (`aclrtRunMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum RunMode {
    /// EP (endpoint) form: the application runs on a host CPU and the device
    /// is a PCIe endpoint. `aclrtGetRunMode` reports `ACL_HOST` (1).
    Ep,
    /// RC (root-complex) form: the application runs on the product's own
    /// CPU. `aclrtGetRunMode` reports `ACL_DEVICE` (0). The physical-memory
    /// API is not supported in this form.
    Rc,
}

impl RunMode {
    /// `ACL_DEVICE`.
    pub const ACL_DEVICE: u32 = 0;
    /// `ACL_HOST`.
    pub const ACL_HOST: u32 = 1;

    /// Maps an `aclrtGetRunMode` value: `ACL_DEVICE` (0) is RC form,
    /// `ACL_HOST` (1) is EP form; anything else is `None`.
    pub const fn from_acl_run_mode(raw: u32) -> Option<RunMode> {
        match raw {
            RunMode::ACL_DEVICE => Some(RunMode::Rc),
            RunMode::ACL_HOST => Some(RunMode::Ep),
            _ => None,
        }
    }

    /// The `aclrtRunMode` value.
    pub const fn to_acl_run_mode(self) -> u32 {
        match self {
            RunMode::Rc => RunMode::ACL_DEVICE,
            RunMode::Ep => RunMode::ACL_HOST,
        }
    }

    /// `"ep"` or `"rc"`.
    pub const fn id(self) -> &'static str {
        match self {
            RunMode::Ep => "ep",
            RunMode::Rc => "rc",
        }
    }
}

impl fmt::Display for RunMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunMode::Ep => "EP",
            RunMode::Rc => "RC",
        })
    }
}

/// A run-mode marker type ([`Ep`] or [`Rc`]). Sealed.
pub trait RunModeType: Sealed + Copy + Default + 'static {
    /// The value this marker stands for.
    const RUN_MODE: RunMode;
}

/// A product marker type. Sealed.
///
/// `PRODUCT` and `RUN_MODE` are the value-level mirror used by the run-time
/// [`check`](crate::check). Products that have no RC form report
/// [`RunMode::Ep`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a product marker type",
    label = "expected a product marker such as `AtlasA2` or `Atlas200IA2<Ep>`",
    note = "for a product known only at run time, use `aclmem_core::check` with `Product::from_soc_name`"
)]
pub trait ProductType: Sealed + Copy + Default + 'static {
    /// The product.
    const PRODUCT: Product;
    /// The run mode the marker stands for.
    const RUN_MODE: RunMode;
}

macro_rules! markers {
    ($($(#[$doc:meta])* $name:ident => $product:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
        pub struct $name;
        impl Sealed for $name {}
        impl ProductType for $name {
            const PRODUCT: Product = Product::$product;
            const RUN_MODE: RunMode = RunMode::Ep;
        }
    )*};
}

markers! {
    /// Marker: Atlas 350 accelerator card (Ascend 950PR / 950DT).
    Atlas350 => Atlas350;
    /// Marker: Atlas A3 training / inference series.
    AtlasA3 => AtlasA3;
    /// Marker: Atlas A2 training / inference series.
    AtlasA2 => AtlasA2;
    /// Marker: Atlas training series.
    AtlasTraining => AtlasTraining;
    /// Marker: Atlas inference series.
    AtlasInference => AtlasInference;
    /// Marker: Atlas 200/300/500 inference products, which do not support
    /// the physical-memory API at all.
    Atlas200_300_500 => Atlas200_300_500;
}

/// Marker: EP (endpoint) form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct Ep;
impl Sealed for Ep {}
impl RunModeType for Ep {
    const RUN_MODE: RunMode = RunMode::Ep;
}

/// Marker: RC (root-complex) form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub struct Rc;
impl Sealed for Rc {}
impl RunModeType for Rc {
    const RUN_MODE: RunMode = RunMode::Rc;
}

/// Marker: Atlas 200I/500 A2 inference products in run mode `M` ([`Ep`] or
/// [`Rc`]). In RC form the physical-memory API is not supported.
pub struct Atlas200IA2<M: RunModeType>(PhantomData<M>);

// Manual impls: derives would require `M: Trait`, which markers satisfy
// anyway, but spelling them out keeps the bounds minimal.
impl<M: RunModeType> Clone for Atlas200IA2<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M: RunModeType> Copy for Atlas200IA2<M> {}
impl<M: RunModeType> Default for Atlas200IA2<M> {
    fn default() -> Self {
        Atlas200IA2(PhantomData)
    }
}
impl<M: RunModeType> fmt::Debug for Atlas200IA2<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Atlas200IA2<{:?}>", M::RUN_MODE)
    }
}
impl<M: RunModeType> PartialEq for Atlas200IA2<M> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<M: RunModeType> Eq for Atlas200IA2<M> {}
#[cfg(feature = "defmt-1")]
impl<M: RunModeType> defmt::Format for Atlas200IA2<M> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "Atlas200IA2<{}>", M::RUN_MODE)
    }
}
impl<M: RunModeType> Sealed for Atlas200IA2<M> {}
impl<M: RunModeType> ProductType for Atlas200IA2<M> {
    const PRODUCT: Product = Product::Atlas200IA2;
    const RUN_MODE: RunMode = M::RUN_MODE;
}
