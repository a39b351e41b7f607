//! Memory locations (`aclrtMemLocationType`) and their marker types.

use core::fmt;

use crate::sealed::Sealed;

/// Where physical memory lives: `aclrtMemLocation::type`.
///
/// Only the three location types `aclrtMallocPhysical` accepts are variants;
/// `ACL_MEM_LOCATION_TYPE_UNREGISTERED` (2) and `..._MANAGED` (3) are
/// rejected by the call with `ACL_ERROR_INVALID_PARAM` and have no variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
#[repr(u32)]
pub enum Location {
    /// `ACL_MEM_LOCATION_TYPE_DEVICE` (1); `id` is the device id.
    Device = 1,
    /// `ACL_MEM_LOCATION_TYPE_HOST` (0); `id` is ignored and set to 0.
    Host = 0,
    /// `ACL_MEM_LOCATION_TYPE_HOST_NUMA` (4); `id` is the NUMA node. Counts
    /// as host memory for the attribute rules.
    HostNuma = 4,
}

impl Location {
    /// The three locations, in table order.
    pub const ALL: [Location; 3] = [Location::Device, Location::Host, Location::HostNuma];

    /// `ACL_MEM_LOCATION_TYPE_UNREGISTERED`, rejected by the API.
    pub const RAW_UNREGISTERED: u32 = 2;
    /// `ACL_MEM_LOCATION_TYPE_MANAGED`, rejected by the API.
    pub const RAW_MANAGED: u32 = 3;

    /// The raw C value.
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// Converts a raw C value; rejected or unknown values are `None`.
    pub const fn from_raw(raw: u32) -> Option<Location> {
        match raw {
            1 => Some(Location::Device),
            0 => Some(Location::Host),
            4 => Some(Location::HostNuma),
            _ => None,
        }
    }

    /// The C enumerator name.
    pub const fn c_name(self) -> &'static str {
        match self {
            Location::Device => "ACL_MEM_LOCATION_TYPE_DEVICE",
            Location::Host => "ACL_MEM_LOCATION_TYPE_HOST",
            Location::HostNuma => "ACL_MEM_LOCATION_TYPE_HOST_NUMA",
        }
    }

    /// Short identifier (`"device"`, `"host"`, `"host-numa"`).
    pub const fn id(self) -> &'static str {
        match self {
            Location::Device => "device",
            Location::Host => "host",
            Location::HostNuma => "host-numa",
        }
    }

    /// Whether this is host memory (host or host NUMA).
    pub const fn is_host(self) -> bool {
        matches!(self, Location::Host | Location::HostNuma)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.c_name())
    }
}

/// A location marker type. Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a location marker type",
    label = "expected `Device`, `Host` or `HostNuma`"
)]
pub trait LocationType: Sealed + Copy + Default + 'static {
    /// The value this marker stands for.
    const LOCATION: Location;
}

macro_rules! location_markers {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[cfg_attr(feature = "defmt-1", derive(defmt::Format))]
        pub struct $name;
        impl Sealed for $name {}
        impl LocationType for $name {
            const LOCATION: Location = Location::$name;
        }
    )*};
}

location_markers! {
    /// Marker: device memory (HBM, or DDR on products without HBM).
    Device;
    /// Marker: host memory.
    Host;
    /// Marker: host memory on a chosen NUMA node.
    HostNuma;
}
