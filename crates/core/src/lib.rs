#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The unit tests format messages.
#[cfg(test)]
extern crate std;

mod attr;
mod cann;
mod dispatch;
mod error;
mod location;
mod names;
mod product;
mod prop;
mod report;
mod rules;
mod sealed;
mod size;

pub use attr::{
    AttrType, DdrHuge, DdrNormal, DdrP2pHuge, DdrP2pNormal, HbmHuge, HbmHuge1G, HbmNormal, Huge,
    Huge1G, MemAttr, Normal, P2pHuge, P2pHuge1G, P2pNormal, PageClass,
};
pub use cann::{
    Accepts, AtLeast, Cann8_0, Cann8_1, Cann8_2, Cann8_3, Cann8_5, Cann9_0, CannType, CannVersion,
    Choices, ExpectedAddress, GranularityRule, UnknownCannVersion,
};
pub use dispatch::{ProductVisitor, dispatch};
pub use error::{AclError, ErrorKind};
pub use location::{Device, Host, HostNuma, Location, LocationType};
pub use names::{NameKind, UnknownName};
pub use product::{
    Atlas200_300_500, Atlas200IA2, Atlas350, AtlasA2, AtlasA3, AtlasInference, AtlasTraining, Ep,
    Product, ProductType, Rc, RunMode, RunModeType, SOC_NAMES, UnknownSocName,
};
pub use prop::{
    MEM_ALLOCATION_TYPE_PINNED, MEM_HANDLE_TYPE_NONE, PhysicalMemProp, RawMemLocation,
    RawPhysicalMemProp, ValidProp,
};
pub use report::{CheckReport, Checked};
pub use rules::{
    AvailableOn, Denial, DeviceAccepts, ExistsIn, Feature, FormAllowsPhysical, Holds, HostAccepts,
    Introduced, MallocPhysical, OfferedBy, PLATFORMS, Platform, Rules, Supports, Verdict,
    attr_since, check, check_platform, check_raw, location_since,
};
pub use size::{AlignedSize, GIB, GranularityOption, MIB, is_aligned, round_up};
