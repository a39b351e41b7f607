// The A3 series counts from CANN 8.2 (conservative: earlier pages are unclear).
use aclmem_core::{AtlasA3, Cann8_1, Device, HbmHuge, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA3<Cann8_1>, Device, HbmHuge>::on_device(0);
}
