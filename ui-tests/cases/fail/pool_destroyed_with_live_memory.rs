// A pool owns its memory: destroying it while an allocation lives does not
// compile.
use aclmem_core::{AtlasA2, Cann9_1, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann9_1>>::new(RcStub).unwrap();
    let stream = session.stream().unwrap();
    let pool = session.mem_pool(0, 64 * MIB).unwrap();
    let memory = pool.malloc_async(MIB, &stream).unwrap();
    pool.destroy().unwrap();
    let _ = memory.addr();
}
