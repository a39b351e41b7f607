//! The fake world: one process plays rank r of a large world
//! (`ACLMEM_HCCL_FAKE_WORLD=N`, `aclmem run --fake-world N`), for planning
//! one rank's memory of a job too big to run, as PyTorch's fake process
//! group and MindSpore's dry run do.
//!
//! Communicators are made without peers (no root info server, no Gloo) and
//! every operation completes at once, with its arguments checked as
//! always. The outputs are deterministic: every other rank contributes
//! zeros to what is moved and the identity to what is reduced, so
//!
//! * `AllReduce`, and `Reduce` at its root: this rank's input;
//! * `ReduceScatter(V)`: this rank's own block of its input;
//! * `AllGather(V)`: this rank's part in its place, zeros elsewhere;
//! * `Broadcast` and `Scatter` from another rank, and every `Recv`: zeros;
//!   from this rank: its own data (its own chunk, for `Scatter`);
//! * `AlltoAll(V, VC)`: the block this rank sends itself, zeros from the
//!   others;
//! * `Reduce` elsewhere than its root, `Send`, `Barrier`: nothing written.
//!
//! In plan mode (`ACLMEM_EMU_OPS=plan`) nothing is written at all.

use crate::comm::{Buf, Comm, Transfer, copy, moves_data, scratch};
use crate::op::Op;
use crate::types::Hccl;

/// The fake world's size, when the environment asks for one.
pub fn world() -> Result<Option<u32>, Hccl> {
    match std::env::var("ACLMEM_HCCL_FAKE_WORLD") {
        Err(_) => Ok(None),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => {
                eprintln!("aclmem-hccl: ACLMEM_HCCL_FAKE_WORLD={v:?} is not a rank count");
                Err(Hccl::E_PARA)
            }
        },
    }
}

/// Zeros `b`.
///
/// # Safety
/// `b` writable (pinned device memory), for the call.
unsafe fn zero(b: Buf) {
    if b.len > 0 {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::write_bytes(b.addr as *mut u8, 0, b.len) }
    }
}

/// Zeros `clear`, then puts `own` (which may lie in it) at `at`.
///
/// # Safety
/// `own` readable, `clear` and `at..at + own.len` writable (pinned device
/// memory), for the call.
unsafe fn keep_only(own: Buf, at: usize, clear: &[Buf]) -> Result<(), Hccl> {
    let mut keep = scratch(own.len)?;
    // SAFETY: the caller's contract; `keep` is owned here.
    unsafe {
        copy(keep.as_mut_ptr() as usize, own.addr, own.len);
        for b in clear {
            zero(*b);
        }
        copy(at, keep.as_ptr() as usize, own.len);
    }
    Ok(())
}

impl Comm {
    /// A collective of the fake world.
    pub(crate) fn fake_collective(&self, op: &Op, local: Result<(), Hccl>) -> Result<(), Hccl> {
        local?;
        self.usable()?;
        if !moves_data() {
            return Ok(());
        }
        let rank = self.rank as usize;
        // SAFETY: the caller pinned every buffer of `op.buffers()` for the
        // call, with the lengths the entry points checked; every copy below
        // stays inside them.
        unsafe {
            match op {
                Op::AllReduce { send, recv, .. } => copy(recv.addr, send.addr, recv.len),
                Op::Broadcast { buf, root, .. } => {
                    if *root != self.rank {
                        zero(*buf);
                    }
                }
                Op::Reduce {
                    send, recv, root, ..
                } => {
                    if *root == self.rank {
                        copy(recv.addr, send.addr, recv.len);
                    }
                }
                Op::AllGather {
                    send,
                    recv,
                    counts,
                    displs,
                    data_type,
                    ..
                } => {
                    let size = data_type.size();
                    let own = Buf {
                        addr: send.addr,
                        len: counts[rank] as usize * size,
                    };
                    keep_only(own, recv.addr + displs[rank] as usize * size, &[*recv])?;
                }
                Op::ReduceScatter {
                    send,
                    recv,
                    counts,
                    displs,
                    data_type,
                    ..
                } => {
                    let size = data_type.size();
                    copy(
                        recv.addr,
                        send.addr + displs[rank] as usize * size,
                        counts[rank] as usize * size,
                    );
                }
                Op::Scatter {
                    send, recv, root, ..
                } => {
                    if *root == self.rank {
                        copy(recv.addr, send.addr + rank * recv.len, recv.len);
                    } else {
                        zero(*recv);
                    }
                }
                Op::AlltoAll {
                    send,
                    send_counts,
                    sdispls,
                    recv,
                    recv_counts,
                    rdispls,
                    data_type,
                    ..
                } => {
                    if send_counts[rank] != recv_counts[rank] {
                        return Err(Hccl::E_PARA);
                    }
                    let size = data_type.size();
                    let own = Buf {
                        addr: send.addr + sdispls[rank] as usize * size,
                        len: send_counts[rank] as usize * size,
                    };
                    let parts: Vec<Buf> = recv_counts
                        .iter()
                        .zip(rdispls)
                        .map(|(c, d)| Buf {
                            addr: recv.addr + *d as usize * size,
                            len: *c as usize * size,
                        })
                        .collect();
                    keep_only(own, recv.addr + rdispls[rank] as usize * size, &parts)?;
                }
                Op::Barrier => {}
            }
        }
        Ok(())
    }

    /// Sends and receives of the fake world: a receive gets zeros.
    pub(crate) fn fake_point_to_point(
        &self,
        items: &[Transfer],
        local: Result<(), Hccl>,
    ) -> Result<(), Hccl> {
        local?;
        self.usable()?;
        if !moves_data() {
            return Ok(());
        }
        for t in items.iter().filter(|t| !t.send) {
            // SAFETY: the caller pinned every item's buffer for the call.
            unsafe { zero(t.buf) };
        }
        Ok(())
    }
}
