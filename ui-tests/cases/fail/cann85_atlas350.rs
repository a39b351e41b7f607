// Atlas 350 arrived with CANN 9.0.
use aclmem_core::{Atlas350, Cann8_5, Device, HbmHuge, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<Atlas350<Cann8_5>, Device, HbmHuge>::on_device(0);
}
