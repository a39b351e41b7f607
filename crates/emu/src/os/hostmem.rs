//! Copies between host memory and addresses a C caller passed, checked by
//! the kernel: an address the process may not read or write is an error,
//! never a crash.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;

use crate::os::{sys, transfer};

static SCRATCH: OnceLock<Option<OwnedFd>> = OnceLock::new();

/// The scratch file of the fallback path (made at its first use: where
/// `process_vm_readv` works, as everywhere but under qemu-user, no
/// descriptor is needed at all).
fn scratch() -> Option<BorrowedFd<'static>> {
    SCRATCH
        .get_or_init(|| sys::new_pool_file("aclmem-emu-hostmem", 1 << 20).ok())
        .as_ref()
        .map(AsFd::as_fd)
}

/// Copies `dst.len()` bytes from the address `src` into `dst`.
/// `false` if the kernel refused the source.
pub fn read(src: usize, dst: &mut [u8]) -> bool {
    transfer::copy_host_to_host(dst.as_mut_ptr() as usize, src, dst.len(), scratch).is_ok()
}

/// Copies `src` to the address `dst`. `false` if the kernel refused the
/// destination.
///
/// # Safety
/// `dst..dst + src.len()` must not be memory that Rust code holds a
/// reference to (the C caller's contract: it passes memory of its own).
pub unsafe fn write(dst: usize, src: &[u8]) -> bool {
    transfer::copy_host_to_host(dst, src.as_ptr() as usize, src.len(), scratch).is_ok()
}
