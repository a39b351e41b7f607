// aclrtMemPoolTrimTo arrived with MallocAsync, in CANN 9.1.
use aclmem_core::{AtlasA2, Cann9_0, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann9_0>>::new(RcStub).unwrap();
    let pool = session.mem_pool(0, 64 * MIB).unwrap();
    let _ = pool.trim_to(0);
}
