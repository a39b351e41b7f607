// DDR_* attributes are host-only.
use aclmem_core::{AtlasA2, DdrHuge, Device, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2, Device, DdrHuge>::on_device(0);
}
