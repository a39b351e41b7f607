//! Managed (unified) memory: `aclrtMemAllocManaged` (CANN 9.0),
//! `aclrtMemManagedAdvise`, `aclrtMemManagedGetAttr(s)`,
//! `aclrtMemManagedPrefetch(Batch)Async` (9.1), and `aclrtMemP2PMap`
//! (9.0), the runtime layer's checks after the ACL layer's.
//!
//! Managed memory is device memory of the current device, rounded up to
//! 2 MiB, that the host reaches at the same address (every emulated
//! device address is mapped in the process); `aclrtFree` frees it.
//! `aclrtPointerGetAttributes` reports it as `ACL_MEM_LOCATION_TYPE_MANAGED`
//! from CANN 9.1, whose runtime added the type; 9.0's runtime has no case
//! for it and answers 107000. Advice and prefetches move nothing (one
//! memory serves host and devices) and are recorded per 2 MiB page for
//! `aclrtMemManagedGetAttr(s)`.

use std::num::NonZeroUsize;

use aclmem_core::{AclError, Api, Location, Product};
use aclmem_hal::{ManagedAdvice, ManagedLocation as Where, ManagedMemoryApi, RawStream, VirtAddr};
use aclmem_sys::MallocPolicy;

use crate::args;
use crate::process::Result;
pub use crate::process::managed::{MANAGED_PAGE, ManagedLocation, PageAdvice};
use crate::{Emulator, Op, Target};

/// `ACL_MEM_LOCATIONTYPE_INVALID`, `DEVICE`, `HOST`, `HOST_NUMA`,
/// `HOST_NUMA_CURRENT`.
const LOC_INVALID: u32 = 0;
const LOC_DEVICE: u32 = 1;
const LOC_HOST: u32 = 2;
const LOC_HOST_NUMA: u32 = 3;
const LOC_HOST_NUMA_CURRENT: u32 = 4;

/// The products with managed memory (documented: A3, A2), from the rules
/// table's `calls` section.
const MANAGED_PRODUCTS: &[Product] = Api::MemAllocManaged.products();

/// `aclrtMemManagedRangeAttribute`'s id of no single location (mixed, or
/// none set).
const NO_ID: i32 = -2;

impl Emulator {
    /// A managed location the runtime accepts: a device of the process
    /// (its user id; out of range 107000), the host, a NUMA node, the
    /// current node; INVALID or an unknown type 107000.
    fn managed_location(&self, (kind, id): ManagedLocation) -> Result<()> {
        match kind {
            LOC_DEVICE => {
                let count = self.process.device_count()?;
                u32::try_from(id)
                    .ok()
                    .filter(|&d| d < count)
                    .map(drop)
                    .ok_or(AclError::RT_PARAM_INVALID)
            }
            LOC_HOST | LOC_HOST_NUMA_CURRENT => Ok(()),
            LOC_HOST_NUMA if id >= 0 => Ok(()),
            _ => Err(AclError::RT_PARAM_INVALID),
        }
    }

    /// `aclrtMemAllocManaged(&ptr, size, ACL_RT_MEM_ATTACH_GLOBAL)` after
    /// the ACL layer's checks: `size` 0 is 107000; a thread without a
    /// device 107002; a product other than A2/A3 207000 (documented
    /// products); memory rounded up to 2 MiB on the current device.
    pub fn malloc_managed(&self, size: u64) -> Result<usize> {
        let p = &self.process;
        p.enter_rt(Op::Query)?;
        let size =
            NonZeroUsize::new(usize::try_from(size).map_err(|_| AclError::RT_MEMORY_ALLOCATION)?)
                .ok_or(AclError::RT_PARAM_INVALID)?;
        if !MANAGED_PRODUCTS.contains(&p.machine().product) {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        let rounded = size
            .get()
            .checked_next_multiple_of(MANAGED_PAGE)
            .and_then(NonZeroUsize::new)
            .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
        let (device, _) = p.current()?;
        // Huge pages, no padding: exactly the rounded size.
        let addr = self.malloc_device_checked(
            Target::Current,
            args::malloc(rounded.get())?,
            MallocPolicy::from_raw(1),
            true,
        )?;
        p.managed_add(addr, rounded.get(), device);
        Ok(addr)
    }

    /// The user id of the device of the managed memory at `addr`, if it
    /// is managed (for `aclrtPointerGetAttributes`).
    pub(crate) fn managed_user_device(&self, addr: usize) -> Option<u32> {
        let p = &self.process;
        p.managed_device(addr).map(|d| p.user_device(d))
    }

    /// `aclrtMemManagedAdvise(ptr, size, advise, location)` after the ACL
    /// layer's checks: `advise` above 5 107000; the location checked where
    /// the advice uses it (107000); `[ptr, ptr + size)` inside one managed
    /// allocation and `size` a multiple of 2 MiB (documented; 107000).
    pub fn managed_advise(
        &self,
        addr: usize,
        size: usize,
        advise: u32,
        location: ManagedLocation,
    ) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::Query)?;
        match advise {
            0 | 3 => {}
            1 if location.0 == LOC_INVALID => {}
            1 | 2 | 4 | 5 => self.managed_location(location)?,
            _ => return Err(AclError::RT_PARAM_INVALID),
        }
        if !size.is_multiple_of(MANAGED_PAGE) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        p.managed_pages(addr, size, AclError::RT_PARAM_INVALID, |pages| {
            for page in pages {
                match advise {
                    0 => page.read_mostly = true,
                    1 => page.read_mostly = false,
                    2 => page.preferred = Some(location),
                    3 => page.preferred = None,
                    4 => {
                        page.accessed_by.insert(location);
                    }
                    _ => {
                        page.accessed_by.remove(&location);
                    }
                }
            }
        })
    }

    /// `aclrtMemManagedGetAttr(attribute, ptr, size, data, dataSize)`:
    /// the bytes to write into `data` (`data_size` of them). An attribute
    /// outside 1..=8, a range outside one managed allocation, or a
    /// `dataSize` other than 4 (a non-zero multiple of 4 for ACCESSED_BY)
    /// is 107000. No device is needed.
    pub fn managed_attr(
        &self,
        attribute: u32,
        addr: usize,
        size: usize,
        data_size: usize,
    ) -> Result<Vec<u8>> {
        let p = &self.process;
        p.enter(Op::Query)?;
        if !(1..=8).contains(&attribute) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let ok_size = if attribute == 3 {
            data_size != 0 && data_size.is_multiple_of(4)
        } else {
            data_size == 4
        };
        if !ok_size {
            return Err(AclError::RT_PARAM_INVALID);
        }
        p.managed_pages(addr, size, AclError::RT_PARAM_INVALID, |pages| {
            range_attr(attribute, pages, data_size)
        })
    }

    /// `aclrtMemManagedPrefetchAsync(ptr, size, location, 0, stream)` after
    /// the ACL layer's checks: the stream (NULL: the default one), the
    /// location, and the range as for advice (107000); recorded as the
    /// pages' last prefetch, complete when the call returns.
    pub fn managed_prefetch(
        &self,
        addr: usize,
        size: usize,
        location: ManagedLocation,
        stream: u64,
    ) -> Result<()> {
        self.managed_prefetch_all(&[(addr, size, location)], stream)
    }

    /// `aclrtMemManagedPrefetchBatchAsync`'s prefetches, after its
    /// argument checks: each checked as [`Emulator::managed_prefetch`]
    /// checks it, then all recorded (a refusal records none).
    pub fn managed_prefetch_all(
        &self,
        prefetches: &[(usize, usize, ManagedLocation)],
        stream: u64,
    ) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::Stream)?;
        self.check_stream(stream)?;
        for &(addr, size, location) in prefetches {
            self.managed_location(location)?;
            if !size.is_multiple_of(MANAGED_PAGE) {
                return Err(AclError::RT_PARAM_INVALID);
            }
            p.managed_pages(addr, size, AclError::RT_PARAM_INVALID, |_| ())?;
        }
        for &(addr, size, location) in prefetches {
            p.managed_pages(addr, size, AclError::RT_PARAM_INVALID, |pages| {
                for page in pages {
                    page.last_prefetch = Some(location);
                }
            })?;
        }
        Ok(())
    }

    /// `aclrtDeviceEnablePeerAccess` (`enable`) and
    /// `aclrtDeviceDisablePeerAccess`: access from the thread's device to
    /// `peer` is recorded (access is always possible on the emulated
    /// machine; the record answers `aclrtDevicePeerAccessStatus` and
    /// `aclrtMemP2PMap`). The current device itself is 100000.
    pub fn set_peer_access(&self, peer: i32, enable: bool) -> Result<()> {
        let p = &self.process;
        let (device, _) = p.current()?;
        if peer == p.user_device(device) as i32 {
            return Err(AclError::INVALID_PARAM);
        }
        let peer = p.device_id(peer)?;
        p.set_peer(device, peer, enable);
        Ok(())
    }

    /// `aclrtDevicePeerAccessStatus(deviceId, peerDeviceId, &status)`:
    /// whether access from `device` to `peer` is enabled. A device the
    /// process lacks is 107001.
    pub fn peer_access_status(&self, device: i32, peer: i32) -> Result<bool> {
        let p = &self.process;
        p.enter(Op::Query)?;
        let device = p.device_id(device)?;
        let peer = p.device_id(peer)?;
        Ok(p.peer_enabled(device, peer))
    }

    /// `aclrtMemP2PMap(devPtr, size, dstDevId, 0)` after the ACL layer's
    /// checks: `dst` a device of the process (107001); `[ptr, ptr + size)`
    /// inside one mapping of device memory of the process (107000); the
    /// memory's device itself, or a device to which the memory's device
    /// enabled peer access (documented as required; 107000 otherwise).
    /// Every device reaches every device's memory here: nothing to map.
    pub fn mem_p2p_map(&self, addr: usize, size: usize, dst: i32) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::Map)?;
        let dst = p.device_id(dst)?;
        let (start, len) = p.mapping_range(addr).ok_or(AclError::RT_PARAM_INVALID)?;
        let placed = p.placed_at(addr).ok_or(AclError::RT_PARAM_INVALID)?;
        let end = addr.checked_add(size).ok_or(AclError::RT_PARAM_INVALID)?;
        if placed.location != Location::Device || end > start + len {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let owner = placed.location_id;
        if owner == dst || p.peer_enabled(owner, dst) || p.peer_enabled(dst, owner) {
            Ok(())
        } else {
            Err(AclError::RT_PARAM_INVALID)
        }
    }
}

/// Every page's value of `f`, or `None` when they differ or any is
/// `None`.
fn common<T: PartialEq + Copy>(
    pages: &[PageAdvice],
    f: impl Fn(&PageAdvice) -> Option<T>,
) -> Option<T> {
    let first = f(pages.first()?)?;
    pages.iter().all(|p| f(p) == Some(first)).then_some(first)
}

/// A location's id as the range attributes give it: a device's or NUMA
/// node's id, -1 for the host.
fn location_id((kind, id): ManagedLocation) -> i32 {
    if kind == LOC_HOST || kind == LOC_HOST_NUMA_CURRENT {
        -1
    } else {
        id
    }
}

/// The bytes of one range attribute over `pages`.
fn range_attr(attribute: u32, pages: &[PageAdvice], data_size: usize) -> Vec<u8> {
    let word = |v: i32| v.to_ne_bytes().to_vec();
    let preferred = common(pages, |p| p.preferred);
    let prefetched = common(pages, |p| p.last_prefetch);
    match attribute {
        1 => word(i32::from(pages.iter().all(|p| p.read_mostly))),
        2 | 5 => word(preferred.map_or(NO_ID, location_id)),
        4 => word(preferred.map_or(LOC_INVALID as i32, |l| l.0 as i32)),
        6 | 8 => word(prefetched.map_or(NO_ID, location_id)),
        7 => word(prefetched.map_or(LOC_INVALID as i32, |l| l.0 as i32)),
        _ => {
            // ACCESSED_BY: the locations every page names, then -2.
            let mut ids: Vec<i32> = pages
                .first()
                .map(|first| {
                    first
                        .accessed_by
                        .iter()
                        .filter(|l| pages.iter().all(|p| p.accessed_by.contains(l)))
                        .map(|&l| location_id(l))
                        .collect()
                })
                .unwrap_or_default();
            ids.resize(data_size / 4, NO_ID);
            ids.iter().flat_map(|v| v.to_ne_bytes()).collect()
        }
    }
}

/// `aclmem-hal`'s managed memory: the C library's calls after its ACL
/// layer (`ACL_RT_MEM_ATTACH_GLOBAL`, no NULL), behind the release gates
/// of the rules table.
impl ManagedMemoryApi for Emulator {
    fn malloc_managed(&self, size: usize) -> Result<VirtAddr> {
        self.api(Api::MemAllocManaged)?;
        let addr = Emulator::malloc_managed(self, size as u64)?;
        NonZeroUsize::new(addr)
            .map(VirtAddr)
            .ok_or(AclError::RT_INTERNAL_ERROR)
    }
    fn free_managed(&self, addr: VirtAddr) -> Result<()> {
        self.api(Api::MemAllocManaged)?;
        self.free_device(addr.get())
    }
    fn managed_advise(
        &self,
        addr: VirtAddr,
        size: usize,
        advice: ManagedAdvice,
        location: Where,
    ) -> Result<()> {
        self.api(Api::MemManagedAdvise)?;
        Emulator::managed_advise(self, addr.get(), size, advice.raw(), location.raw())
    }
    fn managed_prefetch_async(
        &self,
        addr: VirtAddr,
        size: usize,
        location: Where,
        stream: RawStream,
    ) -> Result<()> {
        self.api(Api::MemManagedAdvise)?;
        self.managed_prefetch(addr.get(), size, location.raw(), stream.0.get())
    }
}
