// ACL_MEM_HUGE1G exists only on A2 and A3.
use aclmem_core::{AtlasTraining, Device, Huge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasTraining, Device, Huge1G>::on_device(0);
}
