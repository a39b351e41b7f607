// Importing is allocation by other means: DDR attributes are host-only, so
// imported device memory cannot be typed as DDR.
use aclmem_core::{AlignedSize, AtlasA2, DdrHuge, MIB};
use aclmem_hal::{Session, ShareableHandle};
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2>::new(RcStub).unwrap();
    let _mem = session.import::<DdrHuge>(ShareableHandle(7), 0, AlignedSize::new::<{ 2 * MIB }>());
}
