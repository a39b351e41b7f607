// ACL_MEM_P2P_HUGE1G is not offered by Atlas 350.
use aclmem_core::{Atlas350, Device, P2pHuge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<Atlas350, Device, P2pHuge1G>::on_device(0);
}
