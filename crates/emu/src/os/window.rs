//! Windows: memory files mapped at fixed addresses inside the process's
//! arenas, each owned by one value, and the only way the emulator reads or
//! writes device memory.
//!
//! The invariants are kept here, whatever the layers above do:
//! - a window is mapped only inside an arena of this OS process and never
//!   over another live window (both checked against registries of this
//!   module and of [`arena`](super::arena)), so mapping replaces only
//!   inaccessible arena;
//! - memory is reached only through a [`Pin`], which a window hands out
//!   while it is [`Ready`](State::Ready); a pinned window cannot be
//!   unmapped or re-bound (both answer [`Busy`]), so every access lands in
//!   mapped memory of the file it was pinned on;
//! - accesses are raw copies (`memmove`, `memset`): no Rust reference into
//!   a window ever exists, so re-mapping a window that nobody pins is
//!   invisible to Rust.
//!
//! A pin is an `Arc` of the window's state: the mapping lives at least as
//! long as the last pin, even if its owner drops the window meanwhile.

use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::io::Errno;

use super::{arena, fork, sys};

/// The window is pinned (or being re-bound): it cannot change now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

/// What a window is doing, in the high half of its state word (the low
/// half counts pins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ready = 0,
    /// Frozen for re-binding: no pin is handed out.
    Frozen = 1,
    /// Unmapped: nothing is there any more.
    Gone = 2,
}

const PINS: u64 = 0xffff_ffff;

fn word(state: State, pins: u64) -> u64 {
    ((state as u64) << 32) | pins
}

/// The live windows of this OS process (start → length), per fork
/// generation (a forked child starts with none of its own).
static LIVE: aclmem_fork::ForkMutex<(u64, std::collections::BTreeMap<usize, usize>)> =
    aclmem_fork::ForkMutex::new(|| (0, std::collections::BTreeMap::new()));

fn live() -> aclmem_fork::ForkMutexGuard<'static, (u64, std::collections::BTreeMap<usize, usize>)> {
    let mut l = LIVE.lock();
    let generation = fork::generation();
    if l.0 != generation {
        *l = (generation, std::collections::BTreeMap::new());
    }
    l
}

/// Runs `release` (which returns an arena to the kernel) unless a live
/// window lies in `start..start + len`, holding the windows' registry
/// meanwhile so that none is mapped there as it goes: whether it ran.
pub(super) fn unless_windows_within(start: usize, len: usize, release: impl FnOnce()) -> bool {
    let live = live();
    let busy = live
        .1
        .range(..start.saturating_add(len))
        .next_back()
        .is_some_and(|(&a, &l)| a + l > start);
    if !busy {
        release();
    }
    !busy
}

struct Inner {
    addr: usize,
    len: usize,
    fork_gen: u64,
    word: AtomicU64,
}

impl Inner {
    /// From `Ready` with no pin to `to`.
    fn seize(&self, to: State) -> Result<(), Busy> {
        self.word
            .compare_exchange(
                word(State::Ready, 0),
                word(to, 0),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .map(drop)
            .map_err(|_| Busy)
    }

    /// Puts inaccessible arena back over the window and forgets it (once).
    /// The range stays registered until it is arena again, so nothing is
    /// mapped over it meanwhile; one the kernel unmapped but would not put
    /// arena back over (at `vm.max_map_count`) stays registered for good,
    /// so that no window is ever mapped into a hole someone else may fill.
    fn unmap(&self) -> Result<(), Errno> {
        // SAFETY: the window lies in an arena of ours (checked when it was
        // mapped) and is `Gone`: no pin exists (pins are only taken while
        // `Ready`, and every pin holds the state, which reached `Gone`
        // with none), and no Rust reference into it ever exists.
        match unsafe { sys::unmap_fixed(self.addr, self.len) } {
            Ok(()) => {
                live().1.remove(&self.addr);
                Ok(())
            }
            // Gone, but not arena again: done, and the range kept.
            Err(_) if !sys::is_mapped(self.addr, self.len) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The last owner or pin is gone. In a forked child the parent's
        // mappings are the child's copy, which it may still use.
        if fork::forked_since(self.fork_gen) {
            return;
        }
        let state = self.word.swap(word(State::Gone, 0), Ordering::AcqRel);
        if state >> 32 != State::Gone as u64 {
            let _ = self.unmap();
        }
    }
}

/// A memory file mapped at a fixed address of an arena.
pub struct Window {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Window({:#x}, {} bytes)",
            self.inner.addr, self.inner.len
        )
    }
}

impl Window {
    /// Maps `len` bytes of `fd` from `offset` at `addr`, shared and
    /// read-write. `EINVAL` unless the range lies in an arena of this OS
    /// process; `EEXIST` if a live window overlaps it.
    pub fn map(addr: usize, len: usize, fd: BorrowedFd<'_>, offset: u64) -> Result<Window, Errno> {
        let end = addr.checked_add(len).ok_or(Errno::INVAL)?;
        {
            // The range is registered first (so no window is mapped over
            // it and its arena is not returned meanwhile); the system call
            // runs without the registry's lock.
            let mut live = live();
            if len == 0 || !arena::contains(addr, len) {
                return Err(Errno::INVAL);
            }
            if live
                .1
                .range(..end)
                .next_back()
                .is_some_and(|(&a, &l)| a + l > addr)
            {
                return Err(Errno::EXIST);
            }
            live.1.insert(addr, len);
        }
        // SAFETY: the range lies in an arena of this OS process and
        // overlaps no other window (both checked above, and kept so by the
        // registration), so only inaccessible arena is replaced; nothing
        // references it.
        if let Err(e) = unsafe { sys::map_fixed(addr, len, fd, offset) } {
            live().1.remove(&addr);
            return Err(e);
        }
        Ok(Window {
            inner: Arc::new(Inner {
                addr,
                len,
                fork_gen: fork::generation(),
                word: AtomicU64::new(word(State::Ready, 0)),
            }),
        })
    }

    /// Whether a pin holds it.
    pub fn pinned(&self) -> bool {
        self.inner.word.load(Ordering::Acquire) & PINS != 0
    }

    /// A pin, while the window is ready (`Busy` while it is frozen, and in
    /// a forked child, whose copy of the window is not the engine's).
    pub fn pin(&self) -> Result<Pin, Busy> {
        if fork::forked_since(self.inner.fork_gen) {
            return Err(Busy);
        }
        let mut current = self.inner.word.load(Ordering::Acquire);
        loop {
            if current >> 32 != State::Ready as u64 || current & PINS == PINS {
                return Err(Busy);
            }
            match self.inner.word.compare_exchange_weak(
                current,
                current + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    return Ok(Pin {
                        inner: Arc::clone(&self.inner),
                    });
                }
                Err(now) => current = now,
            }
        }
    }

    /// Unmaps it now (inaccessible arena again): `Busy` (with the window
    /// back) while it is pinned or frozen; a system error leaves it mapped.
    pub fn unmap(self) -> Result<(), (Window, Option<Errno>)> {
        if fork::forked_since(self.inner.fork_gen) || self.inner.seize(State::Gone).is_err() {
            return Err((self, None));
        }
        match self.inner.unmap() {
            Ok(()) => Ok(()),
            Err(e) => {
                self.inner
                    .word
                    .store(word(State::Ready, 0), Ordering::Release);
                Err((self, Some(e)))
            }
        }
    }

    /// Freezes it for re-binding (no pin meanwhile): `Busy` while pinned.
    pub fn freeze(&self) -> Result<Frozen<'_>, Busy> {
        if fork::forked_since(self.inner.fork_gen) {
            return Err(Busy);
        }
        self.inner.seize(State::Frozen)?;
        Ok(Frozen { window: self })
    }
}

/// A window frozen for re-binding; ready again when dropped.
pub struct Frozen<'w> {
    window: &'w Window,
}

impl Frozen<'_> {
    /// Maps `fd` from `offset` over the whole window instead of what it
    /// showed (the caller makes sure the new file holds the same bytes).
    pub fn rebind(&self, fd: BorrowedFd<'_>, offset: u64) -> Result<(), Errno> {
        let w = &self.window.inner;
        // SAFETY: the window is ours, inside an arena, and frozen: no pin
        // exists or can be taken until this value drops, and no Rust
        // reference into it ever exists; its range is replaced by the same
        // range of another file.
        unsafe { sys::map_fixed(w.addr, w.len, fd, offset) }
    }
}

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        self.window
            .inner
            .word
            .store(word(State::Ready, 0), Ordering::Release);
    }
}

/// A window held mapped: while it lives the window cannot be unmapped or
/// re-bound.
pub struct Pin {
    inner: Arc<Inner>,
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.inner.word.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Pinned windows covering `start..start + len` back to back: memory the
/// emulator may read and write for as long as the value lives.
pub struct Pinned {
    start: usize,
    len: usize,
    _pins: Vec<Pin>,
}

impl Pinned {
    /// `start..start + len` over `pins`, which must cover it back to back
    /// (`None` otherwise).
    pub fn new(start: usize, len: usize, pins: Vec<Pin>) -> Option<Pinned> {
        let end = start.checked_add(len)?;
        let mut at = start;
        for p in &pins {
            let (a, l) = (p.inner.addr, p.inner.len);
            if !(a <= at && at < a + l) {
                return None;
            }
            at = a + l;
        }
        (at >= end || len == 0).then_some(Pinned {
            start,
            len,
            _pins: pins,
        })
    }

    /// Copies `count` bytes from `src` to this range (they may overlap);
    /// `false` if either is shorter.
    pub fn copy_from(&self, src: &Pinned, count: usize) -> bool {
        if count > self.len || count > src.len {
            return false;
        }
        // SAFETY: both ranges are covered by pinned windows (mapped
        // read-write, and staying so while `self` and `src` live) for at
        // least `count` bytes; `copy` allows overlap; no reference exists.
        unsafe { std::ptr::copy(src.start as *const u8, self.start as *mut u8, count) };
        true
    }

    /// Writes `data` at the start of the range; `false` if it is shorter.
    pub fn write(&self, data: &[u8]) -> bool {
        if data.len() > self.len {
            return false;
        }
        // SAFETY: covered by pinned windows for `data.len()` bytes; `data`
        // is Rust memory outside every arena, so they cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.start as *mut u8, data.len()) };
        true
    }

    /// Reads the start of the range into `buf`; `false` if it is shorter.
    pub fn read(&self, buf: &mut [u8]) -> bool {
        if buf.len() > self.len {
            return false;
        }
        // SAFETY: as in `write`, the other way.
        unsafe {
            std::ptr::copy_nonoverlapping(self.start as *const u8, buf.as_mut_ptr(), buf.len())
        };
        true
    }

    /// Sets `count` bytes from the start to `value`; `false` if the range
    /// is shorter.
    pub fn fill(&self, value: u8, count: usize) -> bool {
        if count > self.len {
            return false;
        }
        // SAFETY: covered by pinned windows for `count` bytes.
        unsafe { std::ptr::write_bytes(self.start as *mut u8, value, count) };
        true
    }

    /// Copies `count` bytes between this range and host memory a C caller
    /// passed, which the kernel says is private anonymous memory with the
    /// access the copy needs (see [`host`](super::host)); `to_host` gives
    /// the direction. `false` if the range is shorter.
    pub fn copy_host(
        &self,
        host: usize,
        count: usize,
        to_host: bool,
        _caller: &super::host::CallerMemory,
    ) -> bool {
        if count > self.len {
            return false;
        }
        let (dst, src) = if to_host {
            (host, self.start)
        } else {
            (self.start, host)
        };
        // SAFETY: the device side is covered by pinned windows; the host
        // side is memory the caller vouched for (`CallerMemory`) and the
        // kernel just said is private anonymous memory outside every arena
        // with the access needed, so the two do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, count) };
        true
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;
    use crate::os::arena::Arenas;

    const LEN: usize = 2 << 20;

    fn pool() -> std::os::fd::OwnedFd {
        sys::new_pool_file("aclmem-test-window", LEN as u64).unwrap()
    }

    #[test]
    fn windows_go_inside_arenas_and_never_over_each_other() {
        let file = pool();
        let heap = vec![0u8; LEN];
        let at = heap.as_ptr() as usize & !(rustix::param::page_size() - 1);
        assert_eq!(
            Window::map(at, LEN, file.as_fd(), 0).err(),
            Some(Errno::INVAL),
            "not an arena"
        );
        let mut arenas = Arenas::default();
        let addr = arenas.take(2 * LEN, LEN, None).unwrap();
        let w = Window::map(addr, LEN, file.as_fd(), 0).unwrap();
        assert_eq!(
            Window::map(addr + 4096, LEN, file.as_fd(), 0).err(),
            Some(Errno::EXIST),
            "overlap"
        );
        assert!(w.unmap().is_ok());
        // Gone: the range may be mapped again.
        let again = Window::map(addr, LEN, file.as_fd(), 0).unwrap();
        drop(again);
        arenas.give(addr, 2 * LEN);
        arenas.release_all();
    }

    #[test]
    fn a_pinned_window_stays_mapped_until_its_last_pin_goes() {
        let file = pool();
        let mut arenas = Arenas::default();
        let addr = arenas.take(LEN, LEN, None).unwrap();
        let w = Window::map(addr, LEN, file.as_fd(), 0).unwrap();
        let pin = w.pin().unwrap();
        assert!(w.pinned());
        assert!(w.freeze().is_err(), "no re-binding under a pin");
        let (w, why) = w.unmap().unwrap_err();
        assert_eq!(why, None, "busy, not a system error");
        let memory = Pinned::new(addr, LEN, vec![pin]).unwrap();
        assert!(memory.write(b"kept"));
        // The owner goes; the pin keeps the mapping.
        drop(w);
        let mut buf = [0u8; 4];
        assert!(memory.read(&mut buf));
        assert_eq!(&buf, b"kept");
        assert!(!memory.read(&mut vec![0u8; LEN + 1]), "bounded");
        drop(memory);
        // The last pin went: the window with it.
        assert!(Window::map(addr, LEN, file.as_fd(), 0).is_ok());
        arenas.give(addr, LEN);
        arenas.release_all();
    }

    #[test]
    fn a_frozen_window_hands_out_no_pin() {
        let file = pool();
        let other = pool();
        let mut arenas = Arenas::default();
        let addr = arenas.take(LEN, LEN, None).unwrap();
        let w = Window::map(addr, LEN, file.as_fd(), 0).unwrap();
        {
            let frozen = w.freeze().unwrap();
            assert!(w.pin().is_err());
            frozen.rebind(other.as_fd(), 0).unwrap();
        }
        let memory = Pinned::new(addr, 4, vec![w.pin().unwrap()]).unwrap();
        assert!(memory.write(b"new"));
        let mut buf = [0u8; 3];
        rustix::io::pread(&other, &mut buf, 0).unwrap();
        assert_eq!(&buf, b"new", "the window shows the other file now");
        drop(memory);
        drop(w);
        arenas.give(addr, LEN);
        arenas.release_all();
    }

    #[test]
    fn pinned_ranges_must_be_covered() {
        let file = pool();
        let mut arenas = Arenas::default();
        let addr = arenas.take(2 * LEN, LEN, None).unwrap();
        let w = Window::map(addr, LEN, file.as_fd(), 0).unwrap();
        assert!(Pinned::new(addr, LEN + 1, vec![w.pin().unwrap()]).is_none());
        assert!(Pinned::new(addr + LEN, 1, vec![w.pin().unwrap()]).is_none());
        assert!(Pinned::new(addr + 10, LEN - 10, vec![w.pin().unwrap()]).is_some());
        drop(w);
        arenas.give(addr, 2 * LEN);
        arenas.release_all();
    }
}
