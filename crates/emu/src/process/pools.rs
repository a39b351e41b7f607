//! Stream-ordered memory pools (`aclrtMemPool*`, CANN's SOMA): the pools
//! of a process, their blocks, and the order between streams that decides
//! which freed block a stream may take again.
//!
//! A pool's memory is device memory made as `aclrtMalloc` makes it
//! ([`Process::new_alloc`], [`Process::map_internal`]): it is charged to
//! the device, mapped in the process, and freed with it. A block is handed
//! out whole (a multiple of 2 MiB, the runtime's
//! `DEVICE_POOL_MIN_BLOCK_SIZE`); a freed block stays *cached* (its memory
//! kept, counted in RESERVED, not in USED) until a stream may take it
//! again or a trim releases it.
//!
//! Every stream's work is done when its call returns, so a free on a
//! stream is complete at once. What stream order still decides is
//! whether another stream may take a freed block: the stream that freed
//! it always may; another one when the pool allows opportunistic or
//! internal-dependency reuse (the free is complete), or, with
//! event-dependency reuse, once it waited for an event recorded on the
//! freeing stream after the free (`aclrtRecordEvent`, then
//! `aclrtStreamWaitEvent`): the runtime's sequence numbers per stream.
//!
//! **Lock order**: the pools' table is taken before the address space and
//! the shards (a block is made and freed with it held), and never while
//! either is held.

use std::collections::BTreeMap;

use aclmem_core::{AclError, Location, MemAttr, Verdict};

use super::charge::Pools;
use super::handles::Origin;
use super::physical::Placement;
pub(crate) use super::pool_table::PoolTable;
use super::pool_table::{Block, POOL_BASE, Pool};
pub use super::pool_table::{POOL_BLOCK, PoolAttr};
use super::{Process, Result};
use crate::machine::PoolId;

impl Process {
    /// A new pool of `size` bytes (already aligned and checked against the
    /// device) on the machine's device `device`.
    pub(crate) fn pool_create(&self, device: u32, size: u64) -> u64 {
        let mut t = self.pools.lock();
        t.next += 1;
        let id = POOL_BASE + t.next * 0x40;
        t.pools.insert(
            id,
            Pool {
                device,
                size,
                event_reuse: false,
                opportunistic: false,
                internal: false,
                threshold: 0,
                busy: BTreeMap::new(),
                cached: BTreeMap::new(),
                reserved: 0,
                used: 0,
                reserved_high: 0,
                used_high: 0,
            },
        );
        id
    }

    /// Pool `pool` goes with all its memory, blocks still in use included
    /// (the runtime checks none); `missing` for a pool that is not live.
    pub(crate) fn pool_destroy(&self, pool: u64, missing: AclError) -> Result<()> {
        let mut t = self.pools.lock();
        let p = t.pools.remove(&pool).ok_or(missing)?;
        for addr in p.busy.keys().chain(p.cached.keys()) {
            let _ = self.free_device(*addr);
        }
        Ok(())
    }

    /// The device (the machine's id) of a live pool.
    pub(crate) fn pool_device(&self, pool: u64, missing: AclError) -> Result<u32> {
        let mut t = self.pools.lock();
        Ok(t.pool(pool, missing)?.device)
    }

    /// An attribute's value (`missing` for a pool that is not live).
    pub(crate) fn pool_attr(&self, pool: u64, attr: PoolAttr, missing: AclError) -> Result<u64> {
        let mut t = self.pools.lock();
        let p = t.pool(pool, missing)?;
        Ok(match attr {
            PoolAttr::ReuseFollowEventDependencies => p.event_reuse.into(),
            PoolAttr::ReuseAllowOpportunistic => p.opportunistic.into(),
            PoolAttr::ReuseAllowInternalDependencies => p.internal.into(),
            PoolAttr::ReleaseThreshold => p.threshold,
            PoolAttr::ReservedMemCurrent => p.reserved,
            PoolAttr::ReservedMemHigh => p.reserved_high,
            PoolAttr::UsedMemCurrent => p.used,
            PoolAttr::UsedMemHigh => p.used_high,
        })
    }

    /// Sets an attribute: the reuse switches take any value (non-zero is
    /// on); the threshold at most the pool's size, the high marks only 0
    /// (`invalid` otherwise); the current values are read only
    /// (`read_only`).
    pub(crate) fn pool_set_attr(
        &self,
        pool: u64,
        attr: PoolAttr,
        value: u64,
        missing: AclError,
        (read_only, invalid): (AclError, AclError),
    ) -> Result<()> {
        let mut t = self.pools.lock();
        let p = t.pool(pool, missing)?;
        match attr {
            PoolAttr::ReservedMemCurrent | PoolAttr::UsedMemCurrent => return Err(read_only),
            PoolAttr::ReuseFollowEventDependencies => p.event_reuse = value != 0,
            PoolAttr::ReuseAllowOpportunistic => p.opportunistic = value != 0,
            PoolAttr::ReuseAllowInternalDependencies => p.internal = value != 0,
            PoolAttr::ReleaseThreshold if value <= p.size => p.threshold = value,
            PoolAttr::ReservedMemHigh if value == 0 => p.reserved_high = 0,
            PoolAttr::UsedMemHigh if value == 0 => p.used_high = 0,
            _ => return Err(invalid),
        }
        Ok(())
    }

    /// A block of `size` bytes (a multiple of [`POOL_BLOCK`]) of `pool`
    /// for `stream`: a cached block of that size the stream may take (its
    /// own first), else
    /// new memory if the pool has room, else the smallest larger cached
    /// block it may take, whole. `missing` for a pool that is not live,
    /// `full` when nothing fits; the device's own answer when it is out of
    /// memory.
    pub(crate) fn pool_malloc(
        &self,
        pool: u64,
        size: u64,
        stream: u64,
        (missing, full): (AclError, AclError),
    ) -> Result<usize> {
        let mut t = self.pools.lock();
        let p = t.pools.get(&pool).ok_or(missing)?;
        // (size, another stream's, address): the stream's own blocks first,
        // as the runtime tries reuse within one stream first.
        let usable: Vec<(u64, bool, usize)> = p
            .cached
            .iter()
            .filter(|(_, b)| b.size >= size && t.may_reuse(p, b, stream))
            .map(|(&a, b)| (b.size, b.stream != stream, a))
            .collect();
        let exact = usable.iter().filter(|u| u.0 == size).min().copied();
        let room = p.reserved + size <= p.size;
        let device = p.device;
        let reuse = exact
            .or_else(|| (!room).then(|| usable.iter().min().copied()).flatten())
            .map(|(s, _, a)| (a, s));
        let p = t.pool(pool, missing)?;
        let (addr, taken) = match reuse {
            Some((addr, block)) => {
                p.cached.remove(&addr);
                (addr, block)
            }
            None if room => {
                let addr = self.pool_block(device, size)?;
                p.reserved += size;
                (addr, size)
            }
            None => return Err(full),
        };
        p.busy.insert(
            addr,
            Block {
                size: taken,
                stream,
                seq: 0,
            },
        );
        p.used += taken;
        p.note_highs();
        Ok(addr)
    }

    /// Device memory for a block, made and mapped as `aclrtMalloc`'s.
    fn pool_block(&self, device: u32, size: u64) -> Result<usize> {
        let placement = Placement {
            location: Location::Device,
            id: device,
            attr: MemAttr::HbmMemHuge,
            verdict: Verdict::Allowed,
        };
        let pools = Pools::one(PoolId::Device(device));
        let id = self.new_alloc(&placement, size, pools, Origin::Plain)?;
        self.map_internal(id, size as usize)
    }

    /// Whether `addr` is inside a block of a pool: `Some(true)` where a
    /// block in use starts, `Some(false)` elsewhere in a block, `None`
    /// outside every pool.
    pub(crate) fn pool_owns(&self, addr: usize) -> Option<bool> {
        self.pools.lock().block_at(addr).map(|(_, start)| start)
    }

    /// The block in use at `addr` goes back to its pool, freed on
    /// `stream` (cached; its memory kept). `not_block` when no block in
    /// use starts there.
    pub(crate) fn pool_free(&self, addr: usize, stream: u64, not_block: AclError) -> Result<()> {
        let mut t = self.pools.lock();
        let Some((id, true)) = t.block_at(addr) else {
            return Err(not_block);
        };
        let seq = {
            let s = t.seq.entry(stream).or_default();
            *s += 1;
            *s
        };
        let p = t.pool(id, not_block)?;
        let mut b = p.busy.remove(&addr).ok_or(not_block)?;
        p.used -= b.size;
        b.stream = stream;
        b.seq = seq;
        p.cached.insert(addr, b);
        Ok(())
    }

    /// `aclrtFree` of a block in use: it leaves its pool and its memory is
    /// freed (RESERVED and USED drop). `not_block` for any other address
    /// inside a pool.
    pub(crate) fn pool_free_now(&self, addr: usize, not_block: AclError) -> Result<()> {
        let mut t = self.pools.lock();
        let Some((id, true)) = t.block_at(addr) else {
            return Err(not_block);
        };
        let p = t.pool(id, not_block)?;
        let b = p.busy.remove(&addr).ok_or(not_block)?;
        p.used -= b.size;
        p.reserved -= b.size;
        self.free_device(addr)
    }

    /// `aclrtMemPoolTrimTo`: `over` when `keep` exceeds the pool's size or
    /// is below what is in use; nothing when RESERVED is at most `keep`;
    /// else cached blocks are released (see [`Pool::take_releasable`]).
    pub(crate) fn pool_trim(
        &self,
        pool: u64,
        keep: u64,
        (missing, over): (AclError, AclError),
    ) -> Result<()> {
        let mut t = self.pools.lock();
        let p = t.pool(pool, missing)?;
        if keep > p.size {
            return Err(over);
        }
        if keep >= p.reserved {
            return Ok(());
        }
        if keep < p.used {
            return Err(over);
        }
        for addr in p.take_releasable(keep) {
            let _ = self.free_device(addr);
        }
        Ok(())
    }

    /// A stream synchronisation on the machine's device `device`: each of
    /// its pools releases cached memory above its release threshold.
    pub(crate) fn pool_sync(&self, device: u32) {
        let mut t = self.pools.lock();
        for p in t.pools.values_mut().filter(|p| p.device == device) {
            let keep = p.threshold;
            for addr in p.take_releasable(keep) {
                let _ = self.free_device(addr);
            }
        }
    }

    /// `aclrtRecordEvent(event, stream)`: the event stands for the frees
    /// on `stream` so far.
    pub(crate) fn pool_record(&self, event: u64, stream: u64) {
        let mut t = self.pools.lock();
        let seq = t.seq.get(&stream).copied().unwrap_or(0);
        t.recorded.insert(event, (stream, seq));
    }

    /// `aclrtStreamWaitEvent(stream, event)`: `stream` is ordered after
    /// the frees `event` stands for.
    pub(crate) fn pool_wait(&self, event: u64, stream: u64) {
        let mut t = self.pools.lock();
        if let Some(&(recorder, seq)) = t.recorded.get(&event) {
            let seen = t.waited.entry((stream, recorder)).or_default();
            *seen = (*seen).max(seq);
        }
    }

    /// The process leaves: its pools go (their memory goes with the
    /// process's allocations).
    pub(crate) fn pools_clear(&self) {
        *self.pools.lock() = PoolTable::default();
    }
}
