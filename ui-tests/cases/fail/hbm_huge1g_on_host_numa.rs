// Host NUMA memory counts as host memory: no 1 GiB pages.
use aclmem_core::{AtlasA3, HbmHuge1G, HostNuma, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA3, HostNuma, HbmHuge1G>::on_numa_node(1);
}
