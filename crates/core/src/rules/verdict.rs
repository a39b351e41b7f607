//! The answers of the rules: a [`Verdict`] for what may be allocated, a
//! [`Denial`] (with its code and its rule in words) for what may not.

use core::fmt;

use super::Api;
use crate::attr::MemAttr;
use crate::cann::CannVersion;
use crate::error::AclError;
use crate::location::Location;
use crate::product::Product;

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

/// What a CANN release did not have yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
pub enum Feature {
    /// The physical-memory API on this product.
    Product(Product),
    /// This location type.
    Location(Location),
    /// This memory attribute.
    Attr(MemAttr),
    /// This group of calls.
    Api(Api),
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Feature::Product(p) => write!(f, "aclrtMallocPhysical on {p}"),
            Feature::Location(l) => write!(f, "{l}"),
            Feature::Attr(a) => write!(f, "{a}"),
            Feature::Api(a) => write!(f, "{a}"),
        }
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
    /// The product's runtime does not have this group of calls (the
    /// stream-ordered pools outside Atlas A2).
    ApiNotOffered,
    /// The CANN version the code targets does not have `feature` yet; it
    /// exists from `since` on.
    NeedsNewerCann {
        /// What is missing.
        feature: Feature,
        /// The first release that has it.
        since: CannVersion,
        /// The release the code targets.
        target: CannVersion,
    },
}

impl Denial {
    /// The error the runtime returns for this refusal.
    ///
    /// Parameter-shape errors are caught by the ACL layer (100000);
    /// product, form and feature gaps come from the runtime/driver (207000).
    /// The RC-form code is not documented (INFERRED: the driver's "not
    /// supported", 207000). A version that predates an attribute rejects the
    /// value in its ACL layer (100000); one that predates a product or a
    /// location answers 207000. Those two codes are UNCONFIRMED (the old
    /// releases' sources are not public); see `docs/facts.md`.
    pub const fn code(self) -> AclError {
        match self {
            Denial::ProductUnsupported
            | Denial::RcForm
            | Denial::NotOffered
            | Denial::ApiNotOffered => AclError::RT_FEATURE_NOT_SUPPORT,
            Denial::RejectedAttr
            | Denial::RejectedLocation
            | Denial::HostOnlyAttr
            | Denial::DeviceOnlyAttr => AclError::INVALID_PARAM,
            Denial::NeedsNewerCann { feature, .. } => match feature {
                Feature::Attr(_) => AclError::INVALID_PARAM,
                Feature::Product(_) | Feature::Location(_) | Feature::Api(_) => {
                    AclError::RT_FEATURE_NOT_SUPPORT
                }
            },
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
            Denial::ApiNotOffered => {
                "this product's runtime does not have these calls (stream-ordered pools: Atlas A2 only)"
            }
            Denial::NeedsNewerCann { .. } => "the targeted CANN release does not have this yet",
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
            Denial::ApiNotOffered => "api-not-offered",
            Denial::NeedsNewerCann { .. } => "needs-newer-cann",
        }
    }

    /// For a refusal because of the version: the first release that allows
    /// what was refused.
    pub const fn since(self) -> Option<CannVersion> {
        match self {
            Denial::NeedsNewerCann { since, .. } => Some(since),
            _ => None,
        }
    }
}

/// A denial's rule in words, without its code ([`Denial::reason`]).
#[derive(Debug, Clone, Copy)]
pub struct Reason<'a>(&'a Denial);

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Denial::NeedsNewerCann {
                feature,
                since,
                target,
            } => write!(
                f,
                "{feature} needs {since} or later; this code targets {target}"
            ),
            other => f.write_str(other.rule()),
        }
    }
}

impl Denial {
    /// The rule in words, without the code: for a report that states the
    /// code once, elsewhere (`ACL_MEM_HUGE needs CANN 8.5 or later; this
    /// code targets CANN 8.3`).
    pub fn reason(&self) -> Reason<'_> {
        Reason(self)
    }
}

impl fmt::Display for Denial {
    /// The rule and the code: `DDR_* attributes are host-only;
    /// ACL_ERROR_INVALID_PARAM = 100000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.reason().fmt(f)?;
        let code = self.code();
        match code.name() {
            Some(name) => write!(f, "; {name} = {}", code.code()),
            None => write!(f, "; code {}", code.code()),
        }
    }
}

impl core::error::Error for Denial {}

impl From<Denial> for AclError {
    fn from(d: Denial) -> AclError {
        d.code()
    }
}
