// A bound on an older release does not cover a newer attribute.
use aclmem_core::{AtLeast, AtlasA2, Cann8_3, Device, Huge, PhysicalMemProp};

fn huge<V: AtLeast<Cann8_3>>() -> PhysicalMemProp<AtlasA2<V>, Device, Huge> {
    PhysicalMemProp::on_device(0)
}

fn main() {
    let _ = huge::<aclmem_core::Cann9_0>();
}
