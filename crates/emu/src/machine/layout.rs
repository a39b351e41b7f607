//! The shared memory layout of a machine: fixed-size `#[repr(C)]` tables
//! of atomics (a header, the process table, the registry of exports), so
//! processes never race on plain memory, and the configuration as words.

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64};
use std::time::Duration;

use aclmem_core::{CannVersion, RunMode};

use super::pools::MAX_POOLS;
use crate::config::EmuConfig;

/// Slots per machine (one per process of it).
pub const MAX_PROCS: usize = 256;
/// Shareable handles (and IPC keys) alive on a machine at once.
pub const MAX_EXPORTS: usize = 16384;
/// Pids one shareable handle's whitelist holds.
pub const WHITELIST: usize = 128;
/// Capacity pools: device memory and the 1 GiB pool of each device, host
/// Extents a dead importer left for their exporter to give back.
pub(crate) const ORPHANS: usize = 16;

pub(crate) const MAGIC: u64 = 0x6163_6c6d_656d_7536; // "aclmemu6"
pub(crate) const CONFIG_WORDS: usize = 24;
pub(crate) const SOC_BYTES: usize = 64;
const _: () = assert!(MAX_EXPORTS.is_power_of_two());

pub(crate) const FREE: u32 = 0;
pub(crate) const LIVE: u32 = 1;
pub(crate) const REAL: u32 = 1;
pub(crate) const SIMULATED: u32 = 2;

/// What kind of export an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// `aclrtMemExportToShareableHandle(V2)`.
    Vmm = 1,
    /// `aclrtIpcMemGetExportKey`.
    Ipc = 2,
}

impl ExportKind {
    /// The kind a stored (or received) word names; anything but IPC is a
    /// VMM export.
    pub(crate) fn from_raw(raw: u32) -> ExportKind {
        if raw == ExportKind::Ipc as u32 {
            ExportKind::Ipc
        } else {
            ExportKind::Vmm
        }
    }
}

#[derive(zerocopy::FromBytes)]
#[repr(C)]
pub(crate) struct Header {
    pub(crate) magic: AtomicU64,
    pub(crate) lock: AtomicU32,
    pub(crate) waiters: AtomicU32,
    pub(crate) config: [AtomicU64; CONFIG_WORDS],
    pub(crate) _pad: AtomicU32,
    pub(crate) capacity: [AtomicU64; MAX_POOLS],
    pub(crate) used: [AtomicU64; MAX_POOLS],
    /// The most `used` has been since the machine was made.
    pub(crate) peak: [AtomicU64; MAX_POOLS],
    /// Calls counted by the `@machine` faults of `ACLMEM_EMU_FAULTS`, by
    /// their place among those items.
    pub(crate) fault_calls: [AtomicU64; crate::faults::MACHINE_FAULTS],
}

#[derive(zerocopy::FromBytes)]
#[repr(C)]
pub(crate) struct Slot {
    pub(crate) state: AtomicU32,
    pub(crate) kind: AtomicU32,
    pub(crate) pid: AtomicI32,
    pub(crate) _pad: AtomicU32,
    pub(crate) generation: AtomicU64,
    /// When the process started (`/proc/PID/stat`): with the pid, who it is.
    pub(crate) start_time: AtomicU64,
    pub(crate) listener: AtomicU64,
    pub(crate) charged: [AtomicU64; MAX_POOLS],
    pub(crate) orphan_count: AtomicU32,
    pub(crate) _pad2: AtomicU32,
    pub(crate) orphans: [AtomicU64; 2 * ORPHANS],
}

#[derive(zerocopy::FromBytes)]
#[repr(C)]
pub(crate) struct Export {
    pub(crate) id: AtomicU64,
    pub(crate) kind: AtomicU32,
    pub(crate) check_pid: AtomicU32,
    pub(crate) exporter_slot: AtomicU32,
    pub(crate) exporter_pid: AtomicI32,
    pub(crate) exporter_gen: AtomicU64,
    pub(crate) pool: AtomicU32,
    pub(crate) device: AtomicU32,
    pub(crate) offset: AtomicU64,
    pub(crate) size: AtomicU64,
    pub(crate) attr: AtomicU32,
    pub(crate) location: AtomicU32,
    pub(crate) location_id: AtomicU32,
    pub(crate) charge_pools: AtomicU32,
    pub(crate) withdrawn: AtomicU32,
    pub(crate) holders: [AtomicU64; MAX_PROCS / 64],
    pub(crate) whitelist_len: AtomicU32,
    /// Whitelisted processes: the pid in the low 32 bits, the low 32 bits
    /// of its start time (0: it had not started) in the high ones.
    pub(crate) whitelist: [AtomicU64; WHITELIST],
}

#[derive(zerocopy::FromBytes)]
#[repr(C)]
pub(crate) struct Layout {
    pub(crate) header: Header,
    pub(crate) slots: [Slot; MAX_PROCS],
    pub(crate) exports: [Export; MAX_EXPORTS],
}

/// The size of a machine's shared state (its sealed memfd).
pub const REGION_BYTES: usize = std::mem::size_of::<Layout>().next_multiple_of(4096);

/// The `pool` of an export whose allocation has a file of its own (the
/// exporter finds the file by the export's id).
pub(crate) const OWN_FILE: u32 = u32::MAX;

/// A shareable handle as the registry records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportInfo {
    /// The shareable handle value.
    pub id: u64,
    /// VMM handle or IPC key.
    pub kind: ExportKind,
    /// Whether the whitelist is enforced.
    pub check_pid: bool,
    /// The exporting process's slot, generation and pid.
    pub exporter: (u32, u64, i32),
    /// The exporter's pool the memory is in, and where.
    pub pool: u32,
    /// Offset of the memory in that pool.
    pub offset: u64,
    /// Its size.
    pub size: u64,
    /// The device (or NUMA node) and location type, and the attribute.
    pub location: (u32, u32),
    /// The raw `aclrtMemAttr`.
    pub attr: u32,
    /// The device the memory belongs to (for IPC keys: the exporting
    /// device).
    pub device: u32,
}

/// The configuration as fixed words: what every joining process compares.
pub(crate) fn encode_config(c: &EmuConfig) -> [u64; CONFIG_WORDS] {
    let mut w = [0u64; CONFIG_WORDS];
    let soc = c.soc_name.as_bytes();
    w[0] = soc.len().min(SOC_BYTES) as u64;
    for (i, chunk) in soc.chunks(8).take(SOC_BYTES / 8).enumerate() {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        w[1 + i] = u64::from_le_bytes(b);
    }
    w[9] = match c.run_mode {
        RunMode::Ep => 1,
        RunMode::Rc => 2,
    };
    w[10] = c.cann as u64 + 1;
    w[11] = u64::from(c.devices);
    w[12] = c.device_memory as u64;
    w[13] = c.host_memory as u64;
    w[14] = u64::from(c.numa_nodes);
    w[15] = c.huge1g_pool as u64;
    w[16] = u64::from(c.p2p_huge1g_confirmed);
    w[17] = c.host_numa_p2p_limit as u64;
    w
}

pub(crate) fn decode_config(w: &[u64]) -> Option<EmuConfig> {
    let len = (*w.first()? as usize).min(SOC_BYTES);
    let mut soc = Vec::with_capacity(SOC_BYTES);
    for word in &w[1..9] {
        soc.extend_from_slice(&word.to_le_bytes());
    }
    soc.truncate(len);
    Some(EmuConfig {
        soc_name: String::from_utf8(soc).ok()?,
        run_mode: match w[9] {
            1 => RunMode::Ep,
            2 => RunMode::Rc,
            _ => return None,
        },
        cann: *CannVersion::ALL.get((w[10] as usize).checked_sub(1)?)?,
        devices: u32::try_from(w[11]).ok()?,
        device_memory: usize::try_from(w[12]).ok()?,
        host_memory: usize::try_from(w[13]).ok()?,
        numa_nodes: u32::try_from(w[14]).ok()?,
        huge1g_pool: usize::try_from(w[15]).ok()?,
        p2p_huge1g_confirmed: w[16] != 0,
        host_numa_p2p_limit: usize::try_from(w[17]).ok()?,
    })
}

/// How long an importer waits for an exporter's answer before giving up.
pub const IMPORT_TIMEOUT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;
    use aclmem_core::Product;

    #[test]
    fn configurations_survive_the_round_trip() {
        for p in Product::ALL {
            let mut c = EmuConfig::preset(p);
            c.cann = CannVersion::V8_3;
            assert_eq!(decode_config(&encode_config(&c)), Some(c));
        }
    }

    // The state is allocated whole at creation (no SIGBUS later), in every
    // process's memory accounting: it must stay small.
    const _: () = assert!(REGION_BYTES < 20 << 20);
}
