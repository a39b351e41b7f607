// The value enum is not a marker: ACL_DDR_MEM and friends cannot be asked for in typed code.
use aclmem_core::{AtlasA2, Device, MemAttr, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2, Device, MemAttr>::on_device(0);
}
