//! mstx (`libms_tools_ext.so`, one of the library's names): markers and
//! ranges, domains, and the memory API a program describes its pools with
//! (heaps and the regions carved from them). Each is taken and checked as
//! MindStudio's tools take it; nothing profiles the markers on the emulator
//! (the sanitizer's timeline shows them), and the heaps and regions are
//! kept so that their handles mean what they mean under a tool: the
//! sanitizer checks the memory accesses against them (`docs/mstx.md`).

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void};

use aclmem_fork::ForkMutex;
use aclmem_sys::aclrtStream;
use aclmem_sys::mstx::{
    MSTX_BATCH_MAX, MSTX_DOMAIN_NAME_MAX, MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR,
    MSTX_MEM_REGION_REF_TYPE_HANDLE, MSTX_MEM_REGION_REF_TYPE_POINTER,
    MSTX_MEM_TYPE_VIRTUAL_ADDRESS, mstxMemHeapDesc_t, mstxMemRegionRef_t,
    mstxMemRegionsRegisterBatch_t, mstxMemRegionsUnregisterBatch_t, mstxMemVirtualRangeDesc_t,
};

use crate::cptr;

/// The longest mstx message the emulator takes: the documented limit
/// outside MSPTI (msprof, the Ascend PyTorch profiler) is 156 bytes, under
/// MSPTI 255. The emulator takes the stricter one (docs/torch-npu.md), so
/// a message that works here works under every profiler.
pub const MSTX_MESSAGE_MAX: usize = 156;

/// The range ids handed out (0 is the documented failure).
static MSTX_RANGES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Whether an mstx message is one the tools take: readable, at most
/// [`MSTX_MESSAGE_MAX`] bytes (NULL is refused: "message must not be a null
/// pointer").
fn mstx_message_ok(message: *const c_char) -> bool {
    cptr::read_cstr(message, MSTX_MESSAGE_MAX).is_ok()
}

/// `void mstxMarkA(const char *message, aclrtStream stream)`: an instant
/// marker. Nothing profiles it on the emulator (the sanitizer's timeline
/// shows it); a bad message is ignored, as the tools ignore it.
#[unsafe(no_mangle)]
pub extern "C" fn mstxMarkA(message: *const c_char, _stream: aclrtStream) {
    let _ = mstx_message_ok(message);
}

/// `mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream)`:
/// the start of a range, as a new id (1, 2, ...); 0, the documented
/// failure, for a NULL, unreadable or too long message.
#[unsafe(no_mangle)]
pub extern "C" fn mstxRangeStartA(message: *const c_char, _stream: aclrtStream) -> u64 {
    if !mstx_message_ok(message) {
        return 0;
    }
    MSTX_RANGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

/// `void mstxRangeEnd(mstxRangeId id)`: the end of a range (any id is
/// taken: the tools report an unknown one, they do not fail the program).
#[unsafe(no_mangle)]
pub extern "C" fn mstxRangeEnd(_id: u64) {}

/// What an mstx handle names. Handles are `id * 16` (never NULL, never
/// a pointer to anything): one id space for all kinds, so a heap handle
/// passed as a domain is known for what it is.
#[derive(Debug, Clone)]
enum Object {
    /// A domain, by name (`mstxDomainCreateA`).
    Domain(String),
    /// A heap, in its domain (0: the global one).
    Heap { domain: u64 },
    /// A region: its domain, its heap and its first byte.
    Region {
        domain: u64,
        heap: u64,
        start: usize,
    },
}

/// The domains, heaps and regions alive: id -> object.
static OBJECTS: ForkMutex<BTreeMap<u64, Object>> = ForkMutex::new(BTreeMap::new);
/// The last id handed out.
static LAST_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn new_id() -> u64 {
    LAST_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

fn handle_of(id: u64) -> *mut c_void {
    (id as usize).wrapping_mul(16) as *mut c_void
}

fn id_of(handle: *const c_void) -> u64 {
    let raw = handle as usize;
    if raw.is_multiple_of(16) {
        (raw / 16) as u64
    } else {
        u64::MAX
    }
}

/// The domain a handle names: `Some(0)` for NULL (the global domain:
/// unconfirmed, the conservative reading of "globalDomain or a handle of
/// `mstxDomainCreateA`", docs/mstx.md), the domain's id for a live one,
/// `None` for anything else.
fn domain_id(objects: &BTreeMap<u64, Object>, handle: *const c_void) -> Option<u64> {
    if handle.is_null() {
        return Some(0);
    }
    let id = id_of(handle);
    matches!(objects.get(&id), Some(Object::Domain(_))).then_some(id)
}

/// Whether a domain name is one the tools take: 1 to 1023 bytes of
/// digits, ASCII letters and `_`.
fn domain_name_ok(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `mstxDomainHandle_t mstxDomainCreateA(const char *name)`: the domain
/// of that name, made at its first call (the same name answers the same
/// handle, as documented); NULL for a NULL, unreadable, empty or too long
/// name, or one with other characters than digits, letters and `_`.
#[unsafe(no_mangle)]
pub extern "C" fn mstxDomainCreateA(name: *const c_char) -> *mut c_void {
    let Ok(name) = cptr::read_cstr(name, MSTX_DOMAIN_NAME_MAX) else {
        return std::ptr::null_mut();
    };
    if !domain_name_ok(&name) {
        return std::ptr::null_mut();
    }
    let mut objects = OBJECTS.lock();
    let found = objects
        .iter()
        .find(|(_, o)| matches!(o, Object::Domain(n) if *n == name))
        .map(|(id, _)| *id);
    let id = found.unwrap_or_else(|| {
        let id = new_id();
        objects.insert(id, Object::Domain(name));
        id
    });
    handle_of(id)
}

/// `void mstxDomainDestroy(mstxDomainHandle_t domain)`: the domain ends,
/// with the heaps and regions registered in it; anything but a live
/// domain is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mstxDomainDestroy(domain: *mut c_void) {
    let mut objects = OBJECTS.lock();
    let Some(id) = domain_id(&objects, domain).filter(|id| *id != 0) else {
        return;
    };
    objects.retain(|k, o| {
        *k != id
            && !matches!(o, Object::Heap { domain, .. } | Object::Region { domain, .. } if *domain == id)
    });
}

/// `void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message,
/// aclrtStream stream)`: [`mstxMarkA`] in a domain (an unknown domain or a
/// bad message is ignored).
#[unsafe(no_mangle)]
pub extern "C" fn mstxDomainMarkA(
    domain: *mut c_void,
    message: *const c_char,
    stream: aclrtStream,
) {
    if domain_id(&OBJECTS.lock(), domain).is_some() {
        mstxMarkA(message, stream);
    }
}

/// `mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const
/// char *message, aclrtStream stream)`: [`mstxRangeStartA`] in a domain;
/// 0 for a domain that is not a live one.
#[unsafe(no_mangle)]
pub extern "C" fn mstxDomainRangeStartA(
    domain: *mut c_void,
    message: *const c_char,
    stream: aclrtStream,
) -> u64 {
    if domain_id(&OBJECTS.lock(), domain).is_none() {
        return 0;
    }
    mstxRangeStartA(message, stream)
}

/// `void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id)`:
/// the end of a range (any id is taken, as by [`mstxRangeEnd`]).
#[unsafe(no_mangle)]
pub extern "C" fn mstxDomainRangeEnd(_domain: *mut c_void, _id: u64) {}

/// Whether a virtual range is one a tool takes: not NULL, not empty, not
/// wrapping the address space.
fn range_ok(d: &mstxMemVirtualRangeDesc_t) -> bool {
    let start = d.ptr as usize;
    start != 0
        && d.size != 0
        && usize::try_from(d.size)
            .ok()
            .and_then(|s| start.checked_add(s))
            .is_some()
}

/// A virtual range read through a C pointer; `None` when unreadable or
/// not [`range_ok`].
fn range_at(p: *const mstxMemVirtualRangeDesc_t) -> Option<mstxMemVirtualRangeDesc_t> {
    // SAFETY: plain C data, read through the kernel's check.
    let d = unsafe { cptr::read(p) }.ok()?;
    range_ok(&d).then_some(d)
}

/// `mstxMemHeapHandle_t mstxMemHeapRegister(mstxDomainHandle_t domain,
/// const mstxMemHeapDesc_t *desc)`: a heap over `desc`'s range, as a new
/// handle. NULL (nothing registered) for a domain that is not a live one,
/// or a descriptor that is NULL or unreadable, of another usage than
/// `SUB_ALLOCATOR` or another type than `VIRTUAL_ADDRESS`, or whose range
/// is NULL, empty or wraps. Whether the memory is the program's is the
/// sanitizer's check (`mstx-heap-unmapped`), as it is a tool's.
// Safe for any pointer: descriptors are read through the kernel's check
// (`cptr`), so garbage is answered, never dereferenced.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
#[unsafe(no_mangle)]
pub extern "C" fn mstxMemHeapRegister(
    domain: *mut c_void,
    desc: *const mstxMemHeapDesc_t,
) -> *mut c_void {
    // SAFETY: plain C data, read through the kernel's check.
    let Ok(d) = (unsafe { cptr::read(desc) }) else {
        return std::ptr::null_mut();
    };
    if d.usage != MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR || d.type_ != MSTX_MEM_TYPE_VIRTUAL_ADDRESS
    {
        return std::ptr::null_mut();
    }
    if range_at(d.type_specific_desc.cast()).is_none() {
        return std::ptr::null_mut();
    };
    let mut objects = OBJECTS.lock();
    let Some(domain) = domain_id(&objects, domain) else {
        return std::ptr::null_mut();
    };
    let id = new_id();
    objects.insert(id, Object::Heap { domain });
    handle_of(id)
}

/// `void mstxMemHeapUnregister(mstxDomainHandle_t domain,
/// mstxMemHeapHandle_t heap)`: the heap ends, with its regions (as
/// documented); a heap that is not a live one of the domain is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mstxMemHeapUnregister(domain: *mut c_void, heap: *mut c_void) {
    let mut objects = OBJECTS.lock();
    let Some(domain) = domain_id(&objects, domain) else {
        return;
    };
    let id = id_of(heap);
    if !matches!(objects.get(&id), Some(Object::Heap { domain: d, .. }) if *d == domain) {
        return;
    }
    objects.retain(|k, o| *k != id && !matches!(o, Object::Region { heap, .. } if *heap == id));
}

/// `void mstxMemRegionsRegister(mstxDomainHandle_t domain, const
/// mstxMemRegionsRegisterBatch_t *desc)`: each region of the batch is
/// registered in its heap, and its new handle written to
/// `regionHandleArrayOut[i]` (when that is not NULL). A region that is
/// NULL or empty gets a NULL handle; a batch whose domain or heap is not a
/// live one, whose type is not `VIRTUAL_ADDRESS`, or whose arrays cannot be
/// read registers nothing and writes NULL handles where it can. A region
/// outside its heap is registered (as a tool takes it) and is the
/// sanitizer's finding (`mstx-region-outside-heap`).
// Safe for any pointer: descriptors are read through the kernel's check
// (`cptr`), so garbage is answered, never dereferenced.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
#[unsafe(no_mangle)]
pub extern "C" fn mstxMemRegionsRegister(
    domain: *mut c_void,
    desc: *const mstxMemRegionsRegisterBatch_t,
) {
    // SAFETY: plain C data, read through the kernel's check.
    let Ok(b) = (unsafe { cptr::read(desc) }) else {
        return;
    };
    if b.region_count > MSTX_BATCH_MAX {
        return;
    }
    let out = b.region_handle_array_out;
    let write_out = |i: usize, handle: *mut c_void| {
        if !out.is_null() {
            // SAFETY: the caller's array of `regionCount` handles, written
            // through the kernel's check (a bad one is left unwritten).
            let _ = unsafe { cptr::write(out.wrapping_add(i), handle) };
        }
    };
    let read = if b.region_type == MSTX_MEM_TYPE_VIRTUAL_ADDRESS {
        // SAFETY: plain C data, read through the kernel's check.
        unsafe {
            cptr::read_array(
                b.region_desc_array.cast::<mstxMemVirtualRangeDesc_t>(),
                b.region_count,
                MSTX_BATCH_MAX,
                aclmem_core::AclError::INVALID_PARAM,
            )
        }
        .ok()
    } else {
        None
    };
    let mut objects = OBJECTS.lock();
    let place = domain_id(&objects, domain).and_then(|domain| {
        let heap = id_of(b.heap);
        matches!(objects.get(&heap), Some(Object::Heap { domain: d, .. }) if *d == domain)
            .then_some((domain, heap))
    });
    let (Some((domain, heap)), Some(regions)) = (place, read) else {
        drop(objects);
        for i in 0..b.region_count {
            write_out(i, std::ptr::null_mut());
        }
        return;
    };
    let mut handles = Vec::with_capacity(regions.len());
    for r in &regions {
        if !range_ok(r) {
            handles.push(std::ptr::null_mut());
            continue;
        }
        let id = new_id();
        objects.insert(
            id,
            Object::Region {
                domain,
                heap,
                start: r.ptr as usize,
            },
        );
        handles.push(handle_of(id));
    }
    drop(objects);
    for (i, h) in handles.into_iter().enumerate() {
        write_out(i, h);
    }
}

/// `void mstxMemRegionsUnregister(mstxDomainHandle_t domain, const
/// mstxMemRegionsUnregisterBatch_t *desc)`: each region named (by pointer:
/// the region of the domain that starts there, the latest if several; by
/// handle) ends. A reference to no live region of the domain is ignored
/// (a tool prints it; the sanitizer reports `mstx-unknown-handle`).
// Safe for any pointer: descriptors are read through the kernel's check
// (`cptr`), so garbage is answered, never dereferenced.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
#[unsafe(no_mangle)]
pub extern "C" fn mstxMemRegionsUnregister(
    domain: *mut c_void,
    desc: *const mstxMemRegionsUnregisterBatch_t,
) {
    // SAFETY: plain C data, read through the kernel's check.
    let Ok(b) = (unsafe { cptr::read(desc) }) else {
        return;
    };
    // SAFETY: plain C data (a tag and a pointer-sized union), read through
    // the kernel's check.
    let Ok(refs) = (unsafe {
        cptr::read_array::<mstxMemRegionRef_t>(
            b.ref_array,
            b.ref_count,
            MSTX_BATCH_MAX,
            aclmem_core::AclError::INVALID_PARAM,
        )
    }) else {
        return;
    };
    let mut objects = OBJECTS.lock();
    let Some(domain) = domain_id(&objects, domain) else {
        return;
    };
    for r in refs {
        let target = r.pointer_or_handle as usize;
        let found = match r.ref_type {
            MSTX_MEM_REGION_REF_TYPE_POINTER => objects
                .iter()
                .rev()
                .find(|(_, o)| {
                    matches!(o, Object::Region { domain: d, start, .. } if *d == domain && *start == target)
                })
                .map(|(id, _)| *id),
            MSTX_MEM_REGION_REF_TYPE_HANDLE => {
                let id = id_of(r.pointer_or_handle);
                matches!(objects.get(&id), Some(Object::Region { domain: d, .. }) if *d == domain)
                    .then_some(id)
            }
            _ => None,
        };
        if let Some(id) = found {
            objects.remove(&id);
        }
    }
}

/// The heaps and regions alive, for tests: `(heaps, regions)`.
pub fn mstx_registered() -> (usize, usize) {
    let objects = OBJECTS.lock();
    let heaps = objects
        .values()
        .filter(|o| matches!(o, Object::Heap { .. }))
        .count();
    let regions = objects
        .values()
        .filter(|o| matches!(o, Object::Region { .. }))
        .count();
    (heaps, regions)
}
