// CANN 9.0 allocates managed memory; aclrtMemManagedAdvise arrived in 9.1.
use aclmem_core::{AtlasA3, Cann9_0, MIB};
use aclmem_hal::{ManagedAdvice, ManagedLocation, Session};
use aclmem_rc_stub::RcStub;

fn main() {
    let session = Session::<_, AtlasA3<Cann9_0>>::new(RcStub).unwrap();
    let memory = session.malloc_managed(MIB).unwrap();
    let _ = memory.advise(ManagedAdvice::SetReadMostly, ManagedLocation::Host);
}
