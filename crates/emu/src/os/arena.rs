//! Virtual address space for reservations: large `PROT_NONE` arenas,
//! reserved once, from which reservations are carved without a system call.
//!
//! The window CANN 9.0 documents for caller-chosen addresses, 16–24 TiB, is
//! one arena shared by every emulated process of the OS process (it is one
//! address space) and used first; more arenas are taken from the kernel as
//! needed.
//! Releasing a reservation is bookkeeping only: every mapping in it was
//! already replaced by inaccessible arena again.
//!
//! Written here rather than taken from `vm-allocator`: its
//! `AddressAllocator` manages one range (with alignments and exact
//! addresses, as needed here) and searches linearly; the arenas here are
//! several ranges taken from the kernel on demand plus a window shared by
//! every emulated process of the OS process, so one allocator per arena
//! would need the same glue as the carving itself.

use std::collections::BTreeMap;
use std::sync::Arc;

use aclmem_fork::{ForkMutex, ForkMutexGuard};
use parking_lot::Mutex;

use crate::os::sys;

/// The window for caller-chosen addresses (CANN 9.0).
pub const WINDOW: std::ops::Range<usize> = (16 << 40)..(24 << 40);

/// One arena.
#[derive(Debug)]
struct Arena {
    start: usize,
    len: usize,
    /// Made for one caller-chosen address; unmapped once free again.
    exact: bool,
    /// Free ranges: start → length.
    free: BTreeMap<usize, usize>,
}

/// The chunks of the window this copy of the emulator took, shared by every
/// emulated process of the OS process (they share one address space), per
/// fork generation. Chunks are taken on demand, so other users of the
/// window (another copy of the library, the program) keep the rest.
static WINDOW_CHUNKS: ForkMutex<(u64, Vec<Arc<Mutex<Arena>>>)> = ForkMutex::new(|| (0, Vec::new()));

/// Window chunks are taken in multiples of this.
const CHUNK: usize = 64 << 30;

fn window_chunks() -> ForkMutexGuard<'static, (u64, Vec<Arc<Mutex<Arena>>>)> {
    let mut w = WINDOW_CHUNKS.lock();
    let generation = crate::os::fork::generation();
    if w.0 != generation {
        // A forked child: the parent's chunks were unmapped by the fork
        // handler.
        *w = (generation, Vec::new());
    }
    w
}

/// Every arena of this OS process (start → length), per fork generation:
/// where a window may be mapped (see `window`).
static ALL: ForkMutex<(u64, BTreeMap<usize, usize>)> = ForkMutex::new(|| (0, BTreeMap::new()));

fn all() -> ForkMutexGuard<'static, (u64, BTreeMap<usize, usize>)> {
    let mut a = ALL.lock();
    let generation = crate::os::fork::generation();
    if a.0 != generation {
        *a = (generation, BTreeMap::new());
    }
    a
}

/// Records an arena just reserved (for a forked child to drop, and for
/// windows to be mapped in).
fn reserved(start: usize, len: usize) {
    crate::os::fork::register_mapping(start, len);
    all().1.insert(start, len);
}

/// Returns an arena to the kernel, unless a window is still mapped in it
/// (then the range stays reserved: never unmapped under a window).
fn release(start: usize, len: usize) {
    super::window::unless_windows_within(start, len, || {
        all().1.remove(&start);
        crate::os::fork::unregister_mapping(start);
        // SAFETY: the arena is this process's; no window is mapped in it
        // (checked, with the windows' registry held so that none is made
        // meanwhile) and nothing else of it is ever referenced.
        let _ = unsafe { sys::release_arena(start, len) };
    });
}

/// Whether `addr..addr + len` lies in one arena of this OS process.
pub(crate) fn contains(addr: usize, len: usize) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    all()
        .1
        .range(..=addr)
        .next_back()
        .is_some_and(|(&a, &l)| end <= a + l)
}

/// Reserves `len` bytes at exactly `addr` as a new window chunk.
fn new_chunk(addr: usize, len: usize) -> Result<Arc<Mutex<Arena>>, rustix::io::Errno> {
    let start = sys::reserve_arena(len, Some(addr))?;
    reserved(start, len);
    Ok(Arc::new(Mutex::new(Arena::new(start, len))))
}

/// Every arena a process uses: chunks of the shared window (first) and its
/// own.
#[derive(Debug, Default)]
pub struct Arenas {
    own: Vec<Arena>,
}

/// The size of a process's own arenas (outside the window).
const ARENA: usize = 1 << 38;

impl Arenas {
    /// A free range of `len` bytes aligned to `align` (a power of two), at
    /// `want` if given (which must then be free).
    pub fn take(&mut self, len: usize, align: usize, want: Option<usize>) -> Result<usize, Taken> {
        if let Some(addr) = want {
            return self.take_at(addr, len);
        }
        if let Some(addr) = take_in_window(len, align) {
            return Ok(addr);
        }
        for a in &mut self.own {
            if let Some(addr) = a.take(len, align) {
                return Ok(addr);
            }
        }
        let mut size = (len.checked_add(align).ok_or(Taken::NoSpace)?)
            .max(ARENA)
            .next_power_of_two();
        loop {
            match sys::reserve_arena(size, None) {
                Ok(start) => {
                    reserved(start, size);
                    let mut arena = Arena::new(start, size);
                    let addr = arena.take(len, align).ok_or(Taken::NoSpace);
                    self.own.push(arena);
                    return addr;
                }
                // Address spaces too small for the size: halve it.
                Err(_) if size / 2 >= len + align => size /= 2,
                Err(_) => return Err(Taken::NoSpace),
            }
        }
    }

    fn take_at(&mut self, addr: usize, len: usize) -> Result<usize, Taken> {
        let end = addr.checked_add(len).ok_or(Taken::Invalid)?;
        {
            let w = window_chunks();
            if let Some(c) = w.1.iter().find(|c| {
                let c = c.lock();
                c.start <= addr && end <= c.start + c.len
            }) {
                return c
                    .lock()
                    .take_exact(addr, len)
                    .then_some(addr)
                    .ok_or(Taken::InUse);
            }
        }
        if let Some(a) = self
            .own
            .iter_mut()
            .find(|a| a.start <= addr && end <= a.start + a.len)
        {
            return a.take_exact(addr, len).then_some(addr).ok_or(Taken::InUse);
        }
        // Elsewhere: an arena of exactly that range, if nothing is there,
        // returned to the kernel as soon as the reservation is released.
        match sys::reserve_arena(len, Some(addr)) {
            Ok(start) => {
                reserved(start, len);
                let mut arena = Arena::new(start, len);
                arena.exact = true;
                let taken = arena.take_exact(addr, len);
                self.own.push(arena);
                taken.then_some(addr).ok_or(Taken::InUse)
            }
            Err(rustix::io::Errno::EXIST) => Err(Taken::InUse),
            Err(_) => Err(Taken::Invalid),
        }
    }

    /// Returns a range.
    pub fn give(&mut self, addr: usize, len: usize) {
        {
            let w = window_chunks();
            if let Some(c) = w.1.iter().find(|c| {
                let c = c.lock();
                c.start <= addr && addr < c.start + c.len
            }) {
                c.lock().give(addr, len);
                return;
            }
        }
        if let Some(i) = self
            .own
            .iter()
            .position(|a| a.start <= addr && addr < a.start + a.len)
        {
            let a = &mut self.own[i];
            a.give(addr, len);
            if a.exact && a.free.get(&a.start) == Some(&a.len) {
                let a = self.own.remove(i);
                release(a.start, a.len);
            }
        }
    }

    /// Returns this process's own arenas to the kernel (the process is
    /// leaving; its ranges in the shared window were given back and
    /// unmapped already).
    pub fn release_all(&mut self) {
        for a in self.own.drain(..) {
            release(a.start, a.len);
        }
    }

    /// (start, len) of every arena this process may use.
    pub fn ranges(&self) -> Vec<(usize, usize)> {
        let w = window_chunks();
        w.1.iter()
            .map(|c| {
                let c = c.lock();
                (c.start, c.len)
            })
            .chain(self.own.iter().map(|a| (a.start, a.len)))
            .collect()
    }
}

/// A range from the window's chunks, taking a new chunk at the lowest free
/// 64 GiB-aligned place if none has room.
fn take_in_window(len: usize, align: usize) -> Option<usize> {
    let mut w = window_chunks();
    for c in &w.1 {
        if let Some(addr) = c.lock().take(len, align) {
            return Some(addr);
        }
    }
    let size = len.checked_add(align)?.next_multiple_of(CHUNK);
    let mut at = WINDOW.start;
    while at + size <= WINDOW.end {
        match new_chunk(at, size) {
            Ok(chunk) => {
                let addr = chunk.lock().take(len, align);
                w.1.push(chunk);
                return addr;
            }
            Err(rustix::io::Errno::EXIST) => at += CHUNK,
            // The window is not addressable here (a small address space).
            Err(_) => return None,
        }
    }
    None
}

/// Why no range was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// The address space is exhausted.
    NoSpace,
    /// The requested address is in use.
    InUse,
    /// The requested address cannot be an arena's.
    Invalid,
}

impl Arena {
    fn new(start: usize, len: usize) -> Arena {
        let mut free = BTreeMap::new();
        free.insert(start, len);
        Arena {
            start,
            len,
            exact: false,
            free,
        }
    }

    fn take(&mut self, len: usize, align: usize) -> Option<usize> {
        let (&start, &size) = self.free.iter().find(|&(&s, &l)| {
            let aligned = s.next_multiple_of(align);
            aligned + len <= s + l
        })?;
        let aligned = start.next_multiple_of(align);
        self.free.remove(&start);
        if aligned > start {
            self.free.insert(start, aligned - start);
        }
        let end = aligned + len;
        if end < start + size {
            self.free.insert(end, start + size - end);
        }
        Some(aligned)
    }

    fn take_exact(&mut self, addr: usize, len: usize) -> bool {
        let Some((&start, &size)) = self.free.range(..=addr).next_back() else {
            return false;
        };
        if addr + len > start + size {
            return false;
        }
        self.free.remove(&start);
        if addr > start {
            self.free.insert(start, addr - start);
        }
        if addr + len < start + size {
            self.free.insert(addr + len, start + size - addr - len);
        }
        true
    }

    fn give(&mut self, addr: usize, len: usize) {
        let mut start = addr;
        let mut end = addr + len;
        if let Some((&s, &l)) = self.free.range(..addr).next_back()
            && s + l == addr
        {
            self.free.remove(&s);
            start = s;
        }
        if let Some(&l) = self.free.get(&end) {
            self.free.remove(&end);
            end += l;
        }
        self.free.insert(start, end - start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_carved_aligned_and_merged_back() {
        let mut a = Arena::new(1 << 30, 1 << 30);
        let x = a.take(4096, 2 << 20).unwrap();
        assert_eq!(x % (2 << 20), 0);
        let y = a.take(2 << 20, 2 << 20).unwrap();
        assert!(y >= x + 4096);
        a.give(x, 4096);
        a.give(y, 2 << 20);
        assert_eq!(a.free.len(), 1);
        assert_eq!(a.free.get(&(1 << 30)), Some(&(1 << 30)));
        assert!(a.take_exact((1 << 30) + (4 << 20), 2 << 20));
        assert!(!a.take_exact((1 << 30) + (4 << 20), 4096), "taken");
        assert!(a.take(2 << 30, 4096).is_none(), "larger than the arena");
    }
}
