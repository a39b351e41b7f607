//! The files of named machines, and why no other user can plant or block
//! them.
//!
//! A user's machines live in one private directory,
//! `$ACLMEM_EMU_DIR/aclmem-emu.<uid>/<name>` (`/dev/shm` by default),
//! created mode 0700. Before using it, the emulator checks that it is a
//! directory (not a symbolic link or a file someone put there), that this
//! user owns it, and that no one else may enter it; a machine file in it is
//! opened without following links and must be a regular file this user
//! owns. Another user can therefore neither create the file a victim then
//! joins, nor point it elsewhere, nor open it to hold its lock. Anything
//! that fails a check is refused with the path and what is wrong with it.
//!
//! The machine's state is allocated (`fallocate`) before it is written, so
//! a small or full tmpfs is an error at `aclInit`, never a `SIGBUS` later.
//! The join lock is taken with a bound: a process of this user that holds
//! it for longer than [`JOIN_LOCK_WAIT`] makes the joiner give up with an
//! error instead of waiting forever.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{
    AtFlags, CWD, FallocateFlags, FileType, FlockOperation, Mode, OFlags, fallocate, flock, fstat,
    mkdir, open, statat,
};
use rustix::io::Errno;

use super::error::JoinError;
use super::layout::{MAX_PROCS, REGION_BYTES};
use crate::os::sys;

/// How long a joiner waits for another process of this user to finish
/// joining or leaving the machine.
pub(crate) const JOIN_LOCK_WAIT: Duration = Duration::from_secs(5);

fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// The private directory of this user's machines under `base`.
fn user_dir(base: &Path) -> PathBuf {
    base.join(format!("aclmem-emu.{}", uid()))
}

/// The file of machine `name` (whether or not it exists).
pub fn machine_path(name: &str) -> PathBuf {
    user_dir(&crate::env::machine_dir()).join(name)
}

fn refused(path: &Path, what: impl std::fmt::Display) -> JoinError {
    JoinError::Unsafe(format!("{}: {what}", path.display()))
}

/// The private directory, created if missing, checked always.
fn private_dir() -> Result<PathBuf, JoinError> {
    let dir = user_dir(&crate::env::machine_dir());
    match mkdir(&dir, Mode::RWXU) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(JoinError::Io(format!("{}: {e}", dir.display()))),
    }
    let st = statat(CWD, &dir, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| JoinError::Io(format!("{}: {e}", dir.display())))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(refused(
            &dir,
            "is not a directory (a link or a file was put in its place); remove it",
        ));
    }
    if st.st_uid != uid() {
        return Err(refused(
            &dir,
            format_args!("belongs to uid {}, not to this user ({})", st.st_uid, uid()),
        ));
    }
    if st.st_mode & 0o077 != 0 {
        return Err(refused(
            &dir,
            format_args!(
                "is open to other users (mode {:o}); it must be 0700",
                st.st_mode & 0o777
            ),
        ));
    }
    Ok(dir)
}

/// Checks that an open machine file is a regular file of this user.
fn check_file(path: &Path, fd: &OwnedFd) -> Result<(), JoinError> {
    let st = fstat(fd).map_err(|e| JoinError::Io(format!("{}: {e}", path.display())))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(refused(path, "is not a regular file"));
    }
    if st.st_uid != uid() {
        return Err(refused(
            path,
            format_args!("belongs to uid {}, not to this user", st.st_uid),
        ));
    }
    Ok(())
}

/// Opens (creating it if needed) the file of machine `name` and takes its
/// join lock: the file, its path, and whether its state must be written.
pub(crate) fn open_locked(name: &str) -> Result<(OwnedFd, PathBuf), JoinError> {
    let path = private_dir()?.join(name);
    loop {
        let fd = open(
            &path,
            OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::RUSR | Mode::WUSR,
        )
        .map_err(|e| match e {
            Errno::LOOP => refused(&path, "is a symbolic link"),
            e => JoinError::Io(format!("{}: {e}", path.display())),
        })?;
        check_file(&path, &fd)?;
        lock_bounded(&path, &fd)?;
        // Removed by a last leaver between our open and our lock: start over.
        if fstat(&fd)
            .map_err(|e| JoinError::Io(e.to_string()))?
            .st_nlink
            > 0
        {
            return Ok((fd, path));
        }
    }
}

/// The exclusive join lock, waited for at most [`JOIN_LOCK_WAIT`].
fn lock_bounded(path: &Path, fd: &OwnedFd) -> Result<(), JoinError> {
    let start = Instant::now();
    loop {
        match flock(fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(Errno::WOULDBLOCK | Errno::INTR) if start.elapsed() < JOIN_LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(Errno::WOULDBLOCK) => {
                return Err(JoinError::Io(format!(
                    "{}: another process has held the machine's join lock for more than {} s",
                    path.display(),
                    JOIN_LOCK_WAIT.as_secs()
                )));
            }
            Err(e) => return Err(JoinError::Io(format!("{}: {e}", path.display()))),
        }
    }
}

/// Allocates the machine's state in its file (a no-op when it is there):
/// a filesystem without room is an error now, not a `SIGBUS` on first use.
pub(crate) fn allocate(path: &Path, fd: &OwnedFd) -> Result<(), JoinError> {
    fallocate(fd, FallocateFlags::empty(), 0, REGION_BYTES as u64).map_err(|e| {
        JoinError::Io(format!(
            "{}: cannot allocate the machine's {} KiB of shared state ({e}); free space there or set ACLMEM_EMU_DIR to a larger filesystem",
            path.display(),
            REGION_BYTES >> 10
        ))
    })
}

/// Removes the files of this user's machines whose processes were all
/// killed (a machine's last process removes the file when it leaves, but a
/// SIGKILL leaves it behind). A machine is stale when nobody holds its
/// join lock and no slot byte is locked: every live process of a named
/// machine holds the lock on its slot's byte for as long as it runs. A
/// joiner racing with the sweep sees the file unlinked and starts over
/// (see `open_locked`). Runs once per OS process, at its first join.
pub(crate) fn sweep_stale_machines() {
    let Ok(dir) = private_dir() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(fd) = open(
            &path,
            OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
        ) else {
            continue;
        };
        // Busy: someone is joining or leaving it right now; it is not stale.
        if check_file(&path, &fd).is_err()
            || flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err()
        {
            continue;
        }
        let stale = fstat(&fd).is_ok_and(|st| st.st_nlink > 0)
            && sys::range_locked_elsewhere(fd.as_fd(), 0, MAX_PROCS as u64) == Ok(false);
        if stale {
            let _ = rustix::fs::unlink(&path);
        }
        let _ = flock(&fd, FlockOperation::Unlock);
    }
}
