// Atlas 200/300/500 inference products have no physical-memory API.
use aclmem_core::{Atlas200_300_500, Device, Huge, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<Atlas200_300_500, Device, Huge>::on_device(0);
}
