//! Pinning device ranges for a copy, and the copies and fills
//! themselves once their arguments are checked.

use std::os::fd::AsFd;
use std::sync::Arc;

use super::address_space::MapState;
use super::{Process, Result};
use crate::args::{CopyRequest, FillRequest};
use crate::errors::Situation;
use crate::os::host::{self, Use};
use crate::os::pool::PoolFile;
use crate::os::transfer::{self, Way};

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
    pub(crate) fn copy(&self, request: CopyRequest) -> Result<()> {
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
    pub(crate) fn host_device(
        &self,
        device: usize,
        host: usize,
        count: usize,
        way: Way,
    ) -> Result<()> {
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
    pub(crate) fn fill(&self, request: FillRequest) -> Result<()> {
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
