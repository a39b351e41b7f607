// One bound on the release covers every gate of that release and the older
// ones, whatever the product, location and attribute.
use aclmem_core::{
    AlignedSize, AtLeast, Atlas200IA2, AtlasA2, AtlasA3, Cann8_1, Cann8_5, Cann9_0, CannType,
    DdrHuge, Device, Ep, HbmHuge, HbmHuge1G, Host, HostNuma, Huge, PhysicalMemProp, GIB,
};
use aclmem_hal::{Session, ShareableHandle};
use aclmem_rc_stub::RcStub;

fn huge<V: AtLeast<Cann8_5>>() -> PhysicalMemProp<AtlasA2<V>, Device, Huge> {
    PhysicalMemProp::on_device(0)
}

fn one_gib<V: AtLeast<Cann8_5>>() -> PhysicalMemProp<AtlasA3<V>, Device, HbmHuge1G> {
    PhysicalMemProp::on_device(0)
}

fn host_ddr<V: AtLeast<Cann9_0>>() -> (
    PhysicalMemProp<AtlasA2<V>, Host, DdrHuge>,
    PhysicalMemProp<Atlas200IA2<Ep, V>, HostNuma, Huge>,
) {
    (PhysicalMemProp::on_host(), PhysicalMemProp::on_numa_node(1))
}

fn everywhere<V: CannType>() -> PhysicalMemProp<AtlasA2<V>, Device, HbmHuge> {
    PhysicalMemProp::on_device(0)
}

fn main() {
    let _ = huge::<Cann8_5>();
    let _ = huge::<Cann9_0>();
    let _ = one_gib::<Cann8_5>();
    let _ = host_ddr::<Cann9_0>();
    let _ = everywhere::<aclmem_core::Cann8_0>();
    // An attribute inferred from the size, in a release that has it.
    // (The RC stub refuses every call at run time; this case is about types.)
    if let Ok(session) = Session::<_, AtlasA2<Cann8_1>>::new(RcStub) {
        let _mem = session.import(ShareableHandle(7), 0, AlignedSize::<HbmHuge1G>::new::<GIB>());
    }
}
