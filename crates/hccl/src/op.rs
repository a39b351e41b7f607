//! HCCL's operations as typed values: what a collective asks, with its
//! arguments checked where they can be alone, and the device buffers each
//! rank's part touches.

use crate::comm::Buf;
use crate::types::{DataType, ReduceOp};

/// An operation, with its arguments checked where they can be alone.
#[derive(Debug, Clone)]
pub enum Op {
    /// `HcclAllReduce`.
    AllReduce {
        /// This rank's input.
        send: Buf,
        /// Where this rank's result goes.
        recv: Buf,
        /// Elements.
        count: u64,
        /// The element type.
        data_type: DataType,
        /// The reduction.
        op: ReduceOp,
    },
    /// `HcclBroadcast`.
    Broadcast {
        /// The root's data, and every other rank's result.
        buf: Buf,
        /// Elements.
        count: u64,
        /// The element type.
        data_type: DataType,
        /// The root rank.
        root: u32,
    },
    /// `HcclReduce`.
    Reduce {
        /// This rank's input.
        send: Buf,
        /// Where this rank's result goes.
        recv: Buf,
        /// Elements.
        count: u64,
        /// The element type.
        data_type: DataType,
        /// The reduction.
        op: ReduceOp,
        /// The root rank.
        root: u32,
    },
    /// `HcclAllGather(V)`: this rank's `send`, every rank's part at its
    /// displacement (elements) in `recv`.
    AllGather {
        /// This rank's input.
        send: Buf,
        /// Where this rank's result goes.
        recv: Buf,
        /// Elements of each rank's part.
        counts: Vec<u64>,
        /// Where each rank's part starts (elements).
        displs: Vec<u64>,
        /// The element type.
        data_type: DataType,
        /// The V form (counts per rank given by the caller).
        v: bool,
    },
    /// `HcclReduceScatter(V)`: block i of every rank's `send` (at its
    /// displacement) reduced into rank i's `recv`.
    ReduceScatter {
        /// This rank's input.
        send: Buf,
        /// Where this rank's result goes.
        recv: Buf,
        /// Elements of each rank's part.
        counts: Vec<u64>,
        /// Where each rank's part starts (elements).
        displs: Vec<u64>,
        /// The element type.
        data_type: DataType,
        /// The reduction.
        op: ReduceOp,
        /// The V form (counts per rank given by the caller).
        v: bool,
    },
    /// `HcclScatter`.
    Scatter {
        /// This rank's input.
        send: Buf,
        /// Where this rank's result goes.
        recv: Buf,
        /// Elements.
        count: u64,
        /// The element type.
        data_type: DataType,
        /// The root rank.
        root: u32,
    },
    /// `HcclAlltoAll(V, VC)`: counts and displacements in elements.
    AlltoAll {
        /// This rank's input.
        send: Buf,
        /// Elements sent to each rank.
        send_counts: Vec<u64>,
        /// Where each rank's sent block starts in `send` (elements).
        sdispls: Vec<u64>,
        /// Where this rank's result goes.
        recv: Buf,
        /// Elements received from each rank.
        recv_counts: Vec<u64>,
        /// Where each rank's received block starts in `recv` (elements).
        rdispls: Vec<u64>,
        /// The element type.
        data_type: DataType,
        /// 0 `HcclAlltoAll`, 1 `HcclAlltoAllV`, 2 `HcclAlltoAllVC`.
        kind: u32,
    },
    /// `HcclBarrier`.
    Barrier,
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
}
