//! The conformance suite on all three backends:
//!
//! * the in-process emulator (`aclmem-emu`),
//! * the real driver (`aclmem-driver`) loading the emulator's C library
//!   (`aclmem-emu-capi`, built as `libascendcl.so`) through dlopen,
//! * the RC stub, which must fail every scenario with 207000.
//!
//! The driver and the in-process emulator must produce identical
//! transcripts: the same code at every step.
//!
//! The C library keeps process-wide state (as the real runtime does) and is
//! configured through its environment at `aclInit`, so everything that goes
//! through it runs inside one test, one scenario after another.

use aclmem_core::{AclError, MemAttr, RunMode};
use aclmem_driver::{AscendCl, Driver};
use aclmem_emu::{EmuConfig, Emulator};
use aclmem_rc_stub::RcStub;
use aclmem_tests::{HostAccess, Machine, Transcript, scenarios};

struct EmuHost<'a>(&'a Emulator);

impl HostAccess for EmuHost<'_> {
    fn poke(&self, addr: usize, data: &[u8]) -> Result<(), AclError> {
        self.0.write(addr, data)
    }
    fn peek(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError> {
        self.0.read(addr, buf)
    }
    fn mem_info(&self, attr: MemAttr) -> Result<(usize, usize), AclError> {
        self.0.mem_info(attr, 0)
    }
}

fn emulator(m: &Machine) -> Emulator {
    let mut config = EmuConfig::from_soc(m.soc).expect("known SoC");
    config.devices = m.devices;
    config.device_memory = m.hbm;
    config.run_mode = m.run_mode;
    config.cann = m.cann;
    let emu = Emulator::new(config).expect("valid machine");
    // The driver sets its device on the thread it calls from; so does the
    // in-process emulator's (streams and pools are the thread's device's).
    emu.set_device(0).expect("device 0");
    emu
}

fn run_on_emulator() -> Vec<(&'static str, Result<Transcript, AclError>)> {
    scenarios::<Emulator>()
        .into_iter()
        .map(|s| {
            let emu = emulator(&s.machine);
            let mut t = Transcript::default();
            let r = (s.run)(&emu, &EmuHost(&emu), &mut t).map(|()| t);
            assert!(
                emu.leak_report().is_empty(),
                "{}: {}",
                s.name,
                emu.leak_report()
            );
            (s.name, r)
        })
        .collect()
}

/// Host access to memory the emulated C library mapped in this process.
struct DriverHost<'a>(&'a Driver);

impl HostAccess for DriverHost<'_> {
    fn poke(&self, addr: usize, data: &[u8]) -> Result<(), AclError> {
        // SAFETY: the scenarios poke only inside ranges they have just
        // mapped with success; the library behind the driver is the
        // emulator, which maps real read-write memory (a memfd) there, in
        // this process.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
        Ok(())
    }
    fn peek(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError> {
        // SAFETY: as for `poke`.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }
    fn mem_info(&self, attr: MemAttr) -> Result<(usize, usize), AclError> {
        self.0.mem_info(attr)
    }
}

/// The emulated `libascendcl.so`: `$ACLMEM_ASCENDCL` when set (cargo xtask
/// sets it), else next to the test binary's target directory.
fn library() -> std::sync::Arc<AscendCl> {
    if std::env::var_os(aclmem_driver::ENV_OVERRIDE).is_some() {
        return AscendCl::load(None).unwrap_or_else(|e| panic!("{e}"));
    }
    let path = aclmem_tests::emulated_library_in_target_dir();
    AscendCl::load(Some(&path)).unwrap_or_else(|e| panic!("{e}"))
}

fn configure(m: &Machine) {
    let mode = match m.run_mode {
        RunMode::Ep => "host",
        RunMode::Rc => "device",
    };
    let vars = [
        ("ACLMEM_EMU_SOC", m.soc.to_string()),
        ("ACLMEM_EMU_DEVICES", m.devices.to_string()),
        ("ACLMEM_EMU_HBM", m.hbm.to_string()),
        ("ACLMEM_EMU_RUN_MODE", mode.to_string()),
        ("ACLMEM_EMU_CANN", m.cann.id().to_string()),
        // A machine of this test's own; the deliberate configuration error
        // below is not printed.
        (
            "ACLMEM_EMU_MACHINE",
            format!("conformance-{}", std::process::id()),
        ),
        ("ACLMEM_EMU_QUIET", "1".to_string()),
    ];
    for (k, v) in vars {
        // SAFETY: this test binary runs a single test (this one) that owns
        // the environment: no other thread reads or writes it meanwhile.
        unsafe { std::env::set_var(k, v) };
    }
}

#[test]
fn all_backends_agree() {
    // 1. The in-process emulator passes every scenario.
    let emu = run_on_emulator();
    for (name, r) in &emu {
        assert!(r.is_ok(), "emulator failed `{name}`: {r:?}");
    }

    // 2. The driver over the emulated C library gives the same transcript.
    let cl = library();
    let driver_scenarios = scenarios::<Driver>();
    assert_eq!(driver_scenarios.len(), emu.len());
    for (s, (name, expected)) in driver_scenarios.into_iter().zip(&emu) {
        assert_eq!(s.name, *name);
        configure(&s.machine);
        let runtime = cl.init().expect("aclInit");
        let driver = runtime.device(0).expect("device 0");
        let mut t = Transcript::default();
        let got = (s.run)(&driver, &DriverHost(&driver), &mut t).map(|()| t);
        if std::env::var_os("ACLMEM_SHOW_TRANSCRIPTS").is_some() {
            eprintln!("== {name}\n{:#?}", got);
        }
        assert_eq!(&got, expected, "driver and emulator differ in `{name}`");
        drop(driver);
        drop(runtime); // aclFinalize: the next scenario gets a fresh machine
    }

    // 3. The RC stub fails every scenario with 207000.
    for s in scenarios::<RcStub>() {
        let mut t = Transcript::default();
        let r = (s.run)(&RcStub, &NoHost, &mut t);
        assert_eq!(
            r,
            Err(AclError::RT_FEATURE_NOT_SUPPORT),
            "rc stub on `{}`",
            s.name
        );
    }

    driver_specifics(&cl);
}

struct NoHost;
impl HostAccess for NoHost {
    fn poke(&self, _: usize, _: &[u8]) -> Result<(), AclError> {
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    }
    fn peek(&self, _: usize, _: &mut [u8]) -> Result<(), AclError> {
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    }
    fn mem_info(&self, _: MemAttr) -> Result<(usize, usize), AclError> {
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    }
}

/// What only the driver has: platform detection, optional symbols, threads,
/// init ownership.
fn driver_specifics(cl: &std::sync::Arc<AscendCl>) {
    use aclmem_core::Product;
    use aclmem_hal::{DeviceInfo, PhysicalAllocator, VirtualMemory};

    configure(&Machine::A2);
    let runtime = cl.init().unwrap();
    assert_eq!(runtime.soc_name().unwrap(), "Ascend910B3");
    assert_eq!(runtime.platform().unwrap(), (Product::AtlasA2, RunMode::Ep));
    assert_eq!(runtime.device_count().unwrap(), 8);
    assert_eq!(
        runtime.device(8).unwrap_err(),
        AclError::RT_INVALID_DEVICEID
    );

    // A second init is "repeat initialize": used, but not finalized by it.
    let again = cl.init().unwrap();
    drop(again);
    assert_eq!(
        runtime.device_count().unwrap(),
        8,
        "the first handle still owns the runtime"
    );

    // The emulated library has every function of the list, the optional
    // ones included; the pid to whitelist is the kernel's.
    let d3 = runtime.device(3).unwrap();
    for (name, _) in aclmem_driver::SYMBOLS {
        assert!(cl.has_symbol(name), "{name}");
    }
    assert_eq!(d3.bare_tgid(), Ok(std::process::id() as i32));
    assert_eq!(d3.current_device(), Ok(3));
    assert_eq!(runtime.acl_version(), Ok((1, 17, 0)));
    let cann = runtime.cann().unwrap();
    assert_eq!(
        (cann.release.as_str(), cann.rules),
        ("9.0.0", Some(aclmem_core::CannVersion::V9_0))
    );

    // aclrtSetDevice is per thread: a fresh thread has no device, so a raw
    // memory call from it fails with 107002 (an address reservation does
    // not need one: it is the process's) ...
    let (raw_reserve, raw_malloc) = std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: the documented prototypes of aclrtReserveMemAddress,
            // aclrtReleaseMemAddress and aclrtMalloc, called with live out
            // pointers; the pointers are not kept.
            unsafe {
                let lib = libloading::Library::new(cl.path()).unwrap();
                let reserve = *lib
                    .get::<aclmem_driver::sys::aclrtReserveMemAddress_t>(
                        b"aclrtReserveMemAddress\0",
                    )
                    .unwrap();
                let release = *lib
                    .get::<aclmem_driver::sys::aclrtReleaseMemAddress_t>(
                        b"aclrtReleaseMemAddress\0",
                    )
                    .unwrap();
                let malloc = *lib
                    .get::<aclmem_driver::sys::aclrtMalloc_t>(b"aclrtMalloc\0")
                    .unwrap();
                let mut p = std::ptr::null_mut();
                let reserved = reserve(&mut p, 512, 0, std::ptr::null_mut(), 1);
                let released = release(p);
                let mut q = std::ptr::null_mut();
                ((reserved, released), malloc(&mut q, 2 << 20, 0))
            }
        })
        .join()
        .unwrap()
    });
    assert_eq!(raw_reserve, (0, 0));
    assert_eq!(raw_malloc, AclError::RT_CONTEXT_NULL.code());
    // ... while the driver, used from another thread, sets its device there.
    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(d3.current_device(), Ok(3));
            let prop = aclmem_core::RawPhysicalMemProp::new_checked(
                Product::AtlasA2,
                RunMode::Ep,
                aclmem_core::CannVersion::V9_0,
                aclmem_core::Location::Device,
                3,
                MemAttr::HbmMemHuge,
            )
            .unwrap()
            .0;
            let h = d3.malloc_physical(2 << 20, &prop, 0).unwrap();
            let va = d3.reserve(2 << 20, 0, None, 0).unwrap();
            d3.map(va, 2 << 20, 0, h, 0).unwrap();
            d3.unmap(va).unwrap();
            d3.release(va).unwrap();
            d3.free_physical(h).unwrap();
            d3.release_thread().unwrap();
        })
        .join()
        .unwrap();
    });
    assert_eq!(d3.platform().unwrap().0, Product::AtlasA2);
    drop(d3);
    drop(runtime);

    // Product detection feeds the typed API.
    configure(&Machine {
        soc: "Ascend910_9392",
        ..Machine::A2
    });
    let runtime = cl.init().unwrap();
    let (product, run_mode) = runtime.platform().unwrap();
    assert_eq!((product, run_mode), (Product::AtlasA3, RunMode::Ep));
    drop(runtime);

    // A bad configuration makes aclInit fail with 100000.
    configure(&Machine {
        soc: "Ascend999",
        ..Machine::A2
    });
    assert_eq!(cl.init().unwrap_err(), AclError::INVALID_PARAM);
    configure(&Machine::A2);
}
