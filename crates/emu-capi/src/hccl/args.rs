//! What every HCCL C function shares: the entry guard (faults, panics),
//! and the marshalling of a caller's pointers into `aclmem_hccl`'s types
//! (buffers, data types, a communicator's config, handles handed out).

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use aclmem_core::AclError;
use aclmem_hccl::comm::{self, Buf};
use aclmem_hccl::connect::CommConfig;
use aclmem_hccl::types::{DataType, Hccl, HcclResult, config};

use crate::{cptr, faults, state};

/// `HcclComm`.
pub type HcclComm = *mut c_void;

/// Runs an entry point: a fault armed for it answers first; a panic is
/// `HCCL_E_INTERNAL`.
pub(crate) fn entry(name: &'static str, f: impl FnOnce() -> Result<(), Hccl>) -> HcclResult {
    catch_unwind(AssertUnwindSafe(|| match faults::check(name) {
        Some(code) => code,
        None => f().map_or_else(Hccl::code, |()| 0),
    }))
    .unwrap_or(Hccl::E_INTERNAL.code())
}

/// A pointer the runtime refused is HCCL's `HCCL_E_PTR`.
pub(crate) fn ptr_err<T>(r: Result<T, AclError>) -> Result<T, Hccl> {
    r.map_err(|_| Hccl::E_PTR)
}

/// `HcclDataType` from its C value.
pub(crate) fn data_type(raw: u32) -> Result<DataType, Hccl> {
    DataType::from_raw(raw)
}

/// `count` elements of `dt` at `addr`.
pub(crate) fn buf(addr: *const c_void, count: u64, dt: DataType) -> Result<Buf, Hccl> {
    let len = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(dt.size()))
        .ok_or(Hccl::E_PARA)?;
    if addr.is_null() && len > 0 {
        return Err(Hccl::E_PTR);
    }
    Ok(Buf {
        addr: addr as usize,
        len,
    })
}

/// Reads an `HcclCommConfig` (NULL: none); see [`CommConfig::declared_len`].
pub(crate) fn read_config(p: *const c_void) -> Result<CommConfig, Hccl> {
    if p.is_null() {
        return Ok(CommConfig::default());
    }
    // SAFETY: plain bytes; cptr checks the address.
    let head: [u8; 16] = ptr_err(unsafe { cptr::read(p.cast::<[u8; 16]>()) })?;
    let n = CommConfig::declared_len(&head)?;
    // SAFETY: as above, `n` bytes the config declares.
    let bytes = ptr_err(unsafe {
        cptr::read_array(p.cast::<u8>(), n, config::READ, AclError::INVALID_PARAM)
    })?;
    Ok(CommConfig::parse(&bytes))
}

/// The calling thread must be on a device, as HCCL's calls are.
pub(crate) fn on_device() -> Result<(), Hccl> {
    state::with_global(|g| g.emu.current_device())
        .map(|_| ())
        .map_err(|_| Hccl::E_RUNTIME)
}

/// Registers `made` and writes its handle to the caller's `comm`; a bad
/// `comm` destroys it again.
pub(crate) fn hand_out(comm: *mut HcclComm, made: aclmem_hccl::comm::Comm) -> Result<(), Hccl> {
    let handle = comm::register(made);
    // SAFETY: the caller's out parameter, checked by cptr; a bad one
    // destroys what was made.
    ptr_err(unsafe {
        cptr::hand_out(comm.cast::<usize>(), handle, || {
            let _ = comm::destroy(handle);
        })
    })
}
