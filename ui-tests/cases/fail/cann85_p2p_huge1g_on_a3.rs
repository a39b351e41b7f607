// ACL_MEM_P2P_HUGE1G on A3 is documented from CANN 9.0.
use aclmem_core::{AtlasA3, Cann8_5, Device, P2pHuge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA3<Cann8_5>, Device, P2pHuge1G>::on_device(0);
}
