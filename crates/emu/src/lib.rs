//! An emulated Ascend machine behind the `aclmem-hal` traits.
//!
//! The emulator behaves like the runtime for the physical-memory API: the
//! core rules table decides what each product accepts (RC form and
//! unsupported products answer 207000), granularity, flags and prop checks
//! answer 100000, capacity is accounted per device, 1 GiB page pool and host,
//! with 207001 on exhaustion, HBM requests on products without HBM are
//! served from DDR, freeing a mapped handle is deferred until it is
//! unmapped, and releasing a mapped range is refused.
//!
//! The memory is real. Each physical handle is a `memfd`; each reservation a
//! `PROT_NONE` placeholder; mapping places the memfd there with
//! `MAP_FIXED | MAP_SHARED`, so two mappings of one handle alias: bytes
//! written through one are read through the other.
//!
//! Handles are generation-tagged (a stale, double-freed or forged handle is
//! an error code, never undefined behaviour), the emulator is `Sync`, faults
//! can be injected, and [`Emulator::leak_report`] lists what a process still
//! holds.
//!
//! ```
//! use aclmem_core::{AtlasA2, Device, HbmHuge, PhysicalMemProp, AlignedSize, Product, MIB};
//! use aclmem_emu::Emulator;
//! use aclmem_hal::Session;
//!
//! let emu = Emulator::preset(Product::AtlasA2);
//! let session = Session::<_, AtlasA2>::new(&emu).unwrap();
//! let mem = session
//!     .malloc(PhysicalMemProp::<AtlasA2, Device, HbmHuge>::on_device(0), AlignedSize::new::<{ 2 * MIB }>())
//!     .unwrap();
//! let va = session.reserve(4 * MIB).unwrap();
//! let a = va.map(0, &mem).unwrap();
//! let b = va.map(2 * MIB, &mem).unwrap();
//! emu.write(a.addr().get(), b"hello").unwrap();
//! let mut buf = [0u8; 5];
//! emu.read(b.addr().get(), &mut buf).unwrap();
//! assert_eq!(&buf, b"hello");
//! ```

#![warn(missing_docs)]
#![deny(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::num::{NonZeroU64, NonZeroUsize};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use aclmem_core::{
    AclError, GranularityOption, Location, MemAttr, Product, RawPhysicalMemProp, RunMode,
};
use aclmem_hal::{
    DeviceInfo, ErrorType, PhysicalAllocator, RawHandle, ShareableHandle, ShareableMemory,
    VirtAddr, VirtualMemory,
};

mod config;
mod machine;
#[allow(unsafe_code)]
mod sys;

pub use config::{EmuConfig, ParseSizeError, parse_size, preset_soc};

use machine::{Machine, State};

/// An operation of the API, for fault injection and call counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// `aclrtMemGetAllocationGranularity`.
    Granularity,
    /// `aclrtMallocPhysical`.
    Malloc,
    /// `aclrtFreePhysical`.
    Free,
    /// `aclrtReserveMemAddress`.
    Reserve,
    /// `aclrtReleaseMemAddress`.
    Release,
    /// `aclrtMapMem`.
    Map,
    /// `aclrtUnmapMem`.
    Unmap,
    /// `aclrtMemExportToShareableHandle`.
    Export,
    /// `aclrtMemSetPidToShareableHandle`.
    SetPids,
    /// `aclrtMemImportFromShareableHandle`.
    Import,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 10] = [
        Op::Granularity,
        Op::Malloc,
        Op::Free,
        Op::Reserve,
        Op::Release,
        Op::Map,
        Op::Unmap,
        Op::Export,
        Op::SetPids,
        Op::Import,
    ];
}

/// A capacity pool of the emulated machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolId {
    /// Device memory of one device.
    Device(u32),
    /// The pre-allocated 1 GiB page pool of one device.
    Huge1G(u32),
    /// Host DDR (plain and NUMA).
    Host,
    /// The platform's limit on host-NUMA P2P memory (A3 super-nodes).
    HostNumaP2p,
}

/// What kind of memory serves an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemKind {
    /// High-bandwidth memory on the device.
    Hbm,
    /// DDR (host memory, or device memory on products without HBM).
    Ddr,
}

/// Use of one pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes the pool holds.
    pub capacity: usize,
    /// Bytes allocated.
    pub used: usize,
    /// What memory the pool is.
    pub kind: MemKind,
}

/// A snapshot of the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Device memory per device.
    pub device: Vec<PoolStats>,
    /// 1 GiB page pool per device.
    pub huge1g: Vec<PoolStats>,
    /// Host DDR.
    pub host: PoolStats,
    /// Physical allocations alive (held by a handle or a mapping).
    pub live_allocations: usize,
    /// Handles alive, in every process.
    pub live_handles: usize,
    /// Reservations alive, in every process.
    pub reservations: usize,
    /// Mappings alive, in every process.
    pub mappings: usize,
    /// Shareable handles that can still be imported.
    pub shareable_handles: usize,
    /// Calls per operation.
    pub calls: BTreeMap<Op, u64>,
}

/// A handle a process still holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeakedHandle {
    /// The raw handle.
    pub handle: u64,
    /// Its size.
    pub size: usize,
    /// Where its memory lives.
    pub location: Location,
    /// Device id or NUMA node.
    pub location_id: u32,
    /// Its attribute.
    pub attr: MemAttr,
    /// What memory serves it.
    pub kind: MemKind,
    /// Whether it was imported.
    pub imported: bool,
}

/// A reservation or mapping a process still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeakedRange {
    /// First address.
    pub addr: usize,
    /// Size in bytes.
    pub size: usize,
}

/// What a process still holds: at the end of a correct program, nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeakReport {
    /// Live handles.
    pub handles: Vec<LeakedHandle>,
    /// Live reservations.
    pub reservations: Vec<LeakedRange>,
    /// Live mappings.
    pub mappings: Vec<LeakedRange>,
}

impl LeakReport {
    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty() && self.reservations.is_empty() && self.mappings.is_empty()
    }
}

impl fmt::Display for LeakReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("no leaks");
        }
        writeln!(
            f,
            "{} handle(s), {} reservation(s), {} mapping(s) still live:",
            self.handles.len(),
            self.reservations.len(),
            self.mappings.len()
        )?;
        for h in &self.handles {
            writeln!(
                f,
                "  handle {:#x}: {} bytes of {} at {} {}{}",
                h.handle,
                h.size,
                h.attr,
                h.location,
                h.location_id,
                if h.imported { " (imported)" } else { "" }
            )?;
        }
        for r in &self.reservations {
            writeln!(f, "  reservation {:#x}: {} bytes", r.addr, r.size)?;
        }
        for m in &self.mappings {
            writeln!(f, "  mapping {:#x}: {} bytes", m.addr, m.size)?;
        }
        Ok(())
    }
}

struct Shared {
    machine: Machine,
    state: Mutex<State>,
    next_pid: AtomicI32,
}

/// One process on an emulated machine. Implements every `aclmem-hal`
/// trait; `Send + Sync`.
///
/// [`Emulator::spawn_process`] adds another process on the same machine
/// (shared capacity, shareable handles), so export/import can be exercised:
/// as on the real runtime, a process cannot import what it exported itself.
/// Dropping a process tears down what it still holds, as process exit does.
pub struct Emulator {
    shared: Arc<Shared>,
    pid: i32,
}

impl fmt::Debug for Emulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Emulator")
            .field("soc_name", &self.shared.machine.config.soc_name)
            .field("product", &self.shared.machine.product)
            .field("run_mode", &self.shared.machine.config.run_mode)
            .field("pid", &self.pid)
            .finish()
    }
}

impl Emulator {
    /// A machine built from `config`. An unknown SoC name or zero devices is
    /// `ACL_ERROR_INVALID_PARAM`.
    pub fn new(config: EmuConfig) -> Result<Emulator, AclError> {
        let product = config.product()?;
        if config.devices == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let state = State::new(&config);
        let pid = rustix::process::getpid().as_raw_nonzero().get();
        Ok(Emulator {
            shared: Arc::new(Shared {
                machine: Machine { config, product },
                state: Mutex::new(state),
                next_pid: AtomicI32::new(pid.wrapping_add(1)),
            }),
            pid,
        })
    }

    /// The preset machine of `product`, in EP form.
    pub fn preset(product: Product) -> Emulator {
        Emulator::new(EmuConfig::preset(product)).expect("presets are valid")
    }

    /// The configuration.
    pub fn config(&self) -> &EmuConfig {
        &self.shared.machine.config
    }

    /// The emulated product.
    pub fn product(&self) -> Product {
        self.shared.machine.product
    }

    /// This process's pid (to whitelist with `set_pids`).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Another process on the same machine.
    pub fn spawn_process(&self) -> Emulator {
        Emulator {
            shared: Arc::clone(&self.shared),
            pid: self.shared.next_pid.fetch_add(1, Ordering::Relaxed),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state torn: every
        // mutation completes before any call that could panic.
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Makes the `nth` call of `op` from now (1 = the next one) fail with
    /// `code`, without side effects.
    pub fn inject_fault(&self, op: Op, nth: u64, code: AclError) {
        self.state().inject_fault(op, nth, code);
    }

    /// Caps a pool's capacity (what is already allocated stays).
    pub fn set_capacity(&self, pool: PoolId, bytes: usize) -> Result<(), AclError> {
        self.state().set_capacity(pool, bytes)
    }

    /// A snapshot of capacity use, live objects and call counts.
    pub fn stats(&self) -> Stats {
        self.state().stats(&self.shared.machine)
    }

    /// What this process still holds.
    pub fn leak_report(&self) -> LeakReport {
        self.state().leak_report(self.pid)
    }

    /// `aclrtGetMemInfo`: free and total bytes of the pool `attr` names, on
    /// `device` for HBM attributes (DDR on products without HBM).
    pub fn mem_info(&self, attr: MemAttr, device: u32) -> Result<(usize, usize), AclError> {
        self.state().mem_info(&self.shared.machine, attr, device)
    }

    /// Writes `data` at `addr`, which must lie inside live mappings of this
    /// process (one, or several back to back; `ACL_ERROR_INVALID_PARAM`
    /// otherwise). Safe: the mappings cannot go away during the copy.
    pub fn write(&self, addr: usize, data: &[u8]) -> Result<(), AclError> {
        let state = self.state();
        state.mapped_range(self.pid, addr, data.len())?;
        sys::copy_in(addr, data);
        Ok(())
    }

    /// Reads `buf.len()` bytes at `addr`, which must lie inside live mappings
    /// of this process (as for [`Emulator::write`]).
    pub fn read(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError> {
        let state = self.state();
        state.mapped_range(self.pid, addr, buf.len())?;
        sys::copy_out(addr, buf);
        Ok(())
    }

    fn handle(raw: u64) -> Result<RawHandle, AclError> {
        NonZeroU64::new(raw)
            .map(RawHandle)
            .ok_or(AclError::INTERNAL_ERROR)
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.state().exit_process(self.pid);
    }
}

impl ErrorType for Emulator {
    type Error = AclError;
}

impl DeviceInfo for Emulator {
    fn platform(&self) -> Result<(Product, RunMode), AclError> {
        Ok((
            self.shared.machine.product,
            self.shared.machine.config.run_mode,
        ))
    }
    fn cann(&self) -> Result<aclmem_core::CannVersion, AclError> {
        Ok(self.shared.machine.config.cann)
    }
    fn device_count(&self) -> Result<u32, AclError> {
        Ok(self.shared.machine.config.devices)
    }
}

impl PhysicalAllocator for Emulator {
    fn granularity(
        &self,
        prop: &RawPhysicalMemProp,
        _: GranularityOption,
    ) -> Result<usize, AclError> {
        self.state().granularity(&self.shared.machine, prop)
    }

    fn malloc_physical(
        &self,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> Result<RawHandle, AclError> {
        let raw = self
            .state()
            .malloc(&self.shared.machine, self.pid, size, prop, flags)?;
        Emulator::handle(raw)
    }

    fn free_physical(&self, handle: RawHandle) -> Result<(), AclError> {
        self.state()
            .free(&self.shared.machine, self.pid, handle.0.get())
    }
}

impl VirtualMemory for Emulator {
    fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
        flags: u64,
    ) -> Result<VirtAddr, AclError> {
        let addr = self.state().reserve(
            &self.shared.machine,
            self.pid,
            size,
            alignment,
            expected.map(VirtAddr::get),
            flags,
        )?;
        NonZeroUsize::new(addr)
            .map(VirtAddr)
            .ok_or(AclError::INTERNAL_ERROR)
    }

    fn release(&self, addr: VirtAddr) -> Result<(), AclError> {
        self.state()
            .release(&self.shared.machine, self.pid, addr.get())
    }

    fn map(
        &self,
        addr: VirtAddr,
        size: usize,
        offset: usize,
        handle: RawHandle,
        flags: u64,
    ) -> Result<(), AclError> {
        self.state().map(
            &self.shared.machine,
            self.pid,
            addr.get(),
            size,
            offset,
            handle.0.get(),
            flags,
        )
    }

    fn unmap(&self, addr: VirtAddr) -> Result<(), AclError> {
        self.state()
            .unmap(&self.shared.machine, self.pid, addr.get())
    }
}

impl ShareableMemory for Emulator {
    fn export(&self, handle: RawHandle, flags: u64) -> Result<ShareableHandle, AclError> {
        self.state()
            .export(&self.shared.machine, self.pid, handle.0.get(), flags)
            .map(ShareableHandle)
    }

    fn set_pids(&self, shareable: ShareableHandle, pids: &[i32]) -> Result<(), AclError> {
        self.state()
            .set_pids(&self.shared.machine, self.pid, shareable.0, pids)
    }

    fn import(&self, shareable: ShareableHandle, device_id: u32) -> Result<RawHandle, AclError> {
        let raw = self
            .state()
            .import(&self.shared.machine, self.pid, shareable.0, device_id)?;
        Emulator::handle(raw)
    }
}
