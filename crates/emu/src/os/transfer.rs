//! Copies between files and memory that the kernel makes, so that an
//! address a C caller passed and the process may not use is an error code,
//! never a fault: between a pool file and host memory (`pread`/`pwrite`),
//! between two host ranges (`aclmem-cmem`), and
//! between two files (`copy_file_range`, holes kept).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use libc::c_void;
use rustix::io::Errno;

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
/// letting the kernel check both (`aclmem-cmem`: `process_vm_readv` on
/// this process, or a pipe where that call is missing, as under qemu-user).
pub fn copy_host_to_host(
    dst: usize,
    src: usize,
    count: usize,
    _caller: &super::host::CallerMemory,
) -> Result<(), Errno> {
    // SAFETY: the caller vouched for the host addresses of the call; the
    // kernel checks both.
    unsafe { aclmem_cmem::copy(dst, src, count) }.map_err(Errno::from_raw_os_error)
}
