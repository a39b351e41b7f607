//! The data movement of agreed operations: Gloo's collectives on pinned
//! device memory, with host scratch only where Gloo cannot place the data
//! itself (displacements, the other ranks' part of a reduce, a reduce-scatter,
//! which Debian's Gloo has no collective for: an allreduce of a packed copy,
//! then this rank's block).

use crate::comm::{
    Comm, HEADER_SLOT, PAYLOAD_SLOT, Transfer, copy, moves_data, prefix_sums, scratch,
};
use crate::engine::{Context, Failure, GlooP2p, Status};
use crate::op::Op;
use crate::types::Hccl;

impl Comm {
    /// The data movement of an agreed operation.
    ///
    /// # Safety
    /// Every buffer of `op.buffers(self.rank)` is pinned device memory for
    /// the call.
    pub(crate) unsafe fn execute(&self, ctx: &mut Context, op: &Op) -> Result<(), Failure> {
        let t = self.exec_timeout_ms;
        let n = self.size as usize;
        let rank = self.rank as usize;
        // SAFETY: the buffers are pinned device memory of the lengths the
        // entry points checked (the caller's contract); scratch vectors are
        // owned here; every copy and Gloo call below stays inside them.
        unsafe {
            match op {
                Op::AllReduce {
                    send,
                    recv,
                    data_type,
                    op,
                    ..
                } => {
                    copy(recv.addr, send.addr, recv.len);
                    let f = data_type.reduce(*op).ok_or_else(no_reduce)?;
                    ctx.allreduce(
                        recv.addr,
                        recv.len / data_type.size(),
                        data_type.size(),
                        f,
                        t,
                    )
                }
                Op::Broadcast { buf, root, .. } => ctx.broadcast(buf.addr, buf.len, *root, t),
                Op::Reduce {
                    send,
                    recv,
                    count,
                    data_type,
                    op,
                    root,
                } => {
                    let f = data_type.reduce(*op).ok_or_else(no_reduce)?;
                    let bytes = *count as usize * data_type.size();
                    if *root as usize == rank {
                        ctx.reduce(
                            send.addr,
                            recv.addr,
                            *count as usize,
                            data_type.size(),
                            f,
                            *root,
                            t,
                        )
                    } else {
                        // The other ranks' recv is left as it was.
                        let mut out = scratch(bytes).map_err(internal)?;
                        ctx.reduce(
                            send.addr,
                            out.as_mut_ptr() as usize,
                            *count as usize,
                            data_type.size(),
                            f,
                            *root,
                            t,
                        )
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
                    let bytes: Vec<usize> = counts.iter().map(|c| *c as usize * size).collect();
                    let packed = prefix_sums(counts) == *displs;
                    let own_at = recv.addr + displs[rank] as usize * size;
                    if packed && !send.overlaps(*recv) {
                        ctx.allgatherv(send.addr, recv.addr, &bytes, t)
                    } else if packed && send.addr == own_at {
                        ctx.allgatherv(0, recv.addr, &bytes, t)
                    } else {
                        let total: usize = bytes.iter().sum();
                        let mut out = scratch(total).map_err(internal)?;
                        let mine = scratch(bytes[rank]).map_err(internal)?;
                        copy(mine.as_ptr() as usize, send.addr, bytes[rank]);
                        ctx.allgatherv(
                            mine.as_ptr() as usize,
                            out.as_mut_ptr() as usize,
                            &bytes,
                            t,
                        )?;
                        let mut at = 0;
                        for i in 0..n {
                            copy(
                                recv.addr + displs[i] as usize * size,
                                out.as_ptr() as usize + at,
                                bytes[i],
                            );
                            at += bytes[i];
                        }
                        Ok(())
                    }
                }
                Op::ReduceScatter {
                    send,
                    recv,
                    counts,
                    displs,
                    data_type,
                    op,
                    ..
                } => {
                    let size = data_type.size();
                    let f = data_type.reduce(*op).ok_or_else(no_reduce)?;
                    let total: usize = counts.iter().map(|c| *c as usize * size).sum();
                    let mut all = scratch(total).map_err(internal)?;
                    let mut at = 0;
                    let mut own = 0;
                    for i in 0..n {
                        let b = counts[i] as usize * size;
                        if i == rank {
                            own = at;
                        }
                        copy(
                            all.as_mut_ptr() as usize + at,
                            send.addr + displs[i] as usize * size,
                            b,
                        );
                        at += b;
                    }
                    ctx.allreduce(all.as_mut_ptr() as usize, total / size, size, f, t)?;
                    copy(
                        recv.addr,
                        all.as_ptr() as usize + own,
                        counts[rank] as usize * size,
                    );
                    Ok(())
                }
                Op::Scatter {
                    send, recv, root, ..
                } => {
                    let root = *root as usize;
                    let mut send_bytes = vec![0i64; n];
                    let mut recv_bytes = vec![0i64; n];
                    recv_bytes[root] = recv.len as i64;
                    let dummy = [0u8; 1];
                    let input = if rank == root {
                        send_bytes.fill(recv.len as i64);
                        send.addr
                    } else {
                        dummy.as_ptr() as usize
                    };
                    ctx.alltoallv(input, &send_bytes, recv.addr, &recv_bytes, t)
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
                    let size = data_type.size() as i64;
                    let sb: Vec<i64> = send_counts.iter().map(|c| *c as i64 * size).collect();
                    let rb: Vec<i64> = recv_counts.iter().map(|c| *c as i64 * size).collect();
                    let s_packed = prefix_sums(send_counts) == *sdispls;
                    let r_packed = prefix_sums(recv_counts) == *rdispls;
                    let input_buf;
                    let input = if s_packed {
                        send.addr
                    } else {
                        input_buf = scratch(sb.iter().sum::<i64>() as usize).map_err(internal)?;
                        let mut at = 0;
                        for j in 0..n {
                            copy(
                                input_buf.as_ptr() as usize + at,
                                send.addr + (sdispls[j] as i64 * size) as usize,
                                sb[j] as usize,
                            );
                            at += sb[j] as usize;
                        }
                        input_buf.as_ptr() as usize
                    };
                    if r_packed {
                        ctx.alltoallv(input, &sb, recv.addr, &rb, t)
                    } else {
                        let mut out = scratch(rb.iter().sum::<i64>() as usize).map_err(internal)?;
                        ctx.alltoallv(input, &sb, out.as_mut_ptr() as usize, &rb, t)?;
                        let mut at = 0;
                        for i in 0..n {
                            copy(
                                recv.addr + (rdispls[i] as i64 * size) as usize,
                                out.as_ptr() as usize + at,
                                rb[i] as usize,
                            );
                            at += rb[i] as usize;
                        }
                        Ok(())
                    }
                }
                Op::Barrier => ctx.barrier(t),
            }
        }
    }

    /// Sends and receives, all posted before any is waited for (HCCL's
    /// `HcclBatchSendRecv`, and `HcclSend`/`HcclRecv`, one each). Each send
    /// is preceded by a header (bytes, type, the sender's verdict): a
    /// receive whose own buffer is bad, or whose size or type differs from
    /// the sender's, drains the payload into scratch and answers
    /// `HCCL_E_PARA` (the receiver's own code for a bad buffer); the sender
    /// cannot see the receiver's verdict, as on HCCL.
    pub fn point_to_point(&self, items: &[Transfer], local: Result<(), Hccl>) -> Result<(), Hccl> {
        if items.iter().any(|t| t.peer >= self.size) {
            return Err(Hccl::E_PARA);
        }
        if self.is_fake() {
            return self.fake_point_to_point(items, local);
        }
        let verdict = local.map_or_else(|e| e.code() as u64, |()| 0);
        self.with_context("HcclSend/HcclRecv", |ctx| {
            let t = self.exec_timeout_ms;
            let mut headers: Vec<[u64; 3]> = items
                .iter()
                .map(|i| {
                    if i.send {
                        [i.buf.len as u64, u64::from(i.data_type.raw()), verdict]
                    } else {
                        [0; 3]
                    }
                })
                .collect();
            let posts: Vec<GlooP2p> = items
                .iter()
                .zip(headers.iter_mut())
                .map(|(i, h)| GlooP2p {
                    send: i32::from(i.send),
                    peer: i.peer as i32,
                    buf: h.as_mut_ptr().cast(),
                    bytes: std::mem::size_of::<[u64; 3]>(),
                    slot: HEADER_SLOT,
                })
                .collect();
            // SAFETY: every header is owned here, one per item.
            unsafe { ctx.p2p(&posts, t)? };
            let mut result = local;
            let mut drains = Vec::new();
            let mut payloads = Vec::new();
            for (i, h) in items.iter().zip(&headers) {
                if i.send {
                    if verdict == 0 {
                        payloads.push((i, i.buf.addr, i.buf.len));
                    }
                    continue;
                }
                let [bytes, dt, theirs] = *h;
                if theirs != 0 {
                    result = result.and(Err(Hccl::E_PARA));
                    continue;
                }
                if verdict != 0 || bytes != i.buf.len as u64 || dt != u64::from(i.data_type.raw()) {
                    result = result.and(Err(Hccl::E_PARA));
                    drains.push(scratch(bytes as usize).map_err(internal)?);
                    let d = drains.last_mut().map_or(0, |d| d.as_mut_ptr() as usize);
                    payloads.push((i, d, bytes as usize));
                } else {
                    payloads.push((i, i.buf.addr, i.buf.len));
                }
            }
            if !moves_data() {
                // Plan mode: the headers went both ways (sizes and types
                // checked); no payload moves.
                return Ok(result);
            }
            let posts: Vec<GlooP2p> = payloads
                .iter()
                .map(|(i, addr, bytes)| GlooP2p {
                    send: i32::from(i.send),
                    peer: i.peer as i32,
                    buf: *addr as *mut _,
                    bytes: *bytes,
                    slot: PAYLOAD_SLOT,
                })
                .collect();
            // SAFETY: device buffers pinned by the caller (when this rank's
            // verdict is good), drains owned here.
            unsafe { ctx.p2p(&posts, t)? };
            Ok(result)
        })?
    }
}

fn no_reduce() -> Failure {
    Failure {
        status: Status::Invalid,
        message: "the 8-bit float types are not reduced by HCCL".into(),
    }
}

fn internal(e: Hccl) -> Failure {
    Failure {
        status: Status::Internal,
        message: format!("no host memory for the operation's scratch ({e:?})"),
    }
}
