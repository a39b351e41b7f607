//! The state of a process's stream-ordered pools (see `pools`): the
//! attributes, the blocks of each pool, and the order between streams
//! that decides which freed block a stream may take again.

use std::collections::BTreeMap;

use aclmem_core::{AclError, MIB};

use super::Result;

/// The size a pool block is rounded to (`DEVICE_POOL_MIN_BLOCK_SIZE`) and
/// a pool's size is aligned to (`DEVICE_POOL_ALIGN_SIZE`, the recommended
/// granularity of device memory): 2 MiB.
pub const POOL_BLOCK: u64 = 2 * MIB as u64;

/// `aclrtMemPoolAttr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolAttr {
    /// `ACL_RT_MEM_POOL_REUSE_FOLLOW_EVENT_DEPENDENCIES` (1), `uint32_t`.
    ReuseFollowEventDependencies,
    /// `ACL_RT_MEM_POOL_REUSE_ALLOW_OPPORTUNISTIC` (2), `uint32_t`.
    ReuseAllowOpportunistic,
    /// `ACL_RT_MEM_POOL_REUSE_ALLOW_INTERNAL_DEPENDENCIES` (3), `uint32_t`.
    ReuseAllowInternalDependencies,
    /// `ACL_RT_MEM_POOL_ATTR_RELEASE_THRESHOLD` (4), `uint64_t` bytes.
    ReleaseThreshold,
    /// `ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_CURRENT` (5), read only.
    ReservedMemCurrent,
    /// `ACL_RT_MEM_POOL_ATTR_RESERVED_MEM_HIGH` (6); set only to 0.
    ReservedMemHigh,
    /// `ACL_RT_MEM_POOL_ATTR_USED_MEM_CURRENT` (7), read only.
    UsedMemCurrent,
    /// `ACL_RT_MEM_POOL_ATTR_USED_MEM_HIGH` (8); set only to 0.
    UsedMemHigh,
}

impl PoolAttr {
    /// The attribute a C value names.
    pub const fn from_raw(raw: u32) -> Option<PoolAttr> {
        Some(match raw {
            1 => PoolAttr::ReuseFollowEventDependencies,
            2 => PoolAttr::ReuseAllowOpportunistic,
            3 => PoolAttr::ReuseAllowInternalDependencies,
            4 => PoolAttr::ReleaseThreshold,
            5 => PoolAttr::ReservedMemCurrent,
            6 => PoolAttr::ReservedMemHigh,
            7 => PoolAttr::UsedMemCurrent,
            8 => PoolAttr::UsedMemHigh,
            _ => return None,
        })
    }

    /// Whether its value is a `uint32_t` (the reuse switches); the others
    /// are `uint64_t`.
    pub const fn is_u32(self) -> bool {
        matches!(
            self,
            PoolAttr::ReuseFollowEventDependencies
                | PoolAttr::ReuseAllowOpportunistic
                | PoolAttr::ReuseAllowInternalDependencies
        )
    }
}

/// A block of a pool.
#[derive(Debug, Clone, Copy)]
pub(super) struct Block {
    pub(super) size: u64,
    /// The stream that took it (busy) or freed it (cached).
    pub(super) stream: u64,
    /// The freeing stream's sequence number at the free.
    pub(super) seq: u64,
}

/// One pool.
#[derive(Debug)]
pub(super) struct Pool {
    /// The machine's device id.
    pub(super) device: u32,
    /// Its size (`maxSize`, aligned).
    pub(super) size: u64,
    pub(super) event_reuse: bool,
    pub(super) opportunistic: bool,
    pub(super) internal: bool,
    pub(super) threshold: u64,
    pub(super) busy: BTreeMap<usize, Block>,
    pub(super) cached: BTreeMap<usize, Block>,
    pub(super) reserved: u64,
    pub(super) used: u64,
    pub(super) reserved_high: u64,
    pub(super) used_high: u64,
}

impl Pool {
    pub(super) fn note_highs(&mut self) {
        self.reserved_high = self.reserved_high.max(self.reserved);
        self.used_high = self.used_high.max(self.used);
    }

    /// Cached blocks to release, smallest first, until RESERVED is at most
    /// `keep`; a block larger than what is left to release is kept (the
    /// runtime splits it; a block here is released whole).
    pub(super) fn take_releasable(&mut self, keep: u64) -> Vec<usize> {
        let mut order: Vec<(u64, usize)> = self.cached.iter().map(|(&a, b)| (b.size, a)).collect();
        order.sort_unstable();
        let mut out = Vec::new();
        for (size, addr) in order {
            if self.reserved <= keep || size > self.reserved - keep {
                break;
            }
            self.cached.remove(&addr);
            self.reserved -= size;
            out.push(addr);
        }
        out
    }
}

/// The pools of a process, and the order between its streams.
#[derive(Debug, Default)]
pub(crate) struct PoolTable {
    pub(super) pools: BTreeMap<u64, Pool>,
    pub(super) next: u64,
    /// Frees per stream so far (each free takes the next number).
    pub(super) seq: BTreeMap<u64, u64>,
    /// Events recorded on a stream: event → (stream, its number then).
    pub(super) recorded: BTreeMap<u64, (u64, u64)>,
    /// (waiting stream, recording stream) → the highest number waited for.
    pub(super) waited: BTreeMap<(u64, u64), u64>,
}

/// Pool handles: opaque values above this base (never dereferenced).
pub(super) const POOL_BASE: u64 = 0x6d70_0000_0000;

impl PoolTable {
    pub(super) fn pool(&mut self, pool: u64, missing: AclError) -> Result<&mut Pool> {
        self.pools.get_mut(&pool).ok_or(missing)
    }

    /// The pool and block at `addr` (busy or cached, `addr` anywhere in
    /// it); whether it is busy and starts there.
    pub(super) fn block_at(&self, addr: usize) -> Option<(u64, bool)> {
        self.pools.iter().find_map(|(&id, p)| {
            let inside = |m: &BTreeMap<usize, Block>| {
                m.range(..=addr)
                    .next_back()
                    .is_some_and(|(&a, b)| addr < a + b.size as usize)
            };
            if p.busy.contains_key(&addr) {
                Some((id, true))
            } else if inside(&p.busy) || inside(&p.cached) {
                Some((id, false))
            } else {
                None
            }
        })
    }

    /// Whether `stream` may take a block `b` freed on another stream.
    pub(super) fn may_reuse(&self, p: &Pool, b: &Block, stream: u64) -> bool {
        b.stream == stream
            || p.opportunistic
            || p.internal
            || (p.event_reuse
                && self
                    .waited
                    .get(&(stream, b.stream))
                    .is_some_and(|&seen| seen >= b.seq))
    }
}
