// Generic code must state the capability it relies on. (rustc suggests
// `Rules`, the table's row behind `Supports`: the same bound.)
use aclmem_core::{Device, HbmHuge, PhysicalMemProp, ProductType};

fn device_prop<P: ProductType>() -> PhysicalMemProp<P, Device, HbmHuge> {
    PhysicalMemProp::on_device(0)
}

fn main() {}
