// Managed memory on Atlas A2 and A3 with CANN 9.1: allocated, advised,
// prefetched on a stream and freed; generic code states the calls it makes.
use aclmem_core::{
    AclError, AtlasA2, AtlasA3, Cann9_0, Cann9_1, HasApi, MemAllocManaged, MemManagedAdvise, MIB,
};
use aclmem_hal::{ManagedAdvice, ManagedLocation, ManagedMemoryApi, Session, Streams};
use aclmem_rc_stub::RcStub;

fn place<B, P>(session: &Session<B, P>) -> Result<(), AclError>
where
    B: ManagedMemoryApi<Error = AclError> + Streams<Error = AclError>,
    P: HasApi<MemAllocManaged> + HasApi<MemManagedAdvise>,
{
    let stream = session.stream()?;
    let memory = session.malloc_managed(3 * MIB)?;
    memory.advise(ManagedAdvice::SetPreferredLocation, ManagedLocation::Device(0))?;
    memory.prefetch_async(ManagedLocation::Device(0), &stream)?;
    memory.free()?;
    stream.destroy()?;
    Ok(())
}

// CANN 9.0 allocates managed memory; advice waits for 9.1.
fn allocate_only<B: ManagedMemoryApi<Error = AclError>>(
    session: &Session<B, AtlasA3<Cann9_0>>,
) -> Result<(), AclError> {
    session.malloc_managed(MIB)?.free()?;
    Ok(())
}

fn main() {
    let a2 = Session::<_, AtlasA2<Cann9_1>>::new(RcStub);
    assert_eq!(a2.as_ref().unwrap_err().code().code(), 207000);
    if let Ok(session) = a2 {
        place(&session).unwrap();
    }
    if let Ok(session) = Session::<_, AtlasA3<Cann9_1>>::new(RcStub) {
        place(&session).unwrap();
    }
    if let Ok(session) = Session::<_, AtlasA3<Cann9_0>>::new(RcStub) {
        allocate_only(&session).unwrap();
    }
}
