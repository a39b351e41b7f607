//! What the rules and the backends cost per call.
//!
//! `cargo xtask bench` (or `cargo bench -p aclmem-tests --bench ops`); the
//! numbers are recorded in docs/benchmarks.md.

use std::hint::black_box;
use std::path::PathBuf;

use aclmem_core::{
    AlignedSize, AtlasA2, CannVersion, Device, HbmHuge, Location, MIB, MemAttr, PLATFORMS,
    PhysicalMemProp, Product, RawPhysicalMemProp, RunMode, check,
};
use aclmem_driver::{AscendCl, Driver};
use aclmem_emu::Emulator;
use aclmem_hal::{PhysicalAllocator, Session, VirtualMemory};
use criterion::{Criterion, criterion_group, criterion_main};

fn rules(c: &mut Criterion) {
    c.bench_function("core/check every combination (CANN 9.0)", |b| {
        b.iter(|| {
            let mut allowed = 0u32;
            for p in PLATFORMS {
                for l in Location::ALL {
                    for a in MemAttr::ALLOCATABLE {
                        allowed += u32::from(
                            check(black_box(p.product), p.run_mode, CannVersion::V9_0, l, a)
                                .is_ok(),
                        );
                    }
                }
            }
            allowed
        })
    });
    c.bench_function("core/from_soc_name Ascend910_9392", |b| {
        b.iter(|| Product::from_soc_name(black_box("Ascend910_9392")))
    });
    let raw = PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0).raw();
    c.bench_function("core/validate a raw prop", |b| {
        b.iter(|| black_box(raw).validate(Product::AtlasA2, RunMode::Ep, CannVersion::V9_0))
    });
}

fn prop() -> RawPhysicalMemProp {
    PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0).raw()
}

/// malloc + free, and reserve + map + unmap + release, on any backend.
fn backend_cycle<B: PhysicalAllocator + VirtualMemory>(c: &mut Criterion, name: &str, b: &B)
where
    B::Error: std::fmt::Debug,
{
    let p = prop();
    c.bench_function(&format!("{name}/malloc+free 2 MiB"), |bench| {
        bench.iter(|| {
            let h = b.malloc_physical(2 * MIB, &p, 0).unwrap();
            b.free_physical(h).unwrap();
        })
    });
    let h = b.malloc_physical(2 * MIB, &p, 0).unwrap();
    c.bench_function(
        &format!("{name}/reserve+map+unmap+release 2 MiB"),
        |bench| {
            bench.iter(|| {
                let va = b.reserve(2 * MIB, 0, None, 0).unwrap();
                b.map(va, 2 * MIB, 0, h, 0).unwrap();
                b.unmap(va).unwrap();
                b.release(va).unwrap();
            })
        },
    );
    b.free_physical(h).unwrap();
}

fn emulator(c: &mut Criterion) {
    let emu = Emulator::preset(Product::AtlasA2);
    backend_cycle(c, "emu", &emu);
    let session = Session::<_, AtlasA2>::new(&emu).unwrap();
    let size = AlignedSize::<HbmHuge>::new::<{ 2 * MIB }>();
    c.bench_function("emu/typed malloc+reserve+map+drop 2 MiB", |bench| {
        bench.iter(|| {
            let mem = session.malloc(PhysicalMemProp::on_device(0), size).unwrap();
            let va = session.reserve(2 * MIB).unwrap();
            let m = va.map(0, &mem).unwrap();
            drop(m);
            drop(va);
            drop(mem);
        })
    });
}

/// The driver through dlopen'ed emulated C library: the FFI and lazy-symbol
/// overhead on top of the emulator.
fn driver(c: &mut Criterion) {
    let lib = std::env::var_os("ACLMEM_ASCENDCL")
        .map(PathBuf::from)
        .unwrap_or_else(aclmem_tests::emulated_library_path);
    let Ok(cl) = AscendCl::load(Some(&lib)) else {
        eprintln!(
            "skipping driver benchmarks: {} not built (run `cargo build --release`)",
            lib.display()
        );
        return;
    };
    let runtime = cl.init().unwrap();
    let d: Driver = runtime.device(0).unwrap();
    backend_cycle(c, "driver+emu-capi", &d);
}

criterion_group!(benches, rules, emulator, driver);
criterion_main!(benches);
