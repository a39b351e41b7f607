// aclrtMemPoolCreate arrived in CANN 9.0: a pool for 8.5 does not compile.
use aclmem_core::{AtlasA2, Cann8_5, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann8_5>>::new(RcStub).unwrap();
    let _pool = session.mem_pool(0, 64 * MIB);
}
