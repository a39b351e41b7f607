//! The hooks of initialisation, devices and contexts: where the sanitizer
//! starts (exit and fork handlers, the crash record), reports leaks at
//! `aclFinalize`, and follows the thread's device.

use std::ffi::c_char;

use aclmem_sys as sys;

use crate::checks::{at_exit_registered, initialised, note_ops_mode};
use crate::platform::{DEVICE, contexts, fork_handlers_registered};
use crate::report::Site;
use crate::underneath::forward;
use crate::{cmem, sharing, trace};

/// # Safety
/// The C prototype's contract: `handle` and `prop` as `aclrtMallocPhysical`
/// takes them (the library underneath checks them).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(config_path: *const c_char) -> sys::aclError {
    crate::platform::settled();
    at_exit_registered();
    initialised();
    crate::postmortem::install();
    let r = forward!(aclInit(config_path));
    // After the library's aclInit, which installs the library's handlers:
    // prepare handlers run the last installed first, so the model is taken
    // before the library's state, the order every hook takes them in.
    fork_handlers_registered();
    trace::call("aclInit", None, 0, r);
    if r == 0 {
        note_ops_mode();
        sharing::started(None);
        // Made now, while the program is likely one thread, rather than by
        // the first of its threads to call: a fork while one thread makes
        // a setting would leave the child waiting for it.
        crate::platform::settled();
        let _ = crate::platform::platform();
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalize() -> sys::aclError {
    // A framework that finalizes the runtime itself (torch_npu, at the
    // interpreter's exit) does so while the program's objects still hold
    // their memory.
    let by = Site::outside().framework_allocator();
    crate::model::report_leaks("aclFinalize", by);
    let r = forward!(aclFinalize());
    trace::call("aclFinalize", None, 0, r);
    trace::flush();
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetDevice(device_id: i32) -> sys::aclError {
    let r = forward!(aclrtSetDevice(device_id));
    if r == 0 {
        DEVICE.with(|d| d.set(u32::try_from(device_id).ok()));
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateContext(
    context: *mut sys::aclrtContext,
    device_id: i32,
) -> sys::aclError {
    let r = forward!(aclrtCreateContext(context, device_id));
    if r == 0 {
        let dev = u32::try_from(device_id).ok();
        DEVICE.with(|d| d.set(dev));
        // SAFETY: a pointer is plain data; the kernel checks the address.
        if let (Some(dev), Some(ctx)) = (dev, unsafe { cmem::read(context) }) {
            contexts().insert(ctx as usize, dev);
        }
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetCurrentContext(context: sys::aclrtContext) -> sys::aclError {
    let r = forward!(aclrtSetCurrentContext(context));
    if r == 0
        && let Some(&dev) = contexts().get(&(context as usize))
    {
        DEVICE.with(|d| d.set(Some(dev)));
    }
    r
}
