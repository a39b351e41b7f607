// A freed handle is gone: using it afterwards does not compile.
use aclmem_core::{AlignedSize, AtlasA2, Device, HbmHuge, PhysicalMemProp, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2>::new(RcStub).unwrap();
    let mem = session
        .malloc(PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0), AlignedSize::new::<{ 2 * MIB }>())
        .unwrap();
    let va = session.reserve(2 * MIB).unwrap();
    mem.free().unwrap();
    let _mapping = va.map(0, &mem);
}
