// Atlas 350 offers 1 GiB HBM pages but not ACL_MEM_HUGE1G.
use aclmem_core::{Atlas350, Device, Huge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<Atlas350, Device, Huge1G>::on_device(0);
}
