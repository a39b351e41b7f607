// The attribute inferred from the size, on the oldest release: 1 GiB HBM
// pages arrived in 8.1.
use aclmem_core::{AlignedSize, AtlasA2, Cann8_0, HbmHuge1G, GIB};
use aclmem_hal::{Session, ShareableHandle};
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann8_0>>::new(RcStub).unwrap();
    let _mem = session.import(ShareableHandle(7), 0, AlignedSize::<HbmHuge1G>::new::<GIB>());
}
