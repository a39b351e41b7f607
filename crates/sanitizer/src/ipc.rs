//! Sharing: pid whitelists and legacy IPC keys.

use std::ffi::{c_char, c_void};

use aclmem_core::AclError;
use aclmem_formats::sharing::Kind;
use aclmem_sys as sys;

use crate::report::{Class, Finding, Site, report};
use crate::underneath::{api_error, forward};
use crate::{cmem, sharing, trace};

/// A pid whitelist set on `id` (answered `r`): a sharing event.
pub(crate) fn whitelisted(
    call: &'static str,
    id: String,
    pid: *const i32,
    num: usize,
    r: sys::aclError,
) {
    let site = Site::outside();
    api_error(call, r, site);
    sharing::event(Kind::SetPid, call, Some(site), |e| {
        e.id = Some(id);
        e.pids = sharing::pids(pid, num).into_iter().map(i64::from).collect();
        e.ret = Some(i64::from(r));
    });
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandle(
    shareable: u64,
    pid: *mut i32,
    num: usize,
) -> sys::aclError {
    let r = forward!(aclrtMemSetPidToShareableHandle(shareable, pid, num));
    whitelisted(
        "aclrtMemSetPidToShareableHandle",
        sharing::shareable(shareable),
        pid,
        num,
        r,
    );
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandleV2(
    shareable: *mut c_void,
    share_type: sys::aclrtMemSharedHandleType,
    pid: *mut i32,
    num: usize,
) -> sys::aclError {
    let r = forward!(aclrtMemSetPidToShareableHandleV2(
        shareable, share_type, pid, num
    ));
    if share_type == sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT
        // SAFETY: a DEFAULT shareable handle is a `uint64_t`, read through
        // the kernel.
        && let Some(id) = unsafe { cmem::read(shareable.cast::<u64>().cast_const()) }
    {
        whitelisted(
            "aclrtMemSetPidToShareableHandleV2",
            sharing::shareable(id),
            pid,
            num,
            r,
        );
    } else {
        api_error("aclrtMemSetPidToShareableHandleV2", r, Site::outside());
    }
    r
}

/// The text of a legacy IPC key a program passed (at most the 65 bytes the
/// runtime fixes, up to its NUL), read through the kernel.
pub(crate) fn key_text(key: *const c_char) -> Option<String> {
    if key.is_null() {
        return None;
    }
    let mut buf = [0u8; 65];
    // Read what is readable of the 65 bytes: a short key may end near the
    // end of a page.
    let mut n = buf.len();
    while n > 0 && !cmem::read_bytes(key as usize, &mut buf[..n]) {
        n /= 2;
    }
    let end = buf[..n].iter().position(|&b| b == 0)?;
    Some(format!("key:{}", String::from_utf8_lossy(&buf[..end])))
}

/// `ipc-key-on-vmm`, then the call; a key made is a sharing event.
///
/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemGetExportKey(
    dev_ptr: *mut c_void,
    size: usize,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> sys::aclError {
    let vmm = crate::model::mapping_containing(dev_ptr as usize);
    let site = Site::outside();
    if let Some((start, h, made)) = vmm {
        report(Finding {
            class: Class::IpcKeyOnVmm,
            call: "aclrtIpcMemGetExportKey",
            args: format!("{:#x}, {size:#x}", dev_ptr as usize),
            message: format!(
                "legacy IPC keys share aclrtMalloc memory; this address is in the mapping of \
                 physical handle {h:#x} at {start:#x} (made at {}): share the handle with \
                 aclrtMemExportToShareableHandle",
                made.describe()
            ),
            code: Some(AclError::RT_PARAM_INVALID.code()),
            site,
        });
    }
    let r = forward!(aclrtIpcMemGetExportKey(dev_ptr, size, key, len, flags));
    api_error("aclrtIpcMemGetExportKey", r, site);
    if r == 0
        && let Some(id) = key_text(key)
    {
        trace::call_with("aclrtIpcMemGetExportKey", None, size, r, |t| {
            t.va = Some(dev_ptr as u64);
            t.share = Some(id.as_str().into());
        });
        sharing::event(Kind::Export, "aclrtIpcMemGetExportKey", Some(site), |e| {
            e.id = Some(id.clone());
            e.va = Some(dev_ptr as u64);
        });
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemSetImportPid(
    key: *const c_char,
    pid: *mut i32,
    num: usize,
) -> sys::aclError {
    let r = forward!(aclrtIpcMemSetImportPid(key, pid, num));
    match key_text(key) {
        Some(id) => whitelisted("aclrtIpcMemSetImportPid", id, pid, num, r),
        None => api_error("aclrtIpcMemSetImportPid", r, Site::outside()),
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemClose(key: *const c_char) -> sys::aclError {
    forward!(aclrtIpcMemClose(key))
}
