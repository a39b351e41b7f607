use aclmem_core::{AtlasA3, Device, HostNuma, P2pHuge, P2pHuge1G, PhysicalMemProp, Verdict};

fn main() {
    let _p2p_1g = PhysicalMemProp::<AtlasA3, Device, P2pHuge1G>::on_device(0);
    let _numa = PhysicalMemProp::<AtlasA3, HostNuma, P2pHuge>::on_numa_node(1);
    assert_eq!(
        PhysicalMemProp::<AtlasA3, Device, P2pHuge1G>::VERDICT,
        Verdict::AllowedIfDeviceConfirms
    );
    assert_eq!(
        PhysicalMemProp::<AtlasA3, HostNuma, P2pHuge>::VERDICT,
        Verdict::SizeLimitedByPlatform
    );
}
