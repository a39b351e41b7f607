use aclmem_core::{
    Atlas200IA2, Atlas350, AtlasInference, AtlasTraining, DdrHuge, DdrP2pNormal, Ep, Host,
    HostNuma, PhysicalMemProp,
};

fn main() {
    let a = PhysicalMemProp::<Atlas350, Host, DdrHuge>::on_host();
    let _b = PhysicalMemProp::<AtlasTraining, HostNuma, DdrP2pNormal>::on_numa_node(0);
    let _c = PhysicalMemProp::<AtlasInference, Host, DdrHuge>::on_host();
    let _d = PhysicalMemProp::<Atlas200IA2<Ep>, Host, DdrHuge>::on_host();
    assert_eq!(a.raw().location.type_, 0);
}
