//! The mstx memory API: the pools a program describes (heaps over memory
//! it allocated, regions handed out of them), checked as compute-sanitizer
//! checks the NVTX memory API's pools:
//!
//! * a heap over memory that is not the process's device memory:
//!   `mstx-heap-unmapped`;
//! * a region outside its heap: `mstx-region-outside-heap`;
//! * a copy or fill whose device side, inside a heap over mapped memory,
//!   leaves the heap's regions (crosses a region's end, or touches memory no
//!   region covers): `mstx-access-outside-region`;
//! * memory freed or unmapped under a heap or region still registered:
//!   `mstx-freed-while-registered`;
//! * a heap or region named that is not registered in the domain:
//!   `mstx-unknown-handle`.
//!
//! Each call is forwarded unchanged and is a record of the trace (the
//! timeline marks heaps and regions). Lock order: the model's lock, then
//! this one (never the other way round: the checks called from the other
//! hooks take only this one, and this module's hooks let go of it before
//! they ask the model).

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use aclmem_fork::KeptMutex;
use aclmem_formats::finding::Class;
use aclmem_sys::mstx::{
    MSTX_BATCH_MAX, MSTX_MEM_REGION_REF_TYPE_HANDLE, MSTX_MEM_REGION_REF_TYPE_POINTER,
    MSTX_MEM_TYPE_VIRTUAL_ADDRESS, mstxMemHeapDesc_t, mstxMemRegionRef_t,
    mstxMemRegionsRegisterBatch_t, mstxMemRegionsUnregisterBatch_t, mstxMemVirtualRangeDesc_t,
};

use crate::report::{Finding, Site, report};

/// A registered range: its domain handle, first byte, length, and where it
/// was registered.
#[derive(Debug, Clone, Copy)]
struct Range {
    domain: usize,
    start: usize,
    len: usize,
    site: Site,
}

impl Range {
    fn end(&self) -> usize {
        self.start.saturating_add(self.len)
    }

    fn contains(&self, addr: usize) -> bool {
        self.start <= addr && addr < self.end()
    }

    fn overlaps(&self, addr: usize, len: usize) -> bool {
        self.start < addr.saturating_add(len.max(1)) && addr < self.end()
    }
}

#[derive(Default)]
struct Pools {
    /// Heap handle -> its range.
    heaps: BTreeMap<usize, Range>,
    /// Region key (the handle the library wrote, or an odd key of the
    /// sanitizer's own when the program asked for no handles) -> its heap
    /// and range.
    regions: BTreeMap<usize, (usize, Range)>,
}

static POOLS: KeptMutex<Pools> = KeptMutex::new(Pools {
    heaps: BTreeMap::new(),
    regions: BTreeMap::new(),
});
/// Heaps registered: the copies' check is a load when there are none.
static HEAPS: AtomicUsize = AtomicUsize::new(0);
/// The sanitizer's own region keys (odd: the library's handles are not).
static OWN_KEYS: AtomicUsize = AtomicUsize::new(1);

/// Before `fork`: holds the lock, so that the child's copy is not taken
/// half-way by another thread.
pub(crate) fn hold_for_fork() {
    aclmem_fork::hold(POOLS.lock());
}

/// After `fork`, in the child (the lock [`hold_for_fork`] took let go): a
/// child starts with no pools, as it starts with an empty model:
/// registrations are a process's own.
pub(crate) fn after_fork_in_child() {
    let mut pools = POOLS.lock();
    pools.heaps.clear();
    pools.regions.clear();
    set_heap_count(&pools);
}

fn set_heap_count(pools: &Pools) {
    HEAPS.store(pools.heaps.len(), Ordering::Relaxed);
}

/// A virtual range read through the program's pointer (`None` when NULL,
/// unreadable or empty).
fn range_at(p: *const mstxMemVirtualRangeDesc_t) -> Option<(usize, usize)> {
    // SAFETY: plain C data, read through the kernel's check.
    let d = unsafe { crate::cmem::read(p) }?;
    let len = usize::try_from(d.size).ok()?;
    (!d.ptr.is_null() && len != 0).then_some((d.ptr as usize, len))
}

fn trace(call: &'static str, va: usize, bytes: usize) {
    crate::trace::call_with(call, None, bytes, 0, |t| t.va = Some(va as u64));
}

fn unknown(call: &'static str, args: String, message: String, site: Site) {
    report(Finding {
        class: Class::MstxUnknownHandle,
        call,
        args,
        message,
        code: None,
        site: site.with_stack(),
    });
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxMemHeapRegister(
    domain: *mut c_void,
    desc: *const mstxMemHeapDesc_t,
) -> *mut c_void {
    let heap = forward_mstx!(
        c"mstxMemHeapRegister": fn(*mut c_void, *const mstxMemHeapDesc_t) -> *mut c_void,
        std::ptr::null_mut(),
        (domain, desc)
    );
    if heap.is_null() {
        return heap;
    }
    // SAFETY: plain C data, read through the kernel's check.
    let Some((start, len)) =
        (unsafe { crate::cmem::read(desc) }).and_then(|d| range_at(d.type_specific_desc.cast()))
    else {
        return heap;
    };
    let site = Site::outside();
    trace("mstxMemHeapRegister", start, len);
    if !crate::model::device_range(start, len) {
        report(Finding {
            class: Class::MstxHeapUnmapped,
            call: "mstxMemHeapRegister",
            args: format!("{start:#x}, {len} bytes"),
            message: format!(
                "the heap's {len} bytes at {start:#x} are not (all) mapped or aclrtMalloc memory of this process: a pool must be allocated before it is registered"
            ),
            code: None,
            site: site.with_stack(),
        });
    }
    let mut pools = POOLS.lock();
    pools.heaps.insert(
        heap as usize,
        Range {
            domain: domain as usize,
            start,
            len,
            site,
        },
    );
    set_heap_count(&pools);
    heap
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxMemHeapUnregister(domain: *mut c_void, heap: *mut c_void) {
    let known = {
        let mut pools = POOLS.lock();
        let known = pools
            .heaps
            .get(&(heap as usize))
            .is_some_and(|h| h.domain == domain as usize);
        if known {
            let h = heap as usize;
            pools.heaps.remove(&h);
            pools.regions.retain(|_, (of, _)| *of != h);
            set_heap_count(&pools);
        }
        known
    };
    if known {
        trace("mstxMemHeapUnregister", heap as usize, 0);
    } else {
        unknown(
            "mstxMemHeapUnregister",
            format!("{domain:p}, {heap:p}"),
            format!(
                "{heap:p} is not a heap registered in domain {domain:p} (never registered, or unregistered already)"
            ),
            Site::outside(),
        );
    }
    forward_mstx!(
        c"mstxMemHeapUnregister": fn(*mut c_void, *mut c_void) -> (),
        (),
        (domain, heap)
    )
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxMemRegionsRegister(
    domain: *mut c_void,
    desc: *const mstxMemRegionsRegisterBatch_t,
) {
    forward_mstx!(
        c"mstxMemRegionsRegister": fn(*mut c_void, *const mstxMemRegionsRegisterBatch_t) -> (),
        (),
        (domain, desc)
    );
    // SAFETY: plain C data, read through the kernel's check.
    let Some(b) = (unsafe { crate::cmem::read(desc) }) else {
        return;
    };
    if b.region_type != MSTX_MEM_TYPE_VIRTUAL_ADDRESS || b.region_count > MSTX_BATCH_MAX {
        return;
    }
    // SAFETY: plain C data, read through the kernel's check.
    let Some(regions) = (unsafe {
        crate::cmem::read_array(
            b.region_desc_array.cast::<mstxMemVirtualRangeDesc_t>(),
            b.region_count,
        )
    }) else {
        return;
    };
    // The handles the library wrote (none when the program asked for none).
    let handles = if b.region_handle_array_out.is_null() {
        None
    } else {
        // SAFETY: plain C data (pointers), read through the kernel's check.
        unsafe { crate::cmem::read_array(b.region_handle_array_out.cast_const(), b.region_count) }
    };
    let site = Site::outside();
    let heap = POOLS
        .lock()
        .heaps
        .get(&(b.heap as usize))
        .copied()
        .filter(|h| h.domain == domain as usize);
    let Some(heap) = heap else {
        unknown(
            "mstxMemRegionsRegister",
            format!("{domain:p}, heap {:p}", b.heap),
            format!(
                "regions registered in {:p}, which is not a heap registered in domain {domain:p} (never registered, or unregistered already)",
                b.heap
            ),
            site,
        );
        return;
    };
    let mut outside = Vec::new();
    {
        let mut pools = POOLS.lock();
        for (i, r) in regions.iter().enumerate() {
            let len = usize::try_from(r.size).unwrap_or(0);
            let start = r.ptr as usize;
            let key = match &handles {
                Some(h) => h[i] as usize,
                None => OWN_KEYS.fetch_add(2, Ordering::Relaxed),
            };
            if start == 0 || len == 0 || key == 0 {
                continue; // refused by the library: no region
            }
            let range = Range {
                domain: domain as usize,
                start,
                len,
                site,
            };
            if heap.start > start || range.end() > heap.end() {
                outside.push((start, len));
            }
            pools.regions.insert(key, (b.heap as usize, range));
        }
    }
    let bytes = regions
        .iter()
        .map(|r| usize::try_from(r.size).unwrap_or(0))
        .fold(0usize, usize::saturating_add);
    trace(
        "mstxMemRegionsRegister",
        regions.first().map_or(0, |r| r.ptr as usize),
        bytes,
    );
    if let Some(&(start, len)) = outside.first() {
        let more = match outside.len() {
            1 => String::new(),
            n => format!(" ({} more regions of the batch too)", n - 1),
        };
        report(Finding {
            class: Class::MstxRegionOutsideHeap,
            call: "mstxMemRegionsRegister",
            args: format!("{start:#x}, {len} bytes"),
            message: format!(
                "the region's {len} bytes at {start:#x} are not inside its heap ({} bytes at {:#x}, registered at {}){more}",
                heap.len,
                heap.start,
                heap.site.describe()
            ),
            code: None,
            site: site.with_stack(),
        });
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxMemRegionsUnregister(
    domain: *mut c_void,
    desc: *const mstxMemRegionsUnregisterBatch_t,
) {
    // SAFETY: plain C data, read through the kernel's check.
    let refs = unsafe { crate::cmem::read(desc) }
        .filter(|b| b.ref_count <= MSTX_BATCH_MAX)
        // SAFETY: plain C data (a tag and a pointer), read through the
        // kernel's check.
        .and_then(|b| unsafe {
            crate::cmem::read_array::<mstxMemRegionRef_t>(b.ref_array, b.ref_count)
        });
    if let Some(refs) = refs {
        let mut missing = Vec::new();
        let mut bytes = 0usize;
        {
            let mut pools = POOLS.lock();
            for r in &refs {
                let target = r.pointer_or_handle as usize;
                let key = match r.ref_type {
                    MSTX_MEM_REGION_REF_TYPE_HANDLE => pools
                        .regions
                        .get(&target)
                        .filter(|(_, range)| range.domain == domain as usize)
                        .map(|_| target),
                    MSTX_MEM_REGION_REF_TYPE_POINTER => pools
                        .regions
                        .iter()
                        .rev()
                        .find(|(_, (_, range))| {
                            range.domain == domain as usize && range.start == target
                        })
                        .map(|(k, _)| *k),
                    _ => None,
                };
                match key.and_then(|k| pools.regions.remove(&k)) {
                    Some((_, range)) => bytes = bytes.saturating_add(range.len),
                    None => missing.push(*r),
                }
            }
        }
        trace(
            "mstxMemRegionsUnregister",
            refs.first().map_or(0, |r| r.pointer_or_handle as usize),
            bytes,
        );
        if let Some(r) = missing.first() {
            let by = if r.ref_type == MSTX_MEM_REGION_REF_TYPE_HANDLE {
                "handle"
            } else if r.ref_type == MSTX_MEM_REGION_REF_TYPE_POINTER {
                "pointer"
            } else {
                "reference of an unknown type"
            };
            unknown(
                "mstxMemRegionsUnregister",
                format!("{domain:p}, {by} {:p}", r.pointer_or_handle),
                format!(
                    "no region registered in domain {domain:p} has the {by} {:p} (never registered, or unregistered already){}",
                    r.pointer_or_handle,
                    match missing.len() {
                        1 => String::new(),
                        n => format!("; {} more references of the batch too", n - 1),
                    }
                ),
                Site::outside(),
            );
        }
    }
    forward_mstx!(
        c"mstxMemRegionsUnregister": fn(*mut c_void, *const mstxMemRegionsUnregisterBatch_t) -> (),
        (),
        (domain, desc)
    )
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mstxDomainDestroy(domain: *mut c_void) {
    if !domain.is_null() {
        let mut pools = POOLS.lock();
        let d = domain as usize;
        pools.heaps.retain(|_, h| h.domain != d);
        pools.regions.retain(|_, (_, r)| r.domain != d);
        set_heap_count(&pools);
    }
    forward_mstx!(c"mstxDomainDestroy": fn(*mut c_void) -> (), (), (domain))
}

/// Before a copy or fill touches `addr..addr + len` of device memory:
/// inside a registered heap over mapped memory, the access must stay in
/// one region. Call it without the model's lock held.
pub(crate) fn check_access(call: &'static str, addr: usize, len: usize, site: Site) {
    if HEAPS.load(Ordering::Relaxed) == 0 || len == 0 || addr == 0 {
        return;
    }
    let (heap, region) = {
        let pools = POOLS.lock();
        let Some(heap) = pools.heaps.values().find(|h| h.contains(addr)).copied() else {
            return;
        };
        let region = pools
            .regions
            .values()
            .filter(|(_, r)| r.contains(addr))
            .map(|(_, r)| *r)
            .max_by_key(|r| r.end());
        (heap, region)
    };
    let end = addr.saturating_add(len);
    let message = match region {
        Some(r) if end <= r.end() => return,
        Some(r) => format!(
            "the {len} bytes at {addr:#x} run {} bytes past the end of their region ({} bytes at {:#x}, registered at {}) in a heap registered at {}",
            end - r.end(),
            r.len,
            r.start,
            r.site.describe(),
            heap.site.describe()
        ),
        None => format!(
            "the {len} bytes at {addr:#x} are heap memory no region covers (a block not handed out, or unregistered already) of the heap of {} bytes at {:#x} registered at {}",
            heap.len,
            heap.start,
            heap.site.describe()
        ),
    };
    // Memory that is not mapped at all is `copy-unmapped`'s finding.
    if !crate::model::device_range(addr, len) {
        return;
    }
    report(Finding {
        class: Class::MstxAccessOutsideRegion,
        call,
        args: format!("{addr:#x}, {len} bytes"),
        message,
        code: None,
        site: site.with_stack(),
    });
}

/// Before `aclrtFree` or `aclrtUnmapMem` of `addr..addr + len`: a region or
/// heap still registered over it is a finding (the region, the more
/// precise, when there is one). Asked at every release: whether any heap
/// is registered is decided inline, the look at them is not.
#[inline]
pub(crate) fn check_release(
    call: &'static str,
    addr: usize,
    len: usize,
    site: impl FnOnce() -> Site,
) {
    if HEAPS.load(Ordering::Relaxed) != 0 {
        check_release_registered(call, addr, len, site);
    }
}

/// [`check_release`] in a process with heaps registered (rare: a program
/// that describes its pools to mstx).
#[cold]
#[inline(never)]
fn check_release_registered(
    call: &'static str,
    addr: usize,
    len: usize,
    site: impl FnOnce() -> Site,
) {
    let hit = {
        let pools = POOLS.lock();
        let regions = pools
            .regions
            .values()
            .filter(|(_, r)| r.overlaps(addr, len))
            .count();
        let first = pools
            .regions
            .values()
            .find(|(_, r)| r.overlaps(addr, len))
            .map(|(_, r)| ("region", *r))
            .or_else(|| {
                pools
                    .heaps
                    .values()
                    .find(|h| h.overlaps(addr, len))
                    .map(|h| ("heap", *h))
            });
        first.map(|f| (f, regions))
    };
    let Some(((what, r), regions)) = hit else {
        return;
    };
    let others = match regions {
        0 | 1 => String::new(),
        n => format!(" ({n} regions in all)"),
    };
    report(Finding {
        class: Class::MstxFreedWhileRegistered,
        call,
        args: format!("{addr:#x}"),
        message: format!(
            "an mstx {what} of {} bytes at {:#x} (registered at {}) is still registered over this memory{others}: unregister it first",
            r.len,
            r.start,
            r.site.describe()
        ),
        code: None,
        site: site().with_stack(),
    });
}
