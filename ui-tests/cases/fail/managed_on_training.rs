// Managed memory is documented for Atlas A2 and A3 only.
use aclmem_core::{AtlasTraining, Cann9_1, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasTraining<Cann9_1>>::new(RcStub).unwrap();
    let _memory = session.malloc_managed(MIB);
}
