//! An emulated Ascend machine behind the `aclmem-hal` traits.
//!
//! The emulator behaves like the runtime for the physical-memory API and the
//! calls around it: the core rules table decides what each product and CANN
//! release accepts (RC form and unsupported products answer 207000), the
//! runtime's argument checks answer their documented codes ([`args`]),
//! capacity is accounted per device, 1 GiB page pool and host with 207001 on
//! exhaustion, HBM requests on products without HBM are served from DDR,
//! freeing a mapped handle is deferred until it is unmapped, and releasing a
//! mapped range is refused. Where CANN's code is not documented, the
//! emulator's choice is in one table ([`errors::Situation`]).
//!
//! **Machines and processes.** An [`Emulator`] is one process of an
//! emulated machine. [`Emulator::join`] joins a *named* machine shared by
//! every process of this user that joins it: C programs through the
//! emulated `libascendcl.so`, Rust programs, Python. Processes share the
//! devices' capacity, export and import memory (the importer's identity
//! comes from the kernel, the memory travels as a file descriptor), and a
//! process that exits or is killed gives everything back. [`Emulator::new`]
//! makes a *private* machine inside this process, whose further processes
//! ([`Emulator::spawn_process`]) are simulated: the fast way to test sharing
//! in unit tests.
//!
//! **The memory is real.** A device's memory is a sparse memfd per process
//! (handles are extents of it; freed extents are given back with a hole
//! punch); reservations are carved from large `PROT_NONE` arenas; mapping
//! places the memfd there with `MAP_FIXED | MAP_SHARED`, so two mappings of
//! one handle alias: bytes written through one are read through the other.
//!
//! Handles are generation-tagged (a stale, double-freed, forged or
//! pre-`aclFinalize` handle is an error code, never undefined behaviour),
//! the emulator is `Sync` and its locks are never held across a system
//! call, faults can be injected, and [`Emulator::leak_report`] lists what a
//! process still holds.
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
#![deny(unsafe_op_in_unsafe_fn)]

use std::collections::BTreeMap;
use std::fmt;
use std::num::{NonZeroU64, NonZeroUsize};
use std::sync::Arc;

use aclmem_core::{
    AclError, CannVersion, GranularityOption, Location, MemAttr, Product, RawPhysicalMemProp,
    RunMode,
};
use aclmem_hal::{
    DeviceInfo, ErrorType, PhysicalAllocator, RawHandle, ShareableHandle, ShareableMemory,
    VirtAddr, VirtualMemory,
};
pub use aclmem_hal::{ShareHandleType, ShareableHandleV2};

mod arena;
pub mod args;
mod config;
pub mod errors;
mod fork;
mod machine;
mod pool;
mod process;
mod share;
mod shm;
mod sys;

pub use config::{ConfigError, EmuConfig, MAX_DEVICES, ParseSizeError, parse_size, preset_soc};
pub use machine::{DEFAULT_MACHINE, JoinError, machine_path};
pub use shm::{MAX_EXPORTS, MAX_PROCS, PoolId, WHITELIST};

use process::Process;
use shm::ExportKind;

pub(crate) use process::Result;

/// The code for a file-descriptor error while opening a socket or file.
pub(crate) fn process_fd_error(e: rustix::io::Errno) -> AclError {
    if e == rustix::io::Errno::MFILE || e == rustix::io::Errno::NFILE {
        errors::Situation::FdLimit.code()
    } else {
        AclError::RT_IPC_ERROR
    }
}

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
    /// `aclrtMemExportToShareableHandle(V2)`, `aclrtIpcMemGetExportKey`.
    Export,
    /// `aclrtMemSetPidToShareableHandle(V2)`, `aclrtIpcMemSetImportPid`.
    SetPids,
    /// `aclrtMemImportFromShareableHandle(V2)`, `aclrtIpcMemImportByKey`.
    Import,
    /// `aclrtMalloc`, `aclrtMallocAlign32`.
    MallocDevice,
    /// `aclrtFree`.
    FreeDevice,
    /// `aclrtMallocHost`.
    MallocHost,
    /// `aclrtFreeHost`.
    FreeHost,
    /// `aclrtMemcpy(Async)`.
    Memcpy,
    /// `aclrtMemset`.
    Memset,
    /// Contexts.
    Context,
    /// Streams.
    Stream,
    /// Queries: memory info, address ranges, attributes, access.
    Query,
}

impl Op {
    /// Every operation.
    pub const ALL: [Op; 19] = [
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
        Op::MallocDevice,
        Op::FreeDevice,
        Op::MallocHost,
        Op::FreeHost,
        Op::Memcpy,
        Op::Memset,
        Op::Context,
        Op::Stream,
        Op::Query,
    ];
}

/// What kind of memory serves an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemKind {
    /// High-bandwidth memory on the device.
    Hbm,
    /// DDR (host memory, or device memory on products without HBM).
    Ddr,
}

/// Use of one pool of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes the pool holds.
    pub capacity: usize,
    /// Bytes allocated, by every process of the machine.
    pub used: usize,
    /// What memory the pool is.
    pub kind: MemKind,
}

/// A snapshot of the machine and of this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Device memory per device.
    pub device: Vec<PoolStats>,
    /// 1 GiB page pool per device.
    pub huge1g: Vec<PoolStats>,
    /// Host DDR.
    pub host: PoolStats,
    /// Processes alive on the machine.
    pub processes: usize,
    /// Shareable handles (and IPC keys) alive on the machine.
    pub shareable_handles: usize,
    /// This process's live physical allocations (held by a handle or a
    /// mapping).
    pub live_allocations: usize,
    /// This process's live handles.
    pub live_handles: usize,
    /// This process's reservations (including those `aclrtMalloc` made).
    pub reservations: usize,
    /// This process's mappings.
    pub mappings: usize,
    /// This process's calls per operation.
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

/// A range a process still holds.
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
    /// Live physical-memory handles.
    pub handles: Vec<LeakedHandle>,
    /// Live reservations.
    pub reservations: Vec<LeakedRange>,
    /// Live mappings.
    pub mappings: Vec<LeakedRange>,
    /// `aclrtMalloc` memory not freed.
    pub device_allocations: Vec<LeakedRange>,
    /// `aclrtMallocHost` memory not freed.
    pub host_allocations: Vec<LeakedRange>,
}

impl LeakReport {
    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
            && self.reservations.is_empty()
            && self.mappings.is_empty()
            && self.device_allocations.is_empty()
            && self.host_allocations.is_empty()
    }
}

impl fmt::Display for LeakReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("no leaks");
        }
        writeln!(
            f,
            "{} handle(s), {} reservation(s), {} mapping(s), {} aclrtMalloc and {} aclrtMallocHost allocation(s) still live:",
            self.handles.len(),
            self.reservations.len(),
            self.mappings.len(),
            self.device_allocations.len(),
            self.host_allocations.len()
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
        for (what, list) in [
            ("reservation", &self.reservations),
            ("mapping", &self.mappings),
            ("aclrtMalloc", &self.device_allocations),
            ("aclrtMallocHost", &self.host_allocations),
        ] {
            for r in list {
                writeln!(f, "  {what} {:#x}: {} bytes", r.addr, r.size)?;
            }
        }
        Ok(())
    }
}

/// Mapped device memory held as an in-flight copy holds it (see
/// [`Emulator::hold`]); released on drop.
pub struct Hold<'e> {
    emu: &'e Emulator,
    segments: Vec<process::Segment>,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.emu.process.unpin(&self.segments);
    }
}

impl fmt::Debug for Hold<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hold({} segment(s))", self.segments.len())
    }
}

/// The 128-byte FABRIC handle: the machine's shareable handle, marked.
pub const FABRIC_MAGIC: [u8; 8] = *b"aclmemFB";

/// Writes a shareable handle as a FABRIC handle.
pub fn fabric_handle(id: u64) -> [u8; 128] {
    let mut out = [0u8; 128];
    out[..8].copy_from_slice(&FABRIC_MAGIC);
    out[8..16].copy_from_slice(&id.to_le_bytes());
    out
}

/// Reads a FABRIC handle back (`None` if it is not one of the emulator's).
pub fn fabric_id(handle: &[u8; 128]) -> Option<u64> {
    (handle[..8] == FABRIC_MAGIC)
        .then(|| u64::from_le_bytes(handle[8..16].try_into().expect("8 bytes")))
}

/// The IPC key string of an export: what `aclrtIpcMemGetExportKey` writes
/// (fits the documented 65-byte buffer).
pub fn ipc_key(id: u64) -> String {
    format!("aclmem-ipc-{id:016x}")
}

/// Parses an IPC key back.
pub fn ipc_key_id(key: &str) -> Option<u64> {
    u64::from_str_radix(key.strip_prefix("aclmem-ipc-")?, 16).ok()
}

/// One process on an emulated machine. Implements every `aclmem-hal`
/// trait; `Send + Sync`.
#[derive(Clone)]
pub struct Emulator {
    process: Arc<Process>,
}

impl fmt::Debug for Emulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.process.machine;
        f.debug_struct("Emulator")
            .field("machine", &m.name.as_deref().unwrap_or("(private)"))
            .field("soc_name", &m.config.soc_name)
            .field("product", &m.product)
            .field("run_mode", &m.config.run_mode)
            .field("cann", &m.config.cann)
            .field("pid", &self.process.pid)
            .finish()
    }
}

impl Emulator {
    /// A private machine built from `config`, inside this process, and its
    /// first process. An unusable configuration is
    /// `ACL_ERROR_INVALID_PARAM`.
    pub fn new(config: EmuConfig) -> std::result::Result<Emulator, AclError> {
        Ok(Emulator {
            process: machine::private(&config)?,
        })
    }

    /// The private preset machine of `product`, in EP form.
    pub fn preset(product: Product) -> Emulator {
        Emulator::new(EmuConfig::preset(product)).expect("presets are valid")
    }

    /// Joins the named machine `name` (creating it with `config` if no
    /// process of it is alive), as this OS process. Joining a machine this
    /// process joined already returns the same process.
    pub fn join(name: &str, config: &EmuConfig) -> std::result::Result<Emulator, JoinError> {
        Ok(Emulator {
            process: machine::join(name, config)?,
        })
    }

    /// Joins the machine the environment names (`ACLMEM_EMU_MACHINE`, or
    /// [`DEFAULT_MACHINE`]) with the configuration the environment
    /// describes ([`EmuConfig::from_env`]): what the emulated C library does
    /// at `aclInit`.
    pub fn join_from_env() -> std::result::Result<Emulator, JoinError> {
        let config = EmuConfig::from_env().map_err(|e| JoinError::BadConfig(e.to_string()))?;
        let name = std::env::var("ACLMEM_EMU_MACHINE")
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| DEFAULT_MACHINE.to_owned());
        Emulator::join(&name, &config)
    }

    /// Another (simulated) process on the same private machine: shared
    /// capacity and shareable handles, separate handles and mappings. As on
    /// the real runtime, a process cannot import what it exported itself.
    /// On a named machine, processes are real: `ACL_ERROR_API_NOT_SUPPORT`.
    pub fn spawn_process(&self) -> std::result::Result<Emulator, AclError> {
        Ok(Emulator {
            process: machine::spawn(&self.process.machine)?,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &EmuConfig {
        &self.process.machine.config
    }

    /// The emulated product.
    pub fn product(&self) -> Product {
        self.process.machine.product
    }

    /// The machine's name (`None` for a private machine).
    pub fn machine_name(&self) -> Option<&str> {
        self.process.machine.name.as_deref()
    }

    /// This process's pid (to whitelist with `set_pids`;
    /// `aclrtDeviceGetBareTgid`).
    pub fn pid(&self) -> i32 {
        self.process.pid
    }

    /// Leaves the machine now, as process exit does: everything this
    /// process holds is torn down and its capacity returned. Every later
    /// call of this process answers `ACL_ERROR_UNINITIALIZE`.
    pub fn leave(&self) {
        self.process.leave();
    }

    /// Holds `addr..addr + len` of mapped device memory as an in-flight
    /// copy does: until the returned [`Hold`] drops, unmapping it answers
    /// `MappingInUse`. For tests of code that races copies with unmaps.
    pub fn hold(&self, addr: usize, len: usize) -> Result<Hold<'_>> {
        let segments = self.process.pin_device_range(addr, len)?;
        Ok(Hold {
            emu: self,
            segments,
        })
    }

    /// Makes the `nth` call of `op` from now (1 = the next one) fail with
    /// `code`, without side effects.
    pub fn inject_fault(&self, op: Op, nth: u64, code: AclError) {
        self.process.inject_fault(op, nth, code);
    }

    /// Caps a pool's capacity, machine-wide (what is allocated stays).
    pub fn set_capacity(&self, pool: PoolId, bytes: usize) -> std::result::Result<(), AclError> {
        match pool {
            PoolId::Device(d) | PoolId::Huge1G(d) if d >= self.config().devices => {
                return Err(AclError::RT_INVALID_DEVICEID);
            }
            _ => {}
        }
        self.process.machine.region.set_capacity(pool, bytes as u64);
        Ok(())
    }

    /// A snapshot of capacity use, live objects and call counts.
    pub fn stats(&self) -> Stats {
        let m = &self.process.machine;
        let kind = if m.product.has_hbm() {
            MemKind::Hbm
        } else {
            MemKind::Ddr
        };
        let pool = |p, kind| {
            let (capacity, used) = m.region.pool(p);
            PoolStats {
                capacity: capacity as usize,
                used: used as usize,
                kind,
            }
        };
        let (handles, allocs, resvs, maps) = self.process.counts();
        Stats {
            device: (0..m.config.devices)
                .map(|d| pool(PoolId::Device(d), kind))
                .collect(),
            huge1g: (0..m.config.devices)
                .map(|d| pool(PoolId::Huge1G(d), kind))
                .collect(),
            host: pool(PoolId::Host, MemKind::Ddr),
            processes: m.region.live_slots(),
            shareable_handles: m.region.export_count(),
            live_allocations: allocs,
            live_handles: handles,
            reservations: resvs,
            mappings: maps,
            calls: Op::ALL
                .iter()
                .map(|op| (*op, self.process.calls(*op)))
                .collect(),
        }
    }

    /// What this process still holds.
    pub fn leak_report(&self) -> LeakReport {
        self.process.leak_report()
    }

    /// `aclrtGetMemInfo`: free and total bytes of the pool `attr` names, on
    /// `device` (machine-wide: what every process uses).
    pub fn mem_info(&self, attr: MemAttr, device: u32) -> Result<(usize, usize)> {
        self.process.mem_info(attr, device)
    }

    /// Writes `data` at `addr`, which must lie inside live mappings of this
    /// process (one, or several back to back; `ACL_ERROR_INVALID_PARAM`
    /// otherwise). Safe: the mappings cannot go away during the copy.
    pub fn write(&self, addr: usize, data: &[u8]) -> Result<()> {
        self.process.write(addr, data)
    }

    /// Reads `buf.len()` bytes at `addr`, which must lie inside live mappings
    /// of this process (as for [`Emulator::write`]).
    pub fn read(&self, addr: usize, buf: &mut [u8]) -> Result<()> {
        self.process.read(addr, buf)
    }

    // ----- the calls around the physical-memory API ------------------------

    /// `aclrtMalloc` (or, with `align32_only`, `aclrtMallocAlign32`) on
    /// `device`: the address of `size` bytes of device memory.
    pub fn malloc_device(
        &self,
        device: u32,
        size: usize,
        policy: u32,
        align32_only: bool,
    ) -> Result<usize> {
        self.process
            .malloc_device(device, size, policy, align32_only)
    }

    /// `aclrtFree`.
    pub fn free_device(&self, addr: usize) -> Result<()> {
        self.process.free_device(addr)
    }

    /// `aclrtMallocHost`.
    pub fn malloc_host(&self, size: usize) -> Result<usize> {
        self.process.malloc_host(size)
    }

    /// `aclrtFreeHost`.
    pub fn free_host(&self, addr: usize) -> Result<()> {
        self.process.free_host(addr)
    }

    /// `aclrtMemcpy`: the argument checks ([`args::memcpy`]), then the copy.
    /// Device ranges must be mapped in this process; host ranges are read
    /// and written by the kernel, which answers an address the process may
    /// not use with an error code instead of a crash.
    ///
    /// # Safety
    /// Every host byte of `dst..dst + count` must be memory the caller may
    /// overwrite (no Rust reference into it is alive), and the host bytes
    /// of `src..src + count` must not be written by anyone during the call.
    pub unsafe fn memcpy(
        &self,
        dst: usize,
        dest_max: usize,
        src: usize,
        count: usize,
        kind: u32,
    ) -> Result<()> {
        match args::memcpy(dst, dest_max, src, count, kind)? {
            args::Copy::Nothing => Ok(()),
            args::Copy::Bytes => self.process.memcpy(dst, src, count, kind),
        }
    }

    /// `aclrtMemset`: device memory of this process or `aclrtMallocHost`
    /// memory.
    ///
    /// # Safety
    /// If `dst` is `aclrtMallocHost` memory, no Rust reference into
    /// `dst..dst + count` may be alive.
    pub unsafe fn memset(
        &self,
        dst: usize,
        max_count: usize,
        value: i32,
        count: usize,
    ) -> Result<()> {
        match args::memset(dst, max_count, count)? {
            args::Copy::Nothing => Ok(()),
            args::Copy::Bytes => self.process.memset(dst, value as u8, count),
        }
    }

    /// Copies `data` to device memory of this process (a safe host→device
    /// `aclrtMemcpy`).
    pub fn copy_to_device(&self, dst: usize, data: &[u8]) -> Result<()> {
        // SAFETY: the host side is `data`, borrowed for reading only.
        unsafe { self.memcpy(dst, data.len(), data.as_ptr() as usize, data.len(), 1) }
    }

    /// Copies device memory of this process into `buf` (a safe
    /// device→host `aclrtMemcpy`).
    pub fn copy_from_device(&self, buf: &mut [u8], src: usize) -> Result<()> {
        // SAFETY: the host side is `buf`, borrowed mutably for the call.
        unsafe { self.memcpy(buf.as_mut_ptr() as usize, buf.len(), src, buf.len(), 2) }
    }

    /// `aclrtMemGetAddressRange`: (base, size) of the mapping or host
    /// allocation that contains `ptr`.
    pub fn address_range(&self, ptr: usize) -> Result<(usize, usize)> {
        self.process.address_range(ptr)
    }

    /// `aclrtPointerGetAttributes`: (location type, id, page size); memory
    /// not from ACL is `ACL_MEM_LOCATION_TYPE_UNREGISTERED` (2).
    pub fn pointer_attributes(&self, ptr: usize) -> Result<(u32, u32, u32)> {
        self.process.pointer_attributes(ptr)
    }

    /// `aclrtMemRetainAllocationHandle`.
    pub fn retain_allocation_handle(&self, addr: usize) -> Result<RawHandle> {
        handle(self.process.retain_allocation_handle(addr)?)
    }

    /// `aclrtMemGetAllocationPropertiesFromHandle`.
    pub fn allocation_properties(&self, handle: RawHandle) -> Result<RawPhysicalMemProp> {
        self.process.allocation_properties(handle.0.get())
    }

    /// `aclrtMemSetAccess` with one descriptor (flags, location type, id).
    pub fn set_access(
        &self,
        addr: usize,
        size: usize,
        flags: u64,
        location: u32,
        id: u32,
    ) -> Result<()> {
        self.process.set_access(addr, size, flags, location, id)
    }

    /// `aclrtMemGetAccess`: (flags, location type, id).
    pub fn get_access(&self, addr: usize) -> Result<(u64, u32, u32)> {
        self.process.get_access(addr)
    }

    /// `aclrtIpcMemGetExportKey`: the key of the `aclrtMalloc` block at
    /// `addr`.
    pub fn ipc_export_key(&self, addr: usize, size: usize, flags: u64) -> Result<String> {
        self.process.ipc_export(addr, size, flags).map(ipc_key)
    }

    /// `aclrtIpcMemSetImportPid`.
    pub fn ipc_set_pids(&self, key: &str, pids: &[i32]) -> Result<()> {
        let id = ipc_key_id(key).ok_or(errors::Situation::UnknownShareable.code())?;
        self.process.set_pids(id, pids)
    }

    /// `aclrtIpcMemImportByKey` onto `device` (the calling thread's):
    /// the address where the block is mapped.
    pub fn ipc_import(&self, key: &str, device: u32, flags: u64) -> Result<usize> {
        let id = ipc_key_id(key).ok_or(errors::Situation::UnknownShareable.code())?;
        self.process.ipc_import(id, device, flags)
    }

    /// `aclrtIpcMemClose`.
    pub fn ipc_close(&self, key: &str) -> Result<()> {
        let id = ipc_key_id(key).ok_or(errors::Situation::UnknownShareable.code())?;
        self.process.ipc_close(id)
    }

    fn fabric_allowed(&self, kind: ShareHandleType) -> Result<()> {
        if kind == ShareHandleType::Fabric && self.product() != Product::AtlasA3 {
            return Err(errors::Situation::FabricNotA3.code());
        }
        Ok(())
    }

    /// The machine's id of a V2 shareable handle, if the type is allowed
    /// here.
    fn v2_id(&self, shareable: &ShareableHandleV2) -> Result<u64> {
        self.fabric_allowed(shareable.kind())?;
        match shareable {
            ShareableHandleV2::Default(id) => Ok(*id),
            ShareableHandleV2::Fabric(bytes) => {
                fabric_id(bytes).ok_or(errors::Situation::UnknownShareable.code())
            }
        }
    }

    /// `aclrtCreateContext` on `device`: its opaque handle.
    pub fn create_context(&self, device: u32) -> Result<u64> {
        self.process.create_context(device)
    }

    /// `aclrtDestroyContext`.
    pub fn destroy_context(&self, context: u64) -> Result<()> {
        self.process.destroy_context(context)
    }

    /// The device of a context made by [`Emulator::create_context`].
    pub fn context_device(&self, context: u64) -> Option<u32> {
        self.process.context_device(context)
    }

    /// `aclrtCreateStream` on `device`.
    pub fn create_stream(&self, device: u32) -> Result<u64> {
        self.process.create_stream(device)
    }

    /// `aclrtDestroyStream(Force)`.
    pub fn destroy_stream(&self, stream: u64) -> Result<()> {
        self.process.destroy_stream(stream)
    }

    /// The device of a live stream.
    pub fn stream_device(&self, stream: u64) -> Option<u32> {
        self.process.stream_device(stream)
    }

    /// `aclrtResetDevice(Force)`: the device's streams go.
    pub fn reset_device(&self, device: u32) {
        self.process.reset_device_streams(device);
    }

    /// The arenas (start, length) this process reserved: what a forked
    /// child loses.
    pub fn arenas(&self) -> Vec<(usize, usize)> {
        self.process.arena_ranges()
    }
}

fn handle(raw: u64) -> Result<RawHandle> {
    NonZeroU64::new(raw)
        .map(RawHandle)
        .ok_or(AclError::INTERNAL_ERROR)
}

impl ErrorType for Emulator {
    type Error = AclError;
}

impl DeviceInfo for Emulator {
    fn platform(&self) -> Result<(Product, RunMode)> {
        Ok((self.product(), self.config().run_mode))
    }
    fn cann(&self) -> Result<CannVersion> {
        Ok(self.config().cann)
    }
    fn device_count(&self) -> Result<u32> {
        Ok(self.config().devices)
    }
}

impl PhysicalAllocator for Emulator {
    fn granularity(&self, prop: &RawPhysicalMemProp, _: GranularityOption) -> Result<usize> {
        self.process.granularity(prop)
    }

    fn malloc_physical(
        &self,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> Result<RawHandle> {
        handle(self.process.malloc_physical(size, prop, flags)?)
    }

    fn free_physical(&self, handle: RawHandle) -> Result<()> {
        self.process.free_physical(handle.0.get())
    }
}

impl VirtualMemory for Emulator {
    fn reserve(
        &self,
        size: usize,
        alignment: usize,
        expected: Option<VirtAddr>,
        flags: u64,
    ) -> Result<VirtAddr> {
        let addr = self
            .process
            .reserve(size, alignment, expected.map(VirtAddr::get), flags)?;
        NonZeroUsize::new(addr)
            .map(VirtAddr)
            .ok_or(AclError::INTERNAL_ERROR)
    }

    fn release(&self, addr: VirtAddr) -> Result<()> {
        self.process.release(addr.get())
    }

    fn map(
        &self,
        addr: VirtAddr,
        size: usize,
        offset: usize,
        handle: RawHandle,
        flags: u64,
    ) -> Result<()> {
        self.process
            .map(addr.get(), size, offset, handle.0.get(), flags)
    }

    fn unmap(&self, addr: VirtAddr) -> Result<()> {
        self.process.unmap(addr.get())
    }
}

impl ShareableMemory for Emulator {
    fn export(&self, handle: RawHandle, flags: u64) -> Result<ShareableHandle> {
        self.process
            .export(handle.0.get(), flags, ExportKind::Vmm)
            .map(ShareableHandle)
    }

    fn set_pids(&self, shareable: ShareableHandle, pids: &[i32]) -> Result<()> {
        self.process.set_pids(shareable.0, pids)
    }

    fn import(&self, shareable: ShareableHandle, device_id: u32) -> Result<RawHandle> {
        handle(
            self.process
                .import(shareable.0, device_id, ExportKind::Vmm)?,
        )
    }

    fn export_v2(
        &self,
        handle: RawHandle,
        flags: u64,
        kind: ShareHandleType,
    ) -> Result<ShareableHandleV2> {
        self.fabric_allowed(kind)?;
        let id = self
            .process
            .export(handle.0.get(), flags, ExportKind::Vmm)?;
        Ok(match kind {
            ShareHandleType::Default => ShareableHandleV2::Default(id),
            ShareHandleType::Fabric => ShareableHandleV2::Fabric(fabric_handle(id)),
        })
    }

    fn set_pids_v2(&self, shareable: &ShareableHandleV2, pids: &[i32]) -> Result<()> {
        let id = self.v2_id(shareable)?;
        self.process.set_pids(id, pids)
    }

    fn import_v2(&self, shareable: &ShareableHandleV2, device_id: u32) -> Result<RawHandle> {
        let id = self.v2_id(shareable)?;
        handle(self.process.import(id, device_id, ExportKind::Vmm)?)
    }
}

/// Copies between host memory and addresses a C caller passed, checked by
/// the kernel: an address the process may not read or write is an error,
/// never a crash.
pub mod hostmem {
    use std::os::fd::OwnedFd;
    use std::sync::OnceLock;

    static SCRATCH: OnceLock<Option<OwnedFd>> = OnceLock::new();

    fn scratch() -> Option<&'static OwnedFd> {
        SCRATCH
            .get_or_init(|| crate::sys::new_pool_file("aclmem-emu-hostmem", 1 << 20).ok())
            .as_ref()
    }

    /// Copies `dst.len()` bytes from the address `src` into `dst`.
    /// `false` if the kernel refused the source.
    pub fn read(src: usize, dst: &mut [u8]) -> bool {
        match scratch() {
            Some(s) => {
                crate::sys::copy_host_to_host(dst.as_mut_ptr() as usize, src, dst.len(), s).is_ok()
            }
            None => false,
        }
    }

    /// Copies `src` to the address `dst`. `false` if the kernel refused the
    /// destination.
    ///
    /// # Safety
    /// `dst..dst + src.len()` must not be memory that Rust code holds a
    /// reference to (the C caller's contract: it passes memory of its own).
    pub unsafe fn write(dst: usize, src: &[u8]) -> bool {
        match scratch() {
            Some(s) => {
                crate::sys::copy_host_to_host(dst, src.as_ptr() as usize, src.len(), s).is_ok()
            }
            None => false,
        }
    }
}
