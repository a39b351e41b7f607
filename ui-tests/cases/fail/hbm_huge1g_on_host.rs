// ACL_HBM_MEM_HUGE1G on the host is refused even on a product that offers it.
use aclmem_core::{AtlasA2, HbmHuge1G, Host, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2, Host, HbmHuge1G>::on_host();
}
