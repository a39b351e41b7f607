// The size is checked for the attribute it is used with.
use aclmem_core::{AlignedSize, AtlasA2, Device, HbmHuge, HbmHuge1G, PhysicalMemProp, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2>::new(RcStub).unwrap();
    let size: AlignedSize<HbmHuge> = AlignedSize::new::<{ 2 * MIB }>();
    let _mem = session.malloc(PhysicalMemProp::<AtlasA2, Device, HbmHuge1G>::on_device(0), size);
}
