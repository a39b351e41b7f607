// aclrtFree consumes managed memory: prefetching it afterwards does not
// compile.
use aclmem_core::{AtlasA2, Cann9_1, MIB};
use aclmem_hal::{ManagedLocation, Session};
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA2<Cann9_1>>::new(RcStub).unwrap();
    let stream = session.stream().unwrap();
    let memory = session.malloc_managed(MIB).unwrap();
    memory.free().unwrap();
    let _ = memory.prefetch_async(ManagedLocation::Device(0), &stream);
}
