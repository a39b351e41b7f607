//! The model's locks: no lock of the whole model on the hot path, but
//! [`SHARDS`] shards of the address space and [`SHARDS`] shards of the
//! physical handles, each behind its own lock, and the rest (exports,
//! host blocks, IPC imports, the sleep/wake record) behind one lock that
//! only the cold calls take.
//!
//! * An **address shard** ([`Space`]) holds the reservations and
//!   released addresses that start in it, and every mapping and
//!   `aclrtMalloc` block that *touches* it: the address space is cut in
//!   granules of 1 GiB, granule `g` belongs to shard `g % SHARDS`, and a
//!   range spanning several granules is kept in the shard of each (of all
//!   of them when it spans `SHARDS` granules or more). Two ranges that
//!   overlap share a granule, so a check over a range (an overlap, a
//!   mapping inside a reservation, a copy's cover) finds every range it
//!   meets in the shards of its own granules, which the call holds.
//! * A **handle shard** ([`Owned`]) holds the live handles whose value
//!   hashes to it, those freed while still mapped, the recently freed
//!   ones and the sharing of each.
//!
//! A hook takes the shards its call touches ([`Locked`]) before its checks
//! and lets them go after the model's update, the call of the library in
//! between, as the one model lock was taken before: two threads unmapping
//! one mapping are still judged in the order their calls ran. Calls on
//! other addresses and handles take other shards and run beside it.
//!
//! Lock order (no thread ever waits for a lock earlier in it while
//! holding a later one): address shards by ascending index, then handle
//! shards by ascending index, then the rest (`platform::model`); the
//! locks of `hccl`, `mstx`, `graphs`, the findings and the trace after
//! all of them. The `pthread_atfork` prepare handler takes them all in
//! this order (`platform::before_fork`).

use std::sync::MutexGuard;

use aclmem_fork::KeptMutex;

use super::*;

/// Shards of each kind (a power of two).
pub(crate) const SHARDS: usize = 16;

/// Bits of an address below its granule.
const GRANULE_SHIFT: u32 = 30;

/// Reservations, mappings and `aclrtMalloc` blocks of one address shard
/// (see the module's documentation).
#[derive(Default)]
pub(crate) struct Space {
    /// Reservations that start here, by start address (size, site).
    pub(super) resvs: HashMap<usize, (usize, Site)>,
    /// Recently released reservation addresses that start here.
    pub(super) released: Ended,
    /// Mappings that touch this shard, by start address.
    pub(super) maps: BTreeMap<usize, Map>,
    /// `aclrtMalloc` blocks that touch this shard (with the 64 bytes
    /// past their end a copy may reach), by start address.
    pub(super) device_allocs: BTreeMap<usize, (usize, Option<u32>, Site)>,
    /// Addresses starting here unmapped during the sleep `gap_epoch`.
    pub(super) gap: HashSet<usize>,
    pub(super) gap_epoch: u32,
}

/// Physical handles of one handle shard.
#[derive(Default)]
pub(crate) struct Owned {
    pub(super) handles: HashMap<usize, Handle>,
    /// Handles freed while mapped (in `freed` too).
    pub(super) lingering: HashMap<usize, Lingering>,
    /// Recently freed handle values, for double frees and uses after free
    /// (asked only of a value that is not a live handle).
    pub(super) freed: Ended,
    /// Handles this process exported or imported: the shareable handle's
    /// text and whether it was imported.
    pub(super) shared: HashMap<usize, (String, bool)>,
}

struct Shards {
    spaces: [KeptMutex<Space>; SHARDS],
    owners: [KeptMutex<Owned>; SHARDS],
}

fn shards() -> &'static Shards {
    static SHARDED: std::sync::OnceLock<Shards> = std::sync::OnceLock::new();
    SHARDED.get_or_init(|| Shards {
        spaces: std::array::from_fn(|_| KeptMutex::new(Space::default())),
        owners: std::array::from_fn(|_| KeptMutex::new(Owned::default())),
    })
}

/// The address shard of `addr`.
pub(super) fn space_of(addr: usize) -> usize {
    (addr >> GRANULE_SHIFT) % SHARDS
}

/// The address shards `addr..addr + size` touches, as bits (an empty
/// range: the shard of `addr`).
pub(super) fn spaces_of(addr: usize, size: usize) -> u32 {
    let first = addr >> GRANULE_SHIFT;
    let last = addr.saturating_add(size.max(1) - 1) >> GRANULE_SHIFT;
    if last - first >= SHARDS - 1 {
        return (1u32 << SHARDS) - 1;
    }
    (first..=last).fold(0, |bits, g| bits | 1 << (g % SHARDS))
}

/// The handle shard of `h` (handles are pointers or small numbers: their
/// bits are mixed first).
pub(super) fn owner_of(h: usize) -> usize {
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize) >> (usize::BITS - 4)) % SHARDS
}

/// Address shards held by the calling thread (with their indices, in the
/// order taken: a call holds one or two).
pub(crate) struct Spaces {
    held: heapless::Vec<(usize, MutexGuard<'static, Space>), SHARDS>,
    bits: u32,
}

impl Spaces {
    /// Locks the shards of `bits`, by ascending index.
    pub(super) fn lock(bits: u32) -> Spaces {
        let all = shards();
        let mut held = heapless::Vec::new();
        let mut left = bits;
        while left != 0 {
            let i = left.trailing_zeros() as usize;
            left &= left - 1;
            // At most SHARDS: one per bit of a `SHARDS`-bit mask.
            let _ = held.push((i, all.spaces[i].lock()));
        }
        Spaces { held, bits }
    }

    /// Whether the shards of `bits` are all held.
    pub(super) fn covers(&self, bits: u32) -> bool {
        self.bits & bits == bits
    }

    /// The held shard of `addr`.
    pub(super) fn at(&mut self, addr: usize) -> &mut Space {
        let i = space_of(addr);
        self.held
            .iter_mut()
            .find(|(j, _)| *j == i)
            .map(|(_, g)| &mut **g)
            .expect("the shard of an address the call names is held")
    }

    /// The held shard of `addr`, to read.
    pub(super) fn get(&self, addr: usize) -> &Space {
        let i = space_of(addr);
        self.held
            .iter()
            .find(|(j, _)| *j == i)
            .map(|(_, g)| &**g)
            .expect("the shard of an address the call names is held")
    }

    /// Every held shard.
    pub(super) fn each(&mut self) -> impl Iterator<Item = &mut Space> {
        self.held.iter_mut().map(|(_, g)| &mut **g)
    }

    /// Every held shard with its index, to read.
    pub(super) fn each_ref(&self) -> impl Iterator<Item = (usize, &Space)> {
        self.held.iter().map(|(i, g)| (*i, &**g))
    }

    /// The shards that hold the range keyed at `addr` (its start) of
    /// `size` bytes, found in the shard of `addr` (`size_in` answers its
    /// size there, or `None` when there is none): the calling thread holds
    /// the shard of `addr` and, when the range spans others, those too.
    /// What another thread changed while they were taken is asked again.
    pub(super) fn holding(addr: usize, size_in: impl Fn(&Space) -> Option<usize>) -> Spaces {
        let mut bits = 1 << space_of(addr);
        loop {
            let spaces = Spaces::lock(bits);
            let want = size_in(spaces.get(addr)).map_or(bits, |size| spaces_of(addr, size));
            if spaces.covers(want) {
                return spaces;
            }
            bits |= want;
        }
    }
}

/// Locks the handle shard of `h`.
pub(super) fn owner(h: usize) -> MutexGuard<'static, Owned> {
    shards().owners[owner_of(h)].lock()
}

/// Calls `f` with each handle shard, one at a time.
pub(super) fn each_owner(mut f: impl FnMut(&Owned)) {
    for o in &shards().owners {
        f(&o.lock());
    }
}

/// What a hook of physical memory holds from its checks to the model's
/// update ([`hook!`](crate::hooks::hook)'s `locked` form): the address
/// shards and the handle shard its call touches, and whether the call
/// ended a sleep (a wake, recorded once the shards are let go: it walks
/// every handle shard).
pub(crate) struct Locked {
    pub(super) spaces: Option<Spaces>,
    pub(super) owner: Option<MutexGuard<'static, Owned>>,
    /// The least physical memory of the sleep this call ended.
    pub(super) woke: Option<usize>,
}

impl Locked {
    /// Nothing held yet (calls that make an object lock it once made).
    pub(crate) fn none() -> Locked {
        Locked {
            spaces: None,
            owner: None,
            woke: None,
        }
    }

    /// The handle shard of `h`.
    pub(crate) fn handle(h: usize) -> Locked {
        Locked {
            owner: Some(owner(h)),
            ..Locked::none()
        }
    }

    /// The address shards of `addr..addr + size` and the handle shard of
    /// `h` (`aclrtMapMem`).
    pub(crate) fn map(addr: usize, size: usize, h: usize) -> Locked {
        let spaces = Spaces::lock(spaces_of(addr, size));
        Locked {
            spaces: Some(spaces),
            owner: Some(owner(h)),
            woke: None,
        }
    }

    /// The address shards of the mapping at `addr`, and the handle shard
    /// of its handle (`aclrtUnmapMem`).
    pub(crate) fn unmap(addr: usize) -> Locked {
        let spaces = Spaces::holding(addr, |s| s.maps.get(&addr).map(|m| m.size));
        let owner = spaces.get(addr).maps.get(&addr).map(|m| owner(m.handle));
        Locked {
            spaces: Some(spaces),
            owner,
            woke: None,
        }
    }

    /// The address shards of the reservation at `addr`
    /// (`aclrtReleaseMemAddress`).
    pub(crate) fn release(addr: usize) -> Locked {
        let spaces = Spaces::holding(addr, |s| s.resvs.get(&addr).map(|r| r.0));
        Locked {
            spaces: Some(spaces),
            ..Locked::none()
        }
    }

    pub(super) fn spaces(&mut self) -> &mut Spaces {
        self.spaces.as_mut().expect("the call's address shards")
    }

    pub(super) fn owned(&mut self) -> &mut Owned {
        self.owner.as_deref_mut().expect("the call's handle shard")
    }

    /// Lets the shards go, then records the wake the call made, if it made
    /// one.
    pub(crate) fn finish(self) {
        let Locked {
            spaces,
            owner,
            woke,
        } = self;
        drop(owner);
        drop(spaces);
        if let Some(low) = woke {
            super::cycles::woke(low);
        }
    }
}

/// Every shard, held: for the walks over the whole model (leaks, what
/// holds a device's memory) and for a fork.
pub(crate) struct Whole {
    pub(super) spaces: Spaces,
    pub(super) owners: [MutexGuard<'static, Owned>; SHARDS],
}

/// Locks every shard, in the lock order.
pub(crate) fn whole() -> Whole {
    let spaces = Spaces::lock((1 << SHARDS) - 1);
    let all = shards();
    Whole {
        spaces,
        owners: std::array::from_fn(|i| all.owners[i].lock()),
    }
}

/// Whether some thread holds a shard (the process's end checks nothing
/// then: it may be a signal handler interrupting that thread).
pub(crate) fn busy() -> bool {
    let all = shards();
    all.spaces.iter().any(|s| s.try_lock().is_none())
        || all.owners.iter().any(|s| s.try_lock().is_none())
}

impl Whole {
    /// Every mapping once (a mapping is in the shard of each granule it
    /// touches: here in the shard of its start only), by start address.
    pub(super) fn maps(&self) -> BTreeMap<usize, Map> {
        self.spaces
            .each_ref()
            .flat_map(|(i, s)| s.maps.iter().filter(move |(a, _)| space_of(**a) == i))
            .map(|(&a, m)| (a, *m))
            .collect()
    }

    /// Every `aclrtMalloc` block once, by start address.
    pub(super) fn device_allocs(&self) -> BTreeMap<usize, (usize, Option<u32>, Site)> {
        self.spaces
            .each_ref()
            .flat_map(|(i, s)| {
                s.device_allocs
                    .iter()
                    .filter(move |(a, _)| space_of(**a) == i)
            })
            .map(|(&a, b)| (a, *b))
            .collect()
    }

    /// Every reservation, by start address.
    pub(super) fn resvs(&self) -> BTreeMap<usize, (usize, Site)> {
        self.spaces
            .each_ref()
            .flat_map(|(_, s)| s.resvs.iter().map(|(&a, r)| (a, *r)))
            .collect()
    }

    /// Every live handle.
    pub(super) fn handles(&self) -> impl Iterator<Item = (&usize, &Handle)> {
        self.owners.iter().flat_map(|o| o.handles.iter())
    }

    /// The sharing of `h`.
    pub(super) fn shared(&self, h: usize) -> Option<&(String, bool)> {
        self.owners[owner_of(h)].shared.get(&h)
    }

    /// Empties every shard (what `aclFinalize`, exit and a fork's child
    /// start from).
    pub(crate) fn clear(&mut self) {
        for s in self.spaces.each() {
            *s = Space::default();
        }
        for o in &mut self.owners {
            **o = Owned::default();
        }
    }

    /// Keeps every shard held across a fork by the forking thread.
    pub(crate) fn hold_for_fork(self) {
        for (_, g) in self.spaces.held {
            aclmem_fork::hold(g);
        }
        for g in self.owners {
            aclmem_fork::hold(g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_in_the_shard_of_each_granule_it_touches() {
        const G: usize = 1 << GRANULE_SHIFT;
        assert_eq!(spaces_of(0, 0), 1);
        assert_eq!(spaces_of(G - 1, 1), 1);
        assert_eq!(spaces_of(G - 1, 2), 0b11);
        assert_eq!(spaces_of(3 * G, G), 0b1000);
        assert_eq!(spaces_of(15 * G, 2 * G), 1 << 15 | 1);
        assert_eq!(spaces_of(5 * G, 16 * G), 0xffff);
        assert_eq!(spaces_of(usize::MAX - 10, 100), 1 << space_of(usize::MAX));
        // Handles spread over the shards.
        let used: std::collections::HashSet<usize> =
            (0..64).map(|i| owner_of(0x5555_0000 + i * 0x40)).collect();
        assert!(used.len() > SHARDS / 2, "{used:?}");
    }
}
