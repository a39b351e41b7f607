//! The agreement every collective starts with: each rank contributes what
//! it was asked (operation, type, reduction, root, count) and whether its
//! own arguments are usable, and every rank compares them all. A rank whose
//! arguments are bad answers its own code; the others answer `HCCL_E_PARA`
//! (HCCL's parameter check across ranks, EI0005); nothing is moved unless
//! all agree. Then the operation runs on the engine (`movement`), or in the
//! fake world (`fake`).

use crate::comm::Comm;
use crate::engine::{Context, Failure};
use crate::op::Op;
use crate::types::{DataType, Hccl};

/// What each rank contributes to the agreement before a collective: the
/// call as this rank sees it, and whether its own arguments are usable.
/// Exchanged as bytes between ranks of one build (`repr(C)`, words only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
struct Agreement {
    /// 0, or the HCCL code this rank's own arguments earned.
    status: u64,
    /// Which operation (1 all-reduce ... 8 barrier).
    kind: u64,
    /// `HcclDataType`.
    data_type: u64,
    /// `HcclReduceOp` (0 for an operation without one).
    reduce_op: u64,
    /// The root (0 for an operation without one).
    root: u64,
    /// Elements: the operation's count, or this rank's own part of a
    /// gather or scatter with counts per rank.
    count: u64,
    /// The variant: 1 for a V form; all-to-all's kind (plain, V, VC).
    variant: u64,
    /// A digest of the counts this rank expects of every rank (0 for an
    /// operation without them).
    counts_digest: u64,
}

impl Agreement {
    /// The same call (everything but the status and the count).
    fn same_call(&self, other: &Agreement) -> bool {
        (self.kind, self.data_type, self.reduce_op, self.root)
            == (other.kind, other.data_type, other.reduce_op, other.root)
            && (self.variant, self.counts_digest) == (other.variant, other.counts_digest)
    }
}

/// A digest of a list of counts (SipHash with fixed keys: the same for the
/// same list in every rank of one build).
fn digest(counts: &[u64]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    counts.hash(&mut h);
    h.finish()
}

impl Op {
    /// This rank's contribution to the agreement (its status is filled
    /// in by the caller).
    fn describe(&self, rank: u32) -> Agreement {
        let dt = |d: &DataType| u64::from(d.raw());
        let call = |kind: u64, data_type: &DataType| Agreement {
            kind,
            data_type: dt(data_type),
            ..Agreement::default()
        };
        // For the gathers and scatters with counts per rank, the digest is
        // of the counts this rank expects of every rank: all ranks must
        // expect the same (so all decide alike), and each rank's own part
        // must be what they expect of it (`agrees`).
        let own = |counts: &[u64]| counts.get(rank as usize).copied().unwrap_or(0);
        match self {
            Op::AllReduce {
                count,
                data_type,
                op,
                ..
            } => Agreement {
                reduce_op: u64::from(op.raw()),
                count: *count,
                ..call(1, data_type)
            },
            Op::Broadcast {
                count,
                data_type,
                root,
                ..
            } => Agreement {
                root: u64::from(*root),
                count: *count,
                ..call(2, data_type)
            },
            Op::Reduce {
                count,
                data_type,
                op,
                root,
                ..
            } => Agreement {
                reduce_op: u64::from(op.raw()),
                root: u64::from(*root),
                count: *count,
                ..call(3, data_type)
            },
            Op::AllGather {
                counts,
                data_type,
                v,
                ..
            } => Agreement {
                count: own(counts),
                variant: u64::from(*v),
                counts_digest: digest(counts),
                ..call(4, data_type)
            },
            Op::ReduceScatter {
                counts,
                data_type,
                op,
                v,
                ..
            } => Agreement {
                reduce_op: u64::from(op.raw()),
                count: own(counts),
                variant: u64::from(*v),
                counts_digest: digest(counts),
                ..call(5, data_type)
            },
            Op::Scatter {
                count,
                data_type,
                root,
                ..
            } => Agreement {
                root: u64::from(*root),
                count: *count,
                ..call(6, data_type)
            },
            Op::AlltoAll {
                data_type, kind, ..
            } => Agreement {
                variant: u64::from(*kind),
                ..call(7, data_type)
            },
            Op::Barrier => Agreement {
                kind: 8,
                ..Agreement::default()
            },
        }
    }

    /// Whether every rank's contribution fits this rank's request.
    fn agrees(&self, mine: &Agreement, all: &[Agreement]) -> bool {
        if !all.iter().all(|d| d.same_call(mine)) {
            return false;
        }
        match self {
            Op::AllGather { counts, .. } | Op::ReduceScatter { counts, .. } => {
                // Rank i's own part is what every rank expects of it.
                all.iter().zip(counts).all(|(d, c)| d.count == *c)
            }
            // Checked pairwise by `counts_agree`.
            Op::AlltoAll { .. } => true,
            _ => all.iter().all(|d| d.count == mine.count),
        }
    }
}
impl Comm {
    /// Every rank's contribution to the agreement.
    fn exchange(&self, ctx: &mut Context, mine: Agreement) -> Result<Vec<Agreement>, Failure> {
        let n = self.size as usize;
        let bytes = std::mem::size_of::<Agreement>();
        let mut all = vec![Agreement::default(); n];
        // SAFETY: `mine` is readable for one Agreement, `all` writable for
        // `n`; they do not overlap. An Agreement is plain words.
        unsafe {
            ctx.allgatherv(
                &raw const mine as usize,
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
        mine.status = local.map_or_else(|e| e.code() as u64, |()| 0);
        self.with_context(op.name(), |ctx| {
            let all = self.exchange(ctx, mine)?;
            if let Err(e) = local {
                return Ok(Err(e));
            }
            let agreed = all.iter().all(|d| d.status == 0)
                && op.agrees(&mine, &all)
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
            if !crate::comm::moves_data() {
                // Plan mode: agreed, and nothing moves.
                return Ok(Ok(()));
            }
            // SAFETY: the caller pinned every buffer of `op.buffers()`
            // (checked against its length) for this call.
            unsafe { self.execute(ctx, op) }.map(Ok)
        })?
    }
}
