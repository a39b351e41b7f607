// The intended lifecycle compiles; generic over any backend.
use aclmem_core::{AlignedSize, AtlasA2, Device, HbmHuge, PhysicalMemProp, MIB};
use aclmem_hal::{PhysicalAllocator, Session, VirtualMemory};
use aclmem_rc_stub::RcStub;

fn grow<B: PhysicalAllocator + VirtualMemory>(session: &Session<B, AtlasA2>) -> Result<(), B::Error> {
    let mem = session.malloc(
        PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0),
        AlignedSize::new::<{ 2 * MIB }>(),
    )?;
    let va = session.reserve(4 * MIB)?;
    let a = va.map(0, &mem)?;
    let b = va.map(2 * MIB, &mem)?;
    drop((a, b));
    va.release().map_err(|(e, _)| e)?;
    mem.free().map_err(|(e, _)| e)
}

fn main() {
    // The RC stub answers 207000 to everything, so there is no session.
    let session = Session::<_, AtlasA2>::new(RcStub);
    assert_eq!(session.as_ref().unwrap_err().code(), 207000);
    if let Ok(session) = session {
        grow(&session).unwrap();
    }
}
