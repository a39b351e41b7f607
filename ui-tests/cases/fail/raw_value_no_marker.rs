// ACL_HBM_MEM_P2P_HUGE (8) is rejected by aclrtMallocPhysical, so it has no marker type.
use aclmem_core::{AtlasA2, Device, HbmP2pHuge, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2, Device, HbmP2pHuge>::on_device(0);
}
