// Host memory through aclrtMallocPhysical arrived in CANN 8.5.
use aclmem_core::{AtlasA2, Cann8_3, HbmHuge, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2<Cann8_3>, aclmem_core::Host, HbmHuge>::on_host();
}
