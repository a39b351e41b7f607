// The Atlas training series has no 1 GiB pages, imported or not.
use aclmem_core::{AlignedSize, AtlasTraining, Huge1G, GIB};
use aclmem_hal::{Session, ShareableHandle};
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasTraining>::new(RcStub).unwrap();
    let _mem = session.import::<Huge1G>(ShareableHandle(7), 0, AlignedSize::new::<GIB>());
}
