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
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::ptr;

use rustix::fs::{FallocateFlags, MemfdFlags, fallocate, ftruncate, memfd_create};
use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags, mmap, mmap_anonymous, munmap};

/// A sparse memfd of `len` bytes: the backing of a pool of physical memory.
/// Pages are allocated by the kernel on first touch and given back by
/// [`punch`].
pub fn new_pool_file(name: &str, len: u64) -> Result<OwnedFd, Errno> {
    let fd = memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    ftruncate(&fd, len)?;
    // Its size is fixed for good: no holder (an importer among them) can
    // shrink it under another process's mappings, which would fault.
    rustix::fs::fcntl_add_seals(&fd, SIZE_SEALS | rustix::fs::SealFlags::SEAL)?;
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
/// does not fake. `None` if the process is gone.
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count
    // fields after its closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
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

/// Unmaps a region mapped by [`map_shared_region`] or [`map_anonymous`].
///
/// # Safety
/// `addr..addr + len` must be such a region, with no reference into it.
pub unsafe fn unmap_region(addr: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: by the caller's guarantee.
    unsafe { munmap(addr as *mut c_void, len) }
}

/// Runs `io(done)` (one `pread`/`pwrite` of the bytes from `done` on)
/// until `count` bytes are through: interrupted calls are retried, a call
/// that moves nothing is `EIO` (a sparse pool file never ends early inside
/// its size), any other error is returned.
fn transfer_all(count: usize, mut io: impl FnMut(usize) -> isize) -> Result<(), Errno> {
    let mut done = 0;
    while done < count {
        match io(done) {
            n if n > 0 => done += n as usize,
            0 => return Err(Errno::IO),
            _ => {
                let e = Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::IO);
                if e != Errno::INTR {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// Copies `len` bytes from `from` at `from_offset` to `to` at `to_offset`
/// (a file of zeros there), in the kernel: only the parts of the range that
/// hold data (`SEEK_DATA`), so that a sparse allocation stays sparse
/// (`copy_file_range`; read and write through a buffer where that is
/// refused).
pub fn copy_between(
    from: BorrowedFd<'_>,
    from_offset: u64,
    to: BorrowedFd<'_>,
    to_offset: u64,
    len: u64,
) -> Result<(), Errno> {
    use rustix::fs::{SeekFrom, seek};
    let end = from_offset + len;
    let mut at = from_offset;
    while at < end {
        let data = match seek(from, SeekFrom::Data(at)) {
            Ok(d) => d,
            // Nothing but holes from here on.
            Err(Errno::NXIO) => return Ok(()),
            Err(e) => return Err(e),
        };
        if data >= end {
            return Ok(());
        }
        let hole = seek(from, SeekFrom::Hole(data))?.min(end);
        copy_range(
            from,
            data,
            to,
            to_offset + (data - from_offset),
            hole - data,
        )?;
        at = hole;
    }
    Ok(())
}

fn copy_range(
    from: BorrowedFd<'_>,
    from_offset: u64,
    to: BorrowedFd<'_>,
    to_offset: u64,
    len: u64,
) -> Result<(), Errno> {
    let (mut src, mut dst) = (from_offset, to_offset);
    let end = from_offset + len;
    while src < end {
        let left = (end - src) as usize;
        match rustix::fs::copy_file_range(from, Some(&mut src), to, Some(&mut dst), left) {
            Ok(0) => return Err(Errno::IO),
            Ok(_) => {}
            Err(Errno::INTR) => {}
            Err(Errno::XDEV | Errno::NOSYS | Errno::INVAL | Errno::OPNOTSUPP) => {
                return copy_buffered(from, src, to, dst, end - src);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn copy_buffered(
    from: BorrowedFd<'_>,
    mut src: u64,
    to: BorrowedFd<'_>,
    mut dst: u64,
    mut len: u64,
) -> Result<(), Errno> {
    let mut buf = vec![0u8; 1 << 20];
    while len > 0 {
        let n = (buf.len() as u64).min(len) as usize;
        let got = rustix::io::pread(from, &mut buf[..n], src)?;
        if got == 0 {
            return Err(Errno::IO);
        }
        let mut done = 0;
        while done < got {
            done += rustix::io::pwrite(to, &buf[done..got], dst + done as u64)?;
        }
        (src, dst, len) = (src + got as u64, dst + got as u64, len - got as u64);
    }
    Ok(())
}

/// Which way a copy between a pool file and host memory goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Host memory into the file (`pwrite`).
    ToFile,
    /// The file into host memory (`pread`).
    FromFile,
}

/// Copies `count` bytes between a pool file at `offset` and the host
/// address `host` (anything a C caller passed): the kernel reads or writes
/// `host`, so an address the caller may not use is `EFAULT`, never a crash.
pub fn copy_with_file(
    fd: BorrowedFd<'_>,
    offset: u64,
    host: usize,
    count: usize,
    way: Way,
) -> Result<(), Errno> {
    transfer_all(count, |done| {
        let (buf, len, at) = (
            host + done,
            count - done,
            (offset + done as u64) as libc::off_t,
        );
        // SAFETY: `pwrite` / `pread` read or write the host range in the
        // kernel, which checks it; nothing in this process dereferences it.
        unsafe {
            match way {
                Way::ToFile => libc::pwrite(fd.as_raw_fd(), buf as *const c_void, len, at),
                Way::FromFile => libc::pread(fd.as_raw_fd(), buf as *mut c_void, len, at),
            }
        }
    })
}

/// Copies `count` bytes between two host addresses a C caller passed,
/// letting the kernel check both (`process_vm_readv` on this process, or,
/// where that call is missing, as under qemu-user, through `scratch`).
pub fn copy_host_to_host<'f>(
    dst: usize,
    src: usize,
    count: usize,
    scratch: impl FnOnce() -> Option<BorrowedFd<'f>>,
) -> Result<(), Errno> {
    let local = libc::iovec {
        iov_base: dst as *mut c_void,
        iov_len: count,
    };
    let remote = libc::iovec {
        iov_base: src as *mut c_void,
        iov_len: count,
    };
    // SAFETY: the kernel reads `remote` and writes `local`, checking both;
    // the iovecs are live locals.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == count as isize {
        return Ok(());
    }
    let e = Errno::from_io_error(&io::Error::last_os_error()).unwrap_or(Errno::IO);
    if n >= 0 || e != Errno::NOSYS {
        return Err(if n >= 0 { Errno::FAULT } else { e });
    }
    // Chunked through a scratch file (made only now, when it is needed):
    // each half is checked by the kernel.
    let scratch = scratch().ok_or(Errno::MFILE)?;
    const CHUNK: usize = 1 << 20;
    let mut done = 0;
    while done < count {
        let n = CHUNK.min(count - done);
        copy_with_file(scratch, 0, src + done, n, Way::ToFile)?;
        copy_with_file(scratch, 0, dst + done, n, Way::FromFile)?;
        done += n;
    }
    Ok(())
}

/// Fills `count` bytes at the host address `dst` with `value`, letting the
/// kernel check the destination (through `scratch`, which holds a page of
/// the value).
pub fn fill_host(dst: usize, value: u8, count: usize, scratch: &OwnedFd) -> Result<(), Errno> {
    const CHUNK: usize = 1 << 20;
    let pattern = vec![value; CHUNK.min(count)];
    let mut done = 0;
    copy_with_file(
        scratch.as_fd(),
        0,
        pattern.as_ptr() as usize,
        pattern.len(),
        Way::ToFile,
    )?;
    while done < count {
        let n = CHUNK.min(count - done);
        copy_with_file(scratch.as_fd(), 0, dst + done, n, Way::FromFile)?;
        done += n;
    }
    Ok(())
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
        assert!(start_time(me).is_some_and(|t| t > 0));
        assert_eq!(start_time(me), start_time(me));
        assert_eq!(start_time(i32::MAX), None);
    }
}
