// Host NUMA memory arrived in CANN 9.0 (8.5 lists the location as reserved).
use aclmem_core::{AtlasA2, Cann8_5, HostNuma, Huge, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2<Cann8_5>, HostNuma, Huge>::on_numa_node(0);
}
