//! Questions about memory: `aclrtGetMemInfo`, `aclrtMemGetAddressRange`,
//! `aclrtPointerGetAttributes`, `aclrtMemRetainAllocationHandle`,
//! `aclrtMemGetAllocationPropertiesFromHandle`, `aclrtMemSetAccess`,
//! `aclrtMemGetAccess`, `aclrtCheckMemType`.

use aclmem_core::{AclError, GIB, Location, MIB, MemAttr, PageClass, RawPhysicalMemProp};
use aclmem_hal::RawHandle;

use crate::calls::physical::raw_handle;
use crate::errors::Situation;
use crate::machine::PoolId;
use crate::os::pool::PAGE;
use crate::process::Result;
use crate::process::handles::{HandleId, Origin};
use aclmem_sys::{AccessDesc, AccessFlags, LocationType, PointerAttributes};

use crate::Target;
use crate::{Emulator, Op};

/// The names `aclrtGetMemUsageInfo` gives the emulated device's
/// components: its memory (normal and huge pages) and its 1 GiB pages.
pub const MEM_USAGE_COMPONENTS: [&str; 2] = ["device_memory", "huge_1g_pages"];

impl Emulator {
    /// `aclrtGetMemInfo`: free and total bytes of the pool `attr` names, on
    /// `device` (machine-wide: what every process uses).
    pub fn mem_info(&self, attr: MemAttr, device: impl Into<Target>) -> Result<(usize, usize)> {
        let p = &self.process;
        let device = p.enter_pool_query(device.into())?;
        let region = &p.machine().region;
        let pool = match attr {
            MemAttr::HbmMem
            | MemAttr::HbmMemHuge
            | MemAttr::HbmMemNormal
            | MemAttr::MemNormal
            | MemAttr::MemHuge => PoolId::Device(device),
            MemAttr::HbmMemHuge1G | MemAttr::MemHuge1G => PoolId::Huge1G(device),
            MemAttr::DdrMem | MemAttr::DdrMemHuge | MemAttr::DdrMemNormal
                if !p.machine().product.has_hbm() =>
            {
                // On products without HBM the device's memory is DDR.
                PoolId::Device(device)
            }
            MemAttr::DdrMem | MemAttr::DdrMemHuge | MemAttr::DdrMemNormal => PoolId::Host,
            // Attributes that do not match the hardware: 0 / 0 (documented).
            _ => return Ok((0, 0)),
        };
        let (capacity, used) = region.pool(pool);
        Ok((capacity.saturating_sub(used) as usize, capacity as usize))
    }

    /// `aclrtGetMemUsageInfo`: what uses the memory of `device`, one
    /// component per pool of the device (its pages, and its 1 GiB pages
    /// where the product has them), machine-wide, as (name, bytes now,
    /// most bytes at once), by bytes now, largest first.
    ///
    /// The real driver names its own components (which ones is not
    /// documented); the emulator's are its pools, named as
    /// [`MEM_USAGE_COMPONENTS`] says. A device the machine lacks: 107001;
    /// a thread without a device: 107002.
    pub fn mem_usage(&self, device: impl Into<Target>) -> Result<Vec<(&'static str, u64, u64)>> {
        let p = &self.process;
        let device = p.enter_pool_query(device.into())?;
        let region = &p.machine().region;
        let mut parts: Vec<_> = [
            (MEM_USAGE_COMPONENTS[0], PoolId::Device(device)),
            (MEM_USAGE_COMPONENTS[1], PoolId::Huge1G(device)),
        ]
        .into_iter()
        .filter_map(|(name, pool)| {
            let (capacity, used) = region.pool(pool);
            (capacity > 0).then(|| (name, used, region.peak(pool)))
        })
        .collect();
        parts.sort_by_key(|&(name, used, _)| (std::cmp::Reverse(used), name));
        Ok(parts)
    }

    /// `aclrtMemGetAddressRange`: (base, size) of the mapping or host
    /// allocation that contains `ptr`.
    pub fn address_range(&self, ptr: usize) -> Result<(usize, usize)> {
        let p = &self.process;
        p.enter(Op::Query)?;
        p.mapping_range(ptr)
            .or_else(|| p.host_block_at(ptr))
            .ok_or(Situation::UnknownAddress.code())
    }

    /// `aclrtPointerGetAttributes`: where `ptr` is and its page size;
    /// memory not from ACL is `Unregistered`.
    /// Managed memory is `Managed` (with its device) from CANN 9.1, whose
    /// runtime added the type; 9.0's has no case for it: 107000.
    pub fn pointer_attributes(&self, ptr: usize) -> Result<PointerAttributes> {
        let p = &self.process;
        p.enter(Op::Query)?;
        if let Some(device) = self.managed_user_device(ptr) {
            if p.machine().config.cann.major_minor() < (9, 1) {
                return Err(AclError::RT_PARAM_INVALID);
            }
            return Ok(PointerAttributes {
                location: LocationType::Managed,
                id: device,
                page_size: 2 * MIB as u32,
            });
        }
        if let Some(a) = p.placed_at(ptr) {
            let page = match a.attr.page_class() {
                PageClass::Huge1G => GIB,
                _ if a.origin == Origin::Plain && a.attr == MemAttr::HbmMemNormal => PAGE as usize,
                _ => 2 * MIB,
            } as u32;
            let device = a.location == Location::Device;
            return Ok(PointerAttributes {
                location: if device {
                    LocationType::Device
                } else {
                    LocationType::Host
                },
                id: if device {
                    p.user_device(a.location_id)
                } else {
                    0
                },
                page_size: page,
            });
        }
        let location = if p.is_host_allocation(ptr, 1) {
            LocationType::Host
        } else {
            LocationType::Unregistered
        };
        Ok(PointerAttributes {
            location,
            id: 0,
            page_size: PAGE as u32,
        })
    }

    /// The memory type `aclrtCheckMemType` sees at `ptr`, as its mask
    /// bit: `RT_MEM_MASK_DEV_TYPE` (0x2) for `aclrtMalloc` memory of a
    /// device, `RT_MEM_MASK_RSVD_TYPE` (0x20) for device memory mapped into
    /// a range `aclrtReserveMemAddress` reserved, 0 for anything else (host
    /// memory; the emulator has no DVPP memory, 0x8).
    pub fn memory_type(&self, ptr: usize) -> Result<u32> {
        let p = &self.process;
        p.enter_rt(Op::Query)?;
        Ok(match p.placed_at(ptr) {
            Some(a) if a.location == Location::Device && a.origin == Origin::Plain => 0x2,
            Some(a) if a.location == Location::Device => 0x20,
            _ => 0,
        })
    }

    /// `aclrtMemRetainAllocationHandle`: a new handle to what is mapped at
    /// `addr` (which must be where a mapping starts).
    pub fn retain_allocation_handle(&self, addr: usize) -> Result<RawHandle> {
        let p = &self.process;
        p.enter_vmm(Op::Query)?;
        let id = p.new_handle_of_mapping(addr, Situation::NotAMappingStart, |m| {
            if m.origin == Origin::Plain {
                return Err(Situation::NotAMappingStart.code());
            }
            Ok(())
        })?;
        raw_handle(id)
    }

    /// `aclrtMemGetAllocationPropertiesFromHandle`.
    pub fn allocation_properties(&self, handle: RawHandle) -> Result<RawPhysicalMemProp> {
        let p = &self.process;
        p.enter(Op::Query)?;
        let id = HandleId::decode(handle.0.get())?;
        let a = p.placed_of(id)?;
        let mut prop = RawPhysicalMemProp {
            mem_attr: a.attr.raw(),
            ..RawPhysicalMemProp::default()
        };
        prop.location.type_ = a.location.raw();
        prop.location.id = if a.location == Location::Device {
            p.user_device(a.location_id)
        } else {
            a.location_id
        };
        Ok(prop)
    }

    /// `aclrtMemSetAccess`: READWRITE on the device or the host is what
    /// the runtime supports for a mapping; every descriptor is checked
    /// before any applies (the last one for a location wins).
    pub fn set_access(&self, addr: usize, size: usize, descs: &[AccessDesc]) -> Result<()> {
        let p = &self.process;
        p.enter_rt(Op::Query)?;
        for d in descs {
            if d.flags != AccessFlags::ReadWrite
                || !matches!(d.location, LocationType::Host | LocationType::Device)
            {
                return Err(Situation::BadAccessDesc.code());
            }
        }
        let descs: Vec<AccessDesc> = descs
            .iter()
            .map(|d| AccessDesc {
                id: if d.location == LocationType::Host {
                    0
                } else {
                    d.id
                },
                ..*d
            })
            .collect();
        p.set_access(addr, size, &descs)
    }

    /// `aclrtMemGetAccess`: the descriptor of the mapping at `addr`.
    pub fn get_access(&self, addr: usize) -> Result<AccessDesc> {
        let p = &self.process;
        p.enter_rt(Op::Query)?;
        p.access(addr)
    }
}
