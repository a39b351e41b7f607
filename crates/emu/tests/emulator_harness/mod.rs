//! What the test files `emulator.rs` and `sharing.rs` share.

#![allow(dead_code, unused_imports)]

pub use std::num::{NonZeroU64, NonZeroUsize};

pub use aclmem_core::{
    AclError, GIB, GranularityOption, Location, MIB, MemAttr, Product, RawPhysicalMemProp, RunMode,
};
pub use aclmem_emu::errors::Situation;
pub use aclmem_emu::{EmuConfig, Emulator, MemKind, Op, PoolId};
pub use aclmem_hal::{
    DeviceInfo, EXPORT_FLAG_DEFAULT, EXPORT_FLAG_DISABLE_PID_VALIDATION, PhysicalAllocator,
    RawHandle, ShareableMemory, VirtAddr, VirtualMemory,
};

pub const INVALID: AclError = AclError::INVALID_PARAM;

pub fn prop(location: Location, id: u32, attr: MemAttr) -> RawPhysicalMemProp {
    RawPhysicalMemProp::new_checked(
        Product::AtlasA2,
        RunMode::Ep,
        aclmem_core::CannVersion::V9_0,
        location,
        id,
        attr,
    )
    .map(|(p, _)| p)
    .unwrap_or_else(|_| {
        // Refused combinations are built by hand, as C code would.
        RawPhysicalMemProp {
            mem_attr: attr.raw(),
            location: aclmem_core::RawMemLocation {
                id,
                type_: location.raw(),
            },
            ..RawPhysicalMemProp::default()
        }
    })
}

pub fn dev(attr: MemAttr) -> RawPhysicalMemProp {
    prop(Location::Device, 0, attr)
}

pub fn small(emu: &Emulator, n: usize) -> Result<RawHandle, AclError> {
    emu.malloc_physical(n * 2 * MIB, &dev(MemAttr::HbmMemHuge), 0)
}
