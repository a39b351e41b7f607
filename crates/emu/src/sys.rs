//! The few system calls the emulator makes, through `rustix`.
//!
//! Ownership rule that every `SAFETY` comment below relies on: the emulator
//! only ever passes addresses inside *placeholders* it created itself with
//! [`reserve_placeholder`] and still records as reserved. Nothing else in the
//! process maps into those ranges (the kernel never hands out an address that
//! is already mapped), so replacing pages there cannot clobber memory that
//! Rust code or another library owns.

use std::ffi::c_void;
use std::os::fd::OwnedFd;
use std::ptr;

use rustix::fs::{MemfdFlags, ftruncate, memfd_create};
use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags, mmap, mmap_anonymous, munmap};

/// A memfd of `len` bytes: the backing of one physical allocation. Pages are
/// allocated by the kernel on first touch, so a large handle costs nothing
/// until it is written.
pub fn new_memfd(len: usize) -> Result<OwnedFd, Errno> {
    let fd = memfd_create("aclmem-emu-physical", MemfdFlags::CLOEXEC)?;
    ftruncate(&fd, len as u64)?;
    Ok(fd)
}

/// Reserves `len` bytes of inaccessible address space (`PROT_NONE`, no swap
/// reservation), aligned to `align` (a power of two), at `fixed` if given
/// (failing rather than replacing an existing mapping).
pub fn reserve_placeholder(len: usize, align: usize, fixed: Option<usize>) -> Result<usize, Errno> {
    let flags = MapFlags::PRIVATE | MapFlags::NORESERVE;
    if let Some(addr) = fixed {
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping; it
        // fails with EEXIST instead, so no memory anyone owns is touched.
        let got = unsafe {
            mmap_anonymous(
                addr as *mut c_void,
                len,
                ProtFlags::empty(),
                flags | MapFlags::FIXED_NOREPLACE,
            )?
        };
        if got as usize != addr {
            // Kernels before 4.17 treat the flag as a hint.
            // SAFETY: `got..got+len` was mapped by the call above and is
            // referenced nowhere else.
            unsafe { munmap(got, len)? };
            return Err(Errno::EXIST);
        }
        return Ok(addr);
    }
    let span = len.checked_add(align).ok_or(Errno::NOMEM)?;
    // SAFETY: a fresh anonymous mapping at an address the kernel chooses
    // cannot overlap anything.
    let base =
        unsafe { mmap_anonymous(ptr::null_mut(), span, ProtFlags::empty(), flags)? } as usize;
    let start = (base + align - 1) & !(align - 1);
    let head = start - base;
    let tail = span - head - len;
    // SAFETY: the head and tail are parts of the mapping made just above,
    // outside the `start..start+len` range we keep; nothing refers to them.
    unsafe {
        if head > 0 {
            munmap(base as *mut c_void, head)?;
        }
        if tail > 0 {
            munmap((start + len) as *mut c_void, tail)?;
        }
    }
    Ok(start)
}

/// Places `len` bytes of `fd` (from offset 0) at `addr`, shared and
/// read-write: every mapping of one memfd sees the same bytes.
///
/// The caller guarantees `addr..addr+len` lies inside a live placeholder it
/// owns (see the module docs).
pub fn map_shared_fixed(addr: usize, len: usize, fd: &OwnedFd) -> Result<(), Errno> {
    // SAFETY: by the caller's guarantee the range is part of our own
    // placeholder, so MAP_FIXED replaces only pages the emulator owns.
    unsafe {
        mmap(
            addr as *mut c_void,
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED | MapFlags::FIXED,
            fd,
            0,
        )?;
    }
    Ok(())
}

/// Puts the `PROT_NONE` placeholder back over a mapping (so the range stays
/// reserved and no other allocation can land in it).
///
/// The caller guarantees `addr..addr+len` is a mapping it made with
/// [`map_shared_fixed`] inside its own placeholder.
pub fn restore_placeholder(addr: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: by the caller's guarantee the range is ours; the emulator holds
    // its state lock, so no safe accessor (`read`/`write`) is using it.
    unsafe {
        mmap_anonymous(
            addr as *mut c_void,
            len,
            ProtFlags::empty(),
            MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED,
        )?;
    }
    Ok(())
}

/// Returns a placeholder to the kernel.
///
/// The caller guarantees `addr..addr+len` is a placeholder it reserved and
/// that nothing is mapped inside it any more.
pub fn release_placeholder(addr: usize, len: usize) -> Result<(), Errno> {
    // SAFETY: by the caller's guarantee the range is ours and unused.
    unsafe { munmap(addr as *mut c_void, len) }
}

/// Copies `data` to `addr`.
///
/// The caller guarantees `addr..addr+data.len()` lies inside a live
/// read-write mapping and holds the lock that keeps it mapped.
pub fn copy_in(addr: usize, data: &[u8]) {
    // SAFETY: by the caller's guarantee the destination is mapped read-write
    // for the whole length and stays so during the copy; it cannot overlap
    // `data`, which lives in Rust-owned memory outside every placeholder.
    unsafe { ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) }
}

/// Copies from `addr` into `buf`.
///
/// The caller guarantees `addr..addr+buf.len()` lies inside a live
/// read-write mapping and holds the lock that keeps it mapped.
pub fn copy_out(addr: usize, buf: &mut [u8]) {
    // SAFETY: as in `copy_in`, with source and destination swapped.
    unsafe { ptr::copy_nonoverlapping(addr as *const u8, buf.as_mut_ptr(), buf.len()) }
}
