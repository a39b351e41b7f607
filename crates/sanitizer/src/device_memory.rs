//! The hooks of `aclrtMalloc` and host memory, copies, fills and legacy IPC imports.

use std::ffi::{c_char, c_void};

use aclmem_formats::sharing::Kind;
use aclmem_sys as sys;

use crate::hooks::{Traced, hook, traced};
use crate::ipc::key_text;
use crate::platform::model;
use crate::report::{Caller, Site};
use crate::underneath::{api_error, forward, next};
use crate::vmm::device_malloc_done;
use crate::{cmem, sharing, trace};

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMalloc(
    caller: Caller,
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
) -> sys::aclError {
    hook! {
        aclrtMalloc(dev_ptr, size, policy) at Site::made_at(caller);
        check |_site| ();
        done |r, (), site| device_malloc_done("aclrtMalloc", r, dev_ptr, size, site);
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMallocAlign32(
    caller: Caller,
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
) -> sys::aclError {
    hook! {
        aclrtMallocAlign32(dev_ptr, size, policy) at Site::made_at(caller);
        check |_site| ();
        done |r, (), site| device_malloc_done("aclrtMallocAlign32", r, dev_ptr, size, site);
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFree(dev_ptr: *mut c_void) -> sys::aclError {
    // The block's shards, held across the call (see `Freeing`).
    let freeing = crate::model::Freeing::lock(dev_ptr as usize);
    if let Some(size) = freeing.size() {
        crate::hccl::check_release("aclrtFree", dev_ptr as usize, size, Site::outside);
        crate::mstx::check_release("aclrtFree", dev_ptr as usize, size, Site::outside);
        crate::graphs::check_release("aclrtFree", dev_ptr as usize, size, Site::outside);
    }
    let r = forward!(aclrtFree(dev_ptr));
    let totals = if r == 0 {
        crate::pools::freed(dev_ptr as usize);
        freeing.freed()
    } else {
        drop(freeing);
        None
    };
    trace::call_with("aclrtFree", totals, 0, r, |t| {
        t.va = Some(dev_ptr as u64);
        // Only when tracing: it unwinds.
        t.site = Some(trace::site_id(Site::outside().with_stack()));
    });
    r
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMallocHost(
    caller: Caller,
    host_ptr: *mut *mut c_void,
    size: usize,
) -> sys::aclError {
    hook! {
        aclrtMallocHost(host_ptr, size) at Site::made_at(caller);
        check |_site| ();
        done |r, (), site| {
            if r == 0
                // SAFETY: a pointer is plain data; the kernel checks the
                // address.
                && let Some(p) = unsafe { cmem::read(host_ptr) }
            {
                model().host_alloc(p as usize, size, site);
            }
            Traced::NOT
        };
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreeHost(host_ptr: *mut c_void) -> sys::aclError {
    // Held across the call, as an `aclrtFree`'s shards (`model::Freeing`).
    let mut m = model();
    if let Some(size) = m.host_alloc_size(host_ptr as usize) {
        crate::graphs::check_release("aclrtFreeHost", host_ptr as usize, size, Site::outside);
    }
    let r = forward!(aclrtFreeHost(host_ptr));
    if r == 0 {
        m.host_freed(host_ptr as usize);
    }
    r
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMemcpy(
    caller: Caller,
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: sys::aclrtMemcpyKind,
) -> sys::aclError {
    hook! {
        aclrtMemcpy(dst, dest_max, src, count, kind) at Site::called(caller);
        check |site| check_copy("aclrtMemcpy", dst as usize, src as usize, count, Some(kind), None, site);
        done |_, (), _| traced(None, count, |_| {});
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMemcpyAsync(
    caller: Caller,
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: sys::aclrtMemcpyKind,
    stream: sys::aclrtStream,
) -> sys::aclError {
    hook! {
        aclrtMemcpyAsync(dst, dest_max, src, count, kind, stream) at Site::called(caller);
        check |site| {
            check_copy(
                "aclrtMemcpyAsync",
                dst as usize,
                src as usize,
                count,
                Some(kind),
                Some(stream as usize),
                site,
            )
        };
        done |r, (), _| {
            if r == 0 {
                crate::graphs::captured(stream, &[(dst as usize, count), (src as usize, count)]);
            }
            traced(None, count, |_| {})
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMemset(
    caller: Caller,
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
) -> sys::aclError {
    hook! {
        aclrtMemset(dev_ptr, max_count, value, count) at Site::called(caller);
        check |site| {
            check_copy("aclrtMemset", dev_ptr as usize, 0, count.min(max_count), None, None, site)
        };
        done |_, (), _| Traced::NOT;
    }
}

/// The checks of a copy or fill of `count` bytes (`src` 0 for a fill),
/// enqueued on `stream` if it is asynchronous: both ranges against the
/// model, and against the pools mstx described.
fn check_copy(
    call: &'static str,
    dst: usize,
    src: usize,
    count: usize,
    kind: Option<sys::aclrtMemcpyKind>,
    stream: Option<usize>,
    site: Site,
) {
    // Pool blocks and managed memory are `pools`' (the model does not hold
    // them): a copy that touches one is checked there, both sides.
    let pooled = crate::pools::check_access(call, dst, count, stream, site)
        | (src != 0 && crate::pools::check_access(call, src, count, stream, site));
    if !pooled {
        crate::model::check_copy(call, dst, src, count, kind, site);
    }
    crate::mstx::check_access(call, dst, count, site);
    if src != 0 {
        crate::mstx::check_access(call, src, count, site);
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemImportByKey(
    dev_ptr: *mut *mut c_void,
    key: *const c_char,
    flags: u64,
) -> sys::aclError {
    let r = forward!(aclrtIpcMemImportByKey(dev_ptr, key, flags));
    let site = Site::outside();
    api_error("aclrtIpcMemImportByKey", r, site);
    if let Some(id) = key_text(key) {
        trace::call_with("aclrtIpcMemImportByKey", None, 0, r, |t| {
            t.share = Some(id.as_str().into())
        });
        sharing::event(Kind::Import, "aclrtIpcMemImportByKey", Some(site), |e| {
            e.id = Some(id.clone());
            e.ret = Some(i64::from(r));
        });
    }
    if r == 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(p) = unsafe { cmem::read(dev_ptr) }
        && let Some(range) = next().aclrtMemGetAddressRange
    {
        let (mut base, mut size) = (std::ptr::null_mut(), 0usize);
        // SAFETY: the library's documented prototype; live locals.
        if unsafe { range(p, &mut base, &mut size) } == 0 {
            model().foreign_range(base as usize, size);
        }
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetSocName() -> *const c_char {
    match next().aclrtGetSocName {
        // SAFETY: forwarded unchanged.
        Some(f) => unsafe { f() },
        None => std::ptr::null(),
    }
}
