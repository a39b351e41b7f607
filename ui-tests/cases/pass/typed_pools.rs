// Stream-ordered pools on Atlas A2 with CANN 9.1: the lifecycle compiles,
// and code generic over the product states the calls it makes.
use aclmem_core::{AclError, AtlasA2, Cann9_1, HasApi, MemPoolCreate, MemPoolMallocAsync, MIB};
use aclmem_hal::{MemPools, PoolAttr, Session, Streams};
use aclmem_rc_stub::RcStub;

fn churn<B, P>(session: &Session<B, P>) -> Result<u64, AclError>
where
    B: MemPools<Error = AclError> + Streams<Error = AclError>,
    P: HasApi<MemPoolCreate> + HasApi<MemPoolMallocAsync>,
{
    let stream = session.stream()?;
    let other = session.stream()?;
    let pool = session.mem_pool(0, 64 * MIB)?;
    pool.set_attr(PoolAttr::ReuseAllowOpportunistic, 1)?;
    let a = pool.malloc_async(MIB, &stream)?;
    let b = pool.malloc_async(4 * MIB, &other)?;
    a.free()?;
    b.free()?;
    let high = pool.attr(PoolAttr::UsedMemHigh)?;
    pool.trim_to(0)?;
    pool.destroy()?;
    other.destroy()?;
    stream.destroy()?;
    Ok(high)
}

fn main() {
    // The RC stub answers 207000 to everything, so there is no session.
    let session = Session::<_, AtlasA2<Cann9_1>>::new(RcStub);
    assert_eq!(session.as_ref().unwrap_err().code().code(), 207000);
    if let Ok(session) = session {
        churn(&session).unwrap();
    }
}
