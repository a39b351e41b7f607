// ACL_HBM_MEM_HUGE1G exists only on Atlas 350, A3 and A2.
use aclmem_core::{AtlasInference, Device, HbmHuge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasInference, Device, HbmHuge1G>::on_device(0);
}
