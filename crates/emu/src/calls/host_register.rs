//! Host memory registered for the device: `aclrtHostRegister`,
//! `aclrtHostRegisterV2`, `aclrtHostGetDevicePointer`,
//! `aclrtHostUnregister`.
//!
//! The runtime pins the pages of a host range and maps them for the
//! device. Here the device shares the host's address space, so the device
//! pointer of a registered range is its host address (documented in
//! `docs/torch-npu.md`); the range must be mapped memory of the process
//! (the kernel is asked; a made-up address is refused as the driver's
//! pinning refuses it). Checks and codes, in the runtime's order, are in
//! `docs/facts.md` ("Host memory registration").

use aclmem_core::AclError;

use crate::errors::Situation;
use crate::os::sys;
use crate::process::Result;
use crate::{Emulator, Op};

/// The alignment the runtime documents for a registered host address.
pub const HOST_REGISTER_ALIGN: usize = 4096;

/// `aclrtHostRegisterType`: `ACL_HOST_REGISTER_MAPPED`.
pub const HOST_REGISTER_MAPPED: u32 = 0;
/// `aclrtHostRegisterType`: `ACL_HOST_REGISTER_IOMEMORY`.
pub const HOST_REGISTER_IOMEMORY: u32 = 0x4;
/// `aclrtHostRegisterType`: `ACL_HOST_REGISTER_READONLY`.
pub const HOST_REGISTER_READONLY: u32 = 0x8;

/// `aclrtHostRegisterV2` flag: `ACL_HOST_REG_MAPPED`.
pub const HOST_REG_MAPPED: u32 = 0x2;
/// `aclrtHostRegisterV2` flag: `ACL_HOST_REG_IOMEMORY`.
pub const HOST_REG_IOMEMORY: u32 = 0x4;
/// `aclrtHostRegisterV2` flag: `ACL_HOST_REG_READONLY`.
pub const HOST_REG_READONLY: u32 = 0x8;
/// `aclrtHostRegisterV2` flag: `ACL_HOST_REG_PINNED`.
pub const HOST_REG_PINNED: u32 = 0x1000_0000;

impl Emulator {
    /// Whether `addr..addr + len` is host memory the device reaches: an
    /// `aclrtMallocHost` block, or a range registered mapped for the device
    /// (whose device pointer is its host address here). Operators read and
    /// write such memory as the device would.
    pub fn device_reaches_host(&self, addr: usize, len: usize) -> bool {
        let p = &self.process;
        p.is_host_allocation(addr, len) || p.registered_covers(addr, len)
    }

    /// `aclrtHostRegister(ptr, size, type, &devPtr)`: registers
    /// `ptr..ptr + size` for the device and returns its device pointer.
    ///
    /// NULL `ptr` or size 0: 100000. A type outside `IOMEMORY | READONLY`:
    /// 207000 (the runtime's check); `IOMEMORY` and `READONLY` themselves
    /// are documented as reserved and not supported: 207000. Then the
    /// thread's context (107002), the alignment (107000), the range's
    /// memory (107000), an overlap with a registered range (507910).
    pub fn host_register(&self, ptr: usize, size: u64, kind: u32) -> Result<usize> {
        if ptr == 0 || size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        // A bit outside IOMEMORY | READONLY fails the runtime's check, and
        // those two are reserved: 207000 either way.
        if kind != HOST_REGISTER_MAPPED {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        self.register(ptr, size, true)?;
        Ok(ptr)
    }

    /// `aclrtHostRegisterV2(ptr, size, flag)`: registers `ptr..ptr + size`,
    /// mapped for the device (`ACL_HOST_REG_MAPPED`) or pinned only
    /// (`ACL_HOST_REG_PINNED`).
    ///
    /// NULL `ptr` or size 0: 100000. A flag of 0 or with a bit outside the
    /// four the header defines: 107000; `IOMEMORY` and `READONLY`
    /// (documented as reserved, not supported): 207000. Then as
    /// [`host_register`](Self::host_register).
    pub fn host_register_v2(&self, ptr: usize, size: u64, flag: u32) -> Result<()> {
        if ptr == 0 || size == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let known = HOST_REG_MAPPED | HOST_REG_IOMEMORY | HOST_REG_READONLY | HOST_REG_PINNED;
        if flag == 0 || flag & !known != 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        if flag & (HOST_REG_IOMEMORY | HOST_REG_READONLY) != 0 {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        self.register(ptr, size, flag & HOST_REG_MAPPED != 0)
    }

    fn register(&self, ptr: usize, size: u64, mapped: bool) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::HostRegister)?;
        if !ptr.is_multiple_of(HOST_REGISTER_ALIGN) {
            return Err(Situation::HostRegisterUnaligned.code());
        }
        let len = usize::try_from(size).map_err(|_| Situation::HostRangeNotMapped.code())?;
        if ptr.checked_add(len).is_none() || !sys::is_mapped(ptr, len) {
            return Err(Situation::HostRangeNotMapped.code());
        }
        p.register_host(ptr, len, mapped)
    }

    /// `aclrtHostGetDevicePointer(pHost, &pDevice, flag)`: the device
    /// pointer of a range registered as mapped, by its start address.
    ///
    /// NULL `host` or a flag other than 0: 100000; the thread's context
    /// (107002); not the start of a mapped registration: 107000.
    pub fn host_device_pointer(&self, host: usize, flag: u32) -> Result<usize> {
        if host == 0 || flag != 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let p = &self.process;
        p.enter_rt(Op::Query)?;
        p.registered_device_pointer(host)
    }

    /// `aclrtHostUnregister(ptr)`: ends the registration that starts at
    /// `ptr`.
    ///
    /// NULL: 100000; the thread's context (107002); not the start of a
    /// registered range: 507911.
    pub fn host_unregister(&self, ptr: usize) -> Result<()> {
        if ptr == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let p = &self.process;
        p.enter_rt(Op::HostUnregister)?;
        p.unregister_host(ptr)
    }

    /// The host ranges registered now: (start, length, mapped), in address
    /// order.
    pub fn host_registrations(&self) -> Vec<(usize, usize, bool)> {
        self.process.host_registrations()
    }
}
