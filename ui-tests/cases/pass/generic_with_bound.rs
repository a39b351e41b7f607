// Generic code states the capability once and works for every product that has it.
use aclmem_core::{AtlasA2, AtlasA3, Atlas350, Device, HbmHuge1G, PhysicalMemProp, Supports};

fn one_gib_pages<P: Supports<Device, HbmHuge1G>>(device: u32) -> PhysicalMemProp<P, Device, HbmHuge1G> {
    PhysicalMemProp::on_device(device)
}

fn main() {
    let _a = one_gib_pages::<AtlasA2>(0);
    let _b = one_gib_pages::<AtlasA3>(1);
    let _c = one_gib_pages::<Atlas350>(2);
}
