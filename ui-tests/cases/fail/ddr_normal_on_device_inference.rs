// Even where the device memory *is* DDR (inference series), DDR_* attributes are host-only.
use aclmem_core::{AtlasInference, DdrNormal, Device, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasInference, Device, DdrNormal>::on_device(0);
}
