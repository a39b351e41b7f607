// Atlas 200/300/500 inference products have no physical-memory API, at any location.
use aclmem_core::{Atlas200_300_500, DdrNormal, HostNuma, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<Atlas200_300_500, HostNuma, DdrNormal>::on_numa_node(0);
}
