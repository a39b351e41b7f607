//! The machine's capacity pools and the one encoding of the (at most two)
//! pools an allocation is charged to.

use crate::config::{EmuConfig, MAX_DEVICES};

/// Capacity pools: device memory and the 1 GiB pool of each device, host
/// memory, and the platform's host-NUMA P2P limit.
pub const MAX_POOLS: usize = 2 * MAX_DEVICES as usize + 2;

/// A capacity pool of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolId {
    /// Device memory of one device.
    Device(u32),
    /// The pre-allocated 1 GiB page pool of one device.
    Huge1G(u32),
    /// Host DDR (plain and NUMA).
    Host,
    /// The platform's limit on host-NUMA P2P memory (A3 super-nodes).
    HostNumaP2p,
}

impl PoolId {
    pub(crate) fn index(self) -> usize {
        match self {
            PoolId::Device(d) => d as usize,
            PoolId::Huge1G(d) => MAX_DEVICES as usize + d as usize,
            PoolId::Host => 2 * MAX_DEVICES as usize,
            PoolId::HostNumaP2p => 2 * MAX_DEVICES as usize + 1,
        }
    }

    pub(crate) fn from_index(i: usize) -> PoolId {
        let d = MAX_DEVICES as usize;
        match i {
            i if i < d => PoolId::Device(i as u32),
            i if i < 2 * d => PoolId::Huge1G((i - d) as u32),
            i if i == 2 * d => PoolId::Host,
            _ => PoolId::HostNumaP2p,
        }
    }
}

/// The pools an allocation is charged to: none (imports), one, or two
/// (device memory and its 1 GiB pool; host memory and the NUMA P2P limit).
/// Stored as one word in the process's allocations and in the shared
/// registry of exports alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pools(u32);

impl Pools {
    /// No pool.
    pub const NONE: Pools = Pools(0);

    /// One pool.
    pub fn one(pool: PoolId) -> Pools {
        Pools(pool.index() as u32 + 1)
    }

    /// Two pools, both charged.
    pub fn two(first: PoolId, second: PoolId) -> Pools {
        Pools((first.index() as u32 + 1) | ((second.index() as u32 + 1) << 16))
    }

    /// The word stored in shared memory.
    pub fn word(self) -> u32 {
        self.0
    }

    /// Reads a stored word; indices outside the table are dropped.
    pub fn from_word(word: u32) -> Pools {
        let valid = |v: u32| if v as usize <= MAX_POOLS { v } else { 0 };
        Pools(valid(word & 0xFFFF) | (valid(word >> 16) << 16))
    }

    /// The pools, in order.
    pub fn iter(self) -> impl Iterator<Item = PoolId> {
        [self.0 & 0xFFFF, self.0 >> 16]
            .into_iter()
            .filter(|&v| v != 0 && (v as usize) <= MAX_POOLS)
            .map(|v| PoolId::from_index(v as usize - 1))
    }
}

pub(crate) fn initial_capacity(config: &EmuConfig, pool: PoolId) -> u64 {
    match pool {
        PoolId::Device(d) if d < config.devices => config.device_memory as u64,
        PoolId::Huge1G(d) if d < config.devices => config.huge1g_pool as u64,
        PoolId::Host => config.host_memory as u64,
        PoolId::HostNumaP2p => config.host_numa_p2p_limit as u64,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_ids_round_trip() {
        for p in [
            PoolId::Device(0),
            PoolId::Device(63),
            PoolId::Huge1G(5),
            PoolId::Host,
            PoolId::HostNumaP2p,
        ] {
            assert_eq!(PoolId::from_index(p.index()), p);
        }
        let w = Pools::two(PoolId::Device(3), PoolId::Huge1G(3)).word();
        assert_eq!(
            Pools::from_word(w).iter().collect::<Vec<_>>(),
            [PoolId::Device(3), PoolId::Huge1G(3)]
        );
        assert_eq!(Pools::NONE.iter().count(), 0);
        assert_eq!(Pools::from_word(u32::MAX).iter().count(), 0);
    }
}
