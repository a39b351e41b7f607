use aclmem_core::{AtlasA2, Device, HbmHuge1G, PhysicalMemProp, Verdict};

fn main() {
    let prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge1G>::on_device(3);
    assert_eq!(prop.raw().mem_attr, 10);
    assert_eq!(prop.raw().location.id, 3);
    assert_eq!(PhysicalMemProp::<AtlasA2, Device, HbmHuge1G>::VERDICT, Verdict::Allowed);
}
