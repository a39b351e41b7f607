//! Point-to-point calls, and groups: `HcclSend`, `HcclRecv`,
//! `HcclBatchSendRecv`, `HcclGroupStart`/`HcclGroupEnd`, and how every
//! operation runs (now, or at the end of its thread's group).

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::Arc;

use aclmem_sys::aclrtStream;

use aclmem_hccl::comm::{self, Buf, Comm, Transfer};
use aclmem_hccl::op::Op;
use aclmem_hccl::types::{Hccl, HcclResult, SendRecvItem};

use super::args::{HcclComm, buf, data_type, entry, ptr_err};
use crate::{cptr, state};

/// Work deferred inside `HcclGroupStart`/`HcclGroupEnd`.
enum Deferred {
    /// A collective, or this rank's refusal of one (which still takes its
    /// place in the agreement at the group's end, so the peers answer).
    Collective(Result<Op, Hccl>, usize),
    Transfer(Transfer, usize),
}

/// A thread's open group: how deep, and what it holds.
#[derive(Default)]
struct Group {
    depth: u32,
    work: Vec<(Arc<Comm>, Deferred)>,
}

thread_local! {
    static GROUP: RefCell<Group> = RefCell::new(Group::default());
}

/// Whether the calling thread has a group open.
pub(crate) fn in_group() -> bool {
    GROUP.with(|g| g.borrow().depth > 0)
}

/// Adds to the open group.
fn defer(comm: &Arc<Comm>, work: Deferred) {
    GROUP.with(|g| g.borrow_mut().work.push((Arc::clone(comm), work)));
}

/// Runs `part` with `bufs` pinned: it is given this rank's own verdict
/// (the buffers pinned, or why not; before `aclInit`, `HCCL_E_RUNTIME`) and
/// runs either way, so the peers hear of a bad rank instead of waiting.
fn pinned(
    stream: usize,
    bufs: &[Buf],
    part: impl Fn(Result<(), Hccl>) -> Result<(), Hccl>,
) -> Result<(), Hccl> {
    let ran = state::with_global(|g| {
        let holds = comm::hold(&g.emu, stream, bufs);
        let r = part(holds.as_ref().map(|_| ()).map_err(|e| *e));
        drop(holds);
        Ok(r)
    });
    ran.unwrap_or_else(|_| part(Err(Hccl::E_RUNTIME)))
}

/// Runs a collective now: buffers pinned, then the agreement and the
/// movement; a rank whose own arguments are bad still takes part in the
/// agreement (with its code), so its peers answer at once.
fn run_collective(comm: &Comm, op: Result<Op, Hccl>, stream: usize) -> Result<(), Hccl> {
    match op {
        Ok(op) => pinned(stream, &op.buffers(comm.rank), |local| {
            comm.collective(&op, local)
        }),
        Err(e) => comm.collective(&Op::Barrier, Err(e)),
    }
}

fn run_transfers(comm: &Comm, items: &[Transfer], stream: usize) -> Result<(), Hccl> {
    let bufs: Vec<Buf> = items.iter().map(|t| t.buf).collect();
    pinned(stream, &bufs, |local| comm.point_to_point(items, local))
}

/// A collective entry point: in a group it waits for the group's end.
pub(crate) fn collective(
    name: &'static str,
    comm: HcclComm,
    stream: aclrtStream,
    op: impl FnOnce(&Comm) -> Result<Op, Hccl>,
) -> HcclResult {
    entry(name, || {
        let c = comm::lookup(comm as usize)?;
        let op = op(&c);
        let stream = stream as usize;
        // The peers wait for this rank, even when it refuses its
        // arguments: it takes part with its code (now, or at the group's
        // end), and answers the code at once.
        if in_group() {
            let refused = op.as_ref().err().copied();
            defer(&c, Deferred::Collective(op, stream));
            return refused.map_or(Ok(()), Err);
        }
        run_collective(&c, op, stream)
    })
}

/// A send or a receive: in a group it waits for the group's end.
fn transfer(
    send: bool,
    buffer: *mut c_void,
    count: u64,
    dt: u32,
    peer: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    let name = if send { "HcclSend" } else { "HcclRecv" };
    entry(name, || {
        let c = comm::lookup(comm as usize)?;
        let data_type = data_type(dt)?;
        if peer >= c.size {
            return Err(Hccl::E_PARA);
        }
        let t = Transfer {
            send,
            peer,
            buf: buf(buffer, count, data_type)?,
            data_type,
        };
        if in_group() {
            defer(&c, Deferred::Transfer(t, stream as usize));
            Ok(())
        } else {
            run_transfers(&c, &[t], stream as usize)
        }
    })
}

/// `HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType
/// dataType, uint32_t destRank, HcclComm comm, aclrtStream stream)`:
/// returns once the receiver has the data (HCCL's pairing rule: two ranks
/// that both send first wait until `HCCL_EXEC_TIMEOUT`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclSend(
    send: *mut c_void,
    count: u64,
    dt: u32,
    dest: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    transfer(true, send, count, dt, dest, comm, stream)
}

/// `HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType
/// dataType, uint32_t srcRank, HcclComm comm, aclrtStream stream)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclRecv(
    recv: *mut c_void,
    count: u64,
    dt: u32,
    src: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    transfer(false, recv, count, dt, src, comm, stream)
}

/// `HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t
/// itemNum, HcclComm comm, aclrtStream stream)`: every item posted at
/// once, so sends and receives of one rank never wait for each other. Not
/// allowed inside a group (`HCCL_E_NOT_SUPPORT`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclBatchSendRecv(
    items: *mut SendRecvItem,
    n: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    entry("HcclBatchSendRecv", || {
        let c = comm::lookup(comm as usize)?;
        if in_group() {
            return Err(Hccl::E_NOT_SUPPORT);
        }
        if items.is_null() {
            return Err(Hccl::E_PTR);
        }
        // SAFETY: `n` items of plain data, checked by cptr.
        let raw = ptr_err(unsafe {
            cptr::read_array(
                items.cast_const(),
                n as usize,
                1 << 16,
                aclmem_core::AclError::INVALID_PARAM,
            )
        })?;
        let mut list = Vec::with_capacity(raw.len());
        for it in raw {
            let data_type = data_type(it.data_type)?;
            if it.kind > 1 || it.remote_rank >= c.size {
                return Err(Hccl::E_PARA);
            }
            list.push(Transfer {
                send: it.kind == 0,
                peer: it.remote_rank,
                buf: buf(it.buf as *const c_void, it.count, data_type)?,
                data_type,
            });
        }
        run_transfers(&c, &list, stream as usize)
    })
}

/// `HcclResult HcclGroupStart(void)` (`libhcomm.so`): the calling thread's
/// operations wait for the matching `HcclGroupEnd`. Groups nest.
#[unsafe(no_mangle)]
pub extern "C" fn HcclGroupStart() -> HcclResult {
    entry("HcclGroupStart", || {
        GROUP.with(|g| g.borrow_mut().depth += 1);
        Ok(())
    })
}

/// `HcclResult HcclGroupEnd(void)` (`libhcomm.so`): at the outermost end,
/// runs what the group holds: per communicator its collectives in order,
/// then all its sends and receives at once; communicators side by side
/// (each its own thread), so one process may drive all ranks of
/// `HcclCommInitAll`. An end without a start is `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub extern "C" fn HcclGroupEnd() -> HcclResult {
    entry("HcclGroupEnd", || {
        let work = GROUP.with(|g| {
            let mut g = g.borrow_mut();
            if g.depth == 0 {
                return Err(Hccl::E_PARA);
            }
            g.depth -= 1;
            Ok(if g.depth == 0 {
                std::mem::take(&mut g.work)
            } else {
                Vec::new()
            })
        })?;
        let mut batches: Vec<Batch> = Vec::new();
        for (comm, w) in work {
            let at = match batches.iter().position(|b| Arc::ptr_eq(&b.comm, &comm)) {
                Some(i) => i,
                None => {
                    batches.push(Batch {
                        comm,
                        ops: Vec::new(),
                        transfers: Vec::new(),
                        stream: 0,
                    });
                    batches.len() - 1
                }
            };
            match w {
                Deferred::Collective(op, s) => batches[at].ops.push((op, s)),
                Deferred::Transfer(t, s) => {
                    batches[at].transfers.push(t);
                    batches[at].stream = s;
                }
            }
        }
        if batches.len() <= 1 {
            return batches.iter().try_for_each(Batch::run);
        }
        std::thread::scope(|s| {
            let joins: Vec<_> = batches.iter().map(|b| s.spawn(move || b.run())).collect();
            joins
                .into_iter()
                .try_for_each(|j| j.join().unwrap_or(Err(Hccl::E_INTERNAL)))
        })
    })
}

/// What a group holds for one communicator.
struct Batch {
    comm: Arc<Comm>,
    ops: Vec<(Result<Op, Hccl>, usize)>,
    transfers: Vec<Transfer>,
    stream: usize,
}

impl Batch {
    /// Every collective in order (each one runs, whatever the one before
    /// answered, so the ranks stay in step), then every send and receive.
    fn run(&self) -> Result<(), Hccl> {
        let mut r = Ok(());
        for (op, s) in &self.ops {
            r = r.and(run_collective(&self.comm, op.clone(), *s));
        }
        if !self.transfers.is_empty() {
            r = r.and(run_transfers(&self.comm, &self.transfers, self.stream));
        }
        r
    }
}
