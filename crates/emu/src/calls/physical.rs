//! Physical memory: `aclrtMemGetAllocationGranularity`,
//! `aclrtMallocPhysical`, `aclrtFreePhysical`.

use std::sync::Arc;

use aclmem_core::{
    AclError, GranularityOption, Location, MemAttr, PageClass, RawPhysicalMemProp, Verdict,
    is_aligned,
};
use aclmem_hal::{PhysicalAllocator, RawHandle};

use crate::args::{self, Checked, PhysicalRequest};
use crate::errors::Situation;
use crate::machine::PoolId;
use crate::os::pool::{PAGE, PoolFile};
use crate::process::charge::Pools;
use crate::process::handles::{Alloc, HandleId, Origin, Source};
use crate::process::{Process, Result};
use crate::{Emulator, Op};

/// What a validated prop asks for.
pub(crate) struct Placement {
    pub(crate) location: Location,
    pub(crate) id: u32,
    pub(crate) attr: MemAttr,
    pub(crate) verdict: Verdict,
}

impl Process {
    /// The rules table's verdict on `prop` for this machine, and the device
    /// or NUMA node it names (the device id was checked by `enter_prop`).
    fn placement(&self, prop: &RawPhysicalMemProp) -> Result<Placement> {
        let m = &self.machine;
        let valid = prop.validate(m.product, m.config.run_mode, m.config.cann)?;
        if valid.location == Location::HostNuma && valid.location_id >= m.config.numa_nodes {
            return Err(Situation::UnknownNumaNode.code());
        }
        Ok(Placement {
            location: valid.location,
            id: if valid.location == Location::Host {
                0
            } else {
                valid.location_id
            },
            attr: valid.attr,
            verdict: valid.verdict,
        })
    }

    /// Charges the capacity, takes an extent and makes a handle: the part
    /// of `aclrtMallocPhysical` and `aclrtMalloc` after the checks.
    pub(crate) fn new_alloc(
        &self,
        placement: &Placement,
        size: u64,
        pools: Pools,
        origin: Origin,
    ) -> Result<HandleId> {
        self.collect_orphans();
        self.charge(pools, size)?;
        let index = self.shard_of(placement.location, placement.id);
        let made = self.ensure_pool_file(index).and_then(|()| {
            let mut shard = self.shards.lock(index);
            let offset = shard
                .extents
                .take(size.next_multiple_of(PAGE))
                .ok_or(AclError::RT_MEMORY_ALLOCATION)?;
            let alloc = shard.allocs.insert(Alloc::new(
                Source::Local,
                offset,
                size,
                (placement.location, placement.id, placement.attr),
                pools,
                origin,
            ));
            Ok(self
                .shards
                .new_handle(&mut shard, index, alloc as u32, false))
        });
        if made.is_err() {
            self.uncharge(pools, size);
        }
        made
    }

    /// Creates the shard's pool file if it has none yet (outside the
    /// shard's lock: `memfd_create` is a system call).
    fn ensure_pool_file(&self, index: u8) -> Result<()> {
        if self.shards.lock(index).file.is_some() {
            return Ok(());
        }
        let name = format!(
            "aclmem-emu-{}-{index}",
            self.machine.name.as_deref().unwrap_or("private")
        );
        let file = Arc::new(PoolFile::create(&name).map_err(crate::env::fd_error)?);
        // Another thread may have made one meanwhile: the first one stays.
        self.shards.lock(index).file.get_or_insert(file);
        Ok(())
    }
}

impl Process {
    /// The prologue of the calls that take a prop: counted, then the
    /// runtime layer's device id (107001), the thread's device (107002),
    /// the platform (207000). The prop comes back with the machine's device
    /// id for the user's.
    fn enter_prop(&self, op: Op, mut prop: RawPhysicalMemProp) -> Result<RawPhysicalMemProp> {
        self.enter(op)?;
        if prop.location.type_ == Location::Device.raw() {
            prop.location.id = self.device(prop.location.id)?;
        }
        self.on_device()?;
        self.machine.vmm_api()?;
        Ok(prop)
    }
}

impl Emulator {
    /// `aclrtMemGetAllocationGranularity` with arguments the ACL layer
    /// accepted ([`args::granularity`]).
    pub fn granularity_checked(&self, prop: Checked<RawPhysicalMemProp>) -> Result<usize> {
        let p = &self.process;
        let prop = prop.into_inner();
        let prop = p.enter_prop(Op::Granularity, prop)?;
        let attr = p.placement(&prop)?.attr;
        if !p.machine.cann().granularity_answers(attr) {
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
            && !p.machine.config.p2p_huge1g_confirmed
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
        let id = HandleId::decode(handle.0.get())?;
        let released = {
            let mut shard = p.shards.of(id)?;
            let (_, a) = shard.resolve(id)?;
            if a.origin == Origin::Plain {
                // aclrtMalloc memory is freed with aclrtFree.
                return Err(Situation::StaleHandle.code());
            }
            // Mappings hold their own reference: freeing a mapped handle
            // kills the handle now and releases the memory at the last
            // unmap.
            shard.remove_handle(id)?
        };
        p.finish_release(id.shard, released);
        Ok(())
    }
}

/// The API's value of a handle (never zero: the index is stored plus one).
pub(crate) fn raw_handle(id: HandleId) -> Result<RawHandle> {
    std::num::NonZeroU64::new(id.encode())
        .map(RawHandle)
        .ok_or(AclError::INTERNAL_ERROR)
}
