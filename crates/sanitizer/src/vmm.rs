//! The hooks of the physical-memory API: physical handles, reservations, mappings, exports and imports.

use std::cell::Cell;
use std::ffi::c_void;

use aclmem_core::Location;
use aclmem_formats::sharing::Kind;
use aclmem_sys as sys;

use crate::checks::check_rules;
use crate::hooks::{Traced, hook, traced};
use crate::model::{self, Locked};
use crate::platform::{DEVICE, model as rest};
use crate::report::{Caller, Class, Finding, Site, report};
use crate::underneath::out_of_memory;
use crate::{cmem, sharing, trace};

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMallocPhysical(
    caller: Caller,
    handle: *mut sys::aclrtDrvMemHandle,
    size: usize,
    prop: *const sys::aclrtPhysicalMemProp,
    flags: u64,
) -> sys::aclError {
    hook! {
        aclrtMallocPhysical(handle, size, prop, flags) at Site::made_at(caller);
        check |site| {
            // SAFETY: the prop is plain C data, read through the kernel: an
            // address the process may not read is left to the library to
            // refuse.
            let copy = unsafe { cmem::read(prop) };
            if let Some(p) = &copy {
                check_rules(p, size, site);
            }
            copy
        };
        done |r, copy, site| {
            if let Some(p) = &copy
                && p.location.type_ == Location::Device.raw()
            {
                out_of_memory("aclrtMallocPhysical", r, size, Some(p.location.id), site);
            }
            let mut totals = None;
            let mut made = None;
            if r == 0
                && let Some(p) = copy
                // SAFETY: a handle is plain data; the kernel checks the
                // address.
                && let Some(h) = unsafe { cmem::read(handle) }
            {
                let device = (p.location.type_ == Location::Device.raw()).then_some(p.location.id);
                totals = Some(model::handle_made(h as usize, size, device, site, true));
                made = Some(h as usize);
            }
            traced(totals, size, move |t| {
                t.h = made.map(|h| h as u64);
                t.attr = copy.map(|p| p.mem_attr);
                t.loc = copy.map(|p| p.location.type_);
                t.id = copy.map(|p| p.location.id);
                t.site = Some(trace::site_id(site));
            })
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtFreePhysical(
    caller: Caller,
    handle: sys::aclrtDrvMemHandle,
) -> sys::aclError {
    hook! {
        aclrtFreePhysical(handle) at Site::called(caller);
        locked |m| = Locked::handle(handle as usize);
        check |site| {
            m.check_free(handle as usize, site);
            m.shared(handle as usize)
        };
        done |r, shared, site| {
            let mut totals = None;
            if r == 0
                && let Some((id, imported)) = shared
            {
                sharing::event(Kind::Free, "aclrtFreePhysical", Some(site), |e| {
                    e.id = Some(id);
                    e.h = Some(handle as u64);
                    e.imported = Some(imported);
                });
            }
            if r == 0 {
                totals = Some(m.handle_freed(handle as usize));
            }
            traced(totals, 0, move |t| {
                t.h = Some(handle as u64);
                // The release's own site and stack, for the viewers' free
                // events.
                t.site = Some(trace::site_id(site.with_stack()));
            })
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtReserveMemAddress(
    caller: Caller,
    vir_ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expect_ptr: *mut c_void,
    flags: u64,
) -> sys::aclError {
    hook! {
        aclrtReserveMemAddress(vir_ptr, size, alignment, expect_ptr, flags)
            at Site::made_at(caller);
        check |_site| ();
        done |r, (), site| {
            let mut made = None;
            if r == 0
                // SAFETY: a pointer is plain data; the kernel checks the
                // address.
                && let Some(va) = unsafe { cmem::read(vir_ptr) }
            {
                model::resv_made(va as usize, size, site);
                made = Some(va as usize);
            }
            traced(None, size, move |t| {
                t.va = made.map(|va| va as u64);
                t.align = Some(alignment as u64);
                t.flags = Some(flags);
                t.site = Some(trace::site_id(site));
            })
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtReleaseMemAddress(
    caller: Caller,
    vir_ptr: *mut c_void,
) -> sys::aclError {
    hook! {
        aclrtReleaseMemAddress(vir_ptr) at Site::called(caller);
        locked |m| = Locked::release(vir_ptr as usize);
        check |site| m.check_release(vir_ptr as usize, site);
        done |r, (), site| {
            if r == 0 {
                m.resv_released(vir_ptr as usize);
            }
            traced(None, 0, move |t| {
                t.va = Some(vir_ptr as u64);
                // The release's own site and stack, for the viewers' free
                // events.
                t.site = Some(trace::site_id(site.with_stack()));
            })
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMapMem(
    caller: Caller,
    vir_ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: sys::aclrtDrvMemHandle,
    flags: u64,
) -> sys::aclError {
    hook! {
        aclrtMapMem(vir_ptr, size, offset, handle, flags) at Site::made_at(caller);
        locked |m| = Locked::map(vir_ptr as usize, size, handle as usize);
        check |site| m.check_map(vir_ptr as usize, size, handle as usize, site);
        done |r, (), site| {
            // The mapping, and whether it maps an import (a sharing event).
            let (totals, shared) = if r == 0 {
                let totals = m.mapped(vir_ptr as usize, size, handle as usize, site);
                let shared = m.imported_mapping(handle as usize);
                (Some(totals), shared)
            } else {
                (None, None)
            };
            if let Some(id) = shared {
                sharing::event(Kind::Map, "aclrtMapMem", Some(site), |e| {
                    e.id = Some(id);
                    e.h = Some(handle as u64);
                    e.va = Some(vir_ptr as u64);
                    e.size = Some(size as u64);
                });
            }
            traced(totals, size, move |t| {
                t.va = Some(vir_ptr as u64);
                t.h = Some(handle as u64);
                t.site = Some(trace::site_id(site));
            })
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtUnmapMem(
    caller: Caller,
    vir_ptr: *mut c_void,
) -> sys::aclError {
    hook! {
        aclrtUnmapMem(vir_ptr) at Site::called(caller);
        locked |m| = Locked::unmap(vir_ptr as usize);
        check |site| {
            m.check_unmap(vir_ptr as usize, site).and_then(|(size, shared)| {
                crate::hccl::check_release("aclrtUnmapMem", vir_ptr as usize, size, || site);
                crate::mstx::check_release("aclrtUnmapMem", vir_ptr as usize, size, || site);
                crate::graphs::check_release("aclrtUnmapMem", vir_ptr as usize, size, || site);
                shared
            })
        };
        done |r, shared, site| {
            if r == 0
                && let Some(id) = shared
            {
                sharing::event(Kind::Unmap, "aclrtUnmapMem", Some(site), |e| {
                    e.id = Some(id);
                    e.va = Some(vir_ptr as u64);
                });
            }
            let totals = if r == 0 {
                m.unmapped(vir_ptr as usize)
            } else {
                None
            };
            traced(totals, 0, move |t| {
                t.va = Some(vir_ptr as u64);
                // The release's own site and stack, for the viewers' free
                // events.
                t.site = Some(trace::site_id(site.with_stack()));
            })
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMemExportToShareableHandle(
    caller: Caller,
    handle: sys::aclrtDrvMemHandle,
    handle_type: sys::aclrtMemHandleType,
    flags: u64,
    shareable_handle: *mut u64,
) -> sys::aclError {
    hook! {
        aclrtMemExportToShareableHandle(handle, handle_type, flags, shareable_handle)
            at Site::made_at(caller);
        check |site| model::check_live("aclrtMemExportToShareableHandle", handle as usize, site);
        done |r, (), site| {
            if r == 0
                // SAFETY: a `uint64_t`; the kernel checks the address.
                && let Some(id) = unsafe { cmem::read(shareable_handle) }
            {
                exported("aclrtMemExportToShareableHandle", handle as usize, id, site);
            }
            Traced::NOT
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMemExportToShareableHandleV2(
    caller: Caller,
    handle: sys::aclrtDrvMemHandle,
    flags: u64,
    share_type: sys::aclrtMemSharedHandleType,
    shareable_handle: *mut c_void,
) -> sys::aclError {
    hook! {
        aclrtMemExportToShareableHandleV2(handle, flags, share_type, shareable_handle)
            at Site::made_at(caller);
        check |site| {
            model::check_live("aclrtMemExportToShareableHandleV2", handle as usize, site)
        };
        done |r, (), site| {
            if r == 0
                && share_type == sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT
                // SAFETY: a DEFAULT handle is a `uint64_t`; the kernel
                // checks the address.
                && let Some(id) = unsafe { cmem::read(shareable_handle.cast::<u64>().cast_const()) }
            {
                exported("aclrtMemExportToShareableHandleV2", handle as usize, id, site);
            }
            Traced::NOT
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMemImportFromShareableHandle(
    caller: Caller,
    shareable_handle: u64,
    device_id: i32,
    handle: *mut sys::aclrtDrvMemHandle,
) -> sys::aclError {
    hook! {
        aclrtMemImportFromShareableHandle(shareable_handle, device_id, handle)
            at Site::made_at(caller);
        check |site| {
            rest().check_import("aclrtMemImportFromShareableHandle", shareable_handle, site);
            check_import_device(shareable_handle, device_id, site);
        };
        done |r, (), site| {
            let made = if r == 0 {
                // SAFETY: a handle is plain data; the kernel checks the
                // address.
                unsafe { cmem::read(handle) }
            } else {
                None
            };
            imported(
                "aclrtMemImportFromShareableHandle",
                shareable_handle,
                r,
                made,
                u32::try_from(device_id).ok(),
                site,
            );
            Traced::NOT
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMemImportFromShareableHandleV2(
    caller: Caller,
    shareable_handle: *mut c_void,
    share_type: sys::aclrtMemSharedHandleType,
    flags: u64,
    handle: *mut sys::aclrtDrvMemHandle,
) -> sys::aclError {
    hook! {
        aclrtMemImportFromShareableHandleV2(shareable_handle, share_type, flags, handle)
            at Site::made_at(caller);
        check |site| {
            let id = if share_type == sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT {
                // SAFETY: a DEFAULT shareable handle is a `uint64_t` the
                // caller passes, read through the kernel: an address the
                // process may not read is left to the library to refuse.
                unsafe { cmem::read(shareable_handle.cast::<u64>().cast_const()) }
            } else {
                None
            };
            if let Some(id) = id {
                rest().check_import("aclrtMemImportFromShareableHandleV2", id, site);
            }
            id
        };
        done |r, id, site| {
            let made = if r == 0 {
                // SAFETY: a handle is plain data; the kernel checks the
                // address.
                unsafe { cmem::read(handle) }
            } else {
                None
            };
            match id {
                Some(id) => imported(
                    "aclrtMemImportFromShareableHandleV2",
                    id,
                    r,
                    made,
                    DEVICE.with(Cell::get),
                    site,
                ),
                // A FABRIC handle: no shareable id to join processes by.
                None => {
                    if let Some(h) = made {
                        model::handle_made(h as usize, 0, DEVICE.with(Cell::get), site, false);
                    }
                }
            }
            Traced::NOT
        };
    }
}

/// # Safety
/// The C prototype's contract.
pub(crate) unsafe extern "C" fn aclmem_san_aclrtMemRetainAllocationHandle(
    caller: Caller,
    vir_ptr: *mut c_void,
    handle: *mut sys::aclrtDrvMemHandle,
) -> sys::aclError {
    hook! {
        aclrtMemRetainAllocationHandle(vir_ptr, handle) at Site::made_at(caller);
        check |_site| ();
        done |r, (), site| {
            if r == 0
                // SAFETY: a handle is plain data; the kernel checks the
                // address.
                && let Some(h) = unsafe { cmem::read(handle) }
            {
                model::handle_made(h as usize, 0, DEVICE.with(Cell::get), site, false);
            }
            Traced::NOT
        };
    }
}

/// After a successful export of `h` as `id`: the model and the sharing
/// event.
pub(crate) fn exported(call: &'static str, h: usize, id: u64, site: Site) {
    // Whether a framework's caching allocator made the handle (its exporter
    // keeping it to the end is that cache, not a leak).
    model::exported(h, id, site);
    let cache = model::handle_site(h)
        .and_then(|s| s.framework_allocator())
        .is_some();
    // In the timeline: the start of an arrow to each import.
    trace::call_with(call, None, 0, 0, |t| {
        t.h = Some(h as u64);
        t.share = Some(sharing::shareable(id).into());
        t.site = Some(trace::site_id(site));
    });
    sharing::event(Kind::Export, call, Some(site), |e| {
        e.id = Some(sharing::shareable(id));
        e.h = Some(h as u64);
        e.cache = cache;
    });
}

/// After an import of `id` answered `r` (`made`: the handle it made): the
/// model, and the sharing event whatever the answer (an import refused
/// because the exporter freed is a finding of the run).
pub(crate) fn imported(
    call: &'static str,
    id: u64,
    r: sys::aclError,
    made: Option<sys::aclrtDrvMemHandle>,
    device: Option<u32>,
    site: Site,
) {
    if let Some(h) = made {
        // The size is the exporter's; imports do not count as this
        // process's physical memory in the timeline.
        model::handle_made(h as usize, 0, device, site, false);
        model::imported(h as usize, id);
    }
    trace::call_with(call, None, 0, r, |t| {
        t.h = made.map(|h| h as u64);
        t.share = Some(sharing::shareable(id).into());
        t.site = Some(trace::site_id(site));
    });
    sharing::event(Kind::Import, call, Some(site), |e| {
        e.id = Some(sharing::shareable(id));
        e.ret = Some(i64::from(r));
        e.h = made.map(|h| h as u64);
    });
}

/// The constants a program might pass where `aclrtMemImportFromShareableHandle`
/// takes its device id: the handle types and shared-handle types, by value.
pub(crate) const HANDLE_TYPE_VALUES: &[(i32, &str)] = &[
    (
        sys::ACL_MEM_HANDLE_TYPE_NONE as i32,
        "ACL_MEM_HANDLE_TYPE_NONE",
    ),
    (
        sys::ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT as i32,
        "ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT",
    ),
    (
        sys::ACL_MEM_HANDLE_TYPE_POSIX as i32,
        "ACL_MEM_HANDLE_TYPE_POSIX",
    ),
    (
        sys::ACL_MEM_SHARE_HANDLE_TYPE_FABRIC as i32,
        "ACL_MEM_SHARE_HANDLE_TYPE_FABRIC",
    ),
];

/// `handle-type-as-device`: the device id of a V1 import is not the
/// calling thread's device but is a handle type's value. The runtime takes
/// any device of the machine (the import lands on it, and mapping it where
/// the thread's memory is fails or crosses devices), so nothing refuses it.
pub(crate) fn check_import_device(id: u64, device_id: i32, site: Site) {
    let Some(current) = DEVICE.with(Cell::get) else {
        return;
    };
    if u32::try_from(device_id).ok() == Some(current) {
        return;
    }
    let names: Vec<&str> = HANDLE_TYPE_VALUES
        .iter()
        .filter(|(v, _)| *v == device_id)
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        return;
    }
    report(Finding {
        class: Class::HandleTypeAsDevice,
        call: "aclrtMemImportFromShareableHandle",
        args: format!("{id:#x}, {device_id}"),
        message: format!(
            "the device id {device_id} is not this thread's device ({current}) but the value of {}: \
             a handle type passed where the device id belongs imports onto device {device_id}",
            names.join(" and ")
        ),
        code: None,
        site,
    });
}

/// What an `aclrtMalloc`/`aclrtMallocAlign32` that answered `r` changed:
/// an out-of-memory report, the block in the model; its trace record.
pub(crate) fn device_malloc_done(
    name: &'static str,
    r: sys::aclError,
    dev_ptr: *mut *mut c_void,
    size: usize,
    site: Site,
) -> Traced<impl FnOnce(&mut aclmem_formats::trace::Record<'static>)> {
    out_of_memory(name, r, size, DEVICE.with(Cell::get), site);
    let mut totals = None;
    let mut made = None;
    if r == 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(p) = unsafe { cmem::read(dev_ptr) }
    {
        totals = Some(model::device_alloc(
            p as usize,
            size,
            DEVICE.with(Cell::get),
            site,
        ));
        made = Some(p as usize);
    }
    traced(totals, size, move |t| {
        t.va = made.map(|va| va as u64);
        t.site = Some(trace::site_id(site));
    })
}
