//! Copies: `aclrtMemcpy(Async)`, `aclrtMemset`, and the emulator's own
//! reads and writes of device memory.
//!
//! Device ranges are resolved to their mappings and *pinned* for the
//! copy (an unmap meanwhile answers `MappingInUse`); host ranges a C caller
//! passed are read and written by the kernel, which answers an address the
//! process may not use with an error code instead of a crash.

use std::fmt;
use std::os::fd::AsFd;
use std::sync::Arc;

use aclmem_core::AclError;

use crate::args::{self, Checked, CopyRequest, FillRequest};
use crate::errors::Situation;
use crate::os::host::{self, Use};
use crate::os::pool::PoolFile;
use crate::os::transfer::{self, Way};
use crate::process::address_space::MapState;
use crate::process::{Process, Result};
use crate::{Emulator, Op};
use aclmem_sys::MemcpyKind;

/// A piece of a pinned device range.
pub(crate) struct Segment {
    /// Where it starts.
    pub(crate) addr: usize,
    /// The pool file behind it, and the offset there.
    pub(crate) file: Arc<PoolFile>,
    pub(crate) offset: u64,
    pub(crate) len: usize,
}

/// The pinned mappings covering a device range; unpinned on drop.
pub(crate) struct Pinned<'p> {
    process: &'p Process,
    pub(crate) segments: Vec<Segment>,
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        let mut va = self.process.va.lock();
        for seg in &self.segments {
            if let Some((_, e)) = va.maps.range_mut(..=seg.addr).next_back() {
                e.pins = e.pins.saturating_sub(1);
            }
        }
    }
}

impl Process {
    /// Pins the device segments covering `addr..addr + len`. The range must
    /// lie in one reservation (mappings back to back in it, as an
    /// expandable segment has them); running into the next reservation is
    /// an overrun, not a copy.
    pub(crate) fn pin(&self, addr: usize, len: usize) -> Result<Pinned<'_>> {
        let end = addr
            .checked_add(len)
            .ok_or(Situation::BadCopyAddress.code())?;
        let mut va = self.va.lock();
        let mut segments = Vec::new();
        let mut at = addr;
        let mut resv = None;
        while at < end {
            if va
                .mapping_at(at)
                .is_some_and(|(_, e)| e.state == MapState::Moving)
            {
                return Err(Situation::MappingInUse.code());
            }
            let (start, e) = va
                .mapping_at(at)
                .filter(|(_, e)| e.state == MapState::Ready)
                .filter(|(_, e)| *resv.get_or_insert(e.resv) == e.resv)
                .ok_or(Situation::BadCopyAddress.code())?;
            let shard = self.shards.lock(e.shard);
            let a = shard
                .allocs
                .get(e.alloc as usize)
                .ok_or(Situation::BadCopyAddress.code())?;
            let n = (start + e.size).min(end) - at;
            segments.push(Segment {
                addr: at,
                file: shard.file_of(a)?,
                offset: a.offset + (at - start) as u64,
                len: n,
            });
            at += n;
        }
        for seg in &segments {
            if let Some((_, e)) = va.maps.range_mut(..=seg.addr).next_back() {
                e.pins += 1;
            }
        }
        Ok(Pinned {
            process: self,
            segments,
        })
    }

    /// `aclrtMemcpy` after its argument checks: `kind` decides the
    /// direction (`ACL_MEMCPY_DEFAULT` from the addresses). Device ranges
    /// must be mapped; host ranges are checked by the kernel.
    fn copy(&self, request: CopyRequest) -> Result<()> {
        let CopyRequest {
            dst,
            src,
            count,
            kind,
        } = request;
        let dst_dev = self.is_device_address(dst);
        let src_dev = self.is_device_address(src);
        let (to_dev, from_dev) = kind.direction().unwrap_or((dst_dev, src_dev));
        if to_dev != dst_dev || from_dev != src_dev {
            return Err(Situation::CopyKindMismatch.code());
        }
        match (to_dev, from_dev) {
            (false, false)
                if host::plain(src, count, Use::Read) && host::plain(dst, count, Use::Write) =>
            {
                // SAFETY: both ranges are private anonymous memory the
                // process may read (source) and write (destination), as
                // the kernel just said; `copy` allows overlap.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count) };
                Ok(())
            }
            (false, false) => {
                transfer::copy_host_to_host(dst, src, count, || Some(self.scratch().ok()?.as_fd()))
                    .map_err(|e| {
                        if crate::os::sys::out_of_descriptors(e) {
                            Situation::FdLimit.code()
                        } else {
                            Situation::BadCopyAddress.code()
                        }
                    })
            }
            (true, false) => self.host_device(dst, src, count, Way::ToFile),
            (false, true) => self.host_device(src, dst, count, Way::FromFile),
            (true, true) => {
                let _d = self.pin(dst, count)?;
                let _s = self.pin(src, count)?;
                // SAFETY: `src..src + count` and `dst..dst + count` are
                // covered by Ready mappings of ours (checked by the pins),
                // which stay mapped read-write until unpinned; `copy`
                // allows overlap.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count) };
                Ok(())
            }
        }
    }

    /// A copy between the device range at `device` and the host range at
    /// `host`, `way` seen from the device: a plain `memcpy` when the
    /// kernel says the host range allows it, else through the pool files.
    fn host_device(&self, device: usize, host: usize, count: usize, way: Way) -> Result<()> {
        let pinned = self.pin(device, count)?;
        let access = match way {
            Way::ToFile => Use::Read,
            Way::FromFile => Use::Write,
        };
        if host::plain(host, count, access) {
            let (dst, src) = match way {
                Way::ToFile => (device, host),
                Way::FromFile => (host, device),
            };
            // SAFETY: the device range is covered by pinned Ready mappings
            // of ours (read-write); the host range is private anonymous
            // memory with the access the copy needs, outside every arena,
            // so the two do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, count) };
            return Ok(());
        }
        pinned.segments.iter().try_for_each(|s| {
            transfer::copy_with_file(s.file.fd(), s.offset, host + (s.addr - device), s.len, way)
                .map_err(|_| Situation::BadCopyAddress.code())
        })
    }

    /// `aclrtMemset`: memory mapped in a reservation of this process (of
    /// the device or of the host), or `aclrtMallocHost` memory.
    fn fill(&self, request: FillRequest) -> Result<()> {
        let FillRequest { dst, count, value } = request;
        if self.is_reserved(dst) {
            let _pinned = self.pin(dst, count)?;
            // SAFETY: covered by pinned Ready mappings (read-write).
            unsafe { std::ptr::write_bytes(dst as *mut u8, value, count) };
            Ok(())
        } else if self.is_host_allocation(dst, count) && host::plain(dst, count, Use::Write) {
            // SAFETY: an `aclrtMallocHost` block of this process, private
            // anonymous memory the process may write, as the kernel just
            // said.
            unsafe { std::ptr::write_bytes(dst as *mut u8, value, count) };
            Ok(())
        } else if self.is_host_allocation(dst, count) {
            transfer::fill_host(dst, value, count, self.scratch()?)
                .map_err(|_| Situation::BadCopyAddress.code())
        } else {
            Err(Situation::BadCopyAddress.code())
        }
    }
}

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

/// Copies between host memory and addresses a C caller passed, checked by
/// the kernel: an address the process may not read or write is an error,
/// never a crash.
pub mod hostmem {
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
}
