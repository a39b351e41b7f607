//! Memory shared between processes, seen as one typed value: the owner
//! of a machine's shared mapping.
//!
//! The mapping is made here, read only through [`SharedMapping::get`],
//! and unmapped when its owner drops it (in a forked child, the fork
//! handler already did). `T` is valid for any bytes ([`FromBytes`]: what
//! another process wrote, however wrong, is a value of `T`) and is shared
//! through `&` ([`Sync`]); the machine's layout is made of atomics, so the
//! other processes' writes are never a data race.

use std::marker::PhantomData;
use std::os::fd::BorrowedFd;

use rustix::io::Errno;
use zerocopy::FromBytes;

use super::{fork, sys};

/// A shared mapping of a memory file, seen as a `T`.
pub struct SharedMapping<T> {
    base: usize,
    len: usize,
    fork_gen: u64,
    _value: PhantomData<T>,
}

// SAFETY: the mapping is owned by the value and only ever reached through
// `&T`, which `T: Sync` allows on any thread.
unsafe impl<T: Sync> Send for SharedMapping<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for SharedMapping<T> {}

impl<T: FromBytes + Sync> SharedMapping<T> {
    /// Maps the first `len` bytes of `fd` shared, read-write; `len` must
    /// hold a `T` (`EINVAL` otherwise). The mapping is remembered for a
    /// forked child to give up.
    pub fn map(fd: BorrowedFd<'_>, len: usize) -> Result<Self, Errno> {
        if len < size_of::<T>() || align_of::<T>() > rustix::param::page_size() {
            return Err(Errno::INVAL);
        }
        let base = sys::map_shared_region(fd, len)?;
        fork::register_mapping(base, len);
        Ok(SharedMapping {
            base,
            len,
            fork_gen: fork::generation(),
            _value: PhantomData,
        })
    }

    /// The shared value.
    pub fn get(&self) -> &T {
        // SAFETY: `base` is a live mapping of `len >= size_of::<T>()` bytes,
        // page aligned (so aligned for `T`), owned by `self` for the
        // borrow's lifetime; every bit pattern is a `T` (`FromBytes`), and
        // shared access through `&` is sound for `T: Sync` made of
        // atomics, whoever writes them.
        unsafe { &*(self.base as *const T) }
    }
}

impl<T> Drop for SharedMapping<T> {
    fn drop(&mut self) {
        if fork::forked_since(self.fork_gen) {
            // The fork handler gave the child's copy up already; the
            // address may hold something else by now.
            return;
        }
        fork::unregister_mapping(self.base);
        // SAFETY: the mapping was made by `map_shared_region` with this
        // length and is owned by `self`; no borrow of it outlives `self`.
        let _ = unsafe { sys::unmap_region(self.base, self.len) };
    }
}
