//! Processes made on a machine's slots: joining a named machine, a
//! private machine's processes, and the processes of this OS process by
//! machine and slot (how a private machine serves an import, and how a
//! listener finds the process it serves).

use std::sync::{Arc, Weak};

use aclmem_core::AclError;
use aclmem_fork::ForkMutex;

use super::Process;
use crate::config::EmuConfig;
use crate::machine::{self, JoinError, Machine, Member};

/// Machines this process joined, by name: joining again returns the same
/// process (a process is one process of its machine).
static JOINED: ForkMutex<Vec<(String, Weak<Process>)>> = ForkMutex::new(Vec::new);

/// One machine's processes in this OS process, by slot.
type Slots = Vec<Weak<Process>>;

/// The processes of this OS process, per machine.
static LOCAL: ForkMutex<Vec<(Weak<Machine>, Slots)>> = ForkMutex::new(Vec::new);

/// Joins (creating it if needed) machine `name` with `config`.
pub(crate) fn join(name: &str, config: &EmuConfig) -> Result<Arc<Process>, JoinError> {
    let product = machine::check(name, config)?;
    let mut joined = JOINED.lock();
    joined.retain(|(_, w)| w.strong_count() > 0);
    if let Some(p) = joined
        .iter()
        .filter(|(n, _)| n == name)
        .filter_map(|(_, w)| w.upgrade())
        .find(|p| !crate::os::fork::forked_since(p.fork_generation()) && !p.has_left())
    {
        if p.machine.config != *config {
            return Err(JoinError::ConfigMismatch {
                machine: name.to_owned(),
                running: Box::new(p.machine.config.clone()),
                requested: Box::new(config.clone()),
            });
        }
        return Ok(p);
    }
    let p = register(machine::open_named(name, config, product)?);
    joined.push((name.to_owned(), Arc::downgrade(&p)));
    Ok(p)
}

/// A private machine of this process only, with its first (simulated)
/// process.
pub(crate) fn private(config: &EmuConfig) -> Result<Arc<Process>, AclError> {
    Ok(register(machine::private(config)?))
}

/// Another simulated process on a private machine.
pub(crate) fn spawn(machine: &Arc<Machine>) -> Result<Arc<Process>, AclError> {
    Ok(register(machine::spawn(machine)?))
}

impl Process {
    /// Another process of this one's machine, in this OS process.
    pub(crate) fn spawn_sibling(&self) -> Result<Arc<Process>, AclError> {
        spawn(&self.machine)
    }
}

fn register(member: Member) -> Arc<Process> {
    let Member {
        machine,
        slot,
        generation,
        pid,
    } = member;
    let p = Arc::new(Process::new(Arc::clone(&machine), slot, generation, pid));
    let mut local = LOCAL.lock();
    local.retain(|(m, _)| m.strong_count() > 0);
    let at = match local
        .iter()
        .position(|(m, _)| std::ptr::eq(m.as_ptr(), Arc::as_ptr(&machine)))
    {
        Some(at) => at,
        None => {
            local.push((Arc::downgrade(&machine), Vec::new()));
            local.len() - 1
        }
    };
    let slots = &mut local[at].1;
    if slots.len() <= slot as usize {
        slots.resize_with(slot as usize + 1, Weak::new);
    }
    slots[slot as usize] = Arc::downgrade(&p);
    p
}

/// The live process of this OS process in `slot` of `machine`.
fn local(machine: &Arc<Machine>, slot: u32) -> Option<Arc<Process>> {
    LOCAL
        .lock()
        .iter()
        .find(|(m, _)| std::ptr::eq(m.as_ptr(), Arc::as_ptr(machine)))
        .and_then(|(_, slots)| slots.get(slot as usize))
        .and_then(Weak::upgrade)
}

/// The process in `slot` of `p`'s machine, if it is of `generation`.
pub(crate) fn member(p: &Process, slot: u32, generation: u64) -> Option<Arc<Process>> {
    local(&p.machine, slot).filter(|q| q.generation == generation)
}

/// The `Weak` of a registered process.
pub(crate) fn weak_of(p: &Process) -> Option<Weak<Process>> {
    member(p, p.slot, p.generation).map(|q| Arc::downgrade(&q))
}
