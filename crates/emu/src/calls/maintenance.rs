//! Cache maintenance and memory errors: the runtime-layer checks of
//! `aclrtCmoAsync` and its family, `aclrtDeviceL2CacheFlush`, and
//! `aclrtGetMemUceInfo` / `aclrtMemUceRepair`.
//!
//! The emulated device has no cache between its cores and its memory and
//! no uncorrectable memory errors: a cache operation is an ordered no-op
//! on its stream (every stream's work is done when its call returns), and
//! the error record is always empty.

use aclmem_core::{AclError, Location};

use crate::process::Result;
use crate::{Emulator, Op};

impl Emulator {
    /// A cache operation on `[addr, addr + size)` on `stream` (0: the
    /// default stream): a live stream, and device memory of this process
    /// covering the range (the runtime documents the own device's memory
    /// only; 107000 otherwise). Nothing to do once checked.
    pub fn cache_maintenance(&self, addr: usize, size: usize, stream: u64) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::Stream)?;
        self.check_stream(stream)?;
        let (start, len) = p.mapping_range(addr).ok_or(AclError::RT_PARAM_INVALID)?;
        let placed = p.placed_at(addr).ok_or(AclError::RT_PARAM_INVALID)?;
        let end = addr.checked_add(size).ok_or(AclError::RT_PARAM_INVALID)?;
        if placed.location != Location::Device || end > start + len {
            return Err(AclError::RT_PARAM_INVALID);
        }
        Ok(())
    }

    /// `aclrtDeviceL2CacheFlush`: a thread without a device is 107002;
    /// nothing else to do.
    pub fn l2_cache_flush(&self) -> Result<()> {
        self.process.enter_rt(Op::Stream)
    }

    /// `aclrtGetMemUceInfo` / `aclrtMemUceRepair` on `device` (a user id;
    /// 107001 for one the process lacks): the addresses with uncorrectable
    /// errors, none on the emulated machine.
    pub fn uce_addresses(&self, device: i32) -> Result<Vec<(usize, usize)>> {
        self.check_device(device)?;
        Ok(Vec::new())
    }

    /// A device id from C: the machine's device it names (107001 for one
    /// the process lacks).
    pub fn check_device(&self, device: i32) -> Result<u32> {
        let p = &self.process;
        p.enter(Op::Query)?;
        p.device_id(device)
    }
}
