// ACL_MEM_P2P_HUGE1G exists only on (some) A3 systems, not on A2.
use aclmem_core::{AtlasA2, Device, P2pHuge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2, Device, P2pHuge1G>::on_device(0);
}
