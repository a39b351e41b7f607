//! Locks that a forked child gets anew.
//!
//! A process that forks while other threads hold a lock, or wait on one,
//! leaves the child a copy of that lock in a state made by threads the
//! child does not have: held by one of them, or (a lock that hands itself
//! over on unlock, as parking_lot's fair unlocking does) about to be given
//! to one of them. The child hangs at its first use of the lock. This is
//! what `DataLoader(num_workers > 0)` and `multiprocessing` do every day
//! while a framework's own threads call the runtime.
//!
//! [`ForkMutex`] is a [`std::sync::Mutex`] per fork generation: the first
//! use in a forked child makes a fresh one, from the mutex's initial value,
//! and never touches the parent's copy again. It fits state a child must
//! not inherit: what belongs to its parent's process (handles,
//! communicators, caches of the parent's files, counts of its calls).
//! [`generation`] counts the forks since the program started, from a
//! `pthread_atfork` child handler installed at the first use of either.
//!
//! The inner lock is std's (on Linux a futex word): no process-wide table
//! of waiting threads and no hand-off, so a lock the child made is used by
//! the child's threads only. A poisoned lock (a panic while it was held)
//! is taken as it is: the state it guards is the caller's to keep
//! consistent, as parking_lot's locks leave it.
//!
//! A lock whose state the child must keep (a log it goes on writing) is a
//! [`KeptMutex`] instead: the forking thread takes it in a `pthread_atfork`
//! prepare handler and keeps it across the fork with [`hold`];
//! [`release_held`] lets it go in the parent and in the child, where the
//! forking thread is the only thread. It is std's lock too, so that is a
//! plain unlock: nothing is handed to a waiting thread of the parent.
//!
//! Each parent copy the child replaced is leaked (one small allocation per
//! lock and fork, in the child only): freeing it could run destructors of
//! state the parent's threads were changing.

use std::any::Any;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

static GENERATION: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();

extern "C" fn child() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// Installs the child handler that counts forks (once per process; every
/// [`generation`] and [`ForkMutex::lock`] does it first).
pub fn install() {
    INSTALL.call_once(|| {
        // SAFETY: `child` is an `extern "C"` function of this library, valid
        // for the life of the process; it only bumps an atomic.
        unsafe {
            libc::pthread_atfork(None, None, Some(child));
        }
    });
}

/// The fork generation of this process: 0 in the process that installed
/// the handler, one more in each forked child (counted from the first
/// [`install`]).
pub fn generation() -> u64 {
    install();
    GENERATION.load(Ordering::Acquire)
}

/// One generation's lock.
struct Slot<T> {
    generation: u64,
    lock: Mutex<T>,
}

/// A mutex that a forked child gets anew, from `init` (see the crate
/// docs). `const`-constructible, for statics.
pub struct ForkMutex<T> {
    slot: AtomicPtr<Slot<T>>,
    init: fn() -> T,
}

// SAFETY: the slot is a `Mutex<T>` reached through an atomic pointer; as
// std's `Mutex<T>`, it is shared between threads when `T: Send`.
unsafe impl<T: Send> Sync for ForkMutex<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for ForkMutex<T> {}

/// The guard of a [`ForkMutex`]: the data, locked.
pub struct ForkMutexGuard<'a, T>(MutexGuard<'a, T>);

impl<T> Deref for ForkMutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for ForkMutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> ForkMutex<T> {
    /// A mutex whose every generation starts as `init()`.
    pub const fn new(init: fn() -> T) -> ForkMutex<T> {
        ForkMutex {
            slot: AtomicPtr::new(std::ptr::null_mut()),
            init,
        }
    }

    /// This generation's lock, made at its first use.
    fn current(&self) -> &Mutex<T> {
        let generation = generation();
        loop {
            let p = self.slot.load(Ordering::Acquire);
            // SAFETY: a non-null slot pointer is a leaked `Box<Slot<T>>`
            // (below), never freed while it is installed, and a replaced one
            // is never freed either.
            if let Some(slot) = unsafe { p.as_ref() }
                && slot.generation == generation
            {
                return &slot.lock;
            }
            let fresh = Box::into_raw(Box::new(Slot {
                generation,
                lock: Mutex::new((self.init)()),
            }));
            match self
                .slot
                .compare_exchange(p, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // The replaced slot (of an earlier generation, or none) is
                // leaked: its threads are the parent's.
                // SAFETY: `fresh` is installed and never freed.
                Ok(_) => return unsafe { &(*fresh).lock },
                Err(_) => {
                    // Another thread of this generation installed one first.
                    // SAFETY: `fresh` was never shared.
                    drop(unsafe { Box::from_raw(fresh) });
                }
            }
        }
    }

    /// Locks this generation's mutex, waiting for it.
    pub fn lock(&self) -> ForkMutexGuard<'_, T> {
        ForkMutexGuard(
            self.current()
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Locks it if no other thread holds it.
    pub fn try_lock(&self) -> Option<ForkMutexGuard<'_, T>> {
        match self.current().try_lock() {
            Ok(g) => Some(ForkMutexGuard(g)),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(ForkMutexGuard(p.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}

impl<T> Drop for ForkMutex<T> {
    fn drop(&mut self) {
        let p = *self.slot.get_mut();
        if !p.is_null() {
            // SAFETY: the installed slot is this mutex's own box; nothing
            // else can reach it once the mutex is dropped.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for ForkMutex<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.try_lock() {
            Some(g) => f.debug_tuple("ForkMutex").field(&*g).finish(),
            None => f.write_str("ForkMutex(<locked>)"),
        }
    }
}

/// A mutex whose state a forked child keeps: a `std::sync::Mutex` that
/// the forking thread holds across the fork ([`hold`], [`release_held`]),
/// with parking_lot's shape of API (no poisoning: a panic while it was
/// held leaves the state as it was).
#[derive(Debug, Default)]
pub struct KeptMutex<T>(Mutex<T>);

impl<T> KeptMutex<T> {
    /// A mutex holding `value`.
    pub const fn new(value: T) -> KeptMutex<T> {
        KeptMutex(Mutex::new(value))
    }

    /// Locks it, waiting for it.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Locks it if no other thread holds it.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.0.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}

thread_local! {
    /// The guards the calling thread keeps across a fork, in the order taken.
    static HELD: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `guard` (a lock's guard) held by the calling thread until
/// [`release_held`]: for a `pthread_atfork` prepare handler, so that the
/// child copies the lock held by its own only thread.
pub fn hold<G: 'static>(guard: G) {
    HELD.with(|h| h.borrow_mut().push(Box::new(guard)));
}

/// Lets go of every guard [`hold`] kept on this thread, the last taken
/// first: for the parent and child handlers of the same fork.
pub fn release_held() {
    HELD.with(|h| {
        let mut held = h.borrow_mut();
        while let Some(guard) = held.pop() {
            drop(guard);
        }
    });
}
