//! The emulator's acceptance scenarios, on the raw backend traits.

use std::num::{NonZeroU64, NonZeroUsize};

use aclmem_core::{
    AclError, GIB, GranularityOption, Location, MIB, MemAttr, Product, RawPhysicalMemProp, RunMode,
};
use aclmem_emu::errors::Situation;
use aclmem_emu::{EmuConfig, Emulator, MemKind, Op, PoolId};
use aclmem_hal::{
    DeviceInfo, EXPORT_FLAG_DEFAULT, EXPORT_FLAG_DISABLE_PID_VALIDATION, PhysicalAllocator,
    RawHandle, ShareableMemory, VirtAddr, VirtualMemory,
};

const INVALID: AclError = AclError::INVALID_PARAM;

fn prop(location: Location, id: u32, attr: MemAttr) -> RawPhysicalMemProp {
    RawPhysicalMemProp::new_checked(
        Product::AtlasA2,
        RunMode::Ep,
        aclmem_core::CannVersion::V9_0,
        location,
        id,
        attr,
    )
    .map(|(p, _)| p)
    .unwrap_or_else(|_| {
        // Refused combinations are built by hand, as C code would.
        RawPhysicalMemProp {
            mem_attr: attr.raw(),
            location: aclmem_core::RawMemLocation {
                id,
                type_: location.raw(),
            },
            ..RawPhysicalMemProp::default()
        }
    })
}

fn dev(attr: MemAttr) -> RawPhysicalMemProp {
    prop(Location::Device, 0, attr)
}

fn small(emu: &Emulator, n: usize) -> Result<RawHandle, AclError> {
    emu.malloc_physical(n * 2 * MIB, &dev(MemAttr::HbmMemHuge), 0)
}

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
