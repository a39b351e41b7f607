// Code generic over the release must state the oldest release it needs;
// the error names the one gate that needs it (A2 and `Device` exist in
// every release, so they are not reported).
use aclmem_core::{AtlasA2, CannType, Device, Huge, PhysicalMemProp};

fn huge<V: CannType>() -> PhysicalMemProp<AtlasA2<V>, Device, Huge> {
    PhysicalMemProp::on_device(0)
}

fn main() {
    let _ = huge::<aclmem_core::Cann9_0>();
}
