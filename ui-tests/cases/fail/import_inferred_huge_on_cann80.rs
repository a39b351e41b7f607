// The attribute inferred from the size, on the oldest release: ACL_MEM_HUGE
// arrived in 8.5.
use aclmem_core::{AlignedSize, AtlasA2, Cann8_0, Huge, MIB};
use aclmem_hal::{Session, ShareableHandle};
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann8_0>>::new(RcStub).unwrap();
    let _mem = session.import(ShareableHandle(7), 0, AlignedSize::<Huge>::new::<{ 2 * MIB }>());
}
