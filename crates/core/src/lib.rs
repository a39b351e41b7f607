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
#[cfg(test)]
mod extending;
mod location;
pub mod matrix;
mod names;
mod product;
mod prop;
mod report;
mod rules;
mod sealed;
mod size;
mod text;
mod units;

// The attribute markers are generated from the table of attributes.
pub use attr::*;
// Every release marker is generated from the table of releases; a glob, so
// that a new row needs no edit here.
pub use cann::*;
pub use dispatch::{ProductVisitor, dispatch};
pub use error::{AclError, ErrorKind};
pub use location::{Device, Host, HostNuma, Location, LocationType};
pub use names::{NameKind, Target, TargetError, UnknownName};
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
    Api, ApiOn, ApiType, HasApi, MemAllocManaged, MemManagedAdvise, MemPoolCreate,
    MemPoolMallocAsync, check_api,
};
pub use rules::{
    AvailableOn, Denial, DeviceAccepts, ExistsIn, Feature, FormAllowsPhysical, HasPhysicalApi,
    Holds, HostAccepts, Introduced, MallocPhysical, OfferedBy, PLATFORMS, Platform, Reason, Rules,
    Supports, Verdict, attr_since, check, check_platform, check_raw, location_since,
};
pub use size::{AlignedSize, GranularityOption, is_aligned, round_up};
pub use units::{GIB, MIB};
