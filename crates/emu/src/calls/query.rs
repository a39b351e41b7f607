//! Questions about memory: `aclrtGetMemInfo`, `aclrtMemGetAddressRange`,
//! `aclrtPointerGetAttributes`, `aclrtMemRetainAllocationHandle`,
//! `aclrtMemGetAllocationPropertiesFromHandle`, `aclrtMemSetAccess`,
//! `aclrtMemGetAccess`.

use aclmem_core::{GIB, Location, MIB, MemAttr, PageClass, RawPhysicalMemProp};
use aclmem_hal::RawHandle;

use crate::calls::physical::raw_handle;
use crate::errors::Situation;
use crate::machine::PoolId;
use crate::os::pool::PAGE;
use crate::process::Result;
use crate::process::address_space::Access;
use crate::process::handles::{HandleId, Origin};
use crate::{Emulator, Op};

/// `aclrtPointerGetAttributes`' location type of memory not from ACL.
const UNREGISTERED: u32 = 2;

impl Emulator {
    /// `aclrtGetMemInfo`: free and total bytes of the pool `attr` names, on
    /// `device` (machine-wide: what every process uses).
    pub fn mem_info(&self, attr: MemAttr, device: u32) -> Result<(usize, usize)> {
        let p = &self.process;
        p.enter(Op::Query)?;
        p.device(device)?;
        let region = &p.machine.region;
        {
            let g = region.lock(p.slot);
            region.reap(&g);
        }
        let pool = match attr {
            MemAttr::HbmMem
            | MemAttr::HbmMemHuge
            | MemAttr::HbmMemNormal
            | MemAttr::MemNormal
            | MemAttr::MemHuge => PoolId::Device(device),
            MemAttr::HbmMemHuge1G | MemAttr::MemHuge1G => PoolId::Huge1G(device),
            MemAttr::DdrMem | MemAttr::DdrMemHuge | MemAttr::DdrMemNormal
                if !p.machine.product.has_hbm() =>
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

    /// `aclrtMemGetAddressRange`: (base, size) of the mapping or host
    /// allocation that contains `ptr`.
    pub fn address_range(&self, ptr: usize) -> Result<(usize, usize)> {
        let p = &self.process;
        p.enter(Op::Query)?;
        if let Some((start, e)) = p.va.lock().mapping_at(ptr) {
            return Ok((start, e.size));
        }
        match p.hosts.lock().range(..=ptr).next_back() {
            Some((&s, &l)) if ptr < s + l => Ok((s, l)),
            _ => Err(Situation::UnknownAddress.code()),
        }
    }

    /// `aclrtPointerGetAttributes`: (location type, id, page size); memory
    /// not from ACL is `ACL_MEM_LOCATION_TYPE_UNREGISTERED` (2).
    pub fn pointer_attributes(&self, ptr: usize) -> Result<(u32, u32, u32)> {
        let p = &self.process;
        p.enter(Op::Query)?;
        {
            let va = p.va.lock();
            if let Some((_, e)) = va.mapping_at(ptr)
                && let Some(a) = p.shards.lock(e.shard).allocs.get(e.alloc as usize)
            {
                let page = match a.attr.page_class() {
                    PageClass::Huge1G => GIB,
                    _ if a.origin == Origin::Plain && a.attr == MemAttr::HbmMemNormal => {
                        PAGE as usize
                    }
                    _ => 2 * MIB,
                } as u32;
                let device = a.location == Location::Device;
                let id = if device { a.location_id } else { 0 };
                return Ok((u32::from(device), id, page));
            }
        }
        if p.is_host_allocation(ptr, 1) {
            return Ok((0, 0, PAGE as u32));
        }
        Ok((UNREGISTERED, 0, PAGE as u32))
    }

    /// `aclrtMemRetainAllocationHandle`: a new handle to what is mapped at
    /// `addr` (which must be where a mapping starts).
    pub fn retain_allocation_handle(&self, addr: usize) -> Result<RawHandle> {
        let p = &self.process;
        p.enter_vmm(Op::Query)?;
        let va = p.va.lock();
        let e = va
            .maps
            .get(&addr)
            .ok_or(Situation::NotAMappingStart.code())?;
        let mut shard = p.shards.lock(e.shard);
        let a = shard
            .allocs
            .get_mut(e.alloc as usize)
            .ok_or(Situation::NotAMappingStart.code())?;
        if a.origin == Origin::Plain {
            return Err(Situation::NotAMappingStart.code());
        }
        a.refs += 1;
        let imported = a.is_imported();
        raw_handle(p.shards.new_handle(&mut shard, e.shard, e.alloc, imported))
    }

    /// `aclrtMemGetAllocationPropertiesFromHandle`.
    pub fn allocation_properties(&self, handle: RawHandle) -> Result<RawPhysicalMemProp> {
        let p = &self.process;
        p.enter(Op::Query)?;
        let id = HandleId::decode(handle.0.get())?;
        let shard = p.shards.of(id)?;
        let (_, a) = shard.resolve(id)?;
        let mut prop = RawPhysicalMemProp {
            mem_attr: a.attr.raw(),
            ..RawPhysicalMemProp::default()
        };
        prop.location.type_ = a.location.raw();
        prop.location.id = a.location_id;
        Ok(prop)
    }

    /// `aclrtMemSetAccess` with one descriptor (flags, location type, id):
    /// READWRITE on the device or the host is what the runtime supports
    /// for a mapping.
    pub fn set_access(
        &self,
        addr: usize,
        size: usize,
        flags: u64,
        location: u32,
        id: u32,
    ) -> Result<()> {
        let p = &self.process;
        p.enter(Op::Query)?;
        if flags != 3 || !(location == 0 || location == 1) {
            return Err(Situation::BadAccessDesc.code());
        }
        let mut va = p.va.lock();
        let e = va
            .maps
            .get_mut(&addr)
            .filter(|e| e.size == size)
            .ok_or(Situation::NotAMappingStart.code())?;
        e.access = Access {
            flags,
            location_type: location,
            id: if location == 0 { 0 } else { id },
        };
        Ok(())
    }

    /// `aclrtMemGetAccess`: (flags, location type, id).
    pub fn get_access(&self, addr: usize) -> Result<(u64, u32, u32)> {
        let p = &self.process;
        p.enter(Op::Query)?;
        let va = p.va.lock();
        let a = va
            .maps
            .get(&addr)
            .ok_or(Situation::NotAMappingStart.code())?
            .access;
        Ok((a.flags, a.location_type, a.id))
    }
}
