//! The emulator's acceptance scenarios, on the raw backend traits.

mod emulator_harness;

use emulator_harness::*;

#[test]
fn two_mappings_of_one_handle_alias() {
    let emu = Emulator::preset(Product::AtlasA2);
    let h = small(&emu, 1).unwrap();
    let va = emu.reserve(8 * MIB, 0, None, 0).unwrap();
    let a = va;
    let b = va.checked_add(4 * MIB).unwrap();
    emu.map(a, 2 * MIB, 0, h, 0).unwrap();
    emu.map(b, 2 * MIB, 0, h, 0).unwrap();
    let message = b"written through one, read through the other";
    emu.write(a.get() + 1000, message).unwrap();
    let mut buf = vec![0u8; message.len()];
    emu.read(b.get() + 1000, &mut buf).unwrap();
    assert_eq!(buf, message);
    // And back the other way, at the very end of the handle.
    emu.write(b.get() + 2 * MIB - 4, &[1, 2, 3, 4]).unwrap();
    let mut tail = [0u8; 4];
    emu.read(a.get() + 2 * MIB - 4, &mut tail).unwrap();
    assert_eq!(tail, [1, 2, 3, 4]);
    // The gap between the mappings is not accessible through the helpers.
    assert_eq!(emu.read(a.get() + 2 * MIB, &mut tail), Err(INVALID));
    emu.unmap(a).unwrap();
    emu.unmap(b).unwrap();
    emu.release(va).unwrap();
    emu.free_physical(h).unwrap();
    assert!(emu.leak_report().is_empty(), "{}", emu.leak_report());
}

#[test]
fn exhausting_device_memory_is_207001_until_something_is_freed() {
    let mut config = EmuConfig::preset(Product::AtlasA2);
    config.device_memory = 64 * MIB;
    let emu = Emulator::new(config).unwrap();
    let handles: Vec<_> = (0..4).map(|_| small(&emu, 8).unwrap()).collect(); // 4 x 16 MiB
    assert_eq!(small(&emu, 1), Err(AclError::RT_MEMORY_ALLOCATION));
    // Another device is unaffected.
    let other = emu
        .malloc_physical(2 * MIB, &prop(Location::Device, 1, MemAttr::HbmMemHuge), 0)
        .unwrap();
    emu.free_physical(handles[2]).unwrap();
    let again = small(&emu, 8).unwrap();
    assert_eq!(small(&emu, 1), Err(AclError::RT_MEMORY_ALLOCATION));
    assert_eq!(emu.stats().device[0].used, 64 * MIB);
    for h in [handles[0], handles[1], handles[3], again, other] {
        emu.free_physical(h).unwrap();
    }
    assert_eq!(emu.stats().device[0].used, 0);
}

#[test]
fn one_gib_pages_come_from_their_pool() {
    let mut config = EmuConfig::preset(Product::AtlasA3);
    config.huge1g_pool = 2 * GIB;
    let emu = Emulator::new(config).unwrap();
    let p = dev(MemAttr::HbmMemHuge1G);
    assert_eq!(emu.granularity(&p, GranularityOption::Minimum), Ok(GIB));
    let a = emu.malloc_physical(GIB, &p, 0).unwrap();
    let b = emu
        .malloc_physical(GIB, &dev(MemAttr::MemHuge1G), 0)
        .unwrap();
    assert_eq!(
        emu.malloc_physical(GIB, &p, 0),
        Err(AclError::RT_MEMORY_ALLOCATION)
    );
    // 2 MiB pages still come from the rest of the device memory.
    let c = small(&emu, 1).unwrap();
    let stats = emu.stats();
    assert_eq!(stats.huge1g[0].used, 2 * GIB);
    assert_eq!(stats.device[0].used, 2 * GIB + 2 * MIB);
    for h in [a, b, c] {
        emu.free_physical(h).unwrap();
    }
}

#[test]
fn every_call_is_207000_on_atlas_200i_a2_in_rc_form() {
    let mut config = EmuConfig::preset(Product::Atlas200IA2);
    config.run_mode = RunMode::Rc;
    let emu = Emulator::new(config).unwrap();
    assert_eq!(emu.platform(), Ok((Product::Atlas200IA2, RunMode::Rc)));
    let ns = Err(AclError::RT_FEATURE_NOT_SUPPORT);
    let p = dev(MemAttr::HbmMemHuge);
    let h = RawHandle(NonZeroU64::new(1).unwrap());
    let va = VirtAddr(NonZeroUsize::new(2 * MIB).unwrap());
    assert_eq!(
        emu.granularity(&p, GranularityOption::Minimum).map(|_| ()),
        ns
    );
    assert_eq!(emu.malloc_physical(2 * MIB, &p, 0).map(|_| ()), ns);
    // The ACL layer checks arguments before the runtime learns that the API
    // does not exist in RC form.
    assert_eq!(emu.malloc_physical(0, &p, 7).map(|_| ()), Err(INVALID));
    assert_eq!(emu.free_physical(h), ns);
    assert_eq!(emu.reserve(2 * MIB, 0, None, 0).map(|_| ()), ns);
    assert_eq!(emu.release(va), ns);
    assert_eq!(emu.map(va, 2 * MIB, 0, h, 0), ns);
    assert_eq!(emu.unmap(va), ns);
    assert_eq!(emu.export(h, 0).map(|_| ()), ns);
    assert_eq!(emu.set_pids(aclmem_hal::ShareableHandle(1), &[1]), ns);
    assert_eq!(
        emu.import(aclmem_hal::ShareableHandle(1), 0).map(|_| ()),
        ns
    );
    // Calls outside the physical-memory family work in RC form too.
    assert_eq!(emu.mem_info(MemAttr::HbmMem, 0), Ok((8 * GIB, 8 * GIB)));
    // And on Atlas 200/300/500 inference products.
    let legacy = Emulator::preset(Product::Atlas200_300_500);
    assert_eq!(legacy.malloc_physical(2 * MIB, &p, 0).map(|_| ()), ns);
    assert_eq!(legacy.reserve(2 * MIB, 0, None, 0).map(|_| ()), ns);
    assert_eq!(emu.stats().live_allocations, 0);
}

#[test]
fn bad_arguments_are_100000() {
    let emu = Emulator::preset(Product::AtlasA2);
    let p = dev(MemAttr::HbmMemHuge);
    assert_eq!(
        emu.malloc_physical(2 * MIB, &p, 1),
        Err(INVALID),
        "flags != 0"
    );
    assert_eq!(emu.malloc_physical(0, &p, 0), Err(INVALID), "size 0");
    assert_eq!(
        emu.malloc_physical(3 * MIB, &p, 0),
        Err(Situation::UnalignedSize.code()),
        "unaligned size"
    );
    assert_eq!(
        emu.malloc_physical(2 * MIB, &dev(MemAttr::MemHuge1G), 0),
        Err(Situation::UnalignedSize.code()),
        "unaligned 1G size"
    );
    assert_eq!(
        emu.malloc_physical(2 * MIB, &dev(MemAttr::DdrMem), 0),
        Err(INVALID),
        "ACL_DDR_MEM"
    );
    assert_eq!(
        emu.malloc_physical(2 * MIB, &dev(MemAttr::DdrMemHuge), 0),
        Err(INVALID),
        "DDR on device"
    );
    assert_eq!(
        emu.malloc_physical(GIB, &prop(Location::Host, 0, MemAttr::HbmMemHuge1G), 0),
        Err(INVALID),
        "1G on host"
    );
    let mut bad = p;
    bad.handle_type = 2;
    assert_eq!(
        emu.malloc_physical(2 * MIB, &bad, 0),
        Err(INVALID),
        "handle type POSIX"
    );
    let mut bad = p;
    bad.location.type_ = Location::RAW_UNREGISTERED;
    assert_eq!(
        emu.malloc_physical(2 * MIB, &bad, 0),
        Err(INVALID),
        "unregistered location"
    );
    assert_eq!(
        emu.reserve(0, 0, None, 0).map(|_| ()),
        Err(INVALID),
        "reserve size 0"
    );
    assert_eq!(
        emu.reserve(2 * MIB, 0, None, 2).map(|_| ()),
        Err(INVALID),
        "reserve flags 2"
    );

    let h = emu.malloc_physical(4 * MIB, &p, 0).unwrap();
    let va = emu.reserve(16 * MIB, 0, None, 1).unwrap(); // flags 1 is accepted
    assert_eq!(
        emu.map(va, 4 * MIB, 2 * MIB, h, 0),
        Err(Situation::MapOffset.code()),
        "map offset != 0"
    );
    assert_eq!(
        emu.map(va, 2 * MIB, 0, h, 0),
        Err(Situation::PartialMap.code()),
        "partial map"
    );
    assert_eq!(emu.map(va, 0, 0, h, 0), Err(INVALID), "map size 0");
    assert_eq!(emu.map(va, 4 * MIB, 0, h, 1), Err(INVALID), "map flags");
    let end = va.checked_add(14 * MIB).unwrap();
    assert_eq!(
        emu.map(end, 4 * MIB, 0, h, 0),
        Err(Situation::OutsideReservation.code()),
        "past the reservation"
    );
    // Nothing above left a trace.
    assert_eq!(emu.stats().mappings, 0);
    emu.map(va, 4 * MIB, 0, h, 0).unwrap();
    let overlap = va.checked_add(2 * MIB).unwrap();
    let h2 = emu.malloc_physical(4 * MIB, &p, 0).unwrap();
    assert_eq!(
        emu.map(overlap, 4 * MIB, 0, h2, 0),
        Err(AclError::RT_PARAM_INVALID),
        "overlap"
    );
    assert_eq!(
        emu.release(va),
        Err(AclError::RT_PARAM_INVALID),
        "release while mapped"
    );
    assert_eq!(
        emu.unmap(overlap),
        Err(AclError::RT_PARAM_INVALID),
        "not a mapping start"
    );
    emu.unmap(va).unwrap();
    assert_eq!(
        emu.unmap(va),
        Err(AclError::RT_PARAM_INVALID),
        "unmap twice"
    );
    emu.release(va).unwrap();
    emu.free_physical(h).unwrap();
    emu.free_physical(h2).unwrap();
    assert!(emu.leak_report().is_empty());
}

#[test]
fn stale_double_freed_and_forged_handles_are_errors() {
    let emu = Emulator::preset(Product::AtlasA2);
    let h = small(&emu, 1).unwrap();
    emu.free_physical(h).unwrap();
    assert_eq!(
        emu.free_physical(h),
        Err(AclError::RT_INVALID_HANDLE),
        "double free"
    );
    // The slot is reused with a new generation: the old value stays dead.
    let h2 = small(&emu, 1).unwrap();
    assert_ne!(h, h2);
    let va = emu.reserve(2 * MIB, 0, None, 0).unwrap();
    assert_eq!(
        emu.map(va, 2 * MIB, 0, h, 0),
        Err(AclError::RT_INVALID_HANDLE),
        "stale"
    );
    for forged in [
        0xdead_beef_u64,
        u64::MAX,
        1 << 32,
        h2.0.get() ^ (1 << 40),
        h2.0.get() + 1,
    ] {
        let f = RawHandle(NonZeroU64::new(forged).unwrap());
        assert_eq!(
            emu.map(va, 2 * MIB, 0, f, 0),
            Err(AclError::RT_INVALID_HANDLE),
            "{forged:#x}"
        );
        assert_eq!(
            emu.free_physical(f),
            Err(AclError::RT_INVALID_HANDLE),
            "{forged:#x}"
        );
        assert_eq!(
            emu.export(f, 0).map(|_| ()),
            Err(AclError::RT_INVALID_HANDLE)
        );
    }
    // Another process's handle is not this process's.
    let other = emu.spawn_process().unwrap();
    assert_eq!(other.free_physical(h2), Err(AclError::RT_INVALID_HANDLE));
    emu.free_physical(h2).unwrap();
    emu.release(va).unwrap();
}

#[test]
fn freeing_a_mapped_handle_is_deferred_until_unmap() {
    let emu = Emulator::preset(Product::AtlasA2);
    let h = small(&emu, 1).unwrap();
    let va = emu.reserve(2 * MIB, 0, None, 0).unwrap();
    emu.map(va, 2 * MIB, 0, h, 0).unwrap();
    emu.write(va.get(), b"still here").unwrap();
    emu.free_physical(h).unwrap();
    // The handle is dead at once ...
    assert_eq!(emu.free_physical(h), Err(AclError::RT_INVALID_HANDLE));
    // ... but the memory lives while mapped.
    let mut buf = [0u8; 10];
    emu.read(va.get(), &mut buf).unwrap();
    assert_eq!(&buf, b"still here");
    assert_eq!(emu.stats().device[0].used, 2 * MIB);
    assert_eq!(emu.stats().live_allocations, 1);
    emu.unmap(va).unwrap();
    assert_eq!(emu.stats().device[0].used, 0);
    assert_eq!(emu.stats().live_allocations, 0);
    emu.release(va).unwrap();
}

#[test]
fn hbm_requests_are_served_from_ddr_without_hbm() {
    let emu = Emulator::preset(Product::AtlasInference);
    let h = small(&emu, 1).unwrap();
    let report = emu.leak_report();
    assert_eq!(report.handles[0].kind, MemKind::Ddr);
    assert_eq!(emu.stats().device[0].kind, MemKind::Ddr);
    emu.free_physical(h).unwrap();
    let a2 = Emulator::preset(Product::AtlasA2);
    let h = small(&a2, 1).unwrap();
    assert_eq!(a2.leak_report().handles[0].kind, MemKind::Hbm);
    a2.free_physical(h).unwrap();
}

#[test]
fn product_gates_and_conditional_verdicts() {
    let training = Emulator::preset(Product::AtlasTraining);
    assert_eq!(
        training
            .malloc_physical(GIB, &dev(MemAttr::HbmMemHuge1G), 0)
            .map(|_| ()),
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    );
    let mut config = EmuConfig::preset(Product::AtlasA3);
    config.p2p_huge1g_confirmed = false;
    config.host_numa_p2p_limit = 4 * MIB;
    let a3 = Emulator::new(config).unwrap();
    assert_eq!(
        a3.malloc_physical(GIB, &dev(MemAttr::MemP2pHuge1G), 0)
            .map(|_| ()),
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    );
    let numa_p2p = prop(Location::HostNuma, 1, MemAttr::MemP2pHuge);
    let a = a3.malloc_physical(4 * MIB, &numa_p2p, 0).unwrap();
    assert_eq!(
        a3.malloc_physical(2 * MIB, &numa_p2p, 0).map(|_| ()),
        Err(AclError::RT_MEMORY_ALLOCATION)
    );
    // Non-P2P host-NUMA memory is not limited by the platform cap.
    let b = a3
        .malloc_physical(2 * MIB, &prop(Location::HostNuma, 1, MemAttr::MemHuge), 0)
        .unwrap();
    assert_eq!(
        a3.malloc_physical(2 * MIB, &prop(Location::HostNuma, 7, MemAttr::MemHuge), 0)
            .map(|_| ()),
        Err(AclError::RT_PARAM_INVALID),
        "NUMA node out of range"
    );
    assert_eq!(
        a3.malloc_physical(2 * MIB, &prop(Location::Device, 99, MemAttr::MemHuge), 0)
            .map(|_| ()),
        Err(AclError::RT_INVALID_DEVICEID)
    );
    a3.free_physical(a).unwrap();
    a3.free_physical(b).unwrap();
}

#[test]
fn fault_injection_fails_the_nth_call_only() {
    let emu = Emulator::preset(Product::AtlasA2);
    emu.inject_fault(Op::Malloc, 3, AclError::RT_MEMORY_ALLOCATION);
    let a = small(&emu, 1).unwrap();
    let b = small(&emu, 1).unwrap();
    assert_eq!(small(&emu, 1), Err(AclError::RT_MEMORY_ALLOCATION));
    let c = small(&emu, 1).unwrap();
    assert_eq!(emu.stats().live_allocations, 3);
    assert_eq!(emu.stats().calls[&Op::Malloc], 4);
    emu.inject_fault(Op::Unmap, 1, AclError::RT_INTERNAL_ERROR);
    let va = emu.reserve(2 * MIB, 0, None, 0).unwrap();
    emu.map(va, 2 * MIB, 0, a, 0).unwrap();
    assert_eq!(emu.unmap(va), Err(AclError::RT_INTERNAL_ERROR));
    emu.unmap(va).unwrap();
    emu.set_capacity(PoolId::Device(0), 6 * MIB).unwrap();
    assert_eq!(small(&emu, 1), Err(AclError::RT_MEMORY_ALLOCATION));
    for h in [a, b, c] {
        emu.free_physical(h).unwrap();
    }
    emu.release(va).unwrap();
    assert_eq!(
        emu.set_capacity(PoolId::Device(42), 0),
        Err(AclError::RT_INVALID_DEVICEID)
    );
}

#[test]
fn one_gib_pages_map_only_at_one_gib_aligned_addresses() {
    let mut config = EmuConfig::preset(Product::AtlasA2);
    config.huge1g_pool = 2 * GIB;
    let emu = Emulator::new(config).unwrap();
    let h = emu
        .malloc_physical(GIB, &dev(MemAttr::HbmMemHuge1G), 0)
        .unwrap();
    let va = emu.reserve(3 * GIB, 0, None, 0).unwrap();
    let at = |offset: usize| VirtAddr(NonZeroUsize::new(va.get() + offset).unwrap());
    // A device MMU maps a 1 GiB page at a 1 GiB boundary only.
    for misaligned in [2 * MIB, 512 * MIB, GIB + 2 * MIB] {
        assert_eq!(
            emu.map(at(misaligned), GIB, 0, h, 0),
            Err(Situation::PartialMap.code()),
            "+{misaligned:#x}"
        );
    }
    assert_eq!(emu.stats().mappings, 0, "a refused map leaves nothing");
    for aligned in [0, GIB] {
        emu.map(at(aligned), GIB, 0, h, 0).unwrap();
        emu.write(at(aligned).get() + GIB - 4, b"end!").unwrap();
        emu.unmap(at(aligned)).unwrap();
    }
    // 2 MiB pages still map at any 2 MiB boundary.
    let small = small(&emu, 1).unwrap();
    emu.map(at(2 * MIB), 2 * MIB, 0, small, 0).unwrap();
    emu.unmap(at(2 * MIB)).unwrap();
    emu.release(va).unwrap();
    emu.free_physical(h).unwrap();
    emu.free_physical(small).unwrap();
}
