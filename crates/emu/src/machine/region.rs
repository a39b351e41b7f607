//! The part of an emulated machine that its processes share: configuration,
//! capacity per pool, the process table and the registry of shareable
//! handles.
//!
//! It lives in a sealed memfd mapped by every process of the machine (for
//! a named machine, found through the machine's rendezvous file: see
//! `files`). Every field is an atomic, so processes
//! never race on plain memory. Mutations happen under one lock word
//! ([`Region::lock`]): a compare-and-swap from 0 to the owner's slot, a
//! futex to sleep on, and, if the owner is found dead, a takeover followed by
//! recomputing the derived counters from the per-process ones, so a process
//! killed inside the critical section leaves nothing inconsistent.
//!
//! Liveness: a real process holds an open-file-description lock on byte
//! `slot` of the rendezvous file for as long as it lives; the kernel drops it at exit,
//! SIGKILL included, and it never outlives the process (a forked child closes
//! its copy). Simulated processes of a private machine are alive until they
//! are dropped.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use aclmem_core::AclError;
use std::sync::atomic::Ordering;

use super::layout::*;
use super::pools::{MAX_POOLS, PoolId, Pools};
use crate::config::EmuConfig;
use crate::os::shared::SharedMapping;

/// The mapped shared state of one machine.
pub struct Region {
    /// The shared state, mapped from `file`.
    pub(super) map: SharedMapping<Layout>,
    /// The fork generation the region was mapped in (see `crate::fork`).
    pub(super) fork_gen: u64,
    /// The sealed memfd behind the mapping (`None` only while dropping).
    pub(super) file: Option<OwnedFd>,
    /// A named machine's rendezvous file, through which liveness is probed.
    pub(super) rendezvous: Option<OwnedFd>,
    /// Held only by a real process: the open file description of the
    /// rendezvous file whose byte locks say this process's slots are alive.
    pub(super) holder: Option<OwnedFd>,
    /// The capacity of each pool as this process's configuration says: what
    /// the shared capacity words are clamped to, so that no value found in
    /// shared memory makes the machine hand out more than it has.
    pub(super) limits: [u64; MAX_POOLS],
}

impl Drop for Region {
    fn drop(&mut self) {
        if crate::os::fork::forked_since(self.fork_gen) {
            // A forked child's copy: the child handler already gave the
            // mapping and the descriptors up (see `crate::fork`); their
            // numbers may name other files by now.
            std::mem::forget(self.holder.take());
            std::mem::forget(self.rendezvous.take());
            std::mem::forget(self.file.take());
            return;
        }
        // A later fork must not close what may by then be someone else's
        // (the mapping forgets itself when it drops).
        for fd in [
            self.file.as_ref(),
            self.rendezvous.as_ref(),
            self.holder.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            crate::os::fork::unregister_fd(fd);
        }
    }
}

/// How long one live process may hold the machine's lock before a waiter
/// gives up: every critical section takes microseconds, so only a stopped
/// or stuck holder (or a scribbled lock word) reaches it.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// The lock on the region; unlocks when dropped.
pub struct Guard<'a> {
    pub(super) region: &'a Region,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let h = &self.region.layout().header;
        h.lock.store(0, Ordering::Release);
        if h.waiters.load(Ordering::Acquire) > 0 {
            let _ = rustix::thread::futex::wake(&h.lock, rustix::thread::futex::Flags::empty(), 1);
        }
    }
}

impl Region {
    pub(super) fn layout(&self) -> &Layout {
        self.map.get()
    }

    /// Maps `file` (a sealed memfd of `REGION_BYTES`); a named machine's
    /// process also gives its rendezvous file and the open file of it that
    /// holds its liveness locks.
    pub fn map(
        file: OwnedFd,
        rendezvous: Option<(OwnedFd, OwnedFd)>,
        config: &EmuConfig,
    ) -> Result<Region, rustix::io::Errno> {
        let map = SharedMapping::map(file.as_fd(), REGION_BYTES)?;
        crate::os::fork::register_fd(&file);
        let (rendezvous, holder) = rendezvous.unzip();
        for fd in rendezvous.iter().chain(&holder) {
            crate::os::fork::register_fd(fd);
        }
        Ok(Region {
            map,
            fork_gen: crate::os::fork::generation(),
            file: Some(file),
            rendezvous,
            holder,
            limits: std::array::from_fn(|i| {
                super::pools::initial_capacity(config, PoolId::from_index(i))
            }),
        })
    }

    /// Writes a fresh machine: `config`, capacities, an empty process table
    /// and registry. The caller makes sure no live process uses it.
    pub fn initialise(&self, config: &EmuConfig) {
        let l = self.layout();
        let h = &l.header;
        h.magic.store(0, Ordering::Release);
        h.lock.store(0, Ordering::Relaxed);
        h.waiters.store(0, Ordering::Relaxed);
        for (w, v) in h.config.iter().zip(encode_config(config)) {
            w.store(v, Ordering::Relaxed);
        }
        for i in 0..MAX_POOLS {
            h.capacity[i].store(
                super::pools::initial_capacity(config, PoolId::from_index(i)),
                Ordering::Relaxed,
            );
            h.used[i].store(0, Ordering::Relaxed);
            h.peak[i].store(0, Ordering::Relaxed);
        }
        for c in &h.fault_calls {
            c.store(0, Ordering::Relaxed);
        }
        for s in &l.slots {
            s.state.store(FREE, Ordering::Relaxed);
            s.generation.store(0, Ordering::Relaxed);
            s.listener.store(0, Ordering::Relaxed);
            s.orphan_count.store(0, Ordering::Relaxed);
            for c in &s.charged {
                c.store(0, Ordering::Relaxed);
            }
        }
        for e in &l.exports {
            e.id.store(0, Ordering::Relaxed);
            e.kind.store(super::registry::NEVER_USED, Ordering::Relaxed);
        }
        h.magic.store(MAGIC, Ordering::Release);
    }

    /// The configuration the machine was created with.
    pub fn config(&self) -> Option<EmuConfig> {
        if self.layout().header.magic.load(Ordering::Acquire) != MAGIC {
            return None;
        }
        let words: Vec<u64> = self
            .layout()
            .header
            .config
            .iter()
            .map(|w| w.load(Ordering::Acquire))
            .collect();
        decode_config(&words)
    }

    /// Takes the lock for the process in slot `me`. A lock left behind by a
    /// killed process is taken over (and the derived counters recomputed)
    /// instead of waited for forever; a lock held longer than
    /// [`LOCK_WAIT`] by one live owner (stopped with `SIGSTOP`, or a lock
    /// word naming a process that does not hold it) is `MachineStuck`,
    /// not a hang.
    pub fn lock(&self, me: u32) -> Result<Guard<'_>, AclError> {
        let h = &self.layout().header;
        let want = me + 1;
        let mut spins = 0u32;
        let mut held: Option<(u32, Instant)> = None;
        // Whether this call has waited on the futex: a caller that has not
        // does not barge in while others wait (it queues behind them), so
        // a process joining a machine whose other processes take the lock
        // in tight loops is not starved of it.
        let mut waited = false;
        loop {
            let polite = !waited && h.waiters.load(Ordering::Acquire) > 0;
            let owner = if polite {
                h.lock.load(Ordering::Acquire)
            } else {
                match h
                    .lock
                    .compare_exchange(0, want, Ordering::Acquire, Ordering::Relaxed)
                {
                    Ok(_) => return Ok(Guard { region: self }),
                    Err(_) if spins < 200 => {
                        spins += 1;
                        std::hint::spin_loop();
                        continue;
                    }
                    Err(owner) => owner,
                }
            };
            h.waiters.fetch_add(1, Ordering::AcqRel);
            let timeout = rustix::thread::futex::Timespec {
                tv_sec: 0,
                tv_nsec: 20_000_000,
            };
            let _ = rustix::thread::futex::wait(
                &h.lock,
                rustix::thread::futex::Flags::empty(),
                owner,
                Some(&timeout),
            );
            h.waiters.fetch_sub(1, Ordering::AcqRel);
            waited = true;
            if owner == 0 || h.lock.load(Ordering::Acquire) != owner {
                continue;
            }
            if !self.slot_alive(owner - 1) {
                // The owner died holding the lock: take it over.
                if h.lock
                    .compare_exchange(owner, want, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    let g = Guard { region: self };
                    self.recompute_used(&g);
                    return Ok(g);
                }
                continue;
            }
            let since = match held {
                Some((o, t)) if o == owner => t,
                _ => held.insert((owner, Instant::now())).1,
            };
            if since.elapsed() > LOCK_WAIT {
                return Err(crate::errors::Situation::MachineStuck.code());
            }
        }
    }

    /// `used` of every pool from the per-process charges and the charges of
    /// the live exports: what a dead lock owner may have left half-done.
    fn recompute_used(&self, _g: &Guard<'_>) {
        let l = self.layout();
        let mut used = vec![0u64; MAX_POOLS];
        for s in &l.slots {
            if s.state.load(Ordering::Relaxed) == LIVE {
                for (u, c) in used.iter_mut().zip(&s.charged) {
                    *u += c.load(Ordering::Relaxed);
                }
            }
        }
        for e in &l.exports {
            if e.id.load(Ordering::Relaxed) != 0 {
                for p in Pools::from_word(e.charge_pools.load(Ordering::Relaxed)).iter() {
                    used[p.index()] += e.size.load(Ordering::Relaxed);
                }
            }
        }
        for (u, v) in l.header.used.iter().zip(used) {
            u.store(v, Ordering::Relaxed);
        }
    }

    /// The memfd of the machine's state.
    pub fn file(&self) -> &OwnedFd {
        self.file
            .as_ref()
            .expect("the state file lives as long as the region")
    }

    /// The descriptor liveness locks are probed through: the rendezvous
    /// file of a named machine (a private machine's processes are all
    /// simulated, and probing its memfd finds no lock).
    pub(super) fn liveness(&self) -> BorrowedFd<'_> {
        self.rendezvous
            .as_ref()
            .or(self.file.as_ref())
            .expect("the state file lives as long as the region")
            .as_fd()
    }

    /// The rendezvous file of a named machine.
    pub(super) fn rendezvous(&self) -> Option<&OwnedFd> {
        self.rendezvous.as_ref()
    }
}
