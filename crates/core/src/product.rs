//! Products, run modes and their marker types, and SoC-name detection.

use core::fmt;
use core::marker::PhantomData;

use crate::cann::{Cann9_0, CannType, CannVersion};
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

    /// Parses [`Product::id`] back: the product parser (`FromStr`, which
    /// also takes marker and documentation names, any case), without its
    /// error.
    pub fn from_id(id: &str) -> Option<Product> {
        id.parse().ok()
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

    /// Maps an `aclrtGetSocName` string to its product (ASCII case is
    /// ignored).
    ///
    /// Every SoC name listed in `docs/facts.md` is recognised; anything else
    /// is an error, never a guess.
    ///
    /// ```
    /// use aclmem_core::Product;
    /// assert_eq!(Product::from_soc_name("Ascend910B3"), Ok(Product::AtlasA2));
    /// assert_eq!(Product::from_soc_name("ascend910b3"), Ok(Product::AtlasA2));
    /// assert_eq!(Product::from_soc_name("Ascend910_9382"), Ok(Product::AtlasA3));
    /// assert_eq!(Product::from_soc_name("Ascend310B1"), Ok(Product::Atlas200IA2));
    /// assert!(Product::from_soc_name("Ascend999").is_err());
    /// ```
    pub fn from_soc_name(soc: &str) -> Result<Product, UnknownSocName> {
        SOC_NAMES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(soc))
            .map(|(_, product)| *product)
            .or_else(|| is_950_name(soc).then_some(Product::Atlas350))
            .ok_or(UnknownSocName)
    }
}

/// Every SoC name `aclrtGetSocName` is documented to return, with its
/// product. Atlas 350 names (`Ascend950PR_xxxx`, `Ascend950DT_xxxx`) are
/// matched by pattern; two documented examples are listed here. The exact
/// string of Atlas 200/300/500 is UNCONFIRMED; the runtime package titles
/// use "Ascend310" (and "Ascend310RC").
pub const SOC_NAMES: &[(&str, Product)] = &[
    ("Ascend910A", Product::AtlasTraining),
    ("Ascend910B", Product::AtlasTraining),
    ("Ascend910ProA", Product::AtlasTraining),
    ("Ascend910ProB", Product::AtlasTraining),
    ("Ascend910PremiumA", Product::AtlasTraining),
    ("Ascend910B1", Product::AtlasA2),
    ("Ascend910B2", Product::AtlasA2),
    ("Ascend910B2C", Product::AtlasA2),
    ("Ascend910B3", Product::AtlasA2),
    ("Ascend910B4", Product::AtlasA2),
    ("Ascend910B4-1", Product::AtlasA2),
    ("Ascend910_9362", Product::AtlasA3),
    ("Ascend910_9363", Product::AtlasA3),
    ("Ascend910_9372", Product::AtlasA3),
    ("Ascend910_9381", Product::AtlasA3),
    ("Ascend910_9382", Product::AtlasA3),
    ("Ascend910_9391", Product::AtlasA3),
    ("Ascend910_9392", Product::AtlasA3),
    ("Ascend310P1", Product::AtlasInference),
    ("Ascend310P2", Product::AtlasInference),
    ("Ascend310P3", Product::AtlasInference),
    ("Ascend310P4", Product::AtlasInference),
    ("Ascend310P5", Product::AtlasInference),
    ("Ascend310P7", Product::AtlasInference),
    ("Ascend310B1", Product::Atlas200IA2),
    ("Ascend310B2", Product::Atlas200IA2),
    ("Ascend310B3", Product::Atlas200IA2),
    ("Ascend310B4", Product::Atlas200IA2),
    ("Ascend310", Product::Atlas200_300_500),
    ("Ascend310RC", Product::Atlas200_300_500),
    ("Ascend950PR_9599", Product::Atlas350),
    ("Ascend950DT_9571", Product::Atlas350),
];

/// `Ascend950PR_xxxx` / `Ascend950DT_xxxx` with a non-empty alphanumeric
/// suffix (torch_npu maps every `Ascend950*` name to the same SoC version; we
/// accept only the two documented families).
fn is_950_name(soc: &str) -> bool {
    ["Ascend950PR_", "Ascend950DT_"].iter().any(|prefix| {
        soc.get(..prefix.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
            && soc[prefix.len()..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric())
            && soc.len() > prefix.len()
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
    /// Both run modes.
    pub const ALL: [RunMode; 2] = [RunMode::Ep, RunMode::Rc];

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

    /// The `aclrtRunMode` enumerator: `"ACL_HOST"` (EP) or `"ACL_DEVICE"`
    /// (RC).
    pub const fn acl_name(self) -> &'static str {
        match self {
            RunMode::Ep => "ACL_HOST",
            RunMode::Rc => "ACL_DEVICE",
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
/// `PRODUCT`, `RUN_MODE` and `CANN` are the value-level mirror used by the
/// run-time [`check`](crate::check). Products that have no RC form report
/// [`RunMode::Ep`]. Every product marker takes the CANN version it targets as
/// its last type parameter, [`Cann9_0`] by default.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a product marker type",
    label = "expected a product marker such as `AtlasA2` or `Atlas200IA2<Ep>`",
    note = "for a product known only at run time, use `aclmem_core::check` with `Product::from_soc_name`"
)]
pub trait ProductType: Sealed + Copy + Default + 'static {
    /// The CANN version the marker targets.
    type Cann: CannType;
    /// The product.
    const PRODUCT: Product;
    /// The run mode the marker stands for.
    const RUN_MODE: RunMode;
    /// The CANN version, as a value.
    const CANN: CannVersion = <Self::Cann as CannType>::VERSION;
}

/// The trait impls every marker type has, written once: derives would add
/// bounds on the phantom parameters and print them in `Debug`.
macro_rules! marker_impls {
    ($name:ident [$($gen:ident: $bound:ident),*] $fmt:literal $(, $arg:expr)*) => {
        impl<$($gen: $bound),*> Clone for $name<$($gen),*> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<$($gen: $bound),*> Copy for $name<$($gen),*> {}
        impl<$($gen: $bound),*> Default for $name<$($gen),*> {
            fn default() -> Self {
                $name(PhantomData)
            }
        }
        impl<$($gen: $bound),*> PartialEq for $name<$($gen),*> {
            fn eq(&self, _: &Self) -> bool {
                true
            }
        }
        impl<$($gen: $bound),*> Eq for $name<$($gen),*> {}
        impl<$($gen: $bound),*> core::hash::Hash for $name<$($gen),*> {
            fn hash<H: core::hash::Hasher>(&self, _: &mut H) {}
        }
        impl<$($gen: $bound),*> fmt::Debug for $name<$($gen),*> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, $fmt $(, $arg)*)
            }
        }
        #[cfg(feature = "defmt-1")]
        impl<$($gen: $bound),*> defmt::Format for $name<$($gen),*> {
            fn format(&self, f: defmt::Formatter<'_>) {
                defmt::write!(f, "{=str}<{=str}>", stringify!($name), <Self as ProductType>::CANN.id())
            }
        }
        impl<$($gen: $bound),*> Sealed for $name<$($gen),*> {}
    };
}

macro_rules! markers {
    ($($(#[$doc:meta])* $name:ident => $product:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// `V` is the CANN version the code targets ([`Cann9_0`] by default).
        pub struct $name<V: CannType = <Cann9_0 as CannType>::Marker>(PhantomData<fn() -> V>);
        marker_impls!($name [V: CannType] "{}<{}>", stringify!($name), V::VERSION.marker_name());
        impl<V: CannType> ProductType for $name<V> {
            type Cann = V;
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
/// [`Rc`]), targeting CANN version `V` ([`Cann9_0`] by default). In RC form
/// the physical-memory API is not supported.
pub struct Atlas200IA2<M: RunModeType, V: CannType = <Cann9_0 as CannType>::Marker>(
    PhantomData<fn() -> (M, V)>,
);
marker_impls!(
    Atlas200IA2 [M: RunModeType, V: CannType]
    "Atlas200IA2<{:?}, {}>", M::RUN_MODE, V::VERSION.marker_name()
);
impl<M: RunModeType, V: CannType> ProductType for Atlas200IA2<M, V> {
    type Cann = V;
    const PRODUCT: Product = Product::Atlas200IA2;
    const RUN_MODE: RunMode = M::RUN_MODE;
}

// The markers' default parameter is the table's default release.
const _: () = assert!(
    <AtlasA2 as ProductType>::CANN as u8 == CannVersion::DEFAULT as u8,
    "product markers default to the release the table marks @default"
);
