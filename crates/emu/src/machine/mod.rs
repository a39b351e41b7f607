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
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use parking_lot::Mutex;

use aclmem_core::AclError;
use rustix::fs::{FlockOperation, Mode, OFlags, flock, fstat, open};

use aclmem_core::{CannVersion, Product, check_platform};

use crate::config::EmuConfig;
use crate::errors::Situation;
use crate::os::sys;

mod error;
mod files;
mod layout;
mod pools;
mod region;
mod registry;
mod slots;
mod wire;

pub use error::JoinError;
pub(crate) use files::listener_path;
pub use files::{machine_path, machine_state_path};
pub(crate) use layout::{ExportInfo, ExportKind, IMPORT_TIMEOUT, OWN_FILE};
pub use layout::{MAX_EXPORTS, MAX_PROCS, WHITELIST};
pub use pools::{PoolId, Pools};
pub(crate) use region::Region;
pub(crate) use wire::{REPLY_BYTES, REQUEST_BYTES, Reply, Request};

/// The machine as one of its processes sees it: the shared region and what
/// every process agrees on.
pub(crate) struct Machine {
    pub(crate) region: Region,
    pub(crate) config: EmuConfig,
    pub(crate) product: Product,
    /// `None` for a private in-process machine.
    pub(crate) name: Option<String>,
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

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn io(e: impl std::fmt::Display) -> JoinError {
    JoinError::Io(e.to_string())
}

/// A slot of a machine, claimed for a process: what the process layer
/// builds a process on.
pub(crate) struct Member {
    pub(crate) machine: Arc<Machine>,
    pub(crate) slot: u32,
    pub(crate) generation: u64,
    pub(crate) pid: i32,
}

/// Checks a machine's name and configuration before anything is opened:
/// the product the configuration names.
pub(crate) fn check(name: &str, config: &EmuConfig) -> Result<Product, JoinError> {
    if !valid_name(name) {
        return Err(JoinError::BadName(name.to_owned()));
    }
    let product = config
        .validate()
        .map_err(|e| JoinError::BadConfig(e.to_string()))?;
    crate::os::fork::install();
    Ok(product)
}

/// Opens (creating it if needed) machine `name` with `config`, checked by
/// [`check`], and claims a slot of it for this OS process.
pub(crate) fn open_named(
    name: &str,
    config: &EmuConfig,
    product: Product,
) -> Result<Member, JoinError> {
    static SWEEP: std::sync::Once = std::sync::Once::new();
    SWEEP.call_once(files::sweep_stale_machines);
    let (file, path) = files::open_locked(name)?;
    let member = (|| {
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
            next_pid: AtomicI32::new(0),
            lock_file: Mutex::new(Some(path.clone())),
        });
        Ok(Member {
            machine,
            slot,
            generation,
            pid,
        })
    })();
    let _ = flock(&file, FlockOperation::Unlock);
    member
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

/// A private machine of this process only, with the slot of its first
/// (simulated) process.
pub(crate) fn private(config: &EmuConfig) -> Result<Member, AclError> {
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
        next_pid: AtomicI32::new(pid.wrapping_add(1).max(1)),
        lock_file: Mutex::new(None),
    });
    claim(&machine, pid)
}

/// The slot of another simulated process on a private machine.
pub(crate) fn spawn(machine: &Arc<Machine>) -> Result<Member, AclError> {
    if machine.name.is_some() {
        // Real processes join a named machine themselves.
        return Err(AclError::API_NOT_SUPPORT);
    }
    let pid = machine.next_pid.fetch_add(1, Ordering::Relaxed).max(1);
    claim(machine, pid)
}

fn claim(machine: &Arc<Machine>, pid: i32) -> Result<Member, AclError> {
    let (slot, generation) = machine.region.claim_slot(pid, true)?;
    Ok(Member {
        machine: Arc::clone(machine),
        slot,
        generation,
        pid,
    })
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
    /// is stopped by the parent, and releases the lock when told to.
    #[test]
    #[ignore = "run by a_stopped_lock_owner_is_answered_not_waited_for, in its own process"]
    fn lock_owner_child() {
        let Ok(name) = std::env::var(OWNER_ENV) else {
            return;
        };
        let config = EmuConfig::preset(aclmem_core::Product::AtlasA2);
        let product = check(&name, &config).expect("a good machine");
        let m = open_named(&name, &config, product).expect("the child joins");
        let guard = m.machine.region.lock(m.slot).expect("the child locks");
        println!("held");
        std::io::stdout().flush().unwrap();
        // The parent stops this process now, and says when to go on.
        let _ = std::io::stdin().read_line(&mut String::new());
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
        let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::STOP).unwrap();
        // Waiting for the stop of our own child consumes only that report.
        loop {
            match rustix::process::waitid(
                rustix::process::WaitId::Pid(pid),
                rustix::process::WaitIdOptions::STOPPED,
            ) {
                Ok(_) => break,
                Err(e) => assert_eq!(e, rustix::io::Errno::INTR),
            }
        }
        let config = EmuConfig::preset(aclmem_core::Product::AtlasA2);
        let e = crate::Emulator::join(&name, &config).expect("joining waits for no lock");
        assert_eq!(
            e.mem_info(aclmem_core::MemAttr::HbmMem, 0).err(),
            Some(Situation::MachineStuck.code())
        );
        rustix::process::kill_process(pid, rustix::process::Signal::CONT).unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "go").unwrap();
        wait_for("released");
        assert!(e.mem_info(aclmem_core::MemAttr::HbmMem, 0).is_ok());
        drop(stdin);
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
