//! `aclrtMemMapNoAccess` (CANN 9.2, newer than every release the C
//! library emulates) on the engine: mapped as `aclrtMapMem` maps, with no
//! access until `aclrtMemSetAccess` grants it.

use aclmem_core::{MIB, MemAttr, Product, RawMemLocation, RawPhysicalMemProp};
use aclmem_emu::{Emulator, args};
use aclmem_hal::{PhysicalAllocator, VirtualMemory};
use aclmem_sys::{AccessDesc, AccessFlags, LocationType};

#[test]
fn a_mapping_without_access_until_access_is_set() {
    let e = Emulator::preset(Product::AtlasA2);
    let prop = RawPhysicalMemProp {
        mem_attr: MemAttr::HbmMemHuge.raw(),
        location: RawMemLocation { id: 0, type_: 1 },
        ..RawPhysicalMemProp::default()
    };
    let h = e.malloc_physical(2 * MIB, &prop, 0).unwrap();
    let va = e.reserve(2 * MIB, 0, None, 0).unwrap();
    let request = args::map(va.get(), 2 * MIB, h.0.get(), 0).unwrap();
    e.map_no_access(request, 0).unwrap();
    assert_eq!(e.get_access(va.get()).unwrap().flags, AccessFlags::None);
    let rw = AccessDesc {
        flags: AccessFlags::ReadWrite,
        location: LocationType::Device,
        id: 0,
    };
    e.set_access(va.get(), 2 * MIB, &[rw]).unwrap();
    assert_eq!(
        e.get_access(va.get()).unwrap().flags,
        AccessFlags::ReadWrite
    );
    // An offset other than 0 is refused, as for aclrtMapMem.
    e.unmap(va).unwrap();
    let request = args::map(va.get(), 2 * MIB, h.0.get(), 0).unwrap();
    assert!(e.map_no_access(request, 4096).is_err());
    e.release(va).unwrap();
    e.free_physical(h).unwrap();
}
