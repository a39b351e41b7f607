//! Stopping explore: the runs under way (each in a process group of its
//! own, which a terminal's Ctrl-C does not reach) are killed with it, and
//! its directory removed.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;

/// The process groups of the runs under way; `None` once stopped.
static GROUPS: Mutex<Option<BTreeSet<i32>>> = Mutex::new(Some(BTreeSet::new()));

fn kill(group: i32) {
    // SAFETY: kills a process group a run of explore made.
    unsafe { libc::kill(-group, libc::SIGKILL) };
}

/// A run's process group, registered while it lives.
pub(super) struct Running(i32);

impl Running {
    pub(super) fn new(pid: u32) -> Running {
        let group = pid as i32;
        match GROUPS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            Some(groups) => {
                groups.insert(group);
            }
            // Started as explore was being stopped.
            None => kill(group),
        }
        Running(group)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(groups) = GROUPS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            groups.remove(&self.0);
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP are taken by a thread of their own (the
/// others block them; each run unblocks them before it starts the
/// program, `Runner::run`): it kills the runs' groups, removes `dir`
/// and exits with 128 + the signal, as a shell reports it.
pub(super) fn watch(dir: PathBuf) {
    // SAFETY: a signal set initialised by `sigemptyset` before use.
    let set = unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(set.as_mut_ptr(), s);
        }
        set.assume_init()
    };
    // SAFETY: blocks the signals in this thread, before any other
    // thread of explore exists (they inherit the mask).
    if unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) } != 0 {
        return;
    }
    std::thread::spawn(move || {
        let mut signal = 0;
        // SAFETY: waits for one of the blocked signals of `set`.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            return;
        }
        let running = GROUPS.lock().unwrap_or_else(|e| e.into_inner()).take();
        running.into_iter().flatten().for_each(kill);
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("aclmem explore: stopped by signal {signal}; the runs under way were killed");
        std::process::exit(128 + signal);
    });
}
