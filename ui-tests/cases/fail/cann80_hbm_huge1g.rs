// 1 GiB HBM pages arrived in CANN 8.1.
use aclmem_core::{AtlasA2, Cann8_0, Device, HbmHuge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2<Cann8_0>, Device, HbmHuge1G>::on_device(0);
}
