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
//! **Where things are.** `calls/` holds one module per area of the API
//! (physical memory, virtual memory, sharing, IPC keys, `aclrtMalloc`,
//! copies, queries, the runtime, the instruments), each implementing its
//! part of [`Emulator`] directly; `process/` one process's handles, address
//! space and charges; `machine/` what processes share; `os/` every system
//! call; [`args`] the argument checks, which return [`args::Checked`]
//! values the `*_checked` calls take, so that no check runs twice. The lock
//! order and how a call goes from C to the kernel are in the repository's
//! `docs/architecture.md`.
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
// Unsafe code lives in `os` alone, behind owning types; the compiler
// holds every other module to that.
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

pub use aclmem_hal::{ShareHandleType, ShareableHandleV2};

pub mod args;
mod calls;
mod config;
mod emulator;
pub mod env;
pub mod errors;
pub mod faults;
mod machine;
#[allow(unsafe_code)]
mod os;
mod process;
mod report;

pub use calls::copy::Hold;
pub use calls::host_register::{
    HOST_REG_IOMEMORY, HOST_REG_MAPPED, HOST_REG_PINNED, HOST_REG_READONLY, HOST_REGISTER_ALIGN,
    HOST_REGISTER_IOMEMORY, HOST_REGISTER_MAPPED, HOST_REGISTER_READONLY,
};
pub use calls::ipc::{ipc_key, ipc_key_id};
pub use calls::managed::{MANAGED_PAGE, ManagedLocation, PageAdvice};
pub use calls::pools::{POOL_BLOCK, POOL_HANDLE_NONE, POOL_HANDLE_POSIX, PoolAttr};
pub use calls::query::MEM_USAGE_COMPONENTS;
pub use calls::sharing::{FABRIC_MAGIC, fabric_handle, fabric_id};
pub use calls::values::{VALUE_WAIT_BOUND, WaitCondition};
pub use config::{ConfigError, EmuConfig, MAX_DEVICES, ParseSizeError, parse_size, preset_soc};
pub use emulator::Emulator;
pub use env::{DEFAULT_MACHINE, OpsMode};
pub use machine::{
    JoinError, MAX_EXPORTS, MAX_PROCS, PoolId, WHITELIST, machine_path, machine_state_path,
};
pub use os::host::CallerMemory;
pub use process::graphs::{CaptureMode, CaptureStatus, TaskFn};
pub use process::instrument::Op;
pub use process::runtime::{DEFAULT_CONTEXT, Target};
pub use report::{LeakReport, LeakedHandle, LeakedRange, MemKind, PoolStats, Stats};

// The README (this crate's page on crates.io) is compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
