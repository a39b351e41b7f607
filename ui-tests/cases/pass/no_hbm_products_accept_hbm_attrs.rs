// Products without HBM accept HBM attributes; the runtime serves them from DDR.
use aclmem_core::{Atlas200IA2, AtlasInference, Device, Ep, HbmHuge, HbmNormal, PhysicalMemProp};

fn main() {
    let _a = PhysicalMemProp::<AtlasInference, Device, HbmHuge>::on_device(0);
    let _b = PhysicalMemProp::<Atlas200IA2<Ep>, Device, HbmNormal>::on_device(0);
}
