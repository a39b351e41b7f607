//! Copies: `aclrtMemcpy(Async)`, `aclrtMemset`, and the emulator's own
//! reads and writes of device memory.
//!
//! Device ranges are resolved to their mappings and *pinned* for the
//! copy (an unmap meanwhile answers `MappingInUse`); host ranges a C caller
//! passed are read and written by the kernel, which answers an address the
//! process may not use with an error code instead of a crash.

use crate::process::copy::Pinned;
use std::fmt;

use aclmem_core::AclError;

use crate::args::{self, Checked, CopyRequest, FillRequest};
use crate::process::Result;
use crate::{Emulator, Op};
use aclmem_sys::MemcpyKind;

/// Mapped device memory held as an in-flight copy holds it (see
/// [`Emulator::hold`]); released on drop.
pub struct Hold<'e> {
    pinned: Pinned<'e>,
}

impl fmt::Debug for Hold<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hold({} segment(s))", self.pinned.segments.len())
    }
}

impl Emulator {
    /// `aclrtMemcpy`: the argument checks ([`args::memcpy`]), then the copy.
    /// Device ranges must be mapped in this process; host ranges are read
    /// and written by the kernel (or checked by it first), which answers an
    /// address the process may not use with an error code instead of a
    /// crash.
    ///
    /// # Safety
    /// Every host byte of `dst..dst + count` must be memory the caller may
    /// overwrite (no Rust reference into it is alive), and the host bytes
    /// of `src..src + count` must not be written by anyone during the call.
    pub unsafe fn memcpy(
        &self,
        dst: usize,
        dest_max: usize,
        src: usize,
        count: usize,
        kind: MemcpyKind,
    ) -> Result<()> {
        match args::memcpy(dst, dest_max, src, count, kind)? {
            args::Copy::Nothing => Ok(()),
            // SAFETY: the caller's contract, passed on.
            args::Copy::Bytes(request) => unsafe { self.memcpy_checked(request, None) },
        }
    }

    /// `aclrtMemcpy` (or, with a stream, `aclrtMemcpyAsync`, which runs at
    /// once: streams never hold pending work; 0 is the default stream) with
    /// arguments the checks accepted ([`args::memcpy`]).
    ///
    /// # Safety
    /// As for [`Emulator::memcpy`].
    pub unsafe fn memcpy_checked(
        &self,
        request: Checked<CopyRequest>,
        stream: Option<u64>,
    ) -> Result<()> {
        let p = &self.process;
        p.enter(Op::Memcpy)?;
        if let Some(stream) = stream {
            self.check_stream(stream)?;
        }
        p.on_device()?;
        p.copy(request.into_inner())
    }

    /// `aclrtMemset`: device memory of this process or `aclrtMallocHost`
    /// memory.
    ///
    /// # Safety
    /// If `dst` is `aclrtMallocHost` memory, no Rust reference into
    /// `dst..dst + count` may be alive.
    pub unsafe fn memset(
        &self,
        dst: usize,
        max_count: usize,
        value: i32,
        count: usize,
    ) -> Result<()> {
        match args::memset(dst, max_count, value, count)? {
            args::Fill::Nothing => Ok(()),
            // SAFETY: the caller's contract, passed on.
            args::Fill::Bytes(request) => unsafe { self.memset_checked(request) },
        }
    }

    /// `aclrtMemset` with arguments the checks accepted
    /// ([`args::memset`]).
    ///
    /// # Safety
    /// As for [`Emulator::memset`].
    pub unsafe fn memset_checked(&self, request: Checked<FillRequest>) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::Memset)?;
        p.fill(request.into_inner())
    }

    /// Copies `data` to device memory of this process (a safe host→device
    /// `aclrtMemcpy`).
    pub fn copy_to_device(&self, dst: usize, data: &[u8]) -> Result<()> {
        // SAFETY: the host side is `data`, borrowed for reading only.
        unsafe {
            self.memcpy(
                dst,
                data.len(),
                data.as_ptr() as usize,
                data.len(),
                MemcpyKind::HostToDevice,
            )
        }
    }

    /// Copies device memory of this process into `buf` (a safe
    /// device→host `aclrtMemcpy`).
    pub fn copy_from_device(&self, buf: &mut [u8], src: usize) -> Result<()> {
        // SAFETY: the host side is `buf`, borrowed mutably for the call.
        unsafe {
            self.memcpy(
                buf.as_mut_ptr() as usize,
                buf.len(),
                src,
                buf.len(),
                MemcpyKind::DeviceToHost,
            )
        }
    }

    /// Writes `data` at `addr`, which must lie inside live mappings of this
    /// process (one, or several back to back; `ACL_ERROR_INVALID_PARAM`
    /// otherwise). Safe: the mappings cannot go away during the copy.
    pub fn write(&self, addr: usize, data: &[u8]) -> Result<()> {
        let _pinned = self
            .process
            .pin(addr, data.len())
            .map_err(|_| AclError::INVALID_PARAM)?;
        // SAFETY: covered by pinned Ready mappings (read-write) for the whole
        // length, which cannot overlap `data` (Rust-owned memory outside
        // every arena).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
        Ok(())
    }

    /// Reads `buf.len()` bytes at `addr`, which must lie inside live mappings
    /// of this process (as for [`Emulator::write`]).
    pub fn read(&self, addr: usize, buf: &mut [u8]) -> Result<()> {
        let _pinned = self
            .process
            .pin(addr, buf.len())
            .map_err(|_| AclError::INVALID_PARAM)?;
        // SAFETY: as in `write`, with source and destination swapped.
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    /// Holds `addr..addr + len` of mapped device memory as an in-flight
    /// copy does: until the returned [`Hold`] drops, unmapping it answers
    /// `MappingInUse`. For tests of code that races copies with unmaps.
    pub fn hold(&self, addr: usize, len: usize) -> Result<Hold<'_>> {
        Ok(Hold {
            pinned: self.process.pin(addr, len)?,
        })
    }
}
