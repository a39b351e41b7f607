//! One process of an emulated machine: its physical memory and handles
//! ([`handles`]), its address space ([`address_space`]) and what it is
//! charged on the machine ([`charge`]). Never shared with another process,
//! never a round trip. The API methods are in the calls
//! module, which asks this one for its operations.
//!
//! **Lock order**, kept by construction: the pools' table ([`pools`]),
//! then the address space, then a shard;
//! the machine's shared lock is never taken while either is held. A call
//! that needs both a process lock and the machine's lock, or a system call,
//! runs in steps: *claim* (under the process locks: check and mark, take a
//! reference), *register* (the machine's lock alone) or the system call
//! (no lock), *commit* or roll back (under the process locks again).

pub(crate) mod address_space;
pub(crate) mod charge;
pub(crate) mod copy;
pub(crate) mod graphs;
pub(crate) mod handles;
pub(crate) mod host;
pub(crate) mod imports;
pub(crate) mod instrument;
pub(crate) mod join;
pub(crate) mod listener;
pub(crate) mod managed;
pub(crate) mod own_file;
pub(crate) mod physical;
pub(crate) mod pool_table;
pub(crate) mod pools;
pub(crate) mod query;
pub(crate) mod runtime;
pub(crate) mod sharing;

use instrument::Instrument;
use runtime::Runtime;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use aclmem_core::{AclError, Location};
use parking_lot::Mutex;

use crate::errors::Situation;
use crate::machine::Machine;
use crate::os::host::HostBlock;
use crate::{MemKind, Op};
use address_space::{MapBudget, Va};
use handles::Shards;
use host::Registration;
use imports::ImportedPool;

pub(crate) type Result<T> = std::result::Result<T, AclError>;

/// One process of a machine.
pub(crate) struct Process {
    machine: Arc<Machine>,
    slot: u32,
    generation: u64,
    pid: i32,
    fork_gen: u64,
    shards: Shards,
    va: Mutex<Va>,
    /// `aclrtMallocHost` blocks, by address.
    hosts: Mutex<BTreeMap<usize, HostBlock>>,
    /// Host ranges registered for the device (`aclrtHostRegister*`):
    /// start → registration.
    registered: Mutex<BTreeMap<usize, Registration>>,
    runtime: Mutex<Runtime>,
    /// ACL graphs: captures, models, task groups (`calls::graphs`).
    pub(crate) graphs: Mutex<graphs::Graphs>,
    /// Managed memory (`aclrtMemAllocManaged`) and its advice.
    managed: Mutex<managed::ManagedTable>,
    /// Stream-ordered memory pools (`aclrtMemPool*`).
    pools: Mutex<pools::PoolTable>,
    imported: Mutex<Vec<ImportedPool>>,
    instrument: Instrument,
    maps: MapBudget,
    /// Whether calls need a device set on their thread (the C runtime's
    /// rule; see `Emulator::use_thread_devices`).
    thread_devices: AtomicBool,
    /// The default device `aclInit`'s configuration names (-1: none): a
    /// thread without a device that makes a call needing one gets it set,
    /// as the runtime sets it implicitly.
    default_device: AtomicI64,
    /// The devices `ASCEND_RT_VISIBLE_DEVICES` leaves the process, once
    /// set (unset: every device under its own id). Ids from the API are
    /// user ids, turned into the machine's by [`Process::device`].
    visible: OnceLock<crate::env::VisibleDevices>,
    /// Tells this process's per-thread state from any other's.
    token: u64,
    listener: OnceLock<listener::Listener>,
    left: AtomicBool,
}

impl Process {
    pub(crate) fn new(machine: Arc<Machine>, slot: u32, generation: u64, pid: i32) -> Process {
        let shards = machine.config.devices as usize + 1;
        Process {
            machine,
            slot,
            generation,
            pid,
            fork_gen: crate::os::fork::generation(),
            shards: Shards::new(shards),
            va: Mutex::new(Va::default()),
            hosts: Mutex::new(BTreeMap::new()),
            registered: Mutex::new(BTreeMap::new()),
            runtime: Mutex::new(Runtime::default()),
            graphs: Mutex::new(graphs::Graphs::default()),
            pools: Mutex::new(pools::PoolTable::default()),
            managed: Mutex::new(BTreeMap::new()),
            imported: Mutex::new(Vec::new()),
            instrument: Instrument::default(),
            maps: MapBudget::new(),
            thread_devices: AtomicBool::new(false),
            default_device: AtomicI64::new(-1),
            visible: OnceLock::new(),
            token: {
                static NEXT: AtomicU64 = AtomicU64::new(1);
                NEXT.fetch_add(1, Ordering::Relaxed)
            },
            listener: OnceLock::new(),
            left: AtomicBool::new(false),
        }
    }

    /// The fork generation the process was made in.
    /// The machine this process is on.
    pub(crate) fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The process id it joined with.
    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// Applies `ASCEND_RT_VISIBLE_DEVICES`, once (100000 the second time).
    pub(crate) fn set_visible_devices(&self, visible: crate::env::VisibleDevices) -> Result<()> {
        self.visible
            .set(visible)
            .map_err(|_| AclError::INVALID_PARAM)
    }

    pub(crate) fn fork_generation(&self) -> u64 {
        self.fork_gen
    }

    /// Whether the process left its machine (`aclFinalize`, drop).
    pub(crate) fn has_left(&self) -> bool {
        self.left.load(Ordering::Acquire)
    }

    /// The host's shard (after the devices').
    pub(crate) fn host_shard(&self) -> u8 {
        self.machine.config.devices as u8
    }

    /// The shard memory at `location` `id` belongs to.
    pub(crate) fn shard_of(&self, location: Location, id: u32) -> u8 {
        match location {
            Location::Device => id as u8,
            Location::Host | Location::HostNuma => self.host_shard(),
        }
    }

    /// What kind of memory the machine's devices have.
    pub(crate) fn device_kind(&self) -> MemKind {
        if self.machine.product.has_hbm() {
            MemKind::Hbm
        } else {
            MemKind::Ddr
        }
    }

    /// Every call's prologue: refused in a forked child or after the
    /// process left; counted; an injected fault fires.
    pub(crate) fn enter(&self, op: Op) -> Result<()> {
        if crate::os::fork::forked_since(self.fork_gen) || self.left.load(Ordering::Acquire) {
            return Err(Situation::ForkedChild.code());
        }
        self.instrument.enter(op)
    }

    /// `enter`, then the calling thread's device (107002 without one,
    /// when the process follows the C runtime's rule).
    pub(crate) fn enter_rt(&self, op: Op) -> Result<()> {
        self.enter(op)?;
        self.on_device()
    }

    /// `enter_rt`, then 207000 where the physical-memory API does not
    /// exist.
    pub(crate) fn enter_vmm(&self, op: Op) -> Result<()> {
        self.enter_rt(op)?;
        self.machine.vmm_api()
    }

    /// The machine's device a user id names (the same id unless
    /// `ASCEND_RT_VISIBLE_DEVICES` says otherwise); 107001 for an id the
    /// process does not have.
    pub(crate) fn device(&self, device: u32) -> Result<u32> {
        use crate::env::VisibleDevices;
        match self.visible.get() {
            None | Some(VisibleDevices::All) if device < self.machine.config.devices => Ok(device),
            Some(VisibleDevices::Some(ids)) => ids
                .get(device as usize)
                .copied()
                .ok_or(AclError::RT_INVALID_DEVICEID),
            _ => Err(AclError::RT_INVALID_DEVICEID),
        }
    }

    /// The user id of the machine's device `physical` (itself when it is
    /// not visible to the process, as for memory imported from one).
    pub(crate) fn user_device(&self, physical: u32) -> u32 {
        match self.visible.get() {
            Some(crate::env::VisibleDevices::Some(ids)) => ids
                .iter()
                .position(|&d| d == physical)
                .map_or(physical, |i| i as u32),
            _ => physical,
        }
    }

    /// How many devices the process sees: 207004 when
    /// `ASCEND_RT_VISIBLE_DEVICES` left it none.
    pub(crate) fn device_count(&self) -> Result<u32> {
        let devices = self.machine.config.devices;
        self.visible.get().map_or(Ok(devices), |v| v.count(devices))
    }

    /// Process exit: everything the process holds goes, as the driver tears
    /// a process down; its slot is released. Nothing on the machine is left
    /// charged to it.
    pub(crate) fn leave(&self) {
        if crate::os::fork::forked_since(self.fork_gen) || self.left.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(l) = self.listener.get() {
            l.stop();
        }
        // Exports this process holds lose it as a holder in `release_slot`;
        // the pages of its own pool go with the pool file.
        let allocs: Vec<handles::Alloc> = self
            .shards
            .iter()
            .flat_map(|(_, s)| {
                let mut shard = s.lock();
                shard.handles.clear();
                std::mem::take(&mut shard.allocs)
                    .into_iter()
                    .map(|(_, a)| a)
                    .collect::<Vec<_>>()
            })
            .collect();
        self.pools_clear();
        self.managed_clear();
        self.va.lock().tear_down();
        self.maps.reset();
        // Host allocations of a process that is leaving go with their
        // blocks.
        self.hosts.lock().clear();
        self.registered.lock().clear();
        let region = &self.machine.region;
        {
            let Ok(g) = region.lock(self.slot) else {
                // A stuck holder of the machine's lock: the slot is left to be
                // reaped (by whoever gets the lock) once this process is gone.
                region.unlock_slot_byte(self.slot);
                return;
            };
            for a in &allocs {
                if let Some(id) = a.export
                    && region.drop_holder(&g, id.get(), self.slot)
                    && let handles::Source::Imported(file) = a.source()
                {
                    file.punch(a.offset, a.extent_len());
                }
            }
            region.leave_slot(&g, self.slot);
        }
        drop(allocs);
        for (_, s) in self.shards.iter() {
            s.lock().file = None;
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.leave();
    }
}
