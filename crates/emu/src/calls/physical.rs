//! Physical memory: `aclrtMemGetAllocationGranularity`,
//! `aclrtMallocPhysical`, `aclrtFreePhysical`.

use aclmem_core::{
    AclError, GranularityOption, Location, PageClass, RawPhysicalMemProp, Verdict, is_aligned,
};
use aclmem_hal::{PhysicalAllocator, RawHandle};

use crate::args::{self, Checked, PhysicalRequest};
use crate::errors::Situation;
use crate::machine::PoolId;
use crate::process::Result;
use crate::process::charge::Pools;
use crate::process::handles::{HandleId, Origin};
use crate::{Emulator, Op};

impl Emulator {
    /// `aclrtMemGetAllocationGranularity` with arguments the ACL layer
    /// accepted ([`args::granularity`]).
    pub fn granularity_checked(&self, prop: Checked<RawPhysicalMemProp>) -> Result<usize> {
        let p = &self.process;
        let prop = prop.into_inner();
        let prop = p.enter_prop(Op::Granularity, prop)?;
        let attr = p.placement(&prop)?.attr;
        if !p.machine().cann().granularity_answers(attr) {
            return Err(AclError::INVALID_PARAM);
        }
        // Minimum and recommended are the documented granularities (the
        // recommended value is UNCONFIRMED).
        Ok(attr.granularity())
    }

    /// `aclrtMallocPhysical` with arguments the ACL layer accepted
    /// ([`args::malloc_physical`]).
    pub fn malloc_physical_checked(&self, request: Checked<PhysicalRequest>) -> Result<RawHandle> {
        let p = &self.process;
        let PhysicalRequest { size, prop } = request.into_inner();
        let prop = p.enter_prop(Op::Malloc, prop)?;
        let placement = p.placement(&prop)?;
        if !is_aligned(size, placement.attr.granularity()) {
            return Err(Situation::UnalignedSize.code());
        }
        if placement.verdict == Verdict::AllowedIfDeviceConfirms
            && !p.machine().config.p2p_huge1g_confirmed
        {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        let id = placement.id;
        let pools = match placement.location {
            Location::Device if placement.attr.page_class() == PageClass::Huge1G => {
                Pools::two(PoolId::Device(id), PoolId::Huge1G(id))
            }
            Location::Device => Pools::one(PoolId::Device(id)),
            Location::Host | Location::HostNuma
                if placement.verdict == Verdict::SizeLimitedByPlatform =>
            {
                Pools::two(PoolId::Host, PoolId::HostNumaP2p)
            }
            Location::Host | Location::HostNuma => Pools::one(PoolId::Host),
        };
        let id = p.new_alloc(&placement, size as u64, pools, Origin::Physical)?;
        raw_handle(id)
    }
}

impl PhysicalAllocator for Emulator {
    fn granularity(&self, prop: &RawPhysicalMemProp, _: GranularityOption) -> Result<usize> {
        self.granularity_checked(args::granularity(prop)?)
    }

    fn malloc_physical(
        &self,
        size: usize,
        prop: &RawPhysicalMemProp,
        flags: u64,
    ) -> Result<RawHandle> {
        self.malloc_physical_checked(args::malloc_physical(size, prop, flags)?)
    }

    fn free_physical(&self, handle: RawHandle) -> Result<()> {
        let p = &self.process;
        p.enter_vmm(Op::Free)?;
        p.free_handle(HandleId::decode(handle.0.get())?)
    }
}

/// The API's value of a handle (never zero: the index is stored plus one).
pub(crate) fn raw_handle(id: HandleId) -> Result<RawHandle> {
    std::num::NonZeroU64::new(id.encode())
        .map(RawHandle)
        .ok_or(AclError::INTERNAL_ERROR)
}
