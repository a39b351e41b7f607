//! Every system call the emulator makes, each wrapped once.
//!
//! Ownership rule the `unsafe fn`s below state as their `# Safety`: the
//! emulator only maps into, or unmaps, address ranges inside *arenas* it
//! reserved itself with [`reserve_arena`] and still owns. Nothing else in the
//! process maps into those ranges (the kernel never hands out an address that
//! is already mapped), so replacing pages there cannot clobber memory that
//! Rust code or another library owns.

use std::ffi::c_void;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::ptr;

use rustix::fs::{FallocateFlags, MemfdFlags, fallocate, ftruncate, memfd_create};
use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags, mmap, mmap_anonymous, munmap};

/// A sparse memfd of `len` bytes: the backing of a pool of physical memory.
/// Pages are allocated by the kernel on first touch and given back by
/// [`punch`].
pub fn new_pool_file(name: &str, len: u64) -> Result<OwnedFd, Errno> {
    let fd = private_memfd(name)?;
    ftruncate(&fd, len)?;
    // Its size is fixed for good: no holder (an importer among them) can
    // shrink it under another process's mappings, which would fault.
    rustix::fs::fcntl_add_seals(&fd, SIZE_SEALS | rustix::fs::SealFlags::SEAL)?;
    Ok(fd)
}

/// A memfd of `len` bytes, allocated now (so that a memory limit is an
/// error here, not a `SIGBUS` on first touch) and sealed like a pool file:
/// the shared state of a machine.
pub fn new_state_file(name: &str, len: u64) -> Result<OwnedFd, Errno> {
    let fd = private_memfd(name)?;
    ftruncate(&fd, len)?;
    fallocate(&fd, FallocateFlags::empty(), 0, len)?;
    rustix::fs::fcntl_add_seals(&fd, SIZE_SEALS | rustix::fs::SealFlags::SEAL)?;
    Ok(fd)
}

/// A memfd only its owner may open (mode 0600; the kernel makes them
/// 0777): reaching it through `/proc/PID/fd/N` takes this user, not only
/// the right to look into the process.
fn private_memfd(name: &str) -> Result<OwnedFd, Errno> {
    let fd = memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    rustix::fs::fchmod(&fd, rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR)?;
    Ok(fd)
}

/// The seals every pool file carries: its size can change no more.
pub const SIZE_SEALS: rustix::fs::SealFlags =
    rustix::fs::SealFlags::SHRINK.union(rustix::fs::SealFlags::GROW);

/// Whether `fd` is a sealed pool file of at least `len` bytes: what an
/// importer checks of a descriptor another process sent it.
pub fn is_sealed_pool(fd: BorrowedFd<'_>, len: u64) -> bool {
    let Ok(st) = rustix::fs::fstat(fd) else {
        return false;
    };
    rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
        && st.st_size as u64 >= len
        && rustix::fs::fcntl_get_seals(fd).is_ok_and(|s| s.contains(SIZE_SEALS))
}

/// When process `pid` started, in clock ticks since boot
/// (`/proc/PID/stat`, field 22): with the pid, an identity that pid reuse
/// does not fake. The error says why it cannot be read: `ENOENT` when the
/// process is gone, `EMFILE` when this process is out of descriptors.
///
/// It reads the main thread's entry, `/proc/PID/task/PID/stat`, which
/// gives the same start time as `/proc/PID/stat`: qemu-user answers a
/// process's reads of its own `/proc/PID/stat` with a made-up file whose
/// start time is 0, while other processes read the real one, and the
/// two must agree.
pub fn start_time(pid: i32) -> Result<u64, Errno> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/stat"))
        .map_err(|e| e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error))?;
    // The command name (field 2) may hold spaces and parentheses: count
    // fields after its closing parenthesis.
    let rest = &stat[stat.rfind(')').ok_or(Errno::INVAL)? + 1..];
    rest.split_whitespace()
        .nth(19)
        .and_then(|t| t.parse().ok())
        .ok_or(Errno::INVAL)
}

/// Whether `e` means this process (or the system) is out of descriptors.
pub fn out_of_descriptors(e: Errno) -> bool {
    e == Errno::MFILE || e == Errno::NFILE
}

/// Gives the pages of `offset..offset + len` of a pool file back to the
/// kernel (the range reads as zeros afterwards).
pub fn punch(fd: BorrowedFd<'_>, offset: u64, len: u64) -> Result<(), Errno> {
    fallocate(
        fd,
        FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
        offset,
        len,
    )
}

/// Reserves `len` bytes of inaccessible address space (`PROT_NONE`, no swap
/// reservation), at `fixed` if given (failing rather than replacing anything
/// mapped there).
pub fn reserve_arena(len: usize, fixed: Option<usize>) -> Result<usize, Errno> {
    let mut flags = MapFlags::PRIVATE | MapFlags::NORESERVE;
    let hint = match fixed {
        Some(addr) => {
            flags |= MapFlags::FIXED_NOREPLACE;
            addr as *mut c_void
        }
        None => ptr::null_mut(),
    };
    // SAFETY: without MAP_FIXED the kernel picks an unused range, and
    // MAP_FIXED_NOREPLACE never replaces an existing mapping (EEXIST
    // instead), so no memory anyone owns is touched.
    let got = unsafe { mmap_anonymous(hint, len, ProtFlags::empty(), flags)? } as usize;
    if let Some(addr) = fixed
        && got != addr
    {
        // Kernels before 4.17 treat the flag as a hint.
        // SAFETY: `got..got + len` was mapped just above and is referenced
        // nowhere else.
        unsafe { munmap(got as *mut c_void, len)? };
        return Err(Errno::EXIST);
    }
    Ok(got)
}

/// Places `len` bytes of `fd` from `offset` at `addr`, shared and
/// read-write: every mapping of one range of one file sees the same bytes.
///
/// # Safety
/// `addr..addr + len` must lie inside an arena the caller owns, with no
/// live reference into it (see the module docs); it is replaced.
pub unsafe fn map_fixed(
    addr: usize,
    len: usize,
    fd: BorrowedFd<'_>,
    offset: u64,
) -> Result<(), Errno> {
    // SAFETY: by the caller's guarantee the range is part of its own arena,
    // so MAP_FIXED replaces only pages the emulator owns.
    unsafe {
        mmap(
            addr as *mut c_void,
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED | MapFlags::FIXED,
            fd,
            offset,
        )?;
    }
    Ok(())
}

/// Puts inaccessible arena back over a mapping, so the range stays the
/// emulator's and nothing else can land in it. At `vm.max_map_count` the
/// kernel refuses every mmap; then the mapping is unmapped instead and the
/// arena put back once the count has dropped.
///
/// # Safety
/// `addr..addr + len` must be a mapping the caller made with [`map_fixed`]
/// inside its own arena, which no reference reads or writes any more.
pub unsafe fn unmap_fixed(addr: usize, len: usize) -> Result<(), Errno> {
    let placeholder = || {
        // SAFETY: by the caller's guarantee the range is ours and unused.
        unsafe {
            mmap_anonymous(
                addr as *mut c_void,
                len,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED,
            )
        }
    };
    match placeholder() {
        Ok(_) => Ok(()),
        Err(Errno::NOMEM) => {
            // SAFETY: as above; unmapping a whole mapping needs no new VMA.
            unsafe { munmap(addr as *mut c_void, len)? };
            placeholder().map(drop)
        }
        Err(e) => Err(e),
    }
}

/// Returns an arena to the kernel.
///
/// # Safety
/// `addr..addr + len` must be an arena the caller reserved, with nothing in
/// it used any more.
pub unsafe fn release_arena(addr: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: by the caller's guarantee the range is ours and unused.
    unsafe { munmap(addr as *mut c_void, len) }
}

/// Maps `len` bytes of a shared file for the machine's state.
pub fn map_shared_region(fd: BorrowedFd<'_>, len: usize) -> Result<usize, Errno> {
    // SAFETY: a fresh shared mapping at an address the kernel chooses cannot
    // overlap anything; the caller owns it until `unmap_region`.
    let p = unsafe {
        mmap(
            ptr::null_mut(),
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED,
            fd,
            0,
        )?
    };
    Ok(p as usize)
}

/// Anonymous read-write memory of `len` bytes (page aligned), for
/// `aclrtMallocHost`.
pub fn map_anonymous(len: usize) -> Result<usize, Errno> {
    // SAFETY: a fresh mapping at an address the kernel chooses.
    let p = unsafe {
        mmap_anonymous(
            ptr::null_mut(),
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE,
        )?
    };
    Ok(p as usize)
}

/// Whether every page of `addr..addr + len` is mapped in this process
/// (asked of the kernel: an asynchronous `msync`, which changes nothing,
/// fails with `ENOMEM` on an unmapped page).
pub fn is_mapped(addr: usize, len: usize) -> bool {
    let page = rustix::param::page_size();
    let start = addr & !(page - 1);
    let Some(len) = addr.checked_add(len).map(|end| end - start) else {
        return false;
    };
    // SAFETY: `MS_ASYNC` neither reads nor writes the range nor changes
    // its mapping; any address is safe to ask about.
    unsafe { rustix::mm::msync(start as *mut c_void, len, rustix::mm::MsyncFlags::ASYNC) }.is_ok()
}

/// Unmaps a region mapped by [`map_shared_region`] or [`map_anonymous`].
///
/// # Safety
/// `addr..addr + len` must be such a region, with no reference into it.
pub unsafe fn unmap_region(addr: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: by the caller's guarantee.
    unsafe { munmap(addr as *mut c_void, len) }
}

/// Takes the write lock on byte `index` of `fd` as an open-file-description
/// lock: it lives exactly as long as this open file (so as long as the
/// process, or until it closes the descriptor) and no longer. `Ok(false)`
/// if another open file holds it.
pub fn lock_byte(fd: BorrowedFd<'_>, index: u64) -> Result<bool, Errno> {
    let mut fl = flock_of(libc::F_WRLCK, index);
    // SAFETY: F_OFD_SETLK takes a pointer to a live, initialised `flock`.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_SETLK, &mut fl) };
    if r == 0 {
        return Ok(true);
    }
    match Errno::from_io_error(&io::Error::last_os_error()) {
        Some(Errno::AGAIN) | Some(Errno::ACCESS) => Ok(false),
        Some(e) => Err(e),
        None => Err(Errno::IO),
    }
}

/// Releases this open file's lock on byte `index`.
pub fn unlock_byte(fd: BorrowedFd<'_>, index: u64) -> Result<(), Errno> {
    let mut fl = flock_of(libc::F_UNLCK, index);
    // SAFETY: F_OFD_SETLK takes a pointer to a live, initialised `flock`.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_SETLK, &mut fl) };
    if r == 0 {
        Ok(())
    } else {
        Err(Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::IO))
    }
}

/// Whether an open file other than `fd`'s holds the lock on byte `index`
/// (the probe itself takes nothing).
pub fn byte_locked_elsewhere(fd: BorrowedFd<'_>, index: u64) -> Result<bool, Errno> {
    let mut fl = flock_of(libc::F_WRLCK, index);
    // SAFETY: F_OFD_GETLK takes a pointer to a live, initialised `flock` and
    // writes the conflicting lock, if any, into it.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_GETLK, &mut fl) };
    if r != 0 {
        return Err(Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::IO));
    }
    Ok(fl.l_type != libc::F_UNLCK as libc::c_short)
}

/// Whether an open file other than `fd`'s holds a lock on any byte of
/// `start..start + len`.
pub fn range_locked_elsewhere(fd: BorrowedFd<'_>, start: u64, len: u64) -> Result<bool, Errno> {
    let mut fl = flock_of(libc::F_WRLCK, start);
    fl.l_len = len as libc::off_t;
    // SAFETY: as in `byte_locked_elsewhere`.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_GETLK, &mut fl) };
    if r != 0 {
        return Err(Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::IO));
    }
    Ok(fl.l_type != libc::F_UNLCK as libc::c_short)
}

fn flock_of(kind: libc::c_int, index: u64) -> libc::flock {
    // SAFETY: `flock` is a plain C struct for which all-zero bytes is a
    // valid value; every field the call reads is set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = index as libc::off_t;
    fl.l_len = 1;
    // OFD locks require l_pid 0.
    fl.l_pid = 0;
    fl
}

/// The `vm.max_map_count` limit, or the kernel's default when it cannot be
/// read.
pub fn max_map_count() -> usize {
    std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(65_530)
}

/// Random bytes from the kernel, or a time-and-pid mix where `getrandom` is
/// unavailable (the values only make forged handles unlikely).
pub fn random_u64() -> u64 {
    let mut buf = [0u8; 8];
    match rustix::rand::getrandom(&mut buf, rustix::rand::GetRandomFlags::NONBLOCK) {
        Ok(8) => u64::from_ne_bytes(buf),
        _ => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            t ^ (u64::from(std::process::id()) << 32) ^ 0x9e37_79b9_7f4a_7c15
        }
    }
}

/// The calling process's id, as the kernel knows it.
pub fn pid() -> i32 {
    rustix::process::getpid().as_raw_nonzero().get()
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;

    #[test]
    fn pool_files_cannot_change_size() {
        let fd = new_pool_file("aclmem-test-sealed", 1 << 20).unwrap();
        assert_eq!(ftruncate(&fd, 4096), Err(Errno::PERM), "shrink");
        assert_eq!(ftruncate(&fd, 2 << 20), Err(Errno::PERM), "grow");
        // Pages still go back (a hole keeps the size).
        punch(fd.as_fd(), 0, 4096).unwrap();
        assert!(is_sealed_pool(fd.as_fd(), 1 << 20));
        assert!(!is_sealed_pool(fd.as_fd(), (1 << 20) + 1), "too small");
        let plain = memfd_create("aclmem-test-plain", MemfdFlags::CLOEXEC).unwrap();
        ftruncate(&plain, 1 << 20).unwrap();
        assert!(!is_sealed_pool(plain.as_fd(), 1), "not sealed");
    }

    #[test]
    fn a_process_knows_its_start_time() {
        let me = pid();
        assert!(start_time(me).is_ok_and(|t| t > 0));
        assert_eq!(start_time(me), start_time(me));
        // The same as the process's own entry says (except under qemu-user,
        // where that entry is made up: the reason for the task path).
        let own = std::fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
        let field = own[own.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(19)
            .map(|t| t.parse::<u64>().unwrap());
        if std::env::var_os("ACLMEM_TEST_RUNNER").is_none() {
            assert_eq!(field, start_time(me).ok());
        }
        assert_eq!(start_time(i32::MAX), Err(Errno::NOENT));
    }

    /// The machine's state and the pools are files only their owner may
    /// open: another user who can look into the process (through
    /// `/proc/PID/fd`) still cannot write them.
    #[test]
    fn machine_files_are_their_owners_alone() {
        for fd in [
            new_pool_file("aclmem-test-mode", 1 << 20).unwrap(),
            new_state_file("aclmem-test-mode", 1 << 20).unwrap(),
        ] {
            let mode = rustix::fs::fstat(&fd).unwrap().st_mode & 0o777;
            assert_eq!(mode, 0o600);
        }
    }
}
