//! A process's host memory: its `aclrtMallocHost` blocks and the host
//! ranges it registered for the device (`aclrtHostRegister*`).

use aclmem_core::AclError;

use super::{Process, Result};
use crate::errors::Situation;
use crate::os::host::HostBlock;

/// One registered host range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Registration {
    len: usize,
    /// Mapped for the device (a device pointer exists), not only pinned.
    mapped: bool,
}

impl Process {
    /// A new `aclrtMallocHost` block of `len` bytes (a whole number of
    /// pages): its address.
    pub(crate) fn add_host_block(&self, len: usize) -> Result<usize> {
        let block = HostBlock::new(len).map_err(|_| AclError::RT_MEMORY_ALLOCATION)?;
        let addr = block.addr();
        self.hosts.lock().insert(addr, block);
        Ok(addr)
    }

    /// Frees the `aclrtMallocHost` block at `addr`. Freeing host memory
    /// that is still used is the caller's bug, as with `free`.
    pub(crate) fn remove_host_block(&self, addr: usize) -> Result<()> {
        let block = self
            .hosts
            .lock()
            .remove(&addr)
            .ok_or(Situation::NotAllocated.code())?;
        drop(block);
        Ok(())
    }

    /// (start, length) of the `aclrtMallocHost` block holding `ptr`.
    pub(crate) fn host_block_at(&self, ptr: usize) -> Option<(usize, usize)> {
        match self.hosts.lock().range(..=ptr).next_back() {
            Some((&s, b)) if ptr < s + b.bytes() => Some((s, b.bytes())),
            _ => None,
        }
    }

    /// Whether `addr..addr + len` lies in one `aclrtMallocHost` block.
    pub(crate) fn is_host_allocation(&self, addr: usize, len: usize) -> bool {
        self.hosts
            .lock()
            .range(..=addr)
            .next_back()
            .is_some_and(|(&s, b)| {
                addr.checked_add(len)
                    .is_some_and(|end| end <= s + b.bytes())
            })
    }

    /// Registers `ptr..ptr + len` (mapped for the device or pinned only);
    /// a range overlapping one registered already is the runtime's error.
    pub(crate) fn register_host(&self, ptr: usize, len: usize, mapped: bool) -> Result<()> {
        let mut registered = self.registered.lock();
        let end = ptr
            .checked_add(len)
            .ok_or(Situation::HostRangeNotMapped.code())?;
        let overlaps = registered
            .range(..end)
            .next_back()
            .is_some_and(|(&start, r)| start + r.len > ptr);
        if overlaps {
            return Err(Situation::HostRangeRegistered.code());
        }
        registered.insert(ptr, Registration { len, mapped });
        Ok(())
    }

    /// The device pointer of the range registered as mapped at `host`.
    pub(crate) fn registered_device_pointer(&self, host: usize) -> Result<usize> {
        match self.registered.lock().get(&host) {
            Some(r) if r.mapped => Ok(host),
            _ => Err(Situation::HostPointerNotRegistered.code()),
        }
    }

    /// Ends the registration that starts at `ptr`.
    pub(crate) fn unregister_host(&self, ptr: usize) -> Result<()> {
        self.registered
            .lock()
            .remove(&ptr)
            .map(drop)
            .ok_or(Situation::HostNotRegistered.code())
    }

    /// Whether `addr..addr + len` lies in one range registered mapped for
    /// the device.
    pub(crate) fn registered_covers(&self, addr: usize, len: usize) -> bool {
        self.registered
            .lock()
            .range(..=addr)
            .next_back()
            .is_some_and(|(&start, r)| {
                r.mapped
                    && addr
                        .checked_add(len)
                        .is_some_and(|end| end <= start + r.len)
            })
    }

    /// The registered ranges: (start, length, mapped), in address order.
    pub(crate) fn host_registrations(&self) -> Vec<(usize, usize, bool)> {
        self.registered
            .lock()
            .iter()
            .map(|(&start, r)| (start, r.len, r.mapped))
            .collect()
    }
}
