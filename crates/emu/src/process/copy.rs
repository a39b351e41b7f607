//! Pinning device ranges for a copy, and the copies and fills themselves
//! once their arguments are checked. Memory is reached only through
//! windows pinned for the copy (`os::window`) and host memory the kernel
//! checked (`os::host`): nothing here touches an address itself.

use std::sync::Arc;

use super::address_space::MapState;
use super::{Process, Result};
use crate::args::{CopyRequest, FillRequest};
use crate::errors::Situation;
use crate::os::host::{self, CallerMemory};
use crate::os::pool::PoolFile;
use crate::os::transfer::{self, Way};
use crate::os::window;

/// A piece of a pinned device range.
pub(crate) struct Segment {
    /// Where it starts.
    pub(crate) addr: usize,
    /// The pool file behind it, and the offset there.
    pub(crate) file: Arc<PoolFile>,
    pub(crate) offset: u64,
    pub(crate) len: usize,
}

/// The pinned mappings covering a device range: its memory, and the file
/// behind each piece (for copies the kernel makes); unpinned on drop.
pub(crate) struct Pinned {
    pub(crate) memory: window::Pinned,
    pub(crate) segments: Vec<Segment>,
}

impl Process {
    /// Pins the device segments covering `addr..addr + len`. The range must
    /// lie in one reservation (mappings back to back in it, as an
    /// expandable segment has them); running into the next reservation is
    /// an overrun, not a copy.
    pub(crate) fn pin(&self, addr: usize, len: usize) -> Result<Pinned> {
        let end = addr
            .checked_add(len)
            .ok_or(Situation::BadCopyAddress.code())?;
        let va = self.va.lock();
        let mut segments = Vec::new();
        let mut pins = Vec::new();
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
            let window = e.window.as_ref().ok_or(Situation::BadCopyAddress.code())?;
            pins.push(window.pin().map_err(|_| Situation::MappingInUse.code())?);
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
        let memory =
            window::Pinned::new(addr, len, pins).ok_or(Situation::BadCopyAddress.code())?;
        Ok(Pinned { memory, segments })
    }

    /// `aclrtMemcpy` after its argument checks: `kind` decides the
    /// direction (`ACL_MEMCPY_DEFAULT` from the addresses). Device ranges
    /// must be mapped; host ranges are checked by the kernel.
    pub(crate) fn copy(&self, request: CopyRequest, caller: &CallerMemory) -> Result<()> {
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
            (false, false) if host::copy_plain(dst, src, count, caller) => Ok(()),
            (false, false) => transfer::copy_host_to_host(dst, src, count, caller).map_err(|e| {
                if crate::os::sys::out_of_descriptors(e) {
                    Situation::FdLimit.code()
                } else {
                    Situation::BadCopyAddress.code()
                }
            }),
            (true, false) => self.host_device(dst, src, count, Way::ToFile, caller),
            (false, true) => self.host_device(src, dst, count, Way::FromFile, caller),
            (true, true) => {
                let d = self.pin(dst, count)?;
                let s = self.pin(src, count)?;
                d.memory
                    .copy_from(&s.memory, count)
                    .then_some(())
                    .ok_or(Situation::BadCopyAddress.code())
            }
        }
    }

    /// `aclrtMemcpy` in plan mode ([`crate::OpsMode::Plan`]): checked as
    /// [`Process::copy`] checks it (the direction, every device range
    /// mapped and pinned, the host range usable), but no device byte is
    /// read or written, so no page of a pool file is touched: a
    /// device-to-host copy zeros its host range, host-to-device and
    /// device-to-device copies change nothing. Host to host is copied (it
    /// is host memory).
    pub(crate) fn copy_plan(&self, request: CopyRequest, caller: &CallerMemory) -> Result<()> {
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
        let bad = Situation::BadCopyAddress.code();
        match (to_dev, from_dev) {
            (false, false) => self.copy(request, caller),
            (true, false) => {
                drop(self.pin(dst, count)?);
                host::readable(src, count).then_some(()).ok_or(bad)
            }
            (false, true) => {
                drop(self.pin(src, count)?);
                host::zero(dst, count, caller).map_err(|_| bad)
            }
            (true, true) => {
                drop(self.pin(dst, count)?);
                drop(self.pin(src, count)?);
                Ok(())
            }
        }
    }

    /// `aclrtMemset` in plan mode: device memory is checked (mapped, and
    /// pinned as a set pins it) and left as it is; `aclrtMallocHost`
    /// memory, host memory, is set.
    pub(crate) fn fill_plan(&self, request: FillRequest) -> Result<()> {
        if self.is_reserved(request.dst) {
            return self.pin(request.dst, request.count).map(drop);
        }
        self.fill(request)
    }

    /// A copy between the device range at `device` and the host range at
    /// `host`, `way` seen from the device: a plain `memcpy` when the
    /// kernel says the host range allows it, else through the pool files.
    fn host_device(
        &self,
        device: usize,
        host: usize,
        count: usize,
        way: Way,
        caller: &CallerMemory,
    ) -> Result<()> {
        let pinned = self.pin(device, count)?;
        let (access, to_host) = match way {
            Way::ToFile => (host::Use::Read, false),
            Way::FromFile => (host::Use::Write, true),
        };
        if host::plain(host, count, access) {
            return pinned
                .memory
                .copy_host(host, count, to_host, caller)
                .then_some(())
                .ok_or(Situation::BadCopyAddress.code());
        }
        pinned.segments.iter().try_for_each(|s| {
            transfer::copy_with_file(s.file.fd(), s.offset, host + (s.addr - device), s.len, way)
                .map_err(|_| Situation::BadCopyAddress.code())
        })
    }

    /// `aclrtMemset`: memory mapped in a reservation of this process (of
    /// the device or of the host), or `aclrtMallocHost` memory.
    pub(crate) fn fill(&self, request: FillRequest) -> Result<()> {
        let FillRequest { dst, count, value } = request;
        if self.is_reserved(dst) {
            return self
                .pin(dst, count)?
                .memory
                .fill(value, count)
                .then_some(())
                .ok_or(Situation::BadCopyAddress.code());
        }
        let hosts = self.hosts.lock();
        let block = hosts
            .range(..=dst)
            .next_back()
            .map(|(_, b)| b)
            .filter(|b| {
                dst.checked_add(count)
                    .is_some_and(|end| end <= b.addr() + b.bytes())
            })
            .ok_or(Situation::BadCopyAddress.code())?;
        block
            .fill(dst, value, count)
            .map_err(|_| Situation::BadCopyAddress.code())
    }
}
