//! The custom allocator of `acl_rt_allocator.h` (CANN 8.5): descriptors
//! (`aclrtAllocatorCreateDesc`, `DestroyDesc`, `SetObjToDesc`, the four
//! `Set*FuncToDesc`) and their registration per stream
//! (`aclrtAllocatorRegister`, `Unregister`, `GetByStream`).
//!
//! The runtime keeps them on the host only (`allocator.cpp`): a
//! registration copies the descriptor, keyed by the stream's handle,
//! unchecked. The runtime calls the functions for the workspace of
//! single operators and dynamic-shape models; the emulated operators need
//! no device workspace, so the emulated library stores them, hands them
//! back, and calls none of them.

use std::collections::BTreeMap;
use std::ffi::c_void;

use aclmem_core::AclError;
use aclmem_fork::ForkMutex;
use aclmem_sys::aclrtStream;

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;

/// A descriptor's contents: the allocator object and its four functions
/// (as addresses; none is ever called here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Desc {
    obj: usize,
    alloc: usize,
    free: usize,
    alloc_advise: usize,
    get_addr: usize,
}

/// Descriptors by handle, registrations by stream (the descriptor's
/// handle and a copy of its contents), and the last handle issued.
struct Table {
    descs: BTreeMap<usize, Desc>,
    registered: BTreeMap<usize, (usize, Desc)>,
    next: usize,
}

static TABLE: ForkMutex<Table> = ForkMutex::new(|| Table {
    descs: BTreeMap::new(),
    registered: BTreeMap::new(),
    next: 0,
});

/// Descriptor handles: opaque values above this base, never dereferenced.
const DESC_BASE: usize = 0x6a11_0000_0000;

/// `aclrtAllocatorDesc aclrtAllocatorCreateDesc()`: a new descriptor, or
/// NULL (a release without the function, or no descriptor handles left).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorCreateDesc() -> *mut c_void {
    let made = std::panic::catch_unwind(|| {
        shared::in_release("aclrtAllocatorCreateDesc").ok()?;
        let mut t = TABLE.lock();
        t.next = t.next.checked_add(1)?;
        let handle = DESC_BASE.checked_add(t.next.checked_mul(0x40)?)?;
        t.descs.insert(handle, Desc::default());
        Some(handle)
    });
    made.ok()
        .flatten()
        .map_or(std::ptr::null_mut(), |h| h as *mut c_void)
}

/// Runs `f` on the live descriptor `desc` (NULL or no descriptor 100000).
fn with_desc(name: &'static str, desc: *mut c_void, f: impl FnOnce(&mut Desc)) -> AclErrorCode {
    guard(name, || {
        shared::in_release(name)?;
        TABLE
            .lock()
            .descs
            .get_mut(&(desc as usize))
            .map(f)
            .ok_or(AclError::INVALID_PARAM)
    })
}

/// Sets one field of a descriptor to `value` (NULL 100000).
fn set_field(
    name: &'static str,
    desc: *mut c_void,
    value: usize,
    field: fn(&mut Desc) -> &mut usize,
) -> AclErrorCode {
    if value == 0 {
        return guard(name, || {
            shared::in_release(name)?;
            Err(AclError::INVALID_PARAM)
        });
    }
    with_desc(name, desc, |d| *field(d) = value)
}

/// `aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)`:
/// NULL or no descriptor 100000; registrations made from it keep their
/// copy.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorDestroyDesc(allocator_desc: *mut c_void) -> AclErrorCode {
    guard("aclrtAllocatorDestroyDesc", || {
        shared::in_release("aclrtAllocatorDestroyDesc")?;
        TABLE
            .lock()
            .descs
            .remove(&(allocator_desc as usize))
            .map(drop)
            .ok_or(AclError::INVALID_PARAM)
    })
}

/// `aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc,
/// aclrtAllocator allocator)`: either NULL 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetObjToDesc(
    allocator_desc: *mut c_void,
    allocator: *mut c_void,
) -> AclErrorCode {
    set_field(
        "aclrtAllocatorSetObjToDesc",
        allocator_desc,
        allocator as usize,
        |d| &mut d.obj,
    )
}

/// `aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc
/// allocatorDesc, aclrtAllocatorAllocFunc func)`: either NULL 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetAllocFuncToDesc(
    allocator_desc: *mut c_void,
    func: *mut c_void,
) -> AclErrorCode {
    set_field(
        "aclrtAllocatorSetAllocFuncToDesc",
        allocator_desc,
        func as usize,
        |d| &mut d.alloc,
    )
}

/// `aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc
/// allocatorDesc, aclrtAllocatorFreeFunc func)`: either NULL 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetFreeFuncToDesc(
    allocator_desc: *mut c_void,
    func: *mut c_void,
) -> AclErrorCode {
    set_field(
        "aclrtAllocatorSetFreeFuncToDesc",
        allocator_desc,
        func as usize,
        |d| &mut d.free,
    )
}

/// `aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc
/// allocatorDesc, aclrtAllocatorAllocAdviseFunc func)`: either NULL
/// 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetAllocAdviseFuncToDesc(
    allocator_desc: *mut c_void,
    func: *mut c_void,
) -> AclErrorCode {
    set_field(
        "aclrtAllocatorSetAllocAdviseFuncToDesc",
        allocator_desc,
        func as usize,
        |d| &mut d.alloc_advise,
    )
}

/// `aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc
/// allocatorDesc, aclrtAllocatorGetAddrFromBlockFunc func)`: either NULL
/// 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
    allocator_desc: *mut c_void,
    func: *mut c_void,
) -> AclErrorCode {
    set_field(
        "aclrtAllocatorSetGetAddrFromBlockFuncToDesc",
        allocator_desc,
        func as usize,
        |d| &mut d.get_addr,
    )
}

/// `aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc
/// allocatorDesc)`: stream or descriptor NULL (or no descriptor), the
/// object, the alloc, free or get-address function unset 100000 (the
/// advise function is optional); a copy is registered for the stream,
/// replacing an earlier one.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorRegister(
    stream: aclrtStream,
    allocator_desc: *mut c_void,
) -> AclErrorCode {
    guard("aclrtAllocatorRegister", || {
        shared::in_release("aclrtAllocatorRegister")?;
        if stream.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let mut t = TABLE.lock();
        let d = *t
            .descs
            .get(&(allocator_desc as usize))
            .ok_or(AclError::INVALID_PARAM)?;
        if d.obj == 0 || d.alloc == 0 || d.free == 0 || d.get_addr == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        t.registered
            .insert(stream as usize, (allocator_desc as usize, d));
        Ok(())
    })
}

/// `aclError aclrtAllocatorUnregister(aclrtStream stream)`: stream NULL
/// 100000; a stream without a registration succeeds (documented).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorUnregister(stream: aclrtStream) -> AclErrorCode {
    guard("aclrtAllocatorUnregister", || {
        shared::in_release("aclrtAllocatorUnregister")?;
        if stream.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        TABLE.lock().registered.remove(&(stream as usize));
        Ok(())
    })
}

/// `aclError aclrtAllocatorGetByStream(aclrtStream stream,
/// aclrtAllocatorDesc* allocatorDesc, aclrtAllocator* allocator,
/// aclrtAllocatorAllocFunc* allocFunc, aclrtAllocatorFreeFunc* freeFunc,
/// aclrtAllocatorAllocAdviseFunc* allocAdviseFunc,
/// aclrtAllocatorGetAddrFromBlockFunc* getAddrFromBlockFunc)`: stream or
/// allocatorDesc NULL, a stream without a registration 100000; the
/// registered descriptor, and what was registered into each out pointer
/// that is not NULL.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorGetByStream(
    stream: aclrtStream,
    allocator_desc: *mut *mut c_void,
    allocator: *mut *mut c_void,
    alloc_func: *mut *mut c_void,
    free_func: *mut *mut c_void,
    alloc_advise_func: *mut *mut c_void,
    get_addr_from_block_func: *mut *mut c_void,
) -> AclErrorCode {
    guard("aclrtAllocatorGetByStream", || {
        shared::in_release("aclrtAllocatorGetByStream")?;
        if stream.is_null() || allocator_desc.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let (handle, d) = *TABLE
            .lock()
            .registered
            .get(&(stream as usize))
            .ok_or(AclError::INVALID_PARAM)?;
        let outs = [
            (allocator_desc, handle),
            (allocator, d.obj),
            (alloc_func, d.alloc),
            (free_func, d.free),
            (alloc_advise_func, d.alloc_advise),
            (get_addr_from_block_func, d.get_addr),
        ];
        for (out, value) in outs {
            if !out.is_null() {
                // SAFETY: the C caller's out parameter.
                unsafe { cptr::write(out, value as *mut c_void)? };
            }
        }
        Ok(())
    })
}
