// A session for one release does not take a property checked for another.
use aclmem_core::{AlignedSize, AtlasA2, Cann8_3, Device, HbmHuge, PhysicalMemProp, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann8_3>>::new(RcStub).unwrap();
    let prop = PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0);
    let _mem = session.malloc(prop, AlignedSize::new::<{ 2 * MIB }>());
}
