//! 8 threads x 10,000 mixed operations on one emulated machine: every
//! handle is accounted for, nothing leaks, and data written through a
//! mapping is read back intact while other threads map and unmap around it.

use std::sync::Arc;
use std::thread;

use aclmem_core::{AclError, Location, MIB, MemAttr, Product, RawPhysicalMemProp, RunMode};
use aclmem_emu::{Emulator, Op};
use aclmem_hal::{PhysicalAllocator, RawHandle, VirtAddr, VirtualMemory};

const THREADS: usize = 8;
const OPS: usize = 10_000;

/// xorshift64*: deterministic per thread, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Mapped {
    addr: VirtAddr,
    /// Index into `handles` (the handle may have been freed since: the
    /// mapping keeps its memory alive).
    handle: usize,
    size: usize,
}

struct Resv {
    addr: VirtAddr,
    slots: [Option<Mapped>; 4], // 4 x 4 MiB
}

#[derive(Default)]
struct Tally {
    mallocs: u64,
    frees: u64,
    maps: u64,
    unmaps: u64,
    refused_releases: u64,
}

fn worker(emu: &Emulator, id: usize) -> Tally {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (id as u64 + 1));
    let device = id as u32;
    let prop = RawPhysicalMemProp::new_checked(
        Product::AtlasA2,
        RunMode::Ep,
        aclmem_core::CannVersion::V9_0,
        Location::Device,
        device,
        MemAttr::HbmMemHuge,
    )
    .unwrap()
    .0;
    let mut tally = Tally::default();
    let mut handles: Vec<Option<(RawHandle, usize)>> = Vec::new();
    let mut resvs: Vec<Resv> = Vec::new();
    let mut tag = (id as u64) << 48;
    // The last tag written to each piece of memory, through any mapping: two
    // mappings of one handle alias, so both must read the latest.
    let mut latest: Vec<u64> = Vec::new();

    for _ in 0..OPS {
        match rng.below(7) {
            0 | 1 => {
                let size = (1 + rng.below(2)) * 2 * MIB;
                match emu.malloc_physical(size, &prop, 0) {
                    Ok(h) => {
                        handles.push(Some((h, size)));
                        latest.push(0);
                        tally.mallocs += 1;
                    }
                    Err(e) => assert_eq!(e, AclError::RT_MEMORY_ALLOCATION),
                }
            }
            2 => {
                let live: Vec<usize> = (0..handles.len())
                    .filter(|&i| handles[i].is_some())
                    .collect();
                if let Some(&i) = live.get(rng.below(live.len().max(1))) {
                    let (h, _) = handles[i].take().unwrap();
                    emu.free_physical(h).unwrap();
                    assert_eq!(emu.free_physical(h), Err(AclError::RT_INVALID_HANDLE));
                    tally.frees += 1;
                }
            }
            3 => {
                if resvs.len() < 4 {
                    let addr = emu.reserve(16 * MIB, 0, None, 0).unwrap();
                    resvs.push(Resv {
                        addr,
                        slots: Default::default(),
                    });
                } else {
                    let r = rng.below(resvs.len());
                    if resvs[r].slots.iter().any(Option::is_some) {
                        assert_eq!(emu.release(resvs[r].addr), Err(AclError::RT_PARAM_INVALID));
                        tally.refused_releases += 1;
                    } else {
                        emu.release(resvs.swap_remove(r).addr).unwrap();
                    }
                }
            }
            4 | 5 => {
                let live: Vec<usize> = (0..handles.len())
                    .filter(|&i| handles[i].is_some())
                    .collect();
                if resvs.is_empty() || live.is_empty() {
                    continue;
                }
                let i = live[rng.below(live.len())];
                let (h, size) = handles[i].unwrap();
                let r = rng.below(resvs.len());
                let s = rng.below(4);
                let addr = resvs[r].addr.checked_add(s * 4 * MIB).unwrap();
                let free_slot = resvs[r].slots[s].is_none();
                match emu.map(addr, size, 0, h, 0) {
                    Ok(()) => {
                        assert!(free_slot, "mapped over a live mapping");
                        tag += 1;
                        emu.write(addr.get() + size - 8, &tag.to_le_bytes())
                            .unwrap();
                        latest[i] = tag;
                        resvs[r].slots[s] = Some(Mapped {
                            addr,
                            handle: i,
                            size,
                        });
                        tally.maps += 1;
                    }
                    Err(e) => {
                        assert!(!free_slot, "refused a free slot: {e}");
                        assert_eq!(e, AclError::RT_PARAM_INVALID);
                    }
                }
            }
            _ => {
                let mapped: Vec<(usize, usize)> = resvs
                    .iter()
                    .enumerate()
                    .flat_map(|(r, v)| {
                        (0..4)
                            .filter(|&s| v.slots[s].is_some())
                            .map(move |s| (r, s))
                    })
                    .collect();
                if mapped.is_empty() {
                    continue;
                }
                let (r, s) = mapped[rng.below(mapped.len())];
                let m = resvs[r].slots[s].take().unwrap();
                // The latest tag written to this memory, through whichever
                // mapping, is what this mapping reads.
                let mut buf = [0u8; 8];
                emu.read(m.addr.get() + m.size - 8, &mut buf).unwrap();
                assert_eq!(u64::from_le_bytes(buf), latest[m.handle]);
                emu.unmap(m.addr).unwrap();
                tally.unmaps += 1;
            }
        }
    }
    // Clean up everything this thread holds.
    for r in resvs {
        for m in r.slots.into_iter().flatten() {
            emu.unmap(m.addr).unwrap();
            tally.unmaps += 1;
        }
        emu.release(r.addr).unwrap();
    }
    for (h, _) in handles.into_iter().flatten() {
        emu.free_physical(h).unwrap();
        tally.frees += 1;
    }
    tally
}

#[test]
fn eight_threads_ten_thousand_operations_each() {
    let emu = Arc::new(Emulator::preset(Product::AtlasA2));
    let workers: Vec<_> = (0..THREADS)
        .map(|id| {
            let emu = Arc::clone(&emu);
            thread::spawn(move || worker(&emu, id))
        })
        .collect();
    let tallies: Vec<Tally> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let mallocs: u64 = tallies.iter().map(|t| t.mallocs).sum();
    let frees: u64 = tallies.iter().map(|t| t.frees).sum();
    let maps: u64 = tallies.iter().map(|t| t.maps).sum();
    let unmaps: u64 = tallies.iter().map(|t| t.unmaps).sum();
    assert_eq!(mallocs, frees, "every handle freed exactly once");
    assert_eq!(maps, unmaps, "every mapping unmapped exactly once");
    assert!(
        mallocs > 1000 && maps > 1000,
        "the mix exercised the API ({mallocs} mallocs, {maps} maps)"
    );
    assert!(tallies.iter().map(|t| t.refused_releases).sum::<u64>() > 0);

    let stats = emu.stats();
    assert_eq!(stats.live_handles, 0);
    assert_eq!(stats.live_allocations, 0);
    assert_eq!(stats.reservations, 0);
    assert_eq!(stats.mappings, 0);
    assert!(stats.device.iter().all(|d| d.used == 0));
    assert_eq!(stats.calls[&Op::Malloc], mallocs);
    assert!(emu.leak_report().is_empty(), "{}", emu.leak_report());
}

/// 8 threads share one table of handles and race to free, map and unmap
/// them: each handle is freed successfully exactly once (every other
/// attempt answers 107017), a mapping keeps freed memory alive until it
/// goes, and at the end nothing is left.
#[test]
fn eight_threads_racing_on_shared_handles() {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};

    let emu = Arc::new(Emulator::preset(Product::AtlasA2));
    /// Every handle made, with how many frees of it succeeded.
    type Table = Mutex<Vec<(RawHandle, Arc<AtomicU32>)>>;
    let table: Arc<Table> = Arc::new(Mutex::new(Vec::new()));
    let prop = RawPhysicalMemProp::new_checked(
        Product::AtlasA2,
        RunMode::Ep,
        aclmem_core::CannVersion::V9_0,
        Location::Device,
        0,
        MemAttr::HbmMemHuge,
    )
    .expect("allowed on A2")
    .0;
    let workers: Vec<_> = (0..THREADS)
        .map(|id| {
            let emu = Arc::clone(&emu);
            let table = Arc::clone(&table);
            thread::spawn(move || {
                let mut rng = Rng(0x51ed_270b_9a3c_e1d7 ^ (id as u64 + 1));
                let resv = emu.reserve(2 * MIB, 0, None, 0).unwrap();
                let mut stale = 0u64;
                for _ in 0..3000 {
                    let pick = {
                        let t = table.lock().unwrap();
                        (!t.is_empty()).then(|| t[rng.below(t.len())].clone())
                    };
                    match (rng.below(3), pick) {
                        (0, _) | (_, None) => {
                            let h = emu.malloc_physical(2 * MIB, &prop, 0).unwrap();
                            table.lock().unwrap().push((h, Arc::new(AtomicU32::new(0))));
                        }
                        (1, Some((h, frees))) => match emu.free_physical(h) {
                            Ok(()) => {
                                frees.fetch_add(1, Ordering::AcqRel);
                            }
                            Err(e) => {
                                assert_eq!(e, AclError::RT_INVALID_HANDLE);
                                stale += 1;
                            }
                        },
                        (_, Some((h, _))) => match emu.map(resv, 2 * MIB, 0, h, 0) {
                            Ok(()) => {
                                emu.write(resv.get(), &[id as u8; 64]).unwrap();
                                let mut back = [0u8; 64];
                                emu.read(resv.get(), &mut back).unwrap();
                                // Other threads may map the same handle
                                // at once (mappings alias): any thread's
                                // bytes, nothing else.
                                assert!(back.iter().all(|&b| (b as usize) < THREADS));
                                emu.unmap(resv).unwrap();
                            }
                            Err(e) => assert_eq!(e, AclError::RT_INVALID_HANDLE),
                        },
                    }
                }
                emu.release(resv).unwrap();
                stale
            })
        })
        .collect();
    let stale: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    let table = table.lock().unwrap();
    for (h, frees) in table.iter() {
        match frees.load(Ordering::Acquire) {
            0 => emu.free_physical(*h).unwrap(),
            1 => assert_eq!(emu.free_physical(*h), Err(AclError::RT_INVALID_HANDLE)),
            n => panic!("handle {h:?} freed {n} times"),
        }
    }
    assert!(stale > 0, "the threads raced on frees");
    let stats = emu.stats();
    assert_eq!(
        (stats.live_handles, stats.mappings, stats.reservations),
        (0, 0, 0)
    );
    assert!(stats.device.iter().all(|d| d.used == 0));
    assert!(emu.leak_report().is_empty(), "{}", emu.leak_report());
}

/// A wrong-object race, checked for 10 s: one thread exports the handle
/// value the other last published while that thread frees it and mallocs
/// again (so handle slots are reused at once). An export of a value that
/// was freed must be an error code; every export that succeeds must be of
/// the allocation the value named, which a second process checks by
/// importing it and reading the marker written into that allocation only.
#[test]
fn exports_racing_frees_never_export_another_allocation() {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use aclmem_hal::{EXPORT_FLAG_DISABLE_PID_VALIDATION, ShareableMemory};

    const SIZE: usize = 2 * MIB;
    let owner = Emulator::preset(Product::AtlasA2);
    let checker = owner.spawn_process().unwrap();
    let prop = RawPhysicalMemProp::new_checked(
        Product::AtlasA2,
        RunMode::Ep,
        aclmem_core::CannVersion::V9_0,
        Location::Device,
        0,
        MemAttr::HbmMemHuge,
    )
    .unwrap()
    .0;
    // The last published (handle value, marker).
    let published = Mutex::new((0u64, 0u64));
    let stop = AtomicBool::new(false);
    let (exported, verified, refused) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(10);
    thread::scope(|s| {
        // The owner: malloc, write a fresh marker, publish, free; repeat.
        s.spawn(|| {
            let va = owner.reserve(SIZE, 0, None, 0).unwrap();
            let mut marker = 0u64;
            while Instant::now() < deadline {
                marker += 1;
                let h = owner.malloc_physical(SIZE, &prop, 0).unwrap();
                owner.map(va, SIZE, 0, h, 0).unwrap();
                owner.write(va.get(), &marker.to_le_bytes()).unwrap();
                owner.unmap(va).unwrap();
                *published.lock().unwrap() = (h.0.get(), marker);
                thread::yield_now();
                owner.free_physical(h).unwrap();
            }
            stop.store(true, Ordering::Release);
            owner.release(va).unwrap();
        });
        // The exporter: exports whatever value was published last.
        s.spawn(|| {
            let va = checker.reserve(SIZE, 0, None, 0).unwrap();
            while !stop.load(Ordering::Acquire) {
                let (raw, marker) = *published.lock().unwrap();
                let Some(raw) = std::num::NonZeroU64::new(raw) else {
                    continue;
                };
                let shareable =
                    match owner.export(RawHandle(raw), EXPORT_FLAG_DISABLE_PID_VALIDATION) {
                        Ok(s) => s,
                        Err(e) => {
                            assert!(
                                e == aclmem_emu::errors::Situation::StaleHandle.code()
                                    || e == AclError::RT_PARAM_INVALID,
                                "an export of a freed handle answers a handle error, not {e:?}"
                            );
                            refused.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                    };
                exported.fetch_add(1, Ordering::Relaxed);
                // The owner may have freed it since: then the import is
                // refused (the memory went), never the wrong bytes.
                let Ok(imported) = checker.import(shareable, 0) else {
                    continue;
                };
                checker.map(va, SIZE, 0, imported, 0).unwrap();
                let mut seen = [0u8; 8];
                checker.read(va.get(), &mut seen).unwrap();
                assert_eq!(
                    u64::from_le_bytes(seen),
                    marker,
                    "export of {raw:#x} reached another allocation"
                );
                verified.fetch_add(1, Ordering::Relaxed);
                checker.unmap(va).unwrap();
                checker.free_physical(imported).unwrap();
            }
            checker.release(va).unwrap();
        });
    });
    let (exported, verified, refused) = (
        exported.into_inner(),
        verified.into_inner(),
        refused.into_inner(),
    );
    eprintln!("{exported} exports ({verified} imported and checked), {refused} refused");
    assert!(verified > 0 && refused > 0, "the race was not exercised");
    assert!(owner.leak_report().is_empty(), "{}", owner.leak_report());
    assert!(
        checker.leak_report().is_empty(),
        "{}",
        checker.leak_report()
    );
}
