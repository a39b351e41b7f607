// DDR P2P memory is host-only as well.
use aclmem_core::{AtlasA3, DdrP2pNormal, Device, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA3, Device, DdrP2pNormal>::on_device(2);
}
