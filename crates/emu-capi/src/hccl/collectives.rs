//! The collectives: their arguments checked, then run by
//! `group::collective` (now, or at the end of
//! the thread's group).

use std::ffi::c_void;

use aclmem_sys::aclrtStream;

use aclmem_hccl::comm::{Buf, prefix_sums};
use aclmem_hccl::op::Op;
use aclmem_hccl::types::{DataType, Hccl, HcclResult, ReduceOp};

use super::args::{HcclComm, buf, data_type, ptr_err};
use super::group::collective;
use crate::cptr;

fn reduction(dt: DataType, op: u32) -> Result<ReduceOp, Hccl> {
    let op = ReduceOp::from_raw(op)?;
    dt.reduce(op).map(|_| op).ok_or(Hccl::E_NOT_SUPPORT)
}

fn counts(p: *const c_void, n: u32) -> Result<Vec<u64>, Hccl> {
    // SAFETY: `n` uint64 values, checked by cptr.
    ptr_err(unsafe {
        cptr::read_array(
            p.cast::<u64>(),
            n as usize,
            1 << 16,
            aclmem_core::AclError::INVALID_PARAM,
        )
    })
}

/// The extent `counts` and displacements (elements) need, in bytes.
fn extent(counts: &[u64], displs: &[u64], dt: DataType) -> Result<u64, Hccl> {
    counts
        .iter()
        .zip(displs)
        .map(|(c, d)| {
            d.checked_add(*c)
                .and_then(|e| e.checked_mul(dt.size() as u64))
        })
        .try_fold(0u64, |m, e| e.map(|e| m.max(e)))
        .ok_or(Hccl::E_PARA)
}

/// `HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count,
/// HcclDataType dataType, HcclReduceOp op, HcclComm comm, aclrtStream
/// stream)`: in place when `sendBuf == recvBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllReduce(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: u32,
    op: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclAllReduce", comm, stream, |_| {
        let data_type = data_type(dt)?;
        let op = reduction(data_type, op)?;
        let (send, recv) = (buf(send, count, data_type)?, buf(recv, count, data_type)?);
        if send != recv && send.overlaps(recv) {
            return Err(Hccl::E_PARA);
        }
        Ok(Op::AllReduce {
            send,
            recv,
            count,
            data_type,
            op,
        })
    })
}

/// `HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType
/// dataType, uint32_t root, HcclComm comm, aclrtStream stream)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclBroadcast(
    buffer: *mut c_void,
    count: u64,
    dt: u32,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclBroadcast", comm, stream, |c| {
        let data_type = data_type(dt)?;
        if root >= c.size {
            return Err(Hccl::E_PARA);
        }
        Ok(Op::Broadcast {
            buf: buf(buffer, count, data_type)?,
            count,
            data_type,
            root,
        })
    })
}

/// `HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count,
/// HcclDataType dataType, HcclReduceOp op, uint32_t root, HcclComm comm,
/// aclrtStream stream)`: the result at `root` only; the other ranks'
/// `recvBuf` is left as it was (HCCL does not say; NCCL does the same).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduce(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: u32,
    op: u32,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclReduce", comm, stream, |c| {
        let data_type = data_type(dt)?;
        let op = reduction(data_type, op)?;
        if root >= c.size {
            return Err(Hccl::E_PARA);
        }
        let send = buf(send, count, data_type)?;
        let recv = if c.rank == root {
            buf(recv, count, data_type)?
        } else {
            Buf {
                addr: recv as usize,
                len: 0,
            }
        };
        if send != recv && send.overlaps(recv) {
            return Err(Hccl::E_PARA);
        }
        Ok(Op::Reduce {
            send,
            recv,
            count,
            data_type,
            op,
            root,
        })
    })
}

/// `HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t
/// sendCount, HcclDataType dataType, HcclComm comm, aclrtStream stream)`:
/// rank r's part at `r * sendCount`; in place when `sendBuf` is already
/// there.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllGather(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclAllGather", comm, stream, |c| {
        let data_type = data_type(dt)?;
        let n = u64::from(c.size);
        let total = count.checked_mul(n).ok_or(Hccl::E_PARA)?;
        let counts = vec![count; c.size as usize];
        let displs = (0..n).map(|i| i * count).collect();
        Ok(Op::AllGather {
            send: buf(send, count, data_type)?,
            recv: buf(recv, total, data_type)?,
            counts,
            displs,
            data_type,
            v: false,
        })
    })
}

/// `HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void
/// *recvBuf, const void *recvCounts, const void *recvDispls, HcclDataType
/// dataType, HcclComm comm, aclrtStream stream)`: counts and displacements
/// are `uint64_t` elements; `recvCounts[i]` must be rank i's `sendCount`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllGatherV(
    send: *mut c_void,
    count: u64,
    recv: *mut c_void,
    recv_counts: *const c_void,
    recv_displs: *const c_void,
    dt: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclAllGatherV", comm, stream, |c| {
        let data_type = data_type(dt)?;
        let counts = counts(recv_counts, c.size)?;
        let displs = counts_or_ptr(recv_displs, c.size)?;
        if counts[c.rank as usize] != count {
            return Err(Hccl::E_PARA);
        }
        let send = buf(send, count, data_type)?;
        let recv = Buf {
            addr: recv as usize,
            len: extent(&counts, &displs, data_type)? as usize,
        };
        if recv.addr == 0 && recv.len > 0 {
            return Err(Hccl::E_PTR);
        }
        if send.overlaps(recv) {
            return Err(Hccl::E_PARA);
        }
        Ok(Op::AllGather {
            send,
            recv,
            counts,
            displs,
            data_type,
            v: true,
        })
    })
}

fn counts_or_ptr(p: *const c_void, n: u32) -> Result<Vec<u64>, Hccl> {
    if p.is_null() {
        Err(Hccl::E_PTR)
    } else {
        counts(p, n)
    }
}

/// `HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t
/// recvCount, HcclDataType dataType, HcclReduceOp op, HcclComm comm,
/// aclrtStream stream)`: chunk r of every rank's `sendBuf` reduced into
/// rank r's `recvBuf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduceScatter(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: u32,
    op: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclReduceScatter", comm, stream, |c| {
        let data_type = data_type(dt)?;
        let op = reduction(data_type, op)?;
        let n = u64::from(c.size);
        let total = count.checked_mul(n).ok_or(Hccl::E_PARA)?;
        Ok(Op::ReduceScatter {
            send: buf(send, total, data_type)?,
            recv: buf(recv, count, data_type)?,
            counts: vec![count; c.size as usize],
            displs: (0..n).map(|i| i * count).collect(),
            data_type,
            op,
            v: false,
        })
    })
}

/// `HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts,
/// const void *sendDispls, void *recvBuf, uint64_t recvCount, HcclDataType
/// dataType, HcclReduceOp op, HcclComm comm, aclrtStream stream)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduceScatterV(
    send: *mut c_void,
    send_counts: *const c_void,
    send_displs: *const c_void,
    recv: *mut c_void,
    count: u64,
    dt: u32,
    op: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclReduceScatterV", comm, stream, |c| {
        let data_type = data_type(dt)?;
        let op = reduction(data_type, op)?;
        let counts = counts_or_ptr(send_counts, c.size)?;
        let displs = counts_or_ptr(send_displs, c.size)?;
        if counts[c.rank as usize] != count {
            return Err(Hccl::E_PARA);
        }
        let send = Buf {
            addr: send as usize,
            len: extent(&counts, &displs, data_type)? as usize,
        };
        let recv = buf(recv, count, data_type)?;
        if (send.addr == 0 && send.len > 0) || send.overlaps(recv) {
            return Err(if send.addr == 0 {
                Hccl::E_PTR
            } else {
                Hccl::E_PARA
            });
        }
        Ok(Op::ReduceScatter {
            send,
            recv,
            counts,
            displs,
            data_type,
            op,
            v: true,
        })
    })
}

/// `HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t
/// recvCount, HcclDataType dataType, uint32_t root, HcclComm comm,
/// aclrtStream stream)`: `sendBuf` is read at the root only (NULL
/// elsewhere is fine).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclScatter(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: u32,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclScatter", comm, stream, |c| {
        let data_type = data_type(dt)?;
        if root >= c.size {
            return Err(Hccl::E_PARA);
        }
        let total = count.checked_mul(u64::from(c.size)).ok_or(Hccl::E_PARA)?;
        let send = if c.rank == root {
            buf(send, total, data_type)?
        } else {
            Buf { addr: 0, len: 0 }
        };
        let recv = buf(recv, count, data_type)?;
        if send.overlaps(recv) {
            return Err(Hccl::E_PARA);
        }
        Ok(Op::Scatter {
            send,
            recv,
            count,
            data_type,
            root,
        })
    })
}

/// One side of an all-to-all: the buffer, elements per peer, their
/// displacements, the type.
struct Side {
    ptr: *const c_void,
    counts: Vec<u64>,
    displs: Vec<u64>,
    data_type: u32,
}

fn alltoall_op(send: Side, recv: Side, kind: u32) -> Result<Op, Hccl> {
    let Side {
        ptr: send,
        counts: send_counts,
        displs: sdispls,
        data_type: send_type,
    } = send;
    let Side {
        ptr: recv,
        counts: recv_counts,
        displs: rdispls,
        data_type: recv_type,
    } = recv;
    let dt = data_type(send_type)?;
    if data_type(recv_type)? != dt {
        return Err(Hccl::E_PARA);
    }
    let data_type = dt;
    let send_buf = Buf {
        addr: send as usize,
        len: extent(&send_counts, &sdispls, data_type)? as usize,
    };
    let recv_buf = Buf {
        addr: recv as usize,
        len: extent(&recv_counts, &rdispls, data_type)? as usize,
    };
    if (send_buf.addr == 0 && send_buf.len > 0) || (recv_buf.addr == 0 && recv_buf.len > 0) {
        return Err(Hccl::E_PTR);
    }
    if send_buf.overlaps(recv_buf) {
        return Err(Hccl::E_PARA);
    }
    Ok(Op::AlltoAll {
        send: send_buf,
        send_counts,
        sdispls,
        recv: recv_buf,
        recv_counts,
        rdispls,
        data_type,
        kind,
    })
}

/// `HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount,
/// HcclDataType sendType, const void *recvBuf, uint64_t recvCount,
/// HcclDataType recvType, HcclComm comm, aclrtStream stream)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAlltoAll(
    send: *const c_void,
    send_count: u64,
    send_type: u32,
    recv: *const c_void,
    recv_count: u64,
    recv_type: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclAlltoAll", comm, stream, |c| {
        if send_count != recv_count {
            return Err(Hccl::E_PARA);
        }
        let n = c.size as usize;
        let displs: Vec<u64> = (0..n as u64).map(|i| i * send_count).collect();
        alltoall_op(
            Side {
                ptr: send,
                counts: vec![send_count; n],
                displs: displs.clone(),
                data_type: send_type,
            },
            Side {
                ptr: recv,
                counts: vec![recv_count; n],
                displs,
                data_type: recv_type,
            },
            0,
        )
    })
}

/// `HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts,
/// const void *sdispls, HcclDataType sendType, const void *recvBuf, const
/// void *recvCounts, const void *rdispls, HcclDataType recvType, HcclComm
/// comm, aclrtStream stream)`: `uint64_t` elements per peer. Rank i's
/// `sendCounts[j]` must equal rank j's `recvCounts[i]`: the exchange
/// checks it (a difference is `HCCL_E_PARA` on the receiver).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAlltoAllV(
    send: *const c_void,
    send_counts: *const c_void,
    sdispls: *const c_void,
    send_type: u32,
    recv: *const c_void,
    recv_counts: *const c_void,
    rdispls: *const c_void,
    recv_type: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclAlltoAllV", comm, stream, |c| {
        let sc = counts_or_ptr(send_counts, c.size)?;
        let sd = counts_or_ptr(sdispls, c.size)?;
        let rc = counts_or_ptr(recv_counts, c.size)?;
        let rd = counts_or_ptr(rdispls, c.size)?;
        alltoall_op(
            Side {
                ptr: send,
                counts: sc,
                displs: sd,
                data_type: send_type,
            },
            Side {
                ptr: recv,
                counts: rc,
                displs: rd,
                data_type: recv_type,
            },
            1,
        )
    })
}

/// `HcclResult HcclAlltoAllVC(const void *sendBuf, const void
/// *sendCountMatrix, HcclDataType sendType, const void *recvBuf,
/// HcclDataType recvType, HcclComm comm, aclrtStream stream)`: the matrix
/// (`uint64_t [size][size]`, `[i][j]` elements from i to j) is the same on
/// every rank; parts are back to back.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAlltoAllVC(
    send: *const c_void,
    matrix: *const c_void,
    send_type: u32,
    recv: *const c_void,
    recv_type: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    collective("HcclAlltoAllVC", comm, stream, |c| {
        let n = c.size as usize;
        let cells = c.size.checked_mul(c.size).ok_or(Hccl::E_PARA)?;
        let m = counts_or_ptr(matrix, cells)?;
        let me = c.rank as usize;
        let sc: Vec<u64> = (0..n).map(|j| m[me * n + j]).collect();
        let rc: Vec<u64> = (0..n).map(|i| m[i * n + me]).collect();
        let (sd, rd) = (prefix_sums(&sc), prefix_sums(&rc));
        alltoall_op(
            Side {
                ptr: send,
                counts: sc,
                displs: sd,
                data_type: send_type,
            },
            Side {
                ptr: recv,
                counts: rc,
                displs: rd,
                data_type: recv_type,
            },
            2,
        )
    })
}

/// `HcclResult HcclBarrier(HcclComm comm, aclrtStream stream)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclBarrier(comm: HcclComm, stream: aclrtStream) -> HcclResult {
    collective("HcclBarrier", comm, stream, |_| Ok(Op::Barrier))
}
