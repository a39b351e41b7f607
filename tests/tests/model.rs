//! A model of the documented semantics, and the backends checked against
//! it: random sequences of malloc / free / reserve / release / map / unmap
//! on a two-device A2 with 16 MiB per device, run on the in-process
//! emulator and on the driver over the emulated C library. Every step's
//! outcome (success or code) and the free memory after it must be what the
//! model says, so the two backends' transcripts are identical. After each
//! sequence everything is torn down and all memory must be free again.
//!
//! `ACLMEM_MODEL_CASES` sets the number of sequences per backend (default
//! 256; `cargo xtask model` runs the long mode, 10,000).

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use aclmem_core::{AclError, Location, MIB, MemAttr, Product, RawMemLocation, RawPhysicalMemProp};
use aclmem_driver::{AscendCl, Driver};
use aclmem_emu::{EmuConfig, Emulator};
use aclmem_hal::{PhysicalAllocator, RawHandle, VirtAddr, VirtualMemory};
use aclmem_tests::emulated_library_in_target_dir;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const DEVICE_MEMORY: usize = 16 * MIB;
const DEVICES: u32 = 2;
const INVALID_VALUE: AclError = AclError::RT_PARAM_INVALID;
const INVALID_HANDLE: AclError = AclError::RT_INVALID_HANDLE;

#[derive(Debug, Clone)]
enum Op {
    /// `class` 0..3: 2, 4, 6 MiB; 3: 3 MiB (not a granularity multiple).
    /// Device 2 does not exist.
    Malloc {
        class: u8,
        device: u32,
    },
    Free {
        handle: usize,
    },
    Reserve {
        mib: usize,
    },
    Release {
        resv: usize,
    },
    ReleaseTwice {
        resv: usize,
    },
    Map {
        resv: usize,
        slot: usize,
        handle: usize,
    },
    Unmap {
        resv: usize,
        slot: usize,
    },
    MemInfo,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..4, 0u32..3).prop_map(|(class, device)| Op::Malloc { class, device }),
        2 => any::<usize>().prop_map(|handle| Op::Free { handle }),
        2 => prop_oneof![Just(4usize), Just(8), Just(12)].prop_map(|mib| Op::Reserve { mib }),
        1 => any::<usize>().prop_map(|resv| Op::Release { resv }),
        1 => any::<usize>().prop_map(|resv| Op::ReleaseTwice { resv }),
        4 => (any::<usize>(), 0usize..6, any::<usize>())
            .prop_map(|(resv, slot, handle)| Op::Map { resv, slot, handle }),
        2 => (any::<usize>(), 0usize..6).prop_map(|(resv, slot)| Op::Unmap { resv, slot }),
        1 => Just(Op::MemInfo),
    ]
}

/// The model's state, and the backend's values for its objects.
#[derive(Default)]
struct Model {
    /// Every handle ever made: (backend value, size, device, live, mappings).
    handles: Vec<(RawHandle, usize, u32, bool, u32)>,
    /// Live reservations: (backend address, size). Addresses are real:
    /// an address past one reservation's end may lie in the next one.
    resvs: Vec<(VirtAddr, usize)>,
    /// Live mappings: address → (handle index, size).
    maps: BTreeMap<usize, (usize, usize)>,
    used: [usize; DEVICES as usize],
}

/// What a step did: the outcome, and the free memory of both devices when
/// the step asks for it.
type Step = Result<Option<[usize; 2]>, AclError>;

trait Backend: PhysicalAllocator<Error = AclError> + VirtualMemory<Error = AclError> {
    fn free_memory(&self, device: u32) -> usize;
}

impl Backend for Emulator {
    fn free_memory(&self, device: u32) -> usize {
        self.mem_info(MemAttr::HbmMem, device).expect("mem info").0
    }
}

struct Drivers(Vec<Driver>);

impl aclmem_hal::ErrorType for Drivers {
    type Error = AclError;
}
impl PhysicalAllocator for Drivers {
    fn granularity(
        &self,
        p: &RawPhysicalMemProp,
        o: aclmem_core::GranularityOption,
    ) -> Result<usize, AclError> {
        self.0[0].granularity(p, o)
    }
    fn malloc_physical(
        &self,
        size: usize,
        p: &RawPhysicalMemProp,
        f: u64,
    ) -> Result<RawHandle, AclError> {
        self.0[0].malloc_physical(size, p, f)
    }
    fn free_physical(&self, h: RawHandle) -> Result<(), AclError> {
        self.0[0].free_physical(h)
    }
}
impl VirtualMemory for Drivers {
    fn reserve(
        &self,
        s: usize,
        a: usize,
        e: Option<VirtAddr>,
        f: u64,
    ) -> Result<VirtAddr, AclError> {
        self.0[0].reserve(s, a, e, f)
    }
    fn release(&self, v: VirtAddr) -> Result<(), AclError> {
        self.0[0].release(v)
    }
    fn map(&self, v: VirtAddr, s: usize, o: usize, h: RawHandle, f: u64) -> Result<(), AclError> {
        self.0[0].map(v, s, o, h, f)
    }
    fn unmap(&self, v: VirtAddr) -> Result<(), AclError> {
        self.0[0].unmap(v)
    }
}
impl Backend for Drivers {
    fn free_memory(&self, device: u32) -> usize {
        self.0[device as usize]
            .mem_info(MemAttr::HbmMem)
            .expect("mem info")
            .0
    }
}

fn hbm(device: u32) -> RawPhysicalMemProp {
    RawPhysicalMemProp {
        mem_attr: MemAttr::HbmMemHuge.raw(),
        location: RawMemLocation {
            id: device,
            type_: Location::Device.raw(),
        },
        ..RawPhysicalMemProp::default()
    }
}

impl Model {
    /// The live reservation containing `addr`: (base, size).
    fn containing(&self, addr: usize) -> Option<(usize, usize)> {
        self.resvs
            .iter()
            .map(|(v, s)| (v.get(), *s))
            .find(|&(b, s)| addr >= b && addr < b + s)
    }

    fn free(&self) -> [usize; 2] {
        [DEVICE_MEMORY - self.used[0], DEVICE_MEMORY - self.used[1]]
    }

    /// Runs `op` on `b`, checking the outcome against the model; returns
    /// the step for the transcript.
    fn step(&mut self, b: &impl Backend, op: &Op) -> Result<Option<Step>, TestCaseError> {
        let step: Step = match *op {
            Op::Malloc { class, device } => {
                let size = [2, 4, 6, 3][class as usize] * MIB;
                let want = if device >= DEVICES {
                    Err(AclError::RT_INVALID_DEVICEID)
                } else if !size.is_multiple_of(2 * MIB) {
                    Err(INVALID_VALUE)
                } else if self.used[device as usize] + size > DEVICE_MEMORY {
                    Err(AclError::RT_MEMORY_ALLOCATION)
                } else {
                    Ok(())
                };
                let got = b.malloc_physical(size, &hbm(device), 0);
                prop_assert_eq!(got.map(drop), want, "{:?}", op);
                if let Ok(h) = got {
                    self.used[device as usize] += size;
                    self.handles.push((h, size, device, true, 0));
                }
                want.map(|()| None)
            }
            Op::Free { handle } => {
                if self.handles.is_empty() {
                    return Ok(None);
                }
                let i = handle % self.handles.len();
                let (h, size, device, live, maps) = self.handles[i];
                let want = if live { Ok(()) } else { Err(INVALID_HANDLE) };
                prop_assert_eq!(b.free_physical(h), want, "{:?}", op);
                if live {
                    self.handles[i].3 = false;
                    if maps == 0 {
                        self.used[device as usize] -= size;
                    }
                }
                want.map(|()| None)
            }
            Op::Reserve { mib } => {
                let v = b.reserve(mib * MIB, 0, None, 0);
                prop_assert!(v.is_ok(), "{:?}: {:?}", op, v);
                self.resvs.push((v.expect("checked"), mib * MIB));
                Ok(None)
            }
            Op::Release { resv } | Op::ReleaseTwice { resv } => {
                if self.resvs.is_empty() {
                    return Ok(None);
                }
                let i = resv % self.resvs.len();
                let (v, size) = self.resvs[i];
                let mapped = self.maps.range(v.get()..v.get() + size).next().is_some();
                let want = if mapped { Err(INVALID_VALUE) } else { Ok(()) };
                prop_assert_eq!(b.release(v), want, "{:?}", op);
                if want.is_ok() {
                    self.resvs.remove(i);
                    if matches!(op, Op::ReleaseTwice { .. }) {
                        prop_assert_eq!(b.release(v), Err(INVALID_VALUE), "{:?}", op);
                    }
                }
                want.map(|()| None)
            }
            Op::Map { resv, slot, handle } => {
                if self.resvs.is_empty() || self.handles.is_empty() {
                    return Ok(None);
                }
                let hi = handle % self.handles.len();
                let (h, size, device, live, _) = self.handles[hi];
                let addr = self.resvs[resv % self.resvs.len()].0.get() + slot * 2 * MIB;
                let want = if !live {
                    Err(INVALID_HANDLE)
                } else {
                    match self.containing(addr) {
                        None => Err(INVALID_VALUE),
                        Some((base, rsize)) => {
                            let inside = |a: usize| a >= base && a < base + rsize;
                            let in_resv: Vec<_> =
                                self.maps.iter().filter(|(a, _)| inside(**a)).collect();
                            let mixed = in_resv
                                .iter()
                                .any(|(_, (o, _))| self.handles[*o].2 != device);
                            let overlaps = self
                                .maps
                                .iter()
                                .any(|(&a, &(_, s))| a < addr + size && addr < a + s);
                            if addr + size > base + rsize || mixed || overlaps {
                                Err(INVALID_VALUE)
                            } else {
                                Ok(())
                            }
                        }
                    }
                };
                let v = VirtAddr(NonZeroUsize::new(addr).expect("non-zero"));
                prop_assert_eq!(b.map(v, size, 0, h, 0), want, "{:?}", op);
                if want.is_ok() {
                    self.maps.insert(addr, (hi, size));
                    self.handles[hi].4 += 1;
                }
                want.map(|()| None)
            }
            Op::Unmap { resv, slot } => {
                if self.resvs.is_empty() {
                    return Ok(None);
                }
                let addr = self.resvs[resv % self.resvs.len()].0.get() + slot * 2 * MIB;
                let want = match self.maps.remove(&addr) {
                    Some((hi, _)) => {
                        let (_, size, device, live, _) = self.handles[hi];
                        self.handles[hi].4 -= 1;
                        if !live && self.handles[hi].4 == 0 {
                            self.used[device as usize] -= size;
                        }
                        Ok(())
                    }
                    None => Err(INVALID_VALUE),
                };
                let v = VirtAddr(NonZeroUsize::new(addr).expect("non-zero"));
                prop_assert_eq!(b.unmap(v), want, "{:?}", op);
                want.map(|()| None)
            }
            Op::MemInfo => {
                let got = [b.free_memory(0), b.free_memory(1)];
                prop_assert_eq!(got, self.free(), "{:?}", op);
                Ok(Some(got))
            }
        };
        Ok(Some(step))
    }

    /// Tears everything down (all of it, whatever fails); then all memory
    /// must be free again.
    fn teardown(&mut self, b: &impl Backend) -> Result<(), TestCaseError> {
        let mut failed = Vec::new();
        for (addr, _) in std::mem::take(&mut self.maps) {
            let v = VirtAddr(NonZeroUsize::new(addr).expect("non-zero"));
            if let Err(e) = b.unmap(v) {
                failed.push(format!("unmap: {e}"));
            }
        }
        for (v, _) in self.resvs.drain(..) {
            if let Err(e) = b.release(v) {
                failed.push(format!("release: {e}"));
            }
        }
        for &(h, _, _, live, _) in &self.handles {
            if live && let Err(e) = b.free_physical(h) {
                failed.push(format!("free: {e}"));
            }
        }
        prop_assert!(failed.is_empty(), "teardown failed: {:?}", failed);
        prop_assert_eq!(
            [b.free_memory(0), b.free_memory(1)],
            [DEVICE_MEMORY, DEVICE_MEMORY],
            "memory left in use after teardown"
        );
        Ok(())
    }
}

fn cases() -> u32 {
    std::env::var("ACLMEM_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// Runs the model on a fresh backend from `make` per sequence; returns
/// every sequence's transcript.
fn check<B: Backend>(make: impl Fn() -> B, name: &str) -> Vec<Vec<Step>> {
    // The same deterministic generator for every backend: the same
    // sequences, comparable transcripts.
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let transcripts = std::cell::RefCell::new(Vec::new());
    let result = runner.run(&proptest::collection::vec(op(), 1..60), |ops| {
        let backend = make();
        let b = &backend;
        let mut m = Model::default();
        let mut transcript = Vec::new();
        let mut outcome = Ok(());
        for op in &ops {
            match m.step(b, op) {
                Ok(Some(step)) => transcript.push(step),
                Ok(None) => {}
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        // Always tear down, so a failing case leaves nothing behind for the
        // next (shrinking reruns on the same backend).
        let torn = m.teardown(b);
        outcome?;
        torn?;
        transcripts.borrow_mut().push(transcript);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name} departs from the model: {e}");
    }
    eprintln!("{name}: {} sequences agree with the model", cases());
    transcripts.into_inner()
}

#[test]
fn the_emulator_and_the_driver_follow_the_model() {
    let mut config = EmuConfig::preset(Product::AtlasA2);
    config.devices = DEVICES;
    config.device_memory = DEVICE_MEMORY;
    let from_emulator = check(
        || Emulator::new(config.clone()).expect("emulator"),
        "in-process emulator",
    );

    // SAFETY: set before the library is loaded; this test binary's only test.
    unsafe {
        std::env::set_var(
            "ACLMEM_EMU_MACHINE",
            format!("model-{}", std::process::id()),
        );
        std::env::set_var("ACLMEM_EMU_DEVICES", DEVICES.to_string());
        std::env::set_var("ACLMEM_EMU_HBM", format!("{}", DEVICE_MEMORY));
        std::env::set_var("ACLMEM_EMU_QUIET", "1");
    }
    let lib = std::env::var_os("ACLMEM_ASCENDCL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(emulated_library_in_target_dir);
    let cl = AscendCl::load(Some(&lib)).expect("the emulated library loads");
    let from_driver = check(
        || {
            // A new runtime per sequence: the previous one's drop finalised.
            let rt = cl.init().expect("aclInit");
            Drivers(
                (0..DEVICES)
                    .map(|d| rt.device(d).expect("device"))
                    .collect(),
            )
        },
        "driver over the C library",
    );
    assert_eq!(from_emulator.len(), from_driver.len());
    assert!(
        from_emulator == from_driver,
        "the two backends' transcripts differ"
    );
}
