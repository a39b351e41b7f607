// A device property has no host constructor.
use aclmem_core::{AtlasA2, Device, HbmHuge, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_host();
}
