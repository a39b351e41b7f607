//! The typestate API of `aclmem-hal`, driven against the emulator.

use aclmem_core::{
    AclError, AlignedSize, AtlasA2, AtlasA3, Cann8_0, Cann8_3, CannVersion, DdrHuge, Device,
    HbmHuge, Host, MIB, PhysicalMemProp, Product, RunMode,
};
use aclmem_emu::{EmuConfig, Emulator, Op};
use aclmem_hal::{EXPORT_FLAG_DEFAULT, PhysicalAllocator, Session, SessionError};

const TWO: AlignedSize<HbmHuge> = AlignedSize::new::<{ 2 * MIB }>();

fn dev0() -> PhysicalMemProp<AtlasA2, Device, HbmHuge> {
    PhysicalMemProp::on_device(0)
}

#[test]
fn a_session_refuses_another_product() {
    let emu = Emulator::preset(Product::AtlasA2);
    let err = Session::<_, AtlasA3>::new(&emu).unwrap_err();
    assert_eq!(
        err,
        SessionError::WrongPlatform {
            expected: (Product::AtlasA3, RunMode::Ep),
            found: (Product::AtlasA2, RunMode::Ep),
        }
    );
    assert_eq!(err.code(), AclError::RT_FEATURE_NOT_SUPPORT);
    assert_eq!(
        err.to_string(),
        "the session's product type is Atlas A3 training/inference series in EP form, \
         but the backend runs on Atlas A2 training/inference series in EP form"
    );
    // A machine on an older CANN than the code targets is refused too.
    let mut config = EmuConfig::preset(Product::AtlasA2);
    config.cann = CannVersion::V8_3;
    let old = Emulator::new(config).unwrap();
    let err = Session::<_, AtlasA2>::new(&old).unwrap_err();
    assert_eq!(
        err,
        SessionError::OlderCann {
            expected: CannVersion::V9_0,
            found: CannVersion::V8_3
        }
    );
    assert!(Session::<_, AtlasA2<Cann8_3>>::new(&old).is_ok());
    assert!(
        Session::<_, AtlasA2<Cann8_0>>::new(&old).is_ok(),
        "older code runs on newer CANN"
    );
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    assert_eq!(session.device_count(), 8);
    assert_eq!(session.granularity(dev0()), Ok(2 * MIB));
}

#[test]
fn drop_cleans_up_in_the_right_order() {
    let emu = Emulator::preset(Product::AtlasA2);
    {
        let session = Session::<_, AtlasA2>::new(&emu).unwrap();
        let mem = session.malloc(dev0(), TWO).unwrap();
        let host = session
            .malloc(
                PhysicalMemProp::<AtlasA2, Host, DdrHuge>::on_host(),
                AlignedSize::new::<{ 4 * MIB }>(),
            )
            .unwrap();
        let va = session.reserve(8 * MIB).unwrap();
        let _a = va.map(0, &mem).unwrap();
        let _b = va.map(2 * MIB, &mem).unwrap();
        assert_eq!(va.mapping_count(), 2);
        assert_eq!(emu.stats().mappings, 2);
        assert_eq!(host.size().get(), 4 * MIB);
        // Everything drops here: mappings, then the reservation, then memory.
    }
    assert!(emu.leak_report().is_empty(), "{}", emu.leak_report());
    assert_eq!(emu.stats().device[0].used, 0);
}

#[test]
fn explicit_free_release_and_unmap() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let mem = session.malloc(dev0(), TWO).unwrap();
    let va = session.reserve(2 * MIB).unwrap();
    let m = va.map(0, &mem).unwrap();
    emu.write(m.addr().get(), b"typed").unwrap();
    m.unmap().unwrap();
    assert_eq!(va.mapping_count(), 0);
    va.release().unwrap();
    mem.free().unwrap();
    assert!(emu.leak_report().is_empty());
    assert_eq!(session.take_deferred_error(), None);
}

#[test]
fn failures_hand_the_resource_back() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let mem = session.malloc(dev0(), TWO).unwrap();
    emu.inject_fault(Op::Free, 1, AclError::RT_INTERNAL_ERROR);
    let (err, mem) = mem.free().unwrap_err().into_parts();
    assert_eq!(err, AclError::RT_INTERNAL_ERROR);
    assert_eq!(
        emu.leak_report().handles.len(),
        1,
        "nothing lost, nothing freed"
    );
    mem.free().unwrap();
    let va = session.reserve(2 * MIB).unwrap();
    emu.inject_fault(Op::Release, 1, AclError::RT_INTERNAL_ERROR);
    let failed = va.release().unwrap_err();
    assert_eq!(*failed.error(), AclError::RT_INTERNAL_ERROR);
    assert!(failed.to_string().contains("ACL_ERROR_RT_INTERNAL_ERROR"));
    // `?` turns the failure into the backend's error; the value it carried
    // is dropped, which releases it (the fault fired once).
    let as_acl: AclError = failed.into_error();
    assert_eq!(as_acl, AclError::RT_INTERNAL_ERROR);
    assert!(emu.leak_report().is_empty());
}

#[test]
fn errors_in_drop_are_kept_for_the_session() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let mem = session.malloc(dev0(), TWO).unwrap();
    let handle = mem.handle();
    emu.inject_fault(Op::Free, 1, AclError::RT_DRV_INTERNAL_ERROR);
    drop(mem);
    assert_eq!(session.deferred_error_count(), 1);
    assert_eq!(
        session.take_deferred_error(),
        Some(AclError::RT_DRV_INTERNAL_ERROR)
    );
    assert_eq!(session.take_deferred_error(), None);
    // The handle the failed drop could not free is reported, not lost.
    assert_eq!(emu.leak_report().handles[0].handle, handle.0.get());
    emu.free_physical(handle).unwrap();
}

#[test]
fn map_enforces_the_documented_rules() {
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let mem0 = session.malloc(dev0(), TWO).unwrap();
    let mem1 = session
        .malloc(
            PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(1),
            TWO,
        )
        .unwrap();
    let va = session.reserve(4 * MIB).unwrap();
    // Inside the reservation.
    assert_eq!(va.map(4 * MIB, &mem0).unwrap_err(), AclError::INVALID_PARAM);
    assert_eq!(va.map(3 * MIB, &mem0).unwrap_err(), AclError::INVALID_PARAM);
    assert_eq!(
        va.map(usize::MAX - MIB, &mem0).unwrap_err(),
        AclError::INVALID_PARAM
    );
    let a = va.map(0, &mem0).unwrap();
    // One device per reservation.
    assert_eq!(va.map(2 * MIB, &mem1).unwrap_err(), AclError::INVALID_PARAM);
    // No overlap (the backend refuses; the typed layer rolls back its count).
    assert_eq!(va.map(0, &mem0).unwrap_err(), AclError::RT_PARAM_INVALID);
    assert_eq!(va.mapping_count(), 1);
    drop(a);
    // Empty again: another device may bind it now.
    let b = va.map(2 * MIB, &mem1).unwrap();
    drop(b);
    assert!(session.take_deferred_error().is_none());
}

#[test]
fn one_location_per_reservation() {
    use aclmem_core::{DdrHuge, HostNuma};
    let emu = Emulator::preset(Product::AtlasA2);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let host = session
        .malloc(
            PhysicalMemProp::<AtlasA2, Host, DdrHuge>::on_host(),
            AlignedSize::new::<{ 2 * MIB }>(),
        )
        .unwrap();
    let numa0 = session
        .malloc(
            PhysicalMemProp::<AtlasA2, HostNuma, DdrHuge>::on_numa_node(0),
            AlignedSize::new::<{ 2 * MIB }>(),
        )
        .unwrap();
    let dev = session.malloc(dev0(), TWO).unwrap();
    let va = session.reserve(6 * MIB).unwrap();
    let a = va.map(0, &host).unwrap();
    // Host id 0 and NUMA node 0 are different locations; so is device 0.
    // The typed layer refuses them itself, before the backend is called.
    let maps = emu.stats().calls[&Op::Map];
    let refused = va.map(2 * MIB, &numa0).unwrap_err();
    assert_eq!(refused, AclError::INVALID_PARAM);
    assert_eq!(va.map(4 * MIB, &dev).unwrap_err(), AclError::INVALID_PARAM);
    assert_eq!(
        emu.stats().calls[&Op::Map],
        maps,
        "the backend was not asked"
    );
    // Memory of another session is refused as well.
    let other = Session::<_, AtlasA2>::new(&emu).unwrap();
    let foreign = other.malloc(dev0(), TWO).unwrap();
    let vb = session.reserve(2 * MIB).unwrap();
    assert_eq!(vb.map(0, &foreign).unwrap_err(), AclError::INVALID_PARAM);
    assert_eq!(emu.stats().calls[&Op::Map], maps);
    let b = va.map(4 * MIB, &host).unwrap();
    assert_eq!(va.mapping_count(), 2);
    drop((a, b));
}

#[test]
fn export_import_through_the_typed_api() {
    let machine = Emulator::preset(Product::AtlasA2);
    let other = machine.spawn_process().unwrap();
    let exporter = Session::<_, AtlasA2>::new(&machine).unwrap();
    let importer = Session::<_, AtlasA2>::new(&other).unwrap();

    let mem = exporter.malloc(dev0(), TWO).unwrap();
    let exported = mem.export(EXPORT_FLAG_DEFAULT).unwrap();
    exported.set_pids(&[other.pid()]).unwrap();
    let va = exporter.reserve(2 * MIB).unwrap();
    let mapped = va.map(0, &exported).unwrap();
    machine.write(mapped.addr().get(), b"shared").unwrap();

    let imported = importer.import(exported.shareable(), 0, TWO).unwrap();
    assert!(imported.is_imported());
    let local = importer.malloc(dev0(), TWO).unwrap();
    let vb = importer.reserve(4 * MIB).unwrap();
    let seen = vb.map(0, &imported).unwrap();
    let mut buf = [0u8; 6];
    other.read(seen.addr().get(), &mut buf).unwrap();
    assert_eq!(&buf, b"shared");
    // No mixing of local and imported handles in one reservation.
    assert_eq!(
        vb.map(2 * MIB, &local).unwrap_err(),
        AclError::INVALID_PARAM
    );
    drop(seen);
    drop((vb, local, imported));
    drop(mapped);
    drop(va);
    exported.free().unwrap();
    assert!(machine.leak_report().is_empty());
    assert!(other.leak_report().is_empty());
    assert_eq!(machine.stats().live_allocations, 0);
}
