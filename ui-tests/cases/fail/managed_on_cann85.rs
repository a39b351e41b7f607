// aclrtMemAllocManaged arrived in CANN 9.0.
use aclmem_core::{AtlasA2, Cann8_5, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann8_5>>::new(RcStub).unwrap();
    let _memory = session.malloc_managed(MIB);
}
