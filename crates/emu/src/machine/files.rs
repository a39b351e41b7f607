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
//! The file is the machine's *rendezvous*, not its state: it carries the
//! join lock, one liveness byte lock per process slot, and a locator per
//! slot saying where that process keeps the state. The state itself is a
//! memfd sealed against shrinking and growing, created by the first process
//! and reached by every joiner through `/proc/PID/fd/N` of a live member
//! (checked: that member's slot lock is held, its start time matches, and
//! the descriptor is the sealed memfd of the right size and inode the
//! locator names). So no process, whatever it does to the file in the
//! directory (truncate it, write it, replace it), can make a member fault:
//! the mapped memory's size cannot change, and the file is only ever read
//! with `pread`. The rendezvous file is allocated (`fallocate`) before it is
//! written, so a full tmpfs is an error at `aclInit`, never a `SIGBUS`.
//! The join lock is taken with a bound: a process of this user that holds
//! it for longer than [`JOIN_LOCK_WAIT`] makes the joiner give up with an
//! error instead of waiting forever.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{
    AtFlags, CWD, FallocateFlags, FileType, FlockOperation, Mode, OFlags, fallocate, flock, fstat,
    mkdir, open, statat,
};
use rustix::io::Errno;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::error::JoinError;
use super::layout::{MAX_PROCS, REGION_BYTES};
use crate::os::sys;

/// Where, in the rendezvous file, the locators start (the bytes before
/// are the slots' liveness locks).
const LOCATORS: u64 = 4096;

/// The rendezvous file's size: the lock bytes and one locator per slot.
const RENDEZVOUS_BYTES: u64 = LOCATORS + (MAX_PROCS * size_of::<Locator>()) as u64;

/// Where the process in one slot keeps the machine's state: descriptor
/// `fd` of process `pid` (started at `start_time`), the memfd
/// `(dev, ino)`.
#[derive(Debug, Clone, Copy, Default, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Locator {
    pid: i32,
    fd: i32,
    start_time: u64,
    dev: u64,
    ino: u64,
}

fn locator_offset(slot: u32) -> u64 {
    LOCATORS + u64::from(slot) * size_of::<Locator>() as u64
}

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

/// The rendezvous file of this user's machine `name` (whether or not it
/// exists): its join and liveness locks, and where its processes keep its
/// state (see [`machine_state_path`]).
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

/// Whether any process holds a slot of the machine whose rendezvous file
/// `fd` is: a byte lock of another open file in the slots' range (every
/// live process holds its slot's byte for as long as it runs).
pub(crate) fn slot_held(fd: BorrowedFd<'_>) -> Result<bool, Errno> {
    sys::range_locked_elsewhere(fd, 0, MAX_PROCS as u64)
}

/// Allocates the rendezvous file (a no-op when it is there): a filesystem
/// without room is an error now, not a failed write later.
pub(crate) fn allocate(path: &Path, fd: &OwnedFd) -> Result<(), JoinError> {
    fallocate(fd, FallocateFlags::empty(), 0, RENDEZVOUS_BYTES).map_err(|e| {
        JoinError::Io(format!(
            "{}: cannot allocate the machine's {} KiB rendezvous file ({e}); free space there or set ACLMEM_EMU_DIR to another filesystem",
            path.display(),
            RENDEZVOUS_BYTES >> 10
        ))
    })
}

/// A new machine state: a memfd of [`REGION_BYTES`], allocated, then
/// sealed so that its size never changes.
pub(crate) fn new_state() -> Result<OwnedFd, JoinError> {
    sys::new_state_file("aclmem-emu-machine", REGION_BYTES as u64).map_err(|e| {
        JoinError::Io(format!(
            "cannot allocate the machine's {} KiB of shared state: {e}",
            REGION_BYTES >> 10
        ))
    })
}

/// Records, in the locator of `slot`, that this process keeps the state in
/// `state`: how the next joiner finds it.
pub(crate) fn publish(
    path: &Path,
    rendezvous: &OwnedFd,
    slot: u32,
    state: &OwnedFd,
) -> Result<(), JoinError> {
    let io = |e: Errno| JoinError::Io(format!("{}: {e}", path.display()));
    let pid = sys::pid();
    let st = fstat(state).map_err(io)?;
    let locator = Locator {
        pid,
        fd: std::os::fd::AsRawFd::as_raw_fd(state),
        start_time: sys::start_time(pid).map_err(io)?,
        dev: st.st_dev,
        ino: st.st_ino,
    };
    let n = rustix::io::pwrite(rendezvous, locator.as_bytes(), locator_offset(slot)).map_err(io)?;
    if n != size_of::<Locator>() {
        return Err(io(Errno::NOSPC));
    }
    Ok(())
}

/// The state of a machine with live processes, reached through one of
/// them. Every locator is checked before it is believed: the slot's lock
/// is held, the process is the one that wrote it (start time), and its
/// descriptor is the sealed memfd of the right size the locator names.
pub(crate) fn find_state(path: &Path, rendezvous: &OwnedFd) -> Result<OwnedFd, JoinError> {
    let mut tried = 0;
    for slot in 0..MAX_PROCS as u32 {
        if sys::byte_locked_elsewhere(rendezvous.as_fd(), u64::from(slot)) != Ok(true) {
            continue;
        }
        tried += 1;
        match open_state(rendezvous, slot) {
            Ok(Some((_, state))) => return Ok(state),
            Ok(None) => {}
            Err(e) => {
                return Err(JoinError::Io(format!(
                    "{}: out of file descriptors (RLIMIT_NOFILE) while reaching the state of a live process: {e}",
                    path.display()
                )));
            }
        }
    }
    Err(refused(
        path,
        format_args!(
            "the machine has live processes ({tried} slot locks held), but none of them shows its state to this process through /proc/PID/fd; not joining it"
        ),
    ))
}

/// The state as the locator of `slot` names it, if it checks out, and the
/// `/proc` path it was opened through; an error only when this process is
/// out of descriptors (then nothing can be told about the locator).
fn open_state(rendezvous: &OwnedFd, slot: u32) -> Result<Option<(PathBuf, OwnedFd)>, Errno> {
    let short = |e: Errno| sys::out_of_descriptors(e).then_some(e);
    let mut locator = Locator::default();
    if rustix::io::pread(rendezvous, locator.as_mut_bytes(), locator_offset(slot))
        != Ok(size_of::<Locator>())
        || locator.pid <= 0
        || locator.fd < 0
    {
        return Ok(None);
    }
    match sys::start_time(locator.pid) {
        Ok(t) if t == locator.start_time => {}
        Ok(_) => return Ok(None),
        Err(e) => return short(e).map_or(Ok(None), Err),
    }
    let proc_fd = PathBuf::from(format!("/proc/{}/fd/{}", locator.pid, locator.fd));
    // Non-blocking and no controlling terminal: a locator someone wrote to
    // name a FIFO or a device must not hang or capture this process; only
    // a sealed memfd passes the checks below.
    let flags = OFlags::RDWR | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    let state = match open(&proc_fd, flags, Mode::empty()) {
        Ok(state) => state,
        Err(e) => return short(e).map_or(Ok(None), Err),
    };
    let genuine = fstat(&state).is_ok_and(|st| {
        (st.st_dev, st.st_ino) == (locator.dev, locator.ino)
            && st.st_uid == uid()
            && st.st_size as u64 == REGION_BYTES as u64
    }) && sys::is_sealed_pool(state.as_fd(), REGION_BYTES as u64);
    Ok(genuine.then_some((proc_fd, state)))
}

/// Where the shared state of this user's machine `name` can be opened
/// while a process of it is alive: a `/proc/PID/fd/N` path of one of its
/// processes (for tools that inspect a running machine). `None` when no
/// process of the machine runs.
pub fn machine_state_path(name: &str) -> Option<PathBuf> {
    let path = machine_path(name);
    let rendezvous = open(
        &path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )
    .ok()?;
    check_file(&path, &rendezvous).ok()?;
    (0..MAX_PROCS as u32)
        .filter(|&slot| sys::byte_locked_elsewhere(rendezvous.as_fd(), u64::from(slot)) == Ok(true))
        .find_map(|slot| open_state(&rendezvous, slot).ok().flatten())
        .map(|(p, _)| p)
}

/// The longest path a Unix socket address holds (`sun_path`, with its
/// NUL).
const SOCKET_PATH_MAX: usize = 107;

/// Where the listener of `slot` of this user's machine `name` binds (the
/// machine's private directory, created and checked as for the
/// rendezvous file): `<name>.<slot>.<nonce>.sock`, or `<slot>.<nonce>.sock`
/// when the long form does not fit a socket address. Another user can
/// neither enter the directory nor so connect to the socket: a socket's
/// path, unlike an abstract name, takes the file system's permissions.
pub(crate) fn listener_path(name: &str, slot: u32, nonce: u64) -> Result<PathBuf, JoinError> {
    let dir = private_dir()?;
    [
        format!("{name}.{slot}.{nonce:016x}.sock"),
        format!("{slot}.{nonce:016x}.sock"),
    ]
    .into_iter()
    .map(|file| dir.join(file))
    .find(|p| p.as_os_str().len() <= SOCKET_PATH_MAX)
    .ok_or_else(|| {
        refused(
            &dir,
            format_args!(
                "too long for a socket path ({SOCKET_PATH_MAX} bytes); set ACLMEM_EMU_DIR to a shorter directory"
            ),
        )
    })
}

/// Whether `path` is a socket no process listens on any more (its
/// listener was killed): connecting is refused.
fn dead_socket(path: &Path) -> bool {
    let Ok(addr) = rustix::net::SocketAddrUnix::new(path) else {
        return false;
    };
    let Ok(probe) = rustix::net::socket_with(
        rustix::net::AddressFamily::UNIX,
        rustix::net::SocketType::SEQPACKET,
        rustix::net::SocketFlags::CLOEXEC | rustix::net::SocketFlags::NONBLOCK,
        None,
    ) else {
        return false;
    };
    rustix::net::connect(&probe, &addr) == Err(Errno::CONNREFUSED)
}

/// Removes the files of this user's machines whose processes were all
/// killed (a machine's last process removes the file when it leaves, but a
/// SIGKILL leaves it behind), and the sockets of killed listeners. A machine is stale when nobody holds its
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
        // A listener's socket whose process was killed (a live one unlinks
        // its own when it stops).
        if entry.file_type().is_ok_and(|t| {
            use std::os::unix::fs::FileTypeExt;
            t.is_socket()
        }) {
            if dead_socket(&path) {
                let _ = rustix::fs::unlink(&path);
            }
            continue;
        }
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
        let stale =
            fstat(&fd).is_ok_and(|st| st.st_nlink > 0) && slot_held(fd.as_fd()) == Ok(false);
        if stale {
            let _ = rustix::fs::unlink(&path);
        }
        let _ = flock(&fd, FlockOperation::Unlock);
    }
}
