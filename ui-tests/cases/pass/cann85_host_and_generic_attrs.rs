// CANN 8.5 adds the ACL_MEM_* attributes and host memory.
use aclmem_core::{AtlasA2, Cann8_5, Device, HbmHuge, Host, Huge, PhysicalMemProp, Supports, Verdict};

fn main() {
    let device = PhysicalMemProp::<AtlasA2<Cann8_5>, Device, Huge>::on_device(1);
    let host = PhysicalMemProp::<AtlasA2<Cann8_5>, Host, HbmHuge>::on_host();
    assert_eq!((device.raw().mem_attr, host.raw().location.type_), (13, 0));
    assert_eq!(<AtlasA2<Cann8_5> as Supports<Host, HbmHuge>>::VERDICT, Verdict::Allowed);
}
