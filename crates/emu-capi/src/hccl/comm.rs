//! Communicators and their operations.
//!
//! A communicator is one Gloo context (its connections to every peer) and
//! what HCCL keeps beside it: rank, size, name, timeouts, the asynchronous
//! error, suspension, registered memory ranges. Handles given to C are the
//! addresses of registered communicators: a handle that is not one (NULL,
//! destroyed, garbage) answers `HCCL_E_PARA` and is never dereferenced.
//!
//! Every collective begins with an agreement: each rank contributes what
//! it was asked (operation, type, reduction, root, count) and whether its
//! own arguments are usable, and every rank compares them all. A rank whose
//! arguments are bad answers its own code; the others answer `HCCL_E_PARA`
//! (HCCL's parameter check across ranks, EI0005); nothing is moved unless
//! all agree. Device buffers are pinned for the operation (unmapping them
//! meanwhile answers busy) and handed to Gloo by address.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use parking_lot::Mutex;

use aclmem_core::AclError;

use super::engine::{Context, Failure, Status};
use super::types::{DataType, Hccl, ReduceOp};

/// The slots Gloo matches point-to-point messages on: headers, then
/// payloads, FIFO per peer (collectives use slots with a non-zero top byte).
pub(super) const HEADER_SLOT: u64 = 0x4843_434c_0001;
pub(super) const PAYLOAD_SLOT: u64 = 0x4843_434c_0002;

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

static COMMS: Mutex<Option<HashMap<usize, Arc<Comm>>>> = Mutex::new(None);

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

/// An operation, with its arguments checked where they can be alone.
#[derive(Debug, Clone)]
pub enum Op {
    /// `HcclAllReduce`.
    AllReduce {
        send: Buf,
        recv: Buf,
        count: u64,
        data_type: DataType,
        op: ReduceOp,
    },
    /// `HcclBroadcast`.
    Broadcast {
        buf: Buf,
        count: u64,
        data_type: DataType,
        root: u32,
    },
    /// `HcclReduce`.
    Reduce {
        send: Buf,
        recv: Buf,
        count: u64,
        data_type: DataType,
        op: ReduceOp,
        root: u32,
    },
    /// `HcclAllGather(V)`: this rank's `send`, every rank's part at its
    /// displacement (elements) in `recv`.
    AllGather {
        send: Buf,
        recv: Buf,
        counts: Vec<u64>,
        displs: Vec<u64>,
        data_type: DataType,
        v: bool,
    },
    /// `HcclReduceScatter(V)`: block i of every rank's `send` (at its
    /// displacement) reduced into rank i's `recv`.
    ReduceScatter {
        send: Buf,
        recv: Buf,
        counts: Vec<u64>,
        displs: Vec<u64>,
        data_type: DataType,
        op: ReduceOp,
        v: bool,
    },
    /// `HcclScatter`.
    Scatter {
        send: Buf,
        recv: Buf,
        count: u64,
        data_type: DataType,
        root: u32,
    },
    /// `HcclAlltoAll(V, VC)`: counts and displacements in elements.
    AlltoAll {
        send: Buf,
        send_counts: Vec<u64>,
        sdispls: Vec<u64>,
        recv: Buf,
        recv_counts: Vec<u64>,
        rdispls: Vec<u64>,
        data_type: DataType,
        kind: u32,
    },
    /// `HcclBarrier`.
    Barrier,
}

/// What each rank contributes to the agreement: 8 words.
type Desc = [u64; 8];

/// A digest of a list of counts (SipHash with fixed keys: the same for the
/// same list in every rank of one build).
fn digest(counts: &[u64]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    counts.hash(&mut h);
    h.finish()
}

impl Op {
    /// The operation's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Op::AllReduce { .. } => "HcclAllReduce",
            Op::Broadcast { .. } => "HcclBroadcast",
            Op::Reduce { .. } => "HcclReduce",
            Op::AllGather { v: false, .. } => "HcclAllGather",
            Op::AllGather { v: true, .. } => "HcclAllGatherV",
            Op::ReduceScatter { v: false, .. } => "HcclReduceScatter",
            Op::ReduceScatter { v: true, .. } => "HcclReduceScatterV",
            Op::Scatter { .. } => "HcclScatter",
            Op::AlltoAll { .. } => "HcclAlltoAll",
            Op::Barrier => "HcclBarrier",
        }
    }

    /// The device buffers this rank's part touches.
    pub fn buffers(&self, rank: u32) -> Vec<Buf> {
        match self {
            Op::AllReduce { send, recv, .. }
            | Op::Reduce { send, recv, .. }
            | Op::AllGather { send, recv, .. }
            | Op::ReduceScatter { send, recv, .. }
            | Op::AlltoAll { send, recv, .. } => vec![*send, *recv],
            Op::Scatter {
                send, recv, root, ..
            } => {
                if *root == rank {
                    vec![*send, *recv]
                } else {
                    vec![*recv]
                }
            }
            Op::Broadcast { buf, .. } => vec![*buf],
            Op::Barrier => Vec::new(),
        }
    }

    /// This rank's contribution to the agreement (the first word is the
    /// local status, filled in by the caller).
    fn describe(&self, rank: u32) -> Desc {
        let dt = |d: &DataType| u64::from(d.raw());
        match self {
            Op::AllReduce {
                count,
                data_type,
                op,
                ..
            } => [0, 1, dt(data_type), u64::from(op.raw()), 0, *count, 0, 0],
            Op::Broadcast {
                count,
                data_type,
                root,
                ..
            } => [0, 2, dt(data_type), 0, u64::from(*root), *count, 0, 0],
            Op::Reduce {
                count,
                data_type,
                op,
                root,
                ..
            } => [
                0,
                3,
                dt(data_type),
                u64::from(op.raw()),
                u64::from(*root),
                *count,
                0,
                0,
            ],
            // The last word is a digest of the counts this rank expects of
            // every rank: all ranks must expect the same (so all decide
            // alike), and each rank's own part must be what they expect
            // of it (`agrees`).
            Op::AllGather {
                counts,
                data_type,
                v,
                ..
            } => [
                0,
                4,
                dt(data_type),
                0,
                0,
                counts.get(rank as usize).copied().unwrap_or(0),
                u64::from(*v),
                digest(counts),
            ],
            Op::ReduceScatter {
                counts,
                data_type,
                op,
                v,
                ..
            } => [
                0,
                5,
                dt(data_type),
                u64::from(op.raw()),
                0,
                counts.get(rank as usize).copied().unwrap_or(0),
                u64::from(*v),
                digest(counts),
            ],
            Op::Scatter {
                count,
                data_type,
                root,
                ..
            } => [0, 6, dt(data_type), 0, u64::from(*root), *count, 0, 0],
            Op::AlltoAll {
                data_type, kind, ..
            } => [0, 7, dt(data_type), 0, 0, 0, u64::from(*kind), 0],
            Op::Barrier => [0, 8, 0, 0, 0, 0, 0, 0],
        }
    }

    /// Whether every rank's contribution fits this rank's request.
    fn agrees(&self, mine: &Desc, all: &[Desc], rank: u32) -> bool {
        let same_call = |d: &Desc| d[1..5] == mine[1..5] && d[6..] == mine[6..];
        if !all.iter().all(same_call) {
            return false;
        }
        match self {
            Op::AllGather { counts, .. } | Op::ReduceScatter { counts, .. } => {
                // Rank i's own part is what every rank expects of it.
                all.iter().zip(counts).all(|(d, c)| d[5] == *c)
            }
            // Checked pairwise by `counts_agree`.
            Op::AlltoAll { .. } => true,
            _ => {
                let _ = rank;
                all.iter().all(|d| d[5] == mine[5])
            }
        }
    }
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
pub(super) fn scratch(len: usize) -> Result<Vec<u8>, Hccl> {
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
pub(super) unsafe fn copy(dst: usize, src: usize, len: usize) {
    if len > 0 && dst != src {
        // SAFETY: the caller's contract; `copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) }
    }
}

pub(super) fn prefix_sums(counts: &[u64]) -> Vec<u64> {
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
    /// peers (see [`super::fake`]).
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
    pub(super) fn usable(&self) -> Result<(), Hccl> {
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
    pub(super) fn with_context<R>(
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

    /// Every rank's contribution to the agreement.
    fn exchange(&self, ctx: &mut Context, mine: Desc) -> Result<Vec<Desc>, Failure> {
        let n = self.size as usize;
        let bytes = std::mem::size_of::<Desc>();
        let mut all = vec![[0u64; 8]; n];
        // SAFETY: `mine` is readable for one Desc, `all` writable for
        // `n`; they do not overlap.
        unsafe {
            ctx.allgatherv(
                mine.as_ptr() as usize,
                all.as_mut_ptr() as usize,
                &vec![bytes; n],
                self.exec_timeout_ms,
            )?;
        }
        Ok(all)
    }

    /// For an all-to-all: whether every rank sends each peer what that
    /// peer expects to receive (every rank sees every rank's counts, so all
    /// decide alike).
    fn counts_agree(&self, ctx: &mut Context, op: &Op) -> Result<bool, Failure> {
        let Op::AlltoAll {
            send_counts,
            recv_counts,
            ..
        } = op
        else {
            return Ok(true);
        };
        let n = self.size as usize;
        let mine: Vec<u64> = send_counts.iter().chain(recv_counts).copied().collect();
        let mut all = vec![0u64; 2 * n * n];
        // SAFETY: `mine` readable for 2n words, `all` writable for n times
        // that; no overlap.
        unsafe {
            ctx.allgatherv(
                mine.as_ptr() as usize,
                all.as_mut_ptr() as usize,
                &vec![2 * n * 8; n],
                self.exec_timeout_ms,
            )?;
        }
        let sends = |i: usize, j: usize| all[i * 2 * n + j];
        let recvs = |i: usize, j: usize| all[i * 2 * n + n + j];
        Ok((0..n).all(|i| (0..n).all(|j| sends(i, j) == recvs(j, i))))
    }

    /// Runs a collective. `local` is this rank's own verdict on its
    /// arguments (the buffers pinned, or why not): the rank still takes
    /// part in the agreement, so that its peers fail at once instead of
    /// waiting for it.
    pub fn collective(&self, op: &Op, local: Result<(), Hccl>) -> Result<(), Hccl> {
        if self.is_fake() {
            return self.fake_collective(op, local);
        }
        let mut mine = op.describe(self.rank);
        mine[0] = local.map_or_else(|e| e.code() as u64, |()| 0);
        self.with_context(op.name(), |ctx| {
            let all = self.exchange(ctx, mine)?;
            if let Err(e) = local {
                return Ok(Err(e));
            }
            let agreed = all.iter().all(|d| d[0] == 0)
                && op.agrees(&mine, &all, self.rank)
                && self.counts_agree(ctx, op)?;
            if !agreed {
                if !aclmem_emu::env::quiet() {
                    eprintln!(
                        "aclmem-hccl: {}: the ranks' arguments differ or a rank's are invalid (rank {} of {}); nothing moved",
                        op.name(),
                        self.rank,
                        self.size
                    );
                }
                return Ok(Err(Hccl::E_PARA));
            }
            // SAFETY: the caller pinned every buffer of `op.buffers()`
            // (checked against its length) for this call.
            unsafe { self.execute(ctx, op) }.map(Ok)
        })?
    }
}
