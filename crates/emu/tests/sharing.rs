//! The emulator's processes together: exports and imports between them,
//! reservations and expected addresses, teardown at exit, shared capacity,
//! unguessable shareable ids, and memberships that end late.

mod emulator_harness;

use emulator_harness::*;

#[test]
fn export_and_import_between_processes_share_memory() {
    let a = Emulator::preset(Product::AtlasA2);
    let b = a.spawn_process().unwrap();
    let h = small(&a, 1).unwrap();
    let sh = a.export(h, EXPORT_FLAG_DEFAULT).unwrap();
    assert_eq!(
        a.export(h, EXPORT_FLAG_DEFAULT).map(|_| ()),
        Err(AclError::RT_PARAM_INVALID),
        "export twice"
    );
    assert_eq!(
        b.import(sh, 0).map(|_| ()),
        Err(AclError::RT_NO_PERMISSION),
        "not whitelisted"
    );
    assert_eq!(
        b.set_pids(sh, &[b.pid()]),
        Err(AclError::RT_NO_PERMISSION),
        "only the exporter"
    );
    assert_eq!(a.set_pids(sh, &[]), Err(INVALID));
    a.set_pids(sh, &[b.pid()]).unwrap();
    assert_eq!(
        a.import(sh, 0).map(|_| ()),
        Err(AclError::RT_FEATURE_NOT_SUPPORT),
        "same process"
    );
    assert_eq!(
        b.import(sh, 99).map(|_| ()),
        Err(AclError::RT_INVALID_DEVICEID)
    );
    let hb = b.import(sh, 1).unwrap();
    assert_eq!(
        b.import(sh, 1).map(|_| ()),
        Err(AclError::RT_PARAM_INVALID),
        "import twice"
    );

    let va_a = a.reserve(2 * MIB, 0, None, 0).unwrap();
    let va_b = b.reserve(2 * MIB, 0, None, 0).unwrap();
    a.map(va_a, 2 * MIB, 0, h, 0).unwrap();
    b.map(va_b, 2 * MIB, 0, hb, 0).unwrap();
    a.write(va_a.get(), b"across processes").unwrap();
    let mut buf = [0u8; 16];
    b.read(va_b.get(), &mut buf).unwrap();
    assert_eq!(&buf, b"across processes");
    // A process cannot touch another's ranges.
    assert_eq!(b.read(va_a.get(), &mut buf), Err(INVALID));
    assert_eq!(b.unmap(va_a), Err(AclError::RT_PARAM_INVALID));

    // The exporter frees; the importer keeps the memory alive.
    a.unmap(va_a).unwrap();
    a.free_physical(h).unwrap();
    b.read(va_b.get(), &mut buf).unwrap();
    assert_eq!(&buf, b"across processes");
    assert_eq!(a.stats().device[0].used, 2 * MIB);
    b.unmap(va_b).unwrap();
    b.free_physical(hb).unwrap();
    assert_eq!(a.stats().device[0].used, 0);
    assert_eq!(a.stats().shareable_handles, 0);
    a.release(va_a).unwrap();
    b.release(va_b).unwrap();

    // Without pid validation anyone may import; host memory cannot be exported.
    let h = small(&a, 1).unwrap();
    let sh = a.export(h, EXPORT_FLAG_DISABLE_PID_VALIDATION).unwrap();
    let c = a.spawn_process().unwrap();
    let hc = c.import(sh, 0).unwrap();
    c.free_physical(hc).unwrap();
    assert_eq!(a.export(h, 2).map(|_| ()), Err(AclError::RT_PARAM_INVALID));
    a.free_physical(h).unwrap();
    let host = a
        .malloc_physical(2 * MIB, &prop(Location::Host, 0, MemAttr::DdrMemHuge), 0)
        .unwrap();
    assert_eq!(
        a.export(host, 0).map(|_| ()),
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    );
    a.free_physical(host).unwrap();
}

#[test]
fn one_reservation_one_device_one_origin() {
    let a = Emulator::preset(Product::AtlasA2);
    let b = a.spawn_process().unwrap();
    let h0 = small(&b, 1).unwrap();
    let h1 = b
        .malloc_physical(2 * MIB, &prop(Location::Device, 1, MemAttr::HbmMemHuge), 0)
        .unwrap();
    let va = b.reserve(8 * MIB, 0, None, 0).unwrap();
    b.map(va, 2 * MIB, 0, h0, 0).unwrap();
    let second = va.checked_add(2 * MIB).unwrap();
    assert_eq!(
        b.map(second, 2 * MIB, 0, h1, 0),
        Err(Situation::MixedReservation.code()),
        "two devices"
    );
    let ha = small(&a, 1).unwrap();
    let sh = a.export(ha, EXPORT_FLAG_DISABLE_PID_VALIDATION).unwrap();
    let imported = b.import(sh, 0).unwrap();
    assert_eq!(
        b.map(second, 2 * MIB, 0, imported, 0),
        Err(Situation::MixedReservation.code()),
        "local and imported"
    );
    b.unmap(va).unwrap();
    // Once empty, the reservation may be bound anew.
    b.map(second, 2 * MIB, 0, imported, 0).unwrap();
    b.unmap(second).unwrap();
    for h in [h0, h1, imported] {
        b.free_physical(h).unwrap();
    }
    a.free_physical(ha).unwrap();
    b.release(va).unwrap();
}

#[test]
fn expected_addresses() {
    let emu = Emulator::preset(Product::AtlasA2);
    let want = VirtAddr(NonZeroUsize::new(17 << 40).unwrap());
    let got = emu.reserve(4 * MIB, 0, Some(want), 0).unwrap();
    assert_eq!(got, want);
    assert_eq!(
        emu.reserve(4 * MIB, 0, Some(want), 0).map(|_| ()),
        Err(AclError::RT_MEMORY_ALLOCATION),
        "occupied"
    );
    let outside = VirtAddr(NonZeroUsize::new(1 << 40).unwrap());
    assert_eq!(
        emu.reserve(4 * MIB, 0, Some(outside), 0).map(|_| ()),
        Err(AclError::RT_PARAM_INVALID)
    );
    let unaligned = VirtAddr(NonZeroUsize::new((18 << 40) + 4096).unwrap());
    assert_eq!(
        emu.reserve(4 * MIB, 0, Some(unaligned), 0).map(|_| ()),
        Err(AclError::RT_PARAM_INVALID)
    );
    emu.release(got).unwrap();
    // Atlas 350 accepts only NULL; so does every release before 8.5.
    let atlas350 = Emulator::preset(Product::Atlas350);
    assert_eq!(
        atlas350.reserve(4 * MIB, 0, Some(want), 0).map(|_| ()),
        Err(Situation::ExpectedAddress.code())
    );
    let mut config = EmuConfig::preset(Product::AtlasA2);
    config.cann = aclmem_core::CannVersion::V8_3;
    let old = Emulator::new(config.clone()).unwrap();
    assert_eq!(
        old.reserve(4 * MIB, 0, Some(want), 0).map(|_| ()),
        Err(Situation::ExpectedAddress.code())
    );
    // 8.5: any free address aligned to 1 GiB.
    config.cann = aclmem_core::CannVersion::V8_5;
    let v85 = Emulator::new(config).unwrap();
    assert_eq!(
        v85.reserve(4 * MIB, 0, Some(unaligned), 0).map(|_| ()),
        Err(Situation::ExpectedAddress.code())
    );
    let aligned = VirtAddr(NonZeroUsize::new(19 << 40).unwrap());
    let got = v85.reserve(4 * MIB, 0, Some(aligned), 0).unwrap();
    assert_eq!(got, aligned);
    v85.release(got).unwrap();
}

#[test]
fn process_exit_tears_everything_down() {
    let a = Emulator::preset(Product::AtlasA2);
    let b = a.spawn_process().unwrap();
    let h = small(&b, 2).unwrap();
    let va = b.reserve(4 * MIB, 0, None, 0).unwrap();
    b.map(va, 4 * MIB, 0, h, 0).unwrap();
    let _leaked = small(&b, 1).unwrap();
    let report = b.leak_report();
    assert_eq!(
        (
            report.handles.len(),
            report.reservations.len(),
            report.mappings.len()
        ),
        (2, 1, 1)
    );
    assert!(
        report
            .to_string()
            .contains("2 handle(s), 1 reservation(s), 1 mapping(s)")
    );
    assert!(a.leak_report().is_empty());
    drop(b);
    let stats = a.stats();
    assert_eq!(
        (
            stats.live_handles,
            stats.reservations,
            stats.mappings,
            stats.device[0].used
        ),
        (0, 0, 0, 0)
    );
}

/// A capacity word found in shared memory above what the configuration
/// gives the pool (here set through the API; a scribbling process could
/// write it) never makes the machine hand out more than it has.
#[test]
fn capacity_never_exceeds_the_configuration() {
    let mut config = EmuConfig::preset(Product::AtlasA2);
    config.device_memory = 8 * MIB;
    let emu = Emulator::new(config).unwrap();
    emu.set_capacity(PoolId::Device(0), usize::MAX).unwrap();
    assert_eq!(emu.stats().device[0].capacity, 8 * MIB);
    let held: Vec<_> = (0..4).map(|_| small(&emu, 1).unwrap()).collect();
    assert_eq!(small(&emu, 1), Err(AclError::RT_MEMORY_ALLOCATION));
    for h in held {
        emu.free_physical(h).unwrap();
    }
}

/// Shareable handles carry 64 random bits: one id tells nothing about the
/// next (they are not a sequence, and every bit position varies).
#[test]
fn shareable_ids_are_not_guessable_from_one_another() {
    let a = Emulator::preset(Product::AtlasA2);
    let handles: Vec<_> = (0..64).map(|_| small(&a, 1).unwrap()).collect();
    let ids: Vec<u64> = handles
        .iter()
        .map(|&h| a.export(h, EXPORT_FLAG_DEFAULT).unwrap().0)
        .collect();
    for (i, x) in ids.iter().enumerate() {
        for y in &ids[i + 1..] {
            assert!(
                (x.wrapping_sub(*y) as i64).unsigned_abs() > 1 << 32,
                "{x:#x} and {y:#x} are close"
            );
        }
    }
    let (ones, zeros) = ids
        .iter()
        .fold((0u64, 0u64), |(o, z), id| (o | id, z | !id));
    assert_eq!(
        (ones, zeros),
        (u64::MAX, u64::MAX),
        "a bit that never varies"
    );
    for h in handles {
        a.free_physical(h).unwrap();
    }
    assert_eq!(a.stats().shareable_handles, 0);
}

/// A process that leaves a named machine and joins it again while its
/// first membership's objects are still alive keeps the machine findable
/// when those objects finally go: the file is removed only when the
/// kernel's locks say no process holds a slot, not when the old state says
/// so (the new membership has a state of its own).
#[test]
fn an_old_membership_dropped_late_does_not_remove_the_machine_of_the_new_one() {
    let name = format!("rejoin-{}", std::process::id());
    let config = EmuConfig::preset(Product::AtlasA2);
    let old = Emulator::join(&name, &config).unwrap();
    old.leave();
    let new = Emulator::join(&name, &config).unwrap();
    drop(old);
    assert!(
        aclmem_emu::machine_path(&name).exists(),
        "the rendezvous file of the live membership is still there"
    );
    assert!(
        aclmem_emu::machine_state_path(&name).is_some(),
        "a joiner still finds the state"
    );
    new.leave();
    drop(new);
    assert!(!aclmem_emu::machine_path(&name).exists());
}
