//! Making and joining machines.
//!
//! A named machine is found through one file,
//! `$ACLMEM_EMU_DIR/aclmem-emu.<uid>/<name>` (`/dev/shm` by default),
//! created by its first process and removed by its last; its state is a
//! sealed memfd the processes pass on (see `files`). Joining and leaving take an exclusive `flock` on it, so a joiner
//! never joins a machine whose last process is removing it (it sees the file
//! unlinked and starts over), and the first joiner after every process died
//! (even killed) re-creates the machine with its own configuration. A joiner
//! whose configuration differs from a live machine's is refused.

use std::ops::Not;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use aclmem_core::AclError;
use rustix::fs::{FlockOperation, Mode, OFlags, flock, fstat, open};

use aclmem_core::{CannVersion, Product, check_platform};

use crate::config::EmuConfig;
use crate::errors::Situation;
use crate::os::sys;
use crate::process::Process;

mod error;
mod files;
mod layout;
pub(crate) mod listener;
mod pools;
mod region;
mod registry;
mod slots;
mod wire;

pub use error::JoinError;
pub use files::{machine_path, machine_state_path};
pub(crate) use layout::{ExportInfo, ExportKind, OWN_FILE};
pub use layout::{MAX_EXPORTS, MAX_PROCS, WHITELIST};
pub use pools::{PoolId, Pools};
pub(crate) use region::Region;

/// The machine as one of its processes sees it: the shared region and what
/// every process agrees on.
pub(crate) struct Machine {
    pub(crate) region: Region,
    pub(crate) config: EmuConfig,
    pub(crate) product: Product,
    /// `None` for a private in-process machine.
    pub(crate) name: Option<String>,
    /// The processes of this OS process on the machine, by slot (imports on
    /// a private machine are served by looking the exporter up here instead
    /// of over a socket; listeners find their process here).
    pub(crate) local: Mutex<Vec<Weak<Process>>>,
    /// The next simulated pid of a private machine.
    pub(crate) next_pid: AtomicI32,
    /// The path of a named machine's file, to remove it when the last
    /// process of the machine leaves.
    pub(crate) lock_file: Mutex<Option<PathBuf>>,
}

impl Drop for Machine {
    fn drop(&mut self) {
        if self.name.is_some() && !crate::os::fork::forked_since(self.region.fork_generation()) {
            leave_named(self);
        }
    }
}

impl Machine {
    /// 207000 where the physical-memory API does not exist.
    pub(crate) fn vmm_api(&self) -> Result<(), AclError> {
        check_platform(self.product, self.config.run_mode, self.config.cann).map_err(|d| d.code())
    }

    pub(crate) fn cann(&self) -> CannVersion {
        self.config.cann
    }
}

/// Machines this process joined, by name: joining again returns the same
/// process (a process is one process of its machine).
static JOINED: Mutex<Vec<(String, Weak<Process>)>> = Mutex::new(Vec::new());

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn io(e: impl std::fmt::Display) -> JoinError {
    JoinError::Io(e.to_string())
}

/// Joins (creating it if needed) machine `name` with `config`.
pub(crate) fn join(name: &str, config: &EmuConfig) -> Result<Arc<Process>, JoinError> {
    if !valid_name(name) {
        return Err(JoinError::BadName(name.to_owned()));
    }
    let product = config
        .validate()
        .map_err(|e| JoinError::BadConfig(e.to_string()))?;
    crate::os::fork::install();
    let mut joined = JOINED.lock();
    joined.retain(|(_, w)| w.strong_count() > 0);
    if let Some(p) = joined
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, w)| w.upgrade())
        .filter(|p| !crate::os::fork::forked_since(p.fork_generation()) && !p.has_left())
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
    static SWEEP: std::sync::Once = std::sync::Once::new();
    SWEEP.call_once(files::sweep_stale_machines);
    let (file, path) = files::open_locked(name)?;
    let joined_process = (|| {
        files::allocate(&path, &file)?;
        let holder = open(&path, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()).map_err(io)?;
        let rendezvous = rustix::io::dup(&file).map_err(io)?;
        // Decided once, under the join lock: no process can join meanwhile.
        let fresh = files::slot_held(rendezvous.as_fd()).map_err(io)?.not();
        let state = if fresh {
            files::new_state()?
        } else {
            files::find_state(&path, &rendezvous)?
        };
        let region = Region::map(state, Some((rendezvous, holder)), config).map_err(io)?;
        adopt_state(&region, name, config, fresh)?;
        let pid = sys::pid();
        let (slot, generation) = region.claim_slot(pid, false).map_err(|_| JoinError::Full)?;
        let published = files::publish(&path, &file, slot, region.file());
        {
            let g = region.lock(slot);
            if published.is_err()
                && let Ok(g) = &g
            {
                // Unfindable by the next joiner: not a member after all.
                region.release_slot(g, slot);
            }
            // Whatever died since the last join goes now.
            if let Ok(g) = &g {
                region.reap(g);
            }
        }
        if let Err(e) = published {
            region.unlock_slot_byte(slot);
            return Err(e);
        }
        let machine = Arc::new(Machine {
            region,
            config: config.clone(),
            product,
            name: Some(name.to_owned()),
            local: Mutex::new(Vec::new()),
            next_pid: AtomicI32::new(0),
            lock_file: Mutex::new(Some(path.clone())),
        });
        Ok(register(machine, slot, generation, pid))
    })();
    let _ = flock(&file, FlockOperation::Unlock);
    let p = joined_process?;
    joined.push((name.to_owned(), Arc::downgrade(&p)));
    Ok(p)
}

/// Makes the machine's state this configuration's, or checks that it is:
/// the state is written anew only when the kernel said no process of the
/// machine is alive (`fresh`: no slot's byte is locked), never because of
/// what the shared memory holds; a machine with live processes whose state
/// does not read back is refused.
fn adopt_state(
    region: &Region,
    name: &str,
    config: &EmuConfig,
    fresh: bool,
) -> Result<(), JoinError> {
    if fresh {
        region.initialise(config);
        return Ok(());
    }
    let running = region.config().ok_or_else(|| {
        JoinError::Unsafe(format!(
            "machine `{name}` has live processes but its shared state is corrupt; not joining it"
        ))
    })?;
    if running != *config {
        return Err(JoinError::ConfigMismatch {
            machine: name.to_owned(),
            running: Box::new(running),
            requested: Box::new(config.clone()),
        });
    }
    Ok(())
}

/// A private machine of this process only, with its first (simulated)
/// process.
pub(crate) fn private(config: &EmuConfig) -> Result<Arc<Process>, AclError> {
    let product = config.validate().map_err(|_| AclError::INVALID_PARAM)?;
    crate::os::fork::install();
    let file = files::new_state().map_err(|_| Situation::FdLimit.code())?;
    let region = Region::map(file, None, config).map_err(|_| AclError::RT_RESOURCE_ALLOC_FAIL)?;
    region.initialise(config);
    let pid = sys::pid();
    let machine = Arc::new(Machine {
        region,
        config: config.clone(),
        product,
        name: None,
        local: Mutex::new(Vec::new()),
        next_pid: AtomicI32::new(pid.wrapping_add(1).max(1)),
        lock_file: Mutex::new(None),
    });
    spawn_with_pid(&machine, pid)
}

/// Another simulated process on a private machine.
pub(crate) fn spawn(machine: &Arc<Machine>) -> Result<Arc<Process>, AclError> {
    if machine.name.is_some() {
        // Real processes join a named machine themselves.
        return Err(AclError::API_NOT_SUPPORT);
    }
    let pid = machine.next_pid.fetch_add(1, Ordering::Relaxed).max(1);
    spawn_with_pid(machine, pid)
}

fn spawn_with_pid(machine: &Arc<Machine>, pid: i32) -> Result<Arc<Process>, AclError> {
    let (slot, generation) = machine.region.claim_slot(pid, true)?;
    Ok(register(Arc::clone(machine), slot, generation, pid))
}

fn register(machine: Arc<Machine>, slot: u32, generation: u64, pid: i32) -> Arc<Process> {
    let p = Arc::new(Process::new(Arc::clone(&machine), slot, generation, pid));
    let mut local = machine.local.lock();
    if local.len() <= slot as usize {
        local.resize_with(slot as usize + 1, Weak::new);
    }
    local[slot as usize] = Arc::downgrade(&p);
    p
}

/// The `Weak` of a registered process.
pub(crate) fn weak_of(p: &Process) -> Option<Weak<Process>> {
    let local = p.machine.local.lock();
    local
        .get(p.slot as usize)
        .filter(|w| w.upgrade().is_some_and(|q| q.generation == p.generation))
        .cloned()
}

/// The last process of a named machine in this OS process left: remove the
/// rendezvous file if no process holds a slot of it any more.
pub(crate) fn leave_named(machine: &Machine) {
    let Some(path) = machine.lock_file.lock().take() else {
        return;
    };
    let Ok(fd) = open(&path, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()) else {
        return;
    };
    if flock(&fd, FlockOperation::LockExclusive).is_err() {
        return;
    }
    let same_file = match (fstat(&fd), machine.region.rendezvous().map(fstat)) {
        (Ok(a), Some(Ok(b))) => (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino),
        _ => false,
    };
    // The kernel's byte locks, not this process's view of the state: a
    // later machine of this process (after aclFinalize and aclInit again)
    // may be using the same file with a state of its own.
    if same_file && files::slot_held(fd.as_fd()) == Ok(false) {
        let _ = rustix::fs::unlink(&path);
    }
    let _ = flock(&fd, FlockOperation::Unlock);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};

    /// Set in the child process that holds the lock: the machine's name.
    const OWNER_ENV: &str = "ACLMEM_TEST_LOCK_OWNER";

    /// The half of [`a_stopped_lock_owner_is_answered_not_waited_for`]
    /// that runs in a child process: joins the machine, takes its lock,
    /// stops itself, and releases the lock once it runs again.
    #[test]
    #[ignore = "run by a_stopped_lock_owner_is_answered_not_waited_for, in its own process"]
    fn lock_owner_child() {
        let Ok(name) = std::env::var(OWNER_ENV) else {
            return;
        };
        let config = EmuConfig::preset(aclmem_core::Product::AtlasA2);
        let p = join(&name, &config).expect("the child joins");
        let guard = p.machine.region.lock(p.slot).expect("the child locks");
        println!("held");
        std::io::stdout().flush().unwrap();
        // SAFETY: raise has no preconditions.
        unsafe { libc::raise(libc::SIGSTOP) };
        drop(guard);
        println!("released");
        std::io::stdout().flush().unwrap();
        let _ = std::io::stdin().read_line(&mut String::new());
    }

    /// A process stopped while it holds the machine's lock makes the other
    /// processes' calls fail with `MachineStuck` (after `LOCK_WAIT`)
    /// instead of waiting for it forever; once it runs again they work.
    #[test]
    fn a_stopped_lock_owner_is_answered_not_waited_for() {
        let name = format!("stopped-owner-{}", std::process::id());
        let exe = std::env::current_exe().unwrap();
        let args = [
            "--exact",
            "machine::tests::lock_owner_child",
            "--ignored",
            "--nocapture",
        ];
        let runner = std::env::var("ACLMEM_TEST_RUNNER").unwrap_or_default();
        let mut words = runner.split_whitespace();
        let mut cmd = match words.next() {
            Some(r) => {
                let mut c = std::process::Command::new(r);
                c.args(words).arg(&exe);
                c
            }
            None => std::process::Command::new(&exe),
        };
        let mut child = cmd
            .args(args)
            .env(OWNER_ENV, &name)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the child starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut wait_for = |what: &str| {
            for line in lines.by_ref() {
                if line.unwrap() == what {
                    return;
                }
            }
            panic!("the child ended before it said `{what}`");
        };
        wait_for("held");
        let pid = child.id() as libc::id_t;
        // SAFETY: `siginfo_t` is plain C data; all zeros is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid out-parameter; waiting for the stop of
        // our own child consumes only that report.
        while unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WSTOPPED) } != 0 {
            assert_eq!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::EINTR)
            );
        }
        let config = EmuConfig::preset(aclmem_core::Product::AtlasA2);
        let e = crate::Emulator::join(&name, &config).expect("joining waits for no lock");
        assert_eq!(
            e.mem_info(aclmem_core::MemAttr::HbmMem, 0).err(),
            Some(Situation::MachineStuck.code())
        );
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(pid as i32, libc::SIGCONT) };
        wait_for("released");
        assert!(e.mem_info(aclmem_core::MemAttr::HbmMem, 0).is_ok());
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
        e.leave();
    }

    #[test]
    fn machine_names_are_plain() {
        for good in ["default", "ci-job.7", "A_b"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "a/b", "../x", "a b", &"x".repeat(65), "ä"] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }
}
