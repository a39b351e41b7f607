//! Communicators: the registry of handles, what HCCL keeps beside each
//! one, the device buffers an operation pins, and the helpers the data
//! movement shares.
//!
//! A communicator is one Gloo context (its connections to every peer) and
//! what HCCL keeps beside it: rank, size, name, timeouts, the asynchronous
//! error, suspension, registered memory ranges. Handles given to C are the
//! addresses of registered communicators: a handle that is not one (NULL,
//! destroyed, garbage) answers `HCCL_E_PARA` and is never dereferenced.
//!
//! Every collective begins with an agreement (`agreement`). Device
//! buffers are pinned for the operation (unmapping them meanwhile answers
//! busy) and handed to Gloo by address.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use aclmem_fork::ForkMutex;
use parking_lot::Mutex;

use aclmem_core::AclError;

use crate::engine::{Context, Failure, Status};
use crate::types::{DataType, Hccl};

/// The slots Gloo matches point-to-point messages on: headers, then
/// payloads, FIFO per peer (collectives use slots with a non-zero top byte).
pub(crate) const HEADER_SLOT: u64 = 0x4843_434c_0001;
pub(crate) const PAYLOAD_SLOT: u64 = 0x4843_434c_0002;

/// A communicator.
pub struct Comm {
    /// This rank.
    pub rank: u32,
    /// Ranks in all.
    pub size: u32,
    /// `HcclGetCommName`'s answer.
    pub name: String,
    /// How long an operation may wait for its peers.
    pub exec_timeout_ms: i64,
    /// The connections to the peers; `None` for a communicator of the
    /// fake world (`fake`), which has none.
    context: Mutex<Option<Context>>,
    async_error: AtomicI32,
    suspended: AtomicBool,
    /// Memory ranges set (base, size) and activated (address, size).
    pub ranges: Mutex<Ranges>,
}

/// A communicator's registered memory (`HcclCommSetMemoryRange`,
/// `HcclCommActivateCommMemory`).
#[derive(Debug, Default)]
pub struct Ranges {
    /// Set ranges: base, size.
    pub set: Vec<(usize, usize)>,
    /// Activated memory: address, size.
    pub active: Vec<(usize, usize)>,
}

/// The live communicators (a forked child has none of its parent's).
static COMMS: ForkMutex<Option<HashMap<usize, Arc<Comm>>>> = ForkMutex::new(|| None);

/// Registers a communicator and gives its handle.
pub fn register(comm: Comm) -> usize {
    let comm = Arc::new(comm);
    let handle = Arc::as_ptr(&comm) as usize;
    COMMS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(handle, comm);
    handle
}

/// The communicator of a handle; anything else is `HCCL_E_PARA`.
pub fn lookup(handle: usize) -> Result<Arc<Comm>, Hccl> {
    if handle == 0 {
        return Err(Hccl::E_PTR);
    }
    COMMS
        .lock()
        .as_ref()
        .and_then(|m| m.get(&handle).cloned())
        .ok_or(Hccl::E_PARA)
}

/// Destroys a communicator: `HCCL_E_AGAIN` while another thread runs an
/// operation on it (as HCCL answers), else its connections close (peers
/// still waiting on it fail at once).
pub fn destroy(handle: usize) -> Result<(), Hccl> {
    let comm = lookup(handle)?;
    let busy = comm.context.try_lock().is_none();
    if busy {
        return Err(Hccl::E_AGAIN);
    }
    COMMS.lock().as_mut().and_then(|m| m.remove(&handle));
    Ok(())
}

fn report(what: &str, failure: &Failure) {
    if !aclmem_emu::env::quiet() {
        eprintln!("aclmem-hccl: {what}: {}", failure.message);
    }
}

/// HCCL's code for a failure of the engine.
fn code_of(failure: &Failure) -> Hccl {
    match failure.status {
        Status::Timeout => Hccl::E_TIMEOUT,
        Status::Io => Hccl::E_TCP_TRANSFER,
        Status::Invalid => Hccl::E_PARA,
        Status::Internal => Hccl::E_INTERNAL,
    }
}

/// A device buffer of an operation: address and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buf {
    /// Where.
    pub addr: usize,
    /// How many bytes.
    pub len: usize,
}

impl Buf {
    fn end(self) -> usize {
        self.addr.saturating_add(self.len)
    }

    /// Whether the two share a byte.
    pub fn overlaps(self, other: Buf) -> bool {
        self.len > 0 && other.len > 0 && self.addr < other.end() && other.addr < self.end()
    }
}

/// One send or receive of a point-to-point batch.
#[derive(Debug, Clone, Copy)]
pub struct Transfer {
    /// Send (else receive).
    pub send: bool,
    /// The peer.
    pub peer: u32,
    /// The buffer.
    pub buf: Buf,
    /// The element type (the receiver checks it).
    pub data_type: DataType,
}

/// Device memory held for an operation: pinned until dropped.
pub type Holds<'e> = Vec<aclmem_emu::Hold<'e>>;

fn acl_to_hccl(e: AclError) -> Hccl {
    match e {
        AclError::UNINITIALIZE | AclError::RT_CONTEXT_NULL => Hccl::E_RUNTIME,
        _ => Hccl::E_PTR,
    }
}

/// Pins the buffers for the operation (stream and device checked first).
pub fn hold<'e>(
    emu: &'e aclmem_emu::Emulator,
    stream: usize,
    bufs: &[Buf],
) -> Result<Holds<'e>, Hccl> {
    emu.current_device().map_err(acl_to_hccl)?;
    emu.check_stream(stream as u64).map_err(|_| Hccl::E_PARA)?;
    bufs.iter()
        .filter(|b| b.len > 0)
        .map(|b| {
            if b.addr == 0 {
                Err(Hccl::E_PTR)
            } else {
                emu.hold(b.addr, b.len).map_err(acl_to_hccl)
            }
        })
        .collect()
}

/// Host scratch memory for the parts Gloo cannot place itself.
pub(crate) fn scratch(len: usize) -> Result<Vec<u8>, Hccl> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Hccl::E_MEMORY)?;
    v.resize(len, 0);
    Ok(v)
}

/// Copies `len` bytes between pinned or owned memory.
///
/// # Safety
/// Both ranges valid for `len` bytes (pinned device memory, or memory the
/// caller owns), for the call.
pub(crate) unsafe fn copy(dst: usize, src: usize, len: usize) {
    if len > 0 && dst != src {
        // SAFETY: the caller's contract; `copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) }
    }
}

/// Where each count starts when the counts lie back to back.
pub fn prefix_sums(counts: &[u64]) -> Vec<u64> {
    counts
        .iter()
        .scan(0u64, |acc, c| {
            let at = *acc;
            *acc = acc.saturating_add(*c);
            Some(at)
        })
        .collect()
}

impl Comm {
    /// A communicator over a connected context.
    pub fn new(rank: u32, size: u32, name: String, exec_timeout_ms: i64, context: Context) -> Comm {
        Comm {
            rank,
            size,
            name,
            exec_timeout_ms,
            context: Mutex::new(Some(context)),
            async_error: AtomicI32::new(0),
            suspended: AtomicBool::new(false),
            ranges: Mutex::new(Ranges::default()),
        }
    }

    /// A communicator of the fake world: rank `rank` of `size`, without
    /// peers (see [`crate::fake`]).
    pub fn fake(rank: u32, size: u32, name: String) -> Comm {
        Comm {
            rank,
            size,
            name,
            exec_timeout_ms: 0,
            context: Mutex::new(None),
            async_error: AtomicI32::new(0),
            suspended: AtomicBool::new(false),
            ranges: Mutex::new(Ranges::default()),
        }
    }

    /// Whether this is a communicator of the fake world.
    pub fn is_fake(&self) -> bool {
        self.context.lock().is_none()
    }

    /// Refused while suspended or broken.
    pub(crate) fn usable(&self) -> Result<(), Hccl> {
        if self.suspended.load(Ordering::Acquire) {
            return Err(Hccl::E_SUSPENDING);
        }
        match self.async_error() {
            0 => Ok(()),
            broken => Err(Hccl::ALL
                .get(broken as usize)
                .copied()
                .unwrap_or(Hccl::E_INTERNAL)),
        }
    }

    /// `HcclGetCommAsyncError`: the error that broke the communicator, or 0.
    pub fn async_error(&self) -> i32 {
        self.async_error.load(Ordering::Acquire)
    }

    /// `HcclCommSuspend` / `HcclCommResume`.
    pub fn suspend(&self, on: bool) {
        self.suspended.store(on, Ordering::Release);
    }

    /// Runs `f` on the context: refused while suspended or broken; a lost
    /// peer or a timeout breaks the communicator (its context's state is
    /// unknown afterwards, as Gloo documents).
    pub(crate) fn with_context<R>(
        &self,
        what: &str,
        f: impl FnOnce(&mut Context) -> Result<R, Failure>,
    ) -> Result<R, Hccl> {
        self.usable()?;
        let mut ctx = self.context.lock();
        let ctx = ctx.as_mut().ok_or(Hccl::E_INTERNAL)?;
        f(ctx).map_err(|failure| {
            report(what, &failure);
            let code = code_of(&failure);
            if matches!(failure.status, Status::Timeout | Status::Io) {
                self.async_error.store(code.code(), Ordering::Release);
            }
            code
        })
    }
}

/// Whether operations move their data: not in plan mode
/// (`ACLMEM_EMU_OPS=plan`), where communicators, agreements and the
/// ordering between ranks are real but no device byte is read or written
/// (every rank of a job runs in the same mode: `aclmem run` gives its
/// setting to every process it starts).
pub(crate) fn moves_data() -> bool {
    !aclmem_emu::env::ops().is_ok_and(|m| m.is_plan())
}
