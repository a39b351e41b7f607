//! The conformance scenarios every backend runs: aliasing, exhaustion, bad
//! arguments, dead handles, lifetimes, one device per range, granularity,
//! product gates, sharing, expected addresses and stream-ordered pools.

use super::*;

fn prop(location: Location, id: u32, attr: MemAttr) -> RawPhysicalMemProp {
    RawPhysicalMemProp {
        mem_attr: attr.raw(),
        location: RawMemLocation {
            id,
            type_: location.raw(),
        },
        ..RawPhysicalMemProp::default()
    }
}

fn dev(attr: MemAttr) -> RawPhysicalMemProp {
    prop(Location::Device, 0, attr)
}

const HBM: MemAttr = MemAttr::HbmMemHuge;

fn begin<B: Backend + ?Sized>(b: &B, t: &mut Transcript) -> Result<(), AclError> {
    let (product, run_mode) = b.platform()?;
    t.fact("platform", (product, run_mode));
    t.fact("devices", b.device_count()?);
    Ok(())
}

fn va_plus(v: VirtAddr, bytes: usize) -> VirtAddr {
    v.checked_add(bytes)
        .expect("test addresses do not overflow")
}

/// Two mappings of one handle alias.
fn aliasing<B: Backend + ?Sized>(
    b: &B,
    host: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let h = t.step("malloc", b.malloc_physical(2 * MIB, &dev(HBM), 0))?;
    let va = t.step("reserve", b.reserve(8 * MIB, 0, None, 0))?;
    t.step("map a", b.map(va, 2 * MIB, 0, h, 0))?;
    t.step("map b", b.map(va_plus(va, 4 * MIB), 2 * MIB, 0, h, 0))?;
    host.poke(va.get() + 123, b"aliased bytes")?;
    let mut buf = [0u8; 13];
    host.peek(va.get() + 4 * MIB + 123, &mut buf)?;
    t.fact("read through b", String::from_utf8_lossy(&buf));
    t.step("unmap a", b.unmap(va))?;
    t.step("unmap b", b.unmap(va_plus(va, 4 * MIB)))?;
    t.step("release", b.release(va))?;
    t.step("free", b.free_physical(h))?;
    Ok(())
}

/// 207001 when device memory runs out, success again after a free.
fn exhaustion<B: Backend + ?Sized>(
    b: &B,
    host: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    t.fact("mem info", host.mem_info(MemAttr::HbmMem)?);
    let mut hs = Vec::new();
    for i in 0..4 {
        hs.push(t.step(
            &format!("malloc 16 MiB #{i}"),
            b.malloc_physical(16 * MIB, &dev(HBM), 0),
        )?);
    }
    t.fact("mem info full", host.mem_info(MemAttr::HbmMem)?);
    t.expect_err(
        "malloc over capacity",
        b.malloc_physical(2 * MIB, &dev(HBM), 0),
    );
    t.step("free #2", b.free_physical(hs.remove(2)))?;
    hs.push(t.step("malloc again", b.malloc_physical(16 * MIB, &dev(HBM), 0))?);
    for h in hs {
        t.step("free", b.free_physical(h))?;
    }
    t.fact("mem info end", host.mem_info(MemAttr::HbmMem)?);
    Ok(())
}

/// 100000 for malformed arguments.
fn bad_arguments<B: Backend + ?Sized>(
    b: &B,
    _: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    t.expect_err("flags 1", b.malloc_physical(2 * MIB, &dev(HBM), 1));
    t.expect_err("size 0", b.malloc_physical(0, &dev(HBM), 0));
    t.expect_err("unaligned size", b.malloc_physical(3 * MIB, &dev(HBM), 0));
    t.expect_err(
        "ACL_DDR_MEM",
        b.malloc_physical(2 * MIB, &dev(MemAttr::DdrMem), 0),
    );
    t.expect_err(
        "ACL_HBM_MEM_P2P_HUGE",
        b.malloc_physical(2 * MIB, &dev(MemAttr::HbmMemP2pHuge), 0),
    );
    t.expect_err(
        "DDR on device",
        b.malloc_physical(2 * MIB, &dev(MemAttr::DdrMemHuge), 0),
    );
    t.expect_err(
        "1G on host",
        b.malloc_physical(GIB, &prop(Location::Host, 0, MemAttr::MemHuge1G), 0),
    );
    let mut posix = dev(HBM);
    posix.handle_type = 2;
    t.expect_err("handle type POSIX", b.malloc_physical(2 * MIB, &posix, 0));
    let mut reserved = dev(HBM);
    reserved.reserve = 2 * MIB as u64;
    t.expect_err(
        "reserve field set",
        b.malloc_physical(2 * MIB, &reserved, 0),
    );
    let mut unregistered = dev(HBM);
    unregistered.location.type_ = Location::RAW_UNREGISTERED;
    t.expect_err(
        "unregistered location",
        b.malloc_physical(2 * MIB, &unregistered, 0),
    );
    t.expect_err(
        "device 99",
        b.malloc_physical(2 * MIB, &prop(Location::Device, 99, HBM), 0),
    );
    t.expect_err("reserve size 0", b.reserve(0, 0, None, 0));
    t.expect_err("reserve flags 2", b.reserve(2 * MIB, 0, None, 2));
    t.expect_err("reserve alignment", b.reserve(2 * MIB, 2 * MIB, None, 0));
    let h = t.step("malloc 4 MiB", b.malloc_physical(4 * MIB, &dev(HBM), 0))?;
    let va = t.step("reserve flags 1", b.reserve(16 * MIB, 0, None, 1))?;
    t.expect_err("map offset", b.map(va, 4 * MIB, 2 * MIB, h, 0));
    t.expect_err("partial map", b.map(va, 2 * MIB, 0, h, 0));
    t.expect_err("map size 0", b.map(va, 0, 0, h, 0));
    t.expect_err("map flags", b.map(va, 4 * MIB, 0, h, 1));
    t.expect_err(
        "map unaligned address",
        b.map(va_plus(va, 4096), 4 * MIB, 0, h, 0),
    );
    t.expect_err(
        "map past the end",
        b.map(va_plus(va, 14 * MIB), 4 * MIB, 0, h, 0),
    );
    t.step("release", b.release(va))?;
    t.step("free", b.free_physical(h))?;
    Ok(())
}

/// Stale, double-freed and forged handles are errors.
fn dead_handles<B: Backend + ?Sized>(
    b: &B,
    _: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let h = t.step("malloc", b.malloc_physical(2 * MIB, &dev(HBM), 0))?;
    t.step("free", b.free_physical(h))?;
    t.expect_err("double free", b.free_physical(h));
    let h2 = t.step("malloc again", b.malloc_physical(2 * MIB, &dev(HBM), 0))?;
    let va = t.step("reserve", b.reserve(2 * MIB, 0, None, 0))?;
    t.expect_err("map stale", b.map(va, 2 * MIB, 0, h, 0));
    for forged in [0xdead_beef_u64, u64::MAX, 1 << 32] {
        let f = RawHandle(NonZeroU64::new(forged).expect("non-zero"));
        t.expect_err("free forged", b.free_physical(f));
        t.expect_err("map forged", b.map(va, 2 * MIB, 0, f, 0));
        t.expect_err("export forged", b.export(f, 0));
    }
    t.step("release", b.release(va))?;
    t.step("free", b.free_physical(h2))?;
    Ok(())
}

/// Freeing a mapped handle is deferred; releasing a mapped range is refused.
fn lifetimes<B: Backend + ?Sized>(
    b: &B,
    host: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let h = t.step("malloc", b.malloc_physical(4 * MIB, &dev(HBM), 0))?;
    let va = t.step("reserve", b.reserve(8 * MIB, 0, None, 0))?;
    t.step("map", b.map(va, 4 * MIB, 0, h, 0))?;
    host.poke(va.get(), b"kept alive")?;
    let h2 = t.step("malloc second", b.malloc_physical(4 * MIB, &dev(HBM), 0))?;
    t.expect_err(
        "overlapping map",
        b.map(va_plus(va, 2 * MIB), 4 * MIB, 0, h2, 0),
    );
    t.expect_err("release while mapped", b.release(va));
    t.step("free while mapped", b.free_physical(h))?;
    t.expect_err("free again", b.free_physical(h));
    let mut buf = [0u8; 10];
    host.peek(va.get(), &mut buf)?;
    t.fact("still readable", String::from_utf8_lossy(&buf));
    t.fact("mem info mapped", host.mem_info(MemAttr::HbmMem)?);
    t.expect_err("unmap not a start", b.unmap(va_plus(va, 2 * MIB)));
    t.step("unmap", b.unmap(va))?;
    t.expect_err("unmap twice", b.unmap(va));
    t.fact("mem info unmapped", host.mem_info(MemAttr::HbmMem)?);
    t.step("release", b.release(va))?;
    t.expect_err("release twice", b.release(va));
    t.step("free second", b.free_physical(h2))?;
    Ok(())
}

/// One device per reservation.
fn one_device_per_range<B: Backend + ?Sized>(
    b: &B,
    _: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let h0 = t.step("malloc dev 0", b.malloc_physical(2 * MIB, &dev(HBM), 0))?;
    let h1 = t.step(
        "malloc dev 1",
        b.malloc_physical(2 * MIB, &prop(Location::Device, 1, HBM), 0),
    )?;
    let va = t.step("reserve", b.reserve(4 * MIB, 0, None, 0))?;
    t.step("map dev 0", b.map(va, 2 * MIB, 0, h0, 0))?;
    t.expect_err(
        "map dev 1 beside it",
        b.map(va_plus(va, 2 * MIB), 2 * MIB, 0, h1, 0),
    );
    t.step("unmap", b.unmap(va))?;
    t.step(
        "map dev 1 alone",
        b.map(va_plus(va, 2 * MIB), 2 * MIB, 0, h1, 0),
    )?;
    t.step("unmap dev 1", b.unmap(va_plus(va, 2 * MIB)))?;
    t.step("release", b.release(va))?;
    t.step("free 0", b.free_physical(h0))?;
    t.step("free 1", b.free_physical(h1))?;
    Ok(())
}

/// Granularity per attribute and the 1 GiB pool.
fn granularity<B: Backend + ?Sized>(
    b: &B,
    _: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    for attr in MemAttr::ALLOCATABLE {
        let location = if attr.c_name().starts_with("ACL_DDR") {
            Location::Host
        } else {
            Location::Device
        };
        let g = b.granularity(&prop(location, 0, attr), GranularityOption::Minimum);
        if let Ok(g) = t.step(attr.c_name(), g) {
            t.fact(attr.c_name(), g);
        }
    }
    t.expect_err(
        "granularity of ACL_HBM_MEM",
        b.granularity(&dev(MemAttr::HbmMem), GranularityOption::Minimum),
    );
    let h = t.step(
        "malloc 1 GiB",
        b.malloc_physical(GIB, &dev(MemAttr::HbmMemHuge1G), 0),
    )?;
    let va = t.step("reserve 2 GiB", b.reserve(2 * GIB, 0, None, 0))?;
    t.step("map 1 GiB", b.map(va, GIB, 0, h, 0))?;
    t.step("unmap", b.unmap(va))?;
    t.step("release", b.release(va))?;
    t.step("free", b.free_physical(h))?;
    Ok(())
}

/// Product gates: run on several machines.
fn product_gates<B: Backend + ?Sized>(
    b: &B,
    _: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    for attr in [
        MemAttr::HbmMemHuge1G,
        MemAttr::MemHuge1G,
        MemAttr::MemP2pHuge1G,
        MemAttr::MemP2pHuge,
    ] {
        if let Ok(h) = t.step(attr.c_name(), b.malloc_physical(GIB, &dev(attr), 0)) {
            t.step("free", b.free_physical(h))?;
        }
    }
    let numa_p2p = prop(Location::HostNuma, 1, MemAttr::MemP2pHuge);
    if let Ok(h) = t.step("host NUMA P2P", b.malloc_physical(2 * MIB, &numa_p2p, 0)) {
        t.step("free", b.free_physical(h))?;
    }
    Ok(())
}

/// Everything answers 207000 on a platform without the API.
fn unsupported_platform<B: Backend + ?Sized>(
    b: &B,
    host: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let h = RawHandle(NonZeroU64::new(1).expect("non-zero"));
    let va = VirtAddr(NonZeroUsize::new(2 * MIB).expect("non-zero"));
    t.expect_err(
        "granularity",
        b.granularity(&dev(HBM), GranularityOption::Minimum),
    );
    t.expect_err("malloc", b.malloc_physical(2 * MIB, &dev(HBM), 0));
    t.expect_err("malloc bad args", b.malloc_physical(0, &dev(HBM), 9));
    t.expect_err("free", b.free_physical(h));
    t.expect_err("reserve", b.reserve(2 * MIB, 0, None, 0));
    t.expect_err("release", b.release(va));
    t.expect_err("map", b.map(va, 2 * MIB, 0, h, 0));
    t.expect_err("unmap", b.unmap(va));
    t.expect_err("export", b.export(h, 0));
    t.expect_err("set pids", b.set_pids(ShareableHandle(1), &[1]));
    t.expect_err("import", b.import(ShareableHandle(1), 0));
    t.expect_err("mem info", host.mem_info(MemAttr::HbmMem));
    Ok(())
}

/// Export in one process; the same process cannot import.
fn sharing<B: Backend + ?Sized>(
    b: &B,
    _: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let h = t.step("malloc", b.malloc_physical(2 * MIB, &dev(HBM), 0))?;
    let s = t.step("export", b.export(h, EXPORT_FLAG_DEFAULT))?;
    t.expect_err("export twice", b.export(h, EXPORT_FLAG_DEFAULT));
    t.expect_err("set no pids", b.set_pids(s, &[]));
    t.step("set pids", b.set_pids(s, &[4242]))?;
    t.expect_err("import in the exporting process", b.import(s, 0));
    t.expect_err("import unknown", b.import(ShareableHandle(12345), 0));
    t.expect_err("import to device 99", b.import(s, 99));
    let host = t.step(
        "malloc host",
        b.malloc_physical(2 * MIB, &prop(Location::Host, 0, MemAttr::DdrMemHuge), 0),
    )?;
    t.expect_err("export host memory", b.export(host, 0));
    let h3 = t.step("malloc third", b.malloc_physical(2 * MIB, &dev(HBM), 0))?;
    t.expect_err("export flags 2", b.export(h3, 2));
    t.step("free", b.free_physical(h))?;
    t.expect_err("import after free", b.import(s, 0));
    t.step("free host", b.free_physical(host))?;
    t.step("free third", b.free_physical(h3))?;
    Ok(())
}

/// The V2 calls: DEFAULT everywhere the API is, FABRIC on A3 only.
fn sharing_v2<B: Backend + ?Sized>(
    b: &B,
    _: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let h = t.step("malloc", b.malloc_physical(2 * MIB, &dev(HBM), 0))?;
    let s = t.step(
        "export DEFAULT",
        b.export_v2(h, EXPORT_FLAG_DEFAULT, ShareHandleType::Default),
    )?;
    t.fact("type", s.kind());
    t.expect_err("set no pids", b.set_pids_v2(&s, &[]));
    t.step("set pids", b.set_pids_v2(&s, &[4242, 4243]))?;
    t.expect_err("import in the exporting process", b.import_v2(&s, 0));
    t.expect_err(
        "import unknown",
        b.import_v2(&ShareableHandleV2::Default(12345), 0),
    );
    t.expect_err(
        "import a forged FABRIC handle",
        b.import_v2(&ShareableHandleV2::Fabric([7; 128]), 0),
    );
    let h2 = t.step("malloc second", b.malloc_physical(2 * MIB, &dev(HBM), 0))?;
    if let Ok(f) = t.step(
        "export FABRIC",
        b.export_v2(h2, EXPORT_FLAG_DEFAULT, ShareHandleType::Fabric),
    ) {
        t.fact("type", f.kind());
        t.step("set pids FABRIC", b.set_pids_v2(&f, &[4242]))?;
        t.expect_err("import own FABRIC", b.import_v2(&f, 0));
    }
    t.step("free", b.free_physical(h))?;
    t.step("free second", b.free_physical(h2))?;
    Ok(())
}

/// Caller-chosen reservation addresses.
fn expected_address<B: Backend + ?Sized>(
    b: &B,
    _: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let want = VirtAddr(NonZeroUsize::new(17 << 40).expect("non-zero"));
    let got = t.step("reserve at 17 TiB", b.reserve(4 * MIB, 0, Some(want), 0))?;
    t.fact("got what was asked", got == want);
    t.expect_err("occupied", b.reserve(4 * MIB, 0, Some(want), 0));
    t.expect_err(
        "outside the window",
        b.reserve(
            4 * MIB,
            0,
            Some(VirtAddr(NonZeroUsize::new(1 << 40).expect("non-zero"))),
            0,
        ),
    );
    t.step("release", b.release(got))?;
    Ok(())
}

/// Stream-ordered pools: a pool, its attributes, blocks on two streams,
/// their reuse, trim and destroy; per release (MallocAsync needs 9.1) and
/// per product (Atlas A2 only) the same codes from every backend.
fn pools<B: Backend + ?Sized>(
    b: &B,
    host: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let s1 = t.step("stream", b.create_stream())?;
    let s2 = t.step("stream", b.create_stream())?;
    let Ok(pool) = t.step("pool create", b.pool_create(0, 64 * MIB)) else {
        b.destroy_stream(s2)?;
        return b.destroy_stream(s1);
    };
    for attr in PoolAttr::ALL {
        let v = t.step("get attr", b.pool_get_attr(pool, attr))?;
        t.fact(&format!("{attr:?}"), v);
    }
    t.step(
        "read-only",
        b.pool_set_attr(pool, PoolAttr::UsedMemCurrent, 0),
    )
    .ok();
    t.step(
        "threshold",
        b.pool_set_attr(pool, PoolAttr::ReleaseThreshold, 4 * MIB as u64),
    )?;
    t.step("too big", b.pool_malloc_async(pool, 128 * MIB, s1))
        .ok();
    if let Ok(a) = t.step("malloc 1 MiB", b.pool_malloc_async(pool, MIB, s1)) {
        host.poke(a.get(), b"pool")?;
        let mut back = [0u8; 4];
        host.peek(a.get(), &mut back)?;
        t.fact("bytes", back);
        let big = t.step("malloc 3 MiB", b.pool_malloc_async(pool, 3 * MIB, s2))?;
        t.fact("used", b.pool_get_attr(pool, PoolAttr::UsedMemCurrent)?);
        t.step("free", b.pool_free_async(a, s1))?;
        t.step("free twice", b.pool_free_async(a, s1)).ok();
        // The stream that freed a block takes it again.
        let again = t.step("malloc again", b.pool_malloc_async(pool, MIB, s1))?;
        t.fact("reused", again == a);
        t.step("trim below used", b.pool_trim_to(pool, 0)).ok();
        t.step("free", b.pool_free_async(again, s1))?;
        t.step("free", b.pool_free_async(big, s2))?;
        t.fact(
            "reserved",
            b.pool_get_attr(pool, PoolAttr::ReservedMemCurrent)?,
        );
        t.step("trim", b.pool_trim_to(pool, 0))?;
        t.fact(
            "reserved",
            b.pool_get_attr(pool, PoolAttr::ReservedMemCurrent)?,
        );
        t.fact("high", b.pool_get_attr(pool, PoolAttr::UsedMemHigh)?);
    }
    t.step("destroy", b.pool_destroy(pool))?;
    t.step("destroy twice", b.pool_destroy(pool)).ok();
    t.step("sync", b.synchronize_stream(s1))?;
    t.step("stream destroy", b.destroy_stream(s2))?;
    t.step("stream destroy", b.destroy_stream(s1))
}

/// Managed memory: allocated, reached from the host, advised, prefetched
/// on a stream, freed; per release (9.0 allocates, 9.1 advises) and per
/// product (A2, A3) the same codes from every backend.
fn managed<B: Backend + ?Sized>(
    b: &B,
    host: &dyn HostAccess,
    t: &mut Transcript,
) -> Result<(), AclError> {
    begin(b, t)?;
    let Ok(addr) = t.step("alloc managed", b.malloc_managed(3 * MIB)) else {
        return Ok(());
    };
    host.poke(addr.get(), b"managed")?;
    let mut back = [0u8; 7];
    host.peek(addr.get(), &mut back)?;
    t.fact("bytes", back);
    let s = t.step("stream", b.create_stream())?;
    t.step(
        "read mostly",
        b.managed_advise(
            addr,
            4 * MIB,
            ManagedAdvice::SetReadMostly,
            ManagedLocation::Host,
        ),
    )
    .ok();
    t.step(
        "preferred device 0",
        b.managed_advise(
            addr,
            4 * MIB,
            ManagedAdvice::SetPreferredLocation,
            ManagedLocation::Device(0),
        ),
    )
    .ok();
    t.step(
        "half a page",
        b.managed_advise(
            addr,
            MIB,
            ManagedAdvice::SetAccessedBy,
            ManagedLocation::Device(0),
        ),
    )
    .ok();
    t.step(
        "prefetch to device 0",
        b.managed_prefetch_async(addr, 4 * MIB, ManagedLocation::Device(0), s),
    )
    .ok();
    t.step(
        "prefetch to device 99",
        b.managed_prefetch_async(addr, 4 * MIB, ManagedLocation::Device(99), s),
    )
    .ok();
    t.step("stream destroy", b.destroy_stream(s))?;
    t.step("free", b.free_managed(addr))
}

const fn machine(soc: &'static str, hbm: usize, run_mode: RunMode) -> Machine {
    Machine {
        soc,
        devices: 8,
        hbm,
        run_mode,
        cann: CannVersion::DEFAULT,
    }
}

/// Every scenario, for a backend type.
pub fn scenarios<B: Backend + ?Sized>() -> Vec<Scenario<B>> {
    let a2 = Machine::A2;
    let ep = |soc, hbm| machine(soc, hbm, RunMode::Ep);
    let a2_91 = Machine {
        cann: CannVersion::V9_1,
        ..a2
    };
    let table: [(&'static str, Machine, Run<B>); 25] = [
        ("aliasing", a2, aliasing::<B>),
        ("exhaustion", ep("Ascend910B3", 64 * MIB), exhaustion::<B>),
        ("bad arguments", a2, bad_arguments::<B>),
        ("dead handles", a2, dead_handles::<B>),
        ("lifetimes", a2, lifetimes::<B>),
        ("one device per range", a2, one_device_per_range::<B>),
        ("granularity on A2", a2, granularity::<B>),
        ("product gates on A2", a2, product_gates::<B>),
        (
            "product gates on A3",
            ep("Ascend910_9392", 64 * GIB),
            product_gates::<B>,
        ),
        (
            "product gates on Atlas 350",
            ep("Ascend950PR_9599", 64 * GIB),
            product_gates::<B>,
        ),
        (
            "product gates on training",
            ep("Ascend910A", 32 * GIB),
            product_gates::<B>,
        ),
        (
            "product gates on inference",
            ep("Ascend310P3", 24 * GIB),
            product_gates::<B>,
        ),
        (
            "Atlas 200I A2 in RC form",
            machine("Ascend310B1", 8 * GIB, RunMode::Rc),
            unsupported_platform::<B>,
        ),
        (
            "Atlas 200/300/500",
            ep("Ascend310", 8 * GIB),
            unsupported_platform::<B>,
        ),
        ("sharing", a2, sharing::<B>),
        ("V2 sharing on A2", a2, sharing_v2::<B>),
        (
            "V2 sharing on A3",
            ep("Ascend910_9392", 64 * GIB),
            sharing_v2::<B>,
        ),
        ("expected address", a2, expected_address::<B>),
        ("pools on A2 with 9.1", a2_91, pools::<B>),
        ("pools on A2 with 9.0", a2, pools::<B>),
        (
            "pools on A3",
            Machine {
                cann: CannVersion::V9_1,
                ..ep("Ascend910_9392", 64 * GIB)
            },
            pools::<B>,
        ),
        ("managed on A2 with 9.1", a2_91, managed::<B>),
        ("managed on A2 with 9.0", a2, managed::<B>),
        (
            "managed on A3 with 8.5",
            Machine {
                cann: CannVersion::V8_5,
                ..ep("Ascend910_9392", 64 * GIB)
            },
            managed::<B>,
        ),
        (
            "managed on training",
            Machine {
                cann: CannVersion::V9_1,
                ..ep("Ascend910A", 32 * GIB)
            },
            managed::<B>,
        ),
    ];
    table
        .into_iter()
        .map(|(name, machine, run)| Scenario { name, machine, run })
        .collect()
}
