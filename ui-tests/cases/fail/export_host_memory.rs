// Only device memory can be exported.
use aclmem_core::{AlignedSize, AtlasA2, DdrHuge, Host, PhysicalMemProp, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2>::new(RcStub).unwrap();
    let mem = session
        .malloc(PhysicalMemProp::<AtlasA2, Host, DdrHuge>::on_host(), AlignedSize::new::<{ 2 * MIB }>())
        .unwrap();
    let _exported = mem.export(0);
}
