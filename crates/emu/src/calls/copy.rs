//! Copies: `aclrtMemcpy(Async)`, `aclrtMemset`, and the emulator's own
//! reads and writes of device memory.
//!
//! Device ranges are resolved to their mappings and *pinned* for the
//! copy (an unmap meanwhile answers `MappingInUse`); host ranges a C caller
//! passed are read and written by the kernel, which answers an address the
//! process may not use with an error code instead of a crash.

use std::fmt;
use std::marker::PhantomData;

use aclmem_core::AclError;

use crate::args::{self, Checked, CopyRequest, FillRequest};
use crate::os::host::{self, CallerMemory};
use crate::process::Result;
use crate::process::copy::Pinned;
use crate::{Emulator, Op};
use aclmem_sys::MemcpyKind;

/// Mapped device memory held as an in-flight copy holds it (see
/// [`Emulator::hold`]); released on drop.
pub struct Hold<'e> {
    pinned: Pinned,
    _emulator: PhantomData<&'e Emulator>,
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
    /// crash. `caller` is the promise a host address needs (see
    /// [`CallerMemory`]); [`Emulator::copy_to_device`] and
    /// [`Emulator::copy_from_device`] need none.
    pub fn memcpy(
        &self,
        dst: usize,
        dest_max: usize,
        src: usize,
        count: usize,
        kind: MemcpyKind,
        caller: &CallerMemory,
    ) -> Result<()> {
        match args::memcpy(dst, dest_max, src, count, kind)? {
            args::Copy::Nothing => Ok(()),
            args::Copy::Bytes(request) => self.memcpy_checked(request, None, caller),
        }
    }

    /// `aclrtMemcpy` (or, with a stream, `aclrtMemcpyAsync`, which runs at
    /// once: streams never hold pending work; 0 is the default stream) with
    /// arguments the checks accepted ([`args::memcpy`]). In plan mode
    /// ([`crate::OpsMode::Plan`]) it is checked alike and moves no device
    /// data: a device-to-host copy zeros the host range.
    pub fn memcpy_checked(
        &self,
        request: Checked<CopyRequest>,
        stream: Option<u64>,
        caller: &CallerMemory,
    ) -> Result<()> {
        let p = &self.process;
        p.enter(Op::Memcpy)?;
        if let Some(stream) = stream {
            self.check_stream(stream)?;
        }
        p.on_device()?;
        if self.ops.is_plan() {
            return p.copy_plan(request.into_inner(), caller);
        }
        p.copy(request.into_inner(), caller)
    }

    /// `aclrtMemset`: device memory of this process or `aclrtMallocHost`
    /// memory (which Rust code can borrow only on its own responsibility).
    pub fn memset(&self, dst: usize, max_count: usize, value: i32, count: usize) -> Result<()> {
        match args::memset(dst, max_count, value, count)? {
            args::Fill::Nothing => Ok(()),
            args::Fill::Bytes(request) => self.memset_checked(request),
        }
    }

    /// `aclrtMemset` with arguments the checks accepted
    /// ([`args::memset`]); in plan mode device memory is checked and left
    /// as it is.
    pub fn memset_checked(&self, request: Checked<FillRequest>) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::Memset)?;
        if self.ops.is_plan() {
            return p.fill_plan(request.into_inner());
        }
        p.fill(request.into_inner())
    }

    /// Copies `data` to device memory of this process (a safe host→device
    /// `aclrtMemcpy`).
    pub fn copy_to_device(&self, dst: usize, data: &[u8]) -> Result<()> {
        host::from_slice(data, |src, caller| {
            self.memcpy(
                dst,
                data.len(),
                src,
                data.len(),
                MemcpyKind::HostToDevice,
                caller,
            )
        })
    }

    /// Copies device memory of this process into `buf` (a safe
    /// device→host `aclrtMemcpy`).
    pub fn copy_from_device(&self, buf: &mut [u8], src: usize) -> Result<()> {
        let len = buf.len();
        host::into_slice(buf, |dst, caller| {
            self.memcpy(dst, len, src, len, MemcpyKind::DeviceToHost, caller)
        })
    }

    /// Writes `data` at `addr`, which must lie inside live mappings of this
    /// process (one, or several back to back; `ACL_ERROR_INVALID_PARAM`
    /// otherwise). Safe: the mappings cannot go away during the copy.
    pub fn write(&self, addr: usize, data: &[u8]) -> Result<()> {
        let pinned = self
            .process
            .pin(addr, data.len())
            .map_err(|_| AclError::INVALID_PARAM)?;
        pinned
            .memory
            .write(data)
            .then_some(())
            .ok_or(AclError::INVALID_PARAM)
    }

    /// Reads `buf.len()` bytes at `addr`, which must lie inside live mappings
    /// of this process (as for [`Emulator::write`]).
    pub fn read(&self, addr: usize, buf: &mut [u8]) -> Result<()> {
        let pinned = self
            .process
            .pin(addr, buf.len())
            .map_err(|_| AclError::INVALID_PARAM)?;
        pinned
            .memory
            .read(buf)
            .then_some(())
            .ok_or(AclError::INVALID_PARAM)
    }

    /// Holds `addr..addr + len` of mapped device memory as an in-flight
    /// copy does: until the returned [`Hold`] drops, unmapping it answers
    /// `MappingInUse`. For tests of code that races copies with unmaps.
    pub fn hold(&self, addr: usize, len: usize) -> Result<Hold<'_>> {
        Ok(Hold {
            pinned: self.process.pin(addr, len)?,
            _emulator: PhantomData,
        })
    }
}
