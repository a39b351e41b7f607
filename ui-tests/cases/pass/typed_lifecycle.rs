// The intended lifecycle compiles; generic over any backend whose error is
// AclError, and every teardown step uses `?`.
use aclmem_core::{AclError, AlignedSize, AtlasA2, Device, HbmHuge, PhysicalMemProp, MIB};
use aclmem_hal::{PhysicalAllocator, Session, VirtualMemory};
use aclmem_rc_stub::RcStub;

fn grow<B>(session: &Session<B, AtlasA2>) -> Result<(), AclError>
where
    B: PhysicalAllocator<Error = AclError> + VirtualMemory<Error = AclError>,
{
    let mem = session.malloc(
        PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0),
        AlignedSize::new::<{ 2 * MIB }>(),
    )?;
    let va = session.reserve(4 * MIB)?;
    let a = va.map(0, &mem)?;
    let b = va.map(2 * MIB, &mem)?;
    a.unmap()?;
    b.unmap()?;
    va.release()?;
    mem.free()?;
    Ok(())
}

fn main() {
    // The RC stub answers 207000 to everything, so there is no session.
    let session = Session::<_, AtlasA2>::new(RcStub);
    assert_eq!(session.as_ref().unwrap_err().code().code(), 207000);
    if let Ok(session) = session {
        grow(&session).unwrap();
    }
}
