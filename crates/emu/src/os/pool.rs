//! Physical memory: one sparse memfd per device (and one for the host) per
//! process, with each allocation an extent of it.
//!
//! This is how a device's memory is one resource in the hardware too, and it
//! costs a handful of file descriptors in all, whatever the number of live
//! handles (30,000 live 2 MiB handles need no more descriptors than one).
//! `aclrtMallocPhysical` takes an extent (no system call); the last release
//! of an extent gives its pages back with a hole punch, before the extent
//! can be taken again.
//!
//! Sharing never sends a pool: an exported allocation moves into a file of
//! its own at its first import (`crate::process::own_file`), and that file
//! is what an importer receives. An exporting process holds one more
//! descriptor per allocation imported somewhere.
//!
//! The extent allocator is written here rather than taken from
//! `vm-allocator`: a steady malloc/free loop must not allocate, which the
//! same-size free lists give and its interval tree (a node per allocation)
//! does not.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::fstat;

use crate::os::sys;

/// A pool file: the descriptor, and what identifies the file (to tell two
/// descriptors of one file apart from two files).
#[derive(Debug)]
pub struct PoolFile {
    fd: Option<OwnedFd>,
    fork_gen: u64,
    /// (device, inode) of the file.
    pub identity: (u64, u64),
}

impl PoolFile {
    /// A new sparse pool file.
    pub fn create(name: &str) -> Result<PoolFile, rustix::io::Errno> {
        Ok(PoolFile::adopt(sys::new_pool_file(name, SPAN)?))
    }

    /// A pool file (made here or received from another process). Its
    /// identity is (0, 0) if `fstat` fails, which only costs the sharing of
    /// its descriptor between imports.
    pub fn adopt(fd: OwnedFd) -> PoolFile {
        let identity = fstat(&fd).map_or((0, 0), |st| (st.st_dev, st.st_ino));
        crate::os::fork::register_fd(&fd);
        PoolFile {
            fd: Some(fd),
            fork_gen: crate::os::fork::generation(),
            identity,
        }
    }

    /// The descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_ref().expect("present until dropped").as_fd()
    }

    /// The descriptor, to send to another process.
    pub fn owned(&self) -> &OwnedFd {
        self.fd.as_ref().expect("present until dropped")
    }

    /// Gives the pages of an extent back to the kernel.
    pub fn punch(&self, offset: u64, len: u64) {
        // A failure leaves the pages allocated until the file closes:
        // nothing to report to anyone, and nothing reads them again.
        let _ = sys::punch(self.fd(), offset, len);
    }
}

impl Drop for PoolFile {
    fn drop(&mut self) {
        if let Some(fd) = self.fd.take() {
            if crate::os::fork::forked_since(self.fork_gen) {
                // The fork child handler closed this descriptor already.
                std::mem::forget(fd);
            } else {
                crate::os::fork::unregister_fd(&fd);
                drop(fd);
            }
        }
    }
}

/// The file-offset space of a pool: 64 TiB, sparse. Offsets of extents
/// another process still imports are never handed out again, so the space
/// is used up only by (64 TiB of) imported-and-abandoned memory.
pub const SPAN: u64 = 1 << 46;
/// Extents are page aligned.
pub const PAGE: u64 = 4096;

/// Which offsets of a pool are free. Freed extents are kept by size, so the
/// common case (the same sizes again and again, as expandable segments and
/// caching allocators use) takes and returns an extent without allocating;
/// other sizes split a larger free extent or take fresh space, and when the
/// fresh space runs out the free extents are merged.
#[derive(Debug, Default)]
pub struct Extents {
    by_size: BTreeMap<u64, Vec<u64>>,
    top: u64,
}

impl Extents {
    /// An extent of `size` bytes (a multiple of [`PAGE`]).
    pub fn take(&mut self, size: u64) -> Option<u64> {
        debug_assert!(size > 0 && size.is_multiple_of(PAGE));
        self.take_free(size)
            .or_else(|| self.bump(size))
            .or_else(|| {
                self.merge();
                self.take_free(size).or_else(|| self.bump(size))
            })
    }

    fn take_free(&mut self, size: u64) -> Option<u64> {
        if let Some(list) = self.by_size.get_mut(&size)
            && let Some(offset) = list.pop()
        {
            return Some(offset);
        }
        self.split_larger(size)
    }

    fn bump(&mut self, size: u64) -> Option<u64> {
        (self.top + size <= SPAN).then(|| {
            let offset = self.top;
            self.top += size;
            offset
        })
    }

    fn split_larger(&mut self, size: u64) -> Option<u64> {
        let (&have, _) = self
            .by_size
            .range(size + 1..)
            .find(|(_, list)| !list.is_empty())?;
        let offset = self.by_size.get_mut(&have)?.pop()?;
        self.give(offset + size, have - size);
        Some(offset)
    }

    /// Returns an extent.
    pub fn give(&mut self, offset: u64, size: u64) {
        if offset + size == self.top {
            self.top = offset;
        } else {
            self.by_size.entry(size).or_default().push(offset);
        }
    }

    /// Merges adjacent free extents (and the top) into larger ones.
    fn merge(&mut self) {
        let mut all: Vec<(u64, u64)> = std::mem::take(&mut self.by_size)
            .into_iter()
            .flat_map(|(size, list)| list.into_iter().map(move |o| (o, size)))
            .collect();
        all.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (o, s) in all {
            match merged.last_mut() {
                Some((lo, ls)) if *lo + *ls == o => *ls += s,
                _ => merged.push((o, s)),
            }
        }
        for (o, s) in merged {
            self.give(o, s);
        }
    }

    /// Bytes of offset space handed out and not given back.
    #[cfg(test)]
    pub fn in_use(&self) -> u64 {
        self.top
            - self
                .by_size
                .iter()
                .map(|(s, l)| s * l.len() as u64)
                .sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_size_comes_back_without_growing() {
        let mut e = Extents::default();
        let a = e.take(2 << 20).unwrap();
        let b = e.take(2 << 20).unwrap();
        assert_ne!(a, b);
        e.give(a, 2 << 20);
        assert_eq!(e.take(2 << 20), Some(a));
        e.give(b, 2 << 20);
        e.give(a, 2 << 20);
        assert_eq!(e.in_use(), 0);
    }

    #[test]
    fn larger_free_extents_are_split_and_space_is_merged() {
        let mut e = Extents::default();
        let big = e.take(20 << 20).unwrap();
        let pin = e.take(PAGE).unwrap();
        e.give(big, 20 << 20);
        let small = e.take(2 << 20).unwrap();
        assert_eq!(small, big, "split from the freed 20 MiB");
        let rest = e.take(18 << 20).unwrap();
        assert_eq!(rest, big + (2 << 20));
        e.give(small, 2 << 20);
        e.give(rest, 18 << 20);
        e.give(pin, PAGE);
        assert_eq!(e.in_use(), 0);
        // Exhausting the span forces a merge of two freed halves.
        let mut e = Extents {
            by_size: BTreeMap::new(),
            top: SPAN - PAGE,
        };
        e.give(0, 10 << 20);
        e.give(10 << 20, 10 << 20);
        assert_eq!(e.take(20 << 20), Some(0));
        assert_eq!(e.take(2 * PAGE), None);
    }
}
