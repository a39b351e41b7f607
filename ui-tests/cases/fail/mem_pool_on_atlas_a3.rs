// The stream-ordered pools are documented for Atlas A2 only.
use aclmem_core::{AtlasA3, Cann9_1, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA3<Cann9_1>>::new(RcStub).unwrap();
    let _pool = session.mem_pool(0, 64 * MIB);
}
