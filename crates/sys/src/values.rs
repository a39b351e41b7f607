//! Typed mirrors of the C enumerations and flag words the memory calls
//! take. A C library converts each argument once, at its boundary, with
//! `from_raw`; a value the headers do not define is kept as `Unknown` so
//! that the callee answers it with the code the runtime gives, in the
//! runtime's order of checks (a copy of 0 bytes succeeds whatever its
//! kind, for example).

use crate::types::*;

/// `aclrtMemcpyKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemcpyKind {
    /// `ACL_MEMCPY_HOST_TO_HOST`.
    HostToHost,
    /// `ACL_MEMCPY_HOST_TO_DEVICE`.
    HostToDevice,
    /// `ACL_MEMCPY_DEVICE_TO_HOST`.
    DeviceToHost,
    /// `ACL_MEMCPY_DEVICE_TO_DEVICE`.
    DeviceToDevice,
    /// `ACL_MEMCPY_DEFAULT`: the direction follows from the addresses.
    Default,
    /// `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`: host to device through a
    /// staging buffer.
    HostToBufToDevice,
    /// Any other value (including the inner/inter-device kinds, which
    /// `aclrtMemcpy` refuses).
    Unknown(u32),
}

impl MemcpyKind {
    /// The kind a C value names.
    pub const fn from_raw(raw: aclrtMemcpyKind) -> MemcpyKind {
        match raw {
            ACL_MEMCPY_HOST_TO_HOST => MemcpyKind::HostToHost,
            ACL_MEMCPY_HOST_TO_DEVICE => MemcpyKind::HostToDevice,
            ACL_MEMCPY_DEVICE_TO_HOST => MemcpyKind::DeviceToHost,
            ACL_MEMCPY_DEVICE_TO_DEVICE => MemcpyKind::DeviceToDevice,
            ACL_MEMCPY_DEFAULT => MemcpyKind::Default,
            ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE => MemcpyKind::HostToBufToDevice,
            other => MemcpyKind::Unknown(other),
        }
    }

    /// The C value.
    pub const fn raw(self) -> aclrtMemcpyKind {
        match self {
            MemcpyKind::HostToHost => ACL_MEMCPY_HOST_TO_HOST,
            MemcpyKind::HostToDevice => ACL_MEMCPY_HOST_TO_DEVICE,
            MemcpyKind::DeviceToHost => ACL_MEMCPY_DEVICE_TO_HOST,
            MemcpyKind::DeviceToDevice => ACL_MEMCPY_DEVICE_TO_DEVICE,
            MemcpyKind::Default => ACL_MEMCPY_DEFAULT,
            MemcpyKind::HostToBufToDevice => ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
            MemcpyKind::Unknown(raw) => raw,
        }
    }

    /// (destination on the device, source on the device), or `None` for
    /// `Default` (decided by the addresses) and unknown kinds.
    pub const fn direction(self) -> Option<(bool, bool)> {
        match self {
            MemcpyKind::HostToHost => Some((false, false)),
            MemcpyKind::HostToDevice | MemcpyKind::HostToBufToDevice => Some((true, false)),
            MemcpyKind::DeviceToHost => Some((false, true)),
            MemcpyKind::DeviceToDevice => Some((true, true)),
            MemcpyKind::Default | MemcpyKind::Unknown(_) => None,
        }
    }
}

/// The pages `aclrtMalloc` takes under an `aclrtMemMallocPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PagePolicy {
    /// `HUGE_FIRST` (and values outside the enumeration, which the runtime
    /// treats alike): normal pages up to 1 MiB, 2 MiB pages above.
    BySize,
    /// `HUGE_ONLY`: documented as 2 MiB pages only; the emulator chooses
    /// by size as for `HUGE_FIRST` (it never runs out of one kind first).
    HugeOnly,
    /// `NORMAL_ONLY`.
    Normal,
    /// `HUGE1G_ONLY`: 1 GiB pages, no padding.
    Huge1G,
}

/// `aclrtMemMallocPolicy`: a page policy, P2P or not, and the bandwidth
/// and read-only bits some products read. Every `u32` is a policy (the
/// runtime maps unknown values to its default), so conversion cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MallocPolicy(aclrtMemMallocPolicy);

impl MallocPolicy {
    /// `ACL_MEM_MALLOC_HUGE_FIRST`.
    pub const HUGE_FIRST: MallocPolicy = MallocPolicy(ACL_MEM_MALLOC_HUGE_FIRST);

    /// The policy a C value names.
    pub const fn from_raw(raw: aclrtMemMallocPolicy) -> MallocPolicy {
        MallocPolicy(raw)
    }

    /// The C value.
    pub const fn raw(self) -> aclrtMemMallocPolicy {
        self.0
    }

    /// The page policy (the low byte).
    pub const fn pages(self) -> PagePolicy {
        match self.0 & 0xFF {
            ACL_MEM_MALLOC_HUGE_ONLY | ACL_MEM_MALLOC_HUGE_ONLY_P2P => PagePolicy::HugeOnly,
            ACL_MEM_MALLOC_NORMAL_ONLY | ACL_MEM_MALLOC_NORMAL_ONLY_P2P => PagePolicy::Normal,
            ACL_MEM_MALLOC_HUGE1G_ONLY | ACL_MEM_MALLOC_HUGE1G_ONLY_P2P => PagePolicy::Huge1G,
            _ => PagePolicy::BySize,
        }
    }
}

/// `aclrtMemAccessFlags` of one `aclrtMemAccessDesc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessFlags {
    /// `ACL_RT_MEM_ACCESS_FLAGS_NONE`.
    None,
    /// `ACL_RT_MEM_ACCESS_FLAGS_READ`.
    Read,
    /// `ACL_RT_MEM_ACCESS_FLAGS_READWRITE`.
    ReadWrite,
    /// Any other value.
    Unknown(aclrtMemAccessFlags),
}

impl AccessFlags {
    /// The flags a C value names.
    pub const fn from_raw(raw: aclrtMemAccessFlags) -> AccessFlags {
        match raw {
            ACL_RT_MEM_ACCESS_FLAGS_NONE => AccessFlags::None,
            ACL_RT_MEM_ACCESS_FLAGS_READ => AccessFlags::Read,
            ACL_RT_MEM_ACCESS_FLAGS_READWRITE => AccessFlags::ReadWrite,
            other => AccessFlags::Unknown(other),
        }
    }

    /// The C value.
    pub const fn raw(self) -> aclrtMemAccessFlags {
        match self {
            AccessFlags::None => ACL_RT_MEM_ACCESS_FLAGS_NONE,
            AccessFlags::Read => ACL_RT_MEM_ACCESS_FLAGS_READ,
            AccessFlags::ReadWrite => ACL_RT_MEM_ACCESS_FLAGS_READWRITE,
            AccessFlags::Unknown(raw) => raw,
        }
    }
}

/// `aclrtMemLocationType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocationType {
    /// `ACL_MEM_LOCATION_TYPE_HOST`.
    Host,
    /// `ACL_MEM_LOCATION_TYPE_DEVICE`.
    Device,
    /// `ACL_MEM_LOCATION_TYPE_UNREGISTERED`: memory not from ACL.
    Unregistered,
    /// `ACL_MEM_LOCATION_TYPE_MANAGED`.
    Managed,
    /// `ACL_MEM_LOCATION_TYPE_HOST_NUMA`.
    HostNuma,
    /// Any other value.
    Unknown(aclrtMemLocationType),
}

impl LocationType {
    /// The type a C value names.
    pub const fn from_raw(raw: aclrtMemLocationType) -> LocationType {
        match raw {
            ACL_MEM_LOCATION_TYPE_HOST => LocationType::Host,
            ACL_MEM_LOCATION_TYPE_DEVICE => LocationType::Device,
            ACL_MEM_LOCATION_TYPE_UNREGISTERED => LocationType::Unregistered,
            ACL_MEM_LOCATION_TYPE_MANAGED => LocationType::Managed,
            ACL_MEM_LOCATION_TYPE_HOST_NUMA => LocationType::HostNuma,
            other => LocationType::Unknown(other),
        }
    }

    /// The C value.
    pub const fn raw(self) -> aclrtMemLocationType {
        match self {
            LocationType::Host => ACL_MEM_LOCATION_TYPE_HOST,
            LocationType::Device => ACL_MEM_LOCATION_TYPE_DEVICE,
            LocationType::Unregistered => ACL_MEM_LOCATION_TYPE_UNREGISTERED,
            LocationType::Managed => ACL_MEM_LOCATION_TYPE_MANAGED,
            LocationType::HostNuma => ACL_MEM_LOCATION_TYPE_HOST_NUMA,
            LocationType::Unknown(raw) => raw,
        }
    }
}

/// One `aclrtMemAccessDesc`: who may access a mapping, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AccessDesc {
    /// The access.
    pub flags: AccessFlags,
    /// The location type it grants access to.
    pub location: LocationType,
    /// The device id (0 for the host).
    pub id: u32,
}

impl AccessDesc {
    /// The descriptor a C struct holds.
    pub const fn from_raw(raw: &aclrtMemAccessDesc) -> AccessDesc {
        AccessDesc {
            flags: AccessFlags::from_raw(raw.flags),
            location: LocationType::from_raw(raw.location.type_),
            id: raw.location.id,
        }
    }
}

/// What `aclrtPointerGetAttributes` says of an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PointerAttributes {
    /// Where the memory is (`Unregistered` for memory not from ACL).
    pub location: LocationType,
    /// The device id (0 for the host).
    pub id: u32,
    /// The page size backing it.
    pub page_size: u32,
}

/// The flags of an export (`aclrtMemExportToShareableHandle`,
/// `aclrtIpcMemGetExportKey`): the same two values for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFlags {
    /// `..._EXPORT_FLAG_DEFAULT`: importers must be whitelisted.
    Default,
    /// `..._EXPORT_FLAG_DISABLE_PID_VALIDATION`: any process may import.
    DisablePidValidation,
    /// Any other value (the runtime layer refuses it).
    Unknown(u64),
}

impl ExportFlags {
    /// The flags a C value names.
    pub const fn from_raw(raw: u64) -> ExportFlags {
        match raw {
            ACL_RT_VMM_EXPORT_FLAG_DEFAULT => ExportFlags::Default,
            ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION => ExportFlags::DisablePidValidation,
            other => ExportFlags::Unknown(other),
        }
    }

    /// The C value.
    pub const fn raw(self) -> u64 {
        match self {
            ExportFlags::Default => ACL_RT_VMM_EXPORT_FLAG_DEFAULT,
            ExportFlags::DisablePidValidation => ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
            ExportFlags::Unknown(raw) => raw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_round_trips() {
        for raw in 0..16 {
            assert_eq!(MemcpyKind::from_raw(raw).raw(), raw);
            assert_eq!(AccessFlags::from_raw(raw).raw(), raw);
            assert_eq!(LocationType::from_raw(raw).raw(), raw);
            assert_eq!(ExportFlags::from_raw(u64::from(raw)).raw(), u64::from(raw));
            assert_eq!(MallocPolicy::from_raw(raw).raw(), raw);
        }
        assert_eq!(MemcpyKind::from_raw(6), MemcpyKind::Unknown(6));
        assert_eq!(MallocPolicy::from_raw(0x1006).pages(), PagePolicy::Huge1G);
        assert_eq!(MallocPolicy::from_raw(99).pages(), PagePolicy::BySize);
    }
}
