//! What the emulator reports of a machine and a process: capacity use,
//! live objects, call counts, and what a process still holds.

use std::collections::BTreeMap;
use std::fmt;

use aclmem_core::{Location, MemAttr};

use crate::Op;

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
    /// The most bytes allocated at once since the machine was made.
    pub peak: usize,
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
