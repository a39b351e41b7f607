// CANN 9.0 has pools but not aclrtMemPoolMallocAsync (9.1): allocating from
// a pool in code for 9.0 does not compile, and the message names 9.1.
use aclmem_core::{AtlasA2, Cann9_0, MIB};
use aclmem_hal::Session;
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann9_0>>::new(RcStub).unwrap();
    let stream = session.stream().unwrap();
    let pool = session.mem_pool(0, 64 * MIB).unwrap();
    let _memory = pool.malloc_async(MIB, &stream);
}
