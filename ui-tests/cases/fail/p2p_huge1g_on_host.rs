// ACL_MEM_P2P_HUGE1G is device-only, on A3 as everywhere.
use aclmem_core::{AtlasA3, Host, P2pHuge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA3, Host, P2pHuge1G>::on_host();
}
