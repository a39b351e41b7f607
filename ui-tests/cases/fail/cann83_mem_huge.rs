// ACL_MEM_HUGE arrived in CANN 8.5; an A2 on 8.3 refuses it.
use aclmem_core::{AtlasA2, Cann8_3, Device, Huge, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2<Cann8_3>, Device, Huge>::on_device(0);
}
