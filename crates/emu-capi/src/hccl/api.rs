//! HCCL's C functions (`hccl.h`, `hccl_comm.h`) that ask and set what a
//! communicator holds: its rank and size, name, errors, configuration,
//! suspension and registered memory. The ones that make communicators are
//! in `init`, the operations in `collectives` and `group`. Every one
//! answers an `HcclResult` (or its documented value) and never unwinds into
//! C; a NULL or unreadable pointer is `HCCL_E_PTR`, a handle that is not a
//! live communicator `HCCL_E_PARA`.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicI32, Ordering};

use aclmem_hccl::comm::{self, Buf};
use aclmem_hccl::types::{Hccl, HcclResult, config};

use super::args::{HcclComm, entry, ptr_err};
use crate::cptr;

/// `HcclResult HcclCommDestroy(HcclComm comm)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDestroy(comm: HcclComm) -> HcclResult {
    entry("HcclCommDestroy", || comm::destroy(comm as usize))
}

/// `HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankSize(comm: HcclComm, rank_size: *mut u32) -> HcclResult {
    entry("HcclGetRankSize", || {
        let c = comm::lookup(comm as usize)?;
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(rank_size, c.size) })
    })
}

/// `HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankId(comm: HcclComm, rank: *mut u32) -> HcclResult {
    entry("HcclGetRankId", || {
        let c = comm::lookup(comm as usize)?;
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(rank, c.rank) })
    })
}

/// `HcclResult HcclGetCommName(HcclComm comm, char *commName)`: the
/// config's name, else the root info's identifier; at most 127 bytes and a
/// NUL (torch_npu's buffer is 128).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommName(comm: HcclComm, name: *mut c_char) -> HcclResult {
    entry("HcclGetCommName", || {
        let c = comm::lookup(comm as usize)?;
        if name.is_null() {
            return Err(Hccl::E_PTR);
        }
        let mut text = c.name.clone();
        while text.len() > 127 {
            text.pop();
        }
        // SAFETY: the caller's buffer of 128 bytes, checked by cptr.
        ptr_err(unsafe { cptr::write_cstr(name, 128, &text) })
    })
}

/// `HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult
/// *asyncError)`: the error that broke the communicator (a peer lost:
/// `HCCL_E_TCP_TRANSFER`; a timeout: `HCCL_E_TIMEOUT`), else 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommAsyncError(
    comm: HcclComm,
    error: *mut HcclResult,
) -> HcclResult {
    entry("HcclGetCommAsyncError", || {
        let c = comm::lookup(comm as usize)?;
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(error, c.async_error()) })
    })
}

/// `const char *HcclGetErrorString(HcclResult code)`: never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn HcclGetErrorString(code: HcclResult) -> *const c_char {
    Hccl::text_of(code).as_ptr().cast()
}

/// `uint32_t HcclGetCommConfigCapability(void)`.
#[unsafe(no_mangle)]
pub extern "C" fn HcclGetCommConfigCapability() -> u32 {
    config::CAPABILITY
}

/// `HCCL_DETERMINISTIC`'s value, as set.
static DETERMINISTIC: AtomicI32 = AtomicI32::new(0);

/// `HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue value)`:
/// `HCCL_DETERMINISTIC` (0) takes 0 or 1 (the emulator's reductions are
/// deterministic either way); anything else is `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub extern "C" fn HcclSetConfig(config: u32, value: i32) -> HcclResult {
    entry("HcclSetConfig", || match (config, value) {
        (0, 0 | 1) => {
            DETERMINISTIC.store(value, Ordering::Release);
            Ok(())
        }
        _ => Err(Hccl::E_PARA),
    })
}

/// `HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *value)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetConfig(config: u32, value: *mut i32) -> HcclResult {
    entry("HcclGetConfig", || {
        if config != 0 {
            return Err(Hccl::E_PARA);
        }
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(value, DETERMINISTIC.load(Ordering::Acquire)) })
    })
}

/// `HcclResult HcclCommSuspend(HcclComm comm)`: operations answer
/// `HCCL_E_SUSPENDING` until resumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSuspend(comm: HcclComm) -> HcclResult {
    entry("HcclCommSuspend", || {
        comm::lookup(comm as usize)?.suspend(true);
        Ok(())
    })
}

/// `HcclResult HcclCommResume(HcclComm comm)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommResume(comm: HcclComm) -> HcclResult {
    entry("HcclCommResume", || {
        comm::lookup(comm as usize)?.suspend(false);
        Ok(())
    })
}

/// `HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr,
/// size_t size, size_t alignment, uint64_t flags)`: recorded; a range
/// overlapping one already set is `HCCL_E_PARA` (HCCL's rule).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSetMemoryRange(
    comm: HcclComm,
    base: *mut c_void,
    size: usize,
    _alignment: usize,
    _flags: u64,
) -> HcclResult {
    entry("HcclCommSetMemoryRange", || {
        let c = comm::lookup(comm as usize)?;
        if base.is_null() {
            return Err(Hccl::E_PTR);
        }
        let new = Buf {
            addr: base as usize,
            len: size,
        };
        if size == 0 || new.addr.checked_add(size).is_none() {
            return Err(Hccl::E_PARA);
        }
        let mut r = c.ranges.lock();
        let overlaps = |&(a, l): &(usize, usize)| a < new.addr + size && new.addr < a + l;
        if r.set.iter().any(overlaps) {
            return Err(Hccl::E_PARA);
        }
        r.set.push((new.addr, size));
        Ok(())
    })
}

/// `HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void
/// *baseVirPtr)`: a base never set is `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommUnsetMemoryRange(comm: HcclComm, base: *mut c_void) -> HcclResult {
    entry("HcclCommUnsetMemoryRange", || {
        let c = comm::lookup(comm as usize)?;
        let mut r = c.ranges.lock();
        let at = r
            .set
            .iter()
            .position(|(a, _)| *a == base as usize)
            .ok_or(Hccl::E_PARA)?;
        r.set.swap_remove(at);
        Ok(())
    })
}

/// `HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr,
/// size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)`:
/// recorded. It is not checked against the set ranges: torch_npu sets its
/// ranges with the address of its own parameter (`docs/hccl.md`), which
/// HCCL evidently accepts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommActivateCommMemory(
    comm: HcclComm,
    ptr: *mut c_void,
    size: usize,
    _offset: usize,
    _handle: *mut c_void,
    _flags: u64,
) -> HcclResult {
    entry("HcclCommActivateCommMemory", || {
        let c = comm::lookup(comm as usize)?;
        if ptr.is_null() {
            return Err(Hccl::E_PTR);
        }
        if size == 0 {
            return Err(Hccl::E_PARA);
        }
        c.ranges.lock().active.push((ptr as usize, size));
        Ok(())
    })
}

/// `HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr)`:
/// memory never activated is `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDeactivateCommMemory(
    comm: HcclComm,
    ptr: *mut c_void,
) -> HcclResult {
    entry("HcclCommDeactivateCommMemory", || {
        let c = comm::lookup(comm as usize)?;
        let mut r = c.ranges.lock();
        let at = r
            .active
            .iter()
            .position(|(a, _)| *a == ptr as usize)
            .ok_or(Hccl::E_PARA)?;
        r.active.swap_remove(at);
        Ok(())
    })
}
