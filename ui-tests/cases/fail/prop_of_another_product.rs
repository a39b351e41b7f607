// A session for one product does not take a property checked for another.
use aclmem_core::{AlignedSize, AtlasA2, AtlasA3, Device, P2pHuge1G, PhysicalMemProp, GIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2>::new(RcStub).unwrap();
    let prop = PhysicalMemProp::<AtlasA3, Device, P2pHuge1G>::on_device(0);
    let _mem = session.malloc(prop, AlignedSize::new::<GIB>());
}
