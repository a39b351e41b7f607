//! Instruments of a process: call counts and injected faults.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use aclmem_core::AclError;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use super::Result;

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

impl Op {
    /// Every operation.
    pub const ALL: [Op; 21] = [
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
        Op::HostRegister,
        Op::HostUnregister,
        Op::Memcpy,
        Op::Memset,
        Op::Context,
        Op::Stream,
        Op::Query,
    ];
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
