//! Instruments of a process: call counts and injected faults.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use aclmem_core::{AclError, Location};
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use super::Result;
use super::handles::HandleId;
use crate::{LeakReport, LeakedHandle, LeakedRange, MemKind, PoolId, PoolStats, Stats};

/// Declares [`Op`] and its list of every operation from one list.
macro_rules! operations {
    ($($(#[$doc:meta])* $op:ident,)*) => {
        /// An operation of the API, for fault injection and call counts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op {
            $($(#[$doc])* $op,)*
        }

        impl Op {
            /// Every operation, in the order declared.
            pub const ALL: [Op; [$(Op::$op),*].len()] = [$(Op::$op),*];
        }
    };
}

operations! {
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
    /// `aclrtHostRegister(V2)`.
    HostRegister,
    /// `aclrtHostUnregister`.
    HostUnregister,
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

/// An injected fault: the `remaining`-th call of `op` fails with `code`.
#[derive(Debug, Clone, Copy)]
struct Fault {
    op: Op,
    remaining: u64,
    code: AclError,
}

/// Stripes of the call counters.
const STRIPES: usize = 8;

/// This thread's stripe of striped counters.
fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|s| *s)
}

/// A process's call counters (striped by thread, summed when read) and
/// armed faults.
pub(crate) struct Instrument {
    calls: [CachePadded<[AtomicU64; Op::ALL.len()]>; STRIPES],
    faults: Mutex<Vec<Fault>>,
    armed: AtomicBool,
}

impl Default for Instrument {
    fn default() -> Self {
        Instrument {
            calls: std::array::from_fn(|_| {
                CachePadded::new([const { AtomicU64::new(0) }; Op::ALL.len()])
            }),
            faults: Mutex::new(Vec::new()),
            armed: AtomicBool::new(false),
        }
    }
}

impl Instrument {
    /// Counts a call of `op`; an armed fault on it may fire.
    pub(crate) fn enter(&self, op: Op) -> Result<()> {
        self.calls[stripe()][op as usize].fetch_add(1, Ordering::Relaxed);
        if !self.armed.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut faults = self.faults.lock();
        if let Some(i) = faults.iter().position(|f| f.op == op) {
            faults[i].remaining -= 1;
            if faults[i].remaining == 0 {
                let code = faults.remove(i).code;
                self.armed.store(!faults.is_empty(), Ordering::Release);
                return Err(code);
            }
        }
        Ok(())
    }

    /// Makes the `nth` call of `op` from now (1 = the next one) fail with
    /// `code` (replacing a fault armed on `op` before).
    pub(crate) fn arm(&self, op: Op, nth: u64, code: AclError) {
        let mut faults = self.faults.lock();
        faults.retain(|f| f.op != op);
        faults.push(Fault {
            op,
            remaining: nth.max(1),
            code,
        });
        self.armed.store(true, Ordering::Release);
    }

    /// How many calls of `op` the process made.
    pub(crate) fn calls(&self, op: Op) -> u64 {
        self.calls
            .iter()
            .map(|s| s[op as usize].load(Ordering::Relaxed))
            .sum()
    }
}

impl super::Process {
    /// Makes the `nth` call of `op` from now fail with `code`.
    pub(crate) fn arm_fault(&self, op: Op, nth: u64, code: AclError) {
        self.instrument.arm(op, nth, code);
    }

    /// A snapshot of capacity use, live objects and call counts.
    pub(crate) fn stats(&self) -> Stats {
        let m = &self.machine;
        let pool = |pool, kind| {
            let (capacity, used) = m.region.pool(pool);
            PoolStats {
                capacity: capacity as usize,
                used: used as usize,
                peak: m.region.peak(pool) as usize,
                kind,
            }
        };
        let (mut handles, mut allocs) = (0, 0);
        for (_, s) in self.shards.iter() {
            let s = s.lock();
            handles += s.handles.len();
            allocs += s.allocs.len();
        }
        let (reservations, mappings) = {
            let va = self.va.lock();
            (va.resvs.len(), va.maps.len())
        };
        Stats {
            device: (0..m.config.devices)
                .map(|d| pool(PoolId::Device(d), self.device_kind()))
                .collect(),
            huge1g: (0..m.config.devices)
                .map(|d| pool(PoolId::Huge1G(d), self.device_kind()))
                .collect(),
            host: pool(PoolId::Host, MemKind::Ddr),
            processes: m.region.live_slots(),
            shareable_handles: m.region.export_count(),
            live_allocations: allocs,
            live_handles: handles,
            reservations,
            mappings,
            calls: Op::ALL
                .iter()
                .map(|op| (*op, self.instrument.calls(*op)))
                .collect(),
        }
    }

    /// What this process still holds.
    pub(crate) fn leak_report(&self) -> LeakReport {
        let mut report = LeakReport::default();
        for (i, s) in self.shards.iter() {
            let shard = s.lock();
            for (index, h) in shard.handles.iter() {
                let Some(a) = shard.allocs.get(h.alloc as usize) else {
                    continue;
                };
                report.handles.push(LeakedHandle {
                    handle: HandleId {
                        generation: h.generation,
                        shard: i,
                        index: index as u32,
                    }
                    .encode(),
                    size: a.size as usize,
                    location: a.location,
                    location_id: a.location_id,
                    attr: a.attr,
                    kind: if a.location == Location::Device {
                        self.device_kind()
                    } else {
                        MemKind::Ddr
                    },
                    imported: h.imported,
                });
            }
        }
        let va = self.va.lock();
        for (&addr, r) in &va.resvs {
            let range = LeakedRange { addr, size: r.size };
            if r.plain {
                report.device_allocations.push(range);
            } else {
                report.reservations.push(range);
            }
        }
        for (&addr, e) in &va.maps {
            if !va.resvs.get(&e.resv).is_some_and(|r| r.plain) {
                report.mappings.push(LeakedRange { addr, size: e.size });
            }
        }
        for (&addr, b) in self.hosts.lock().iter() {
            report.host_allocations.push(LeakedRange {
                addr,
                size: b.bytes(),
            });
        }
        report
    }
}
