//! The work several C functions share: a copy, a set, a stream made, the
//! driver's version. Each is the whole of one C function's work, with that
//! function's guard where it has one, so that a function that forwards to
//! another (`aclrtMemcpyAsyncWithCondition` to a copy,
//! `aclrtCreateStreamWithConfig` to `aclrtCreateStream`) behaves as that
//! one, faults and records included, without the C functions importing
//! one another.

use std::ffi::c_void;

use aclmem_core::AclError;
use aclmem_emu::{CallerMemory, Target, args};
use aclmem_sys::{MemcpyKind, aclrtStream};

use crate::capture;
use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::state::with_global;

/// A copy of `count` bytes (`aclrtMemcpy` and its asynchronous forms; each
/// caller runs it in its own guard): the addresses decide the direction,
/// which `kind` must match (`ACL_MEMCPY_DEFAULT` infers it).
pub(crate) fn copy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: u32,
    stream: Option<aclrtStream>,
) -> Result<(), AclError> {
    let kind = MemcpyKind::from_raw(kind);
    let args::Copy::Bytes(request) =
        args::memcpy(dst as usize, dest_max, src as usize, count, kind)?
    else {
        return Ok(());
    };
    let Some(stream) = stream.map(|s| s as usize as u64) else {
        capture::permits_sync()?;
        // SAFETY: the C caller's buffers, which `aclrtMemcpy`'s contract
        // makes its own to read and write for the call (Rust holds no
        // reference into them); host ranges are still checked by the
        // kernel, which refuses addresses the process may not use.
        let caller = unsafe { CallerMemory::vouch() };
        return with_global(|g| g.emu.memcpy_checked(request, None, &caller));
    };
    let r = *request.get();
    // Only while a capture is under way does pageable memory change what
    // an asynchronous copy may do.
    if capture::active() && (pageable(r.dst)? || pageable(r.src)?) {
        // The runtime makes a copy of pageable memory synchronous: never
        // recorded (107000 on a capturing stream), and refused as a
        // synchronous call while a capture's mode forbids those.
        if capture::capturing(stream) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        capture::permits_sync().map_err(|_| AclError::RT_CAPTURE_MODE_BLOCK_ASYNC)?;
    }
    capture::touched(stream, &[(r.dst, r.count), (r.src, r.count)]);
    capture::enqueue(
        stream,
        "MEMCPY_ASYNC",
        || format!("{} bytes {:#x} -> {:#x}", r.count, r.src, r.dst),
        move |on| {
            // SAFETY: as for the synchronous copy: the caller's buffers,
            // which a capture's contract keeps valid (and the caller's to
            // read and write) until the model is destroyed.
            let caller = unsafe { CallerMemory::vouch() };
            with_global(|g| g.emu.memcpy_checked(request, Some(on), &caller))
        },
    )
}

/// Whether `addr` is host memory the runtime knows nothing of (neither
/// device memory nor `aclrtMallocHost` or registered memory).
fn pageable(addr: usize) -> Result<bool, AclError> {
    with_global(|g| {
        Ok(g.emu
            .pointer_attributes(addr)
            .is_ok_and(|a| a.location == aclmem_sys::LocationType::Unregistered))
    })
}

/// `aclrtMemset`'s work, in its guard: device memory of this process or
/// `aclrtMallocHost` memory.
pub(crate) fn memset(
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
) -> AclErrorCode {
    guard("aclrtMemset", || {
        let args::Fill::Bytes(request) = args::memset(dev_ptr as usize, max_count, value, count)?
        else {
            return Ok(());
        };
        capture::permits_sync()?;
        // Device memory is the emulator's; host memory must be the caller's
        // `aclrtMallocHost` memory (checked).
        with_global(|g| g.emu.memset_checked(request))
    })
}

/// `aclrtMemsetAsync`'s work, in its guard: as [`memset`], on `stream`
/// (run at once, or recorded when the stream captures).
pub(crate) fn memset_async(
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
    stream: u64,
) -> AclErrorCode {
    guard("aclrtMemsetAsync", || {
        with_global(|g| g.emu.check_stream(stream))?;
        let args::Fill::Bytes(request) = args::memset(dev_ptr as usize, max_count, value, count)?
        else {
            return Ok(());
        };
        capture::touched(stream, &[(dev_ptr as usize, count)]);
        capture::enqueue(
            stream,
            "MEMSET_ASYNC",
            || format!("{count} bytes at {:#x}", dev_ptr as usize),
            move |_| with_global(|g| g.emu.memset_checked(request)),
        )
    })
}

/// `aclrtCreateStream`'s work, in its guard: a stream on this thread's
/// device, handed out through `stream`.
pub(crate) fn create_stream(stream: *mut aclrtStream) -> AclErrorCode {
    guard("aclrtCreateStream", || {
        if stream.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            let s = g.emu.create_stream(Target::Current)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(stream, s as usize as aclrtStream, || {
                    let _ = g.emu.destroy_stream(s);
                })
            }
        })
    })
}

/// The driver package's version (`ACLMEM_EMU_DRIVER`): 100003 when the
/// machine has none installed (`none`) or the setting is malformed, as the
/// runtime answers a missing or unreadable `version.info`.
pub(crate) fn driver_version() -> Result<String, AclError> {
    match aclmem_emu::env::driver() {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(AclError::INVALID_FILE),
        Err(message) => {
            if !aclmem_emu::env::quiet() {
                eprintln!("aclmem-emu: {message}");
            }
            Err(AclError::INVALID_FILE)
        }
    }
}

/// 207000 when the emulated release's library lacks `name`: the catalogue
/// names the first release that has it (`since`), and a library without
/// the symbol is answered as the driver answers a missing optional
/// function. Before `aclInit` the environment's release decides.
pub(crate) fn in_release(name: &str) -> Result<(), AclError> {
    let Some(entry) = aclmem_sys::catalogue::find(name) else {
        return Ok(());
    };
    let cann = crate::state::with_config(|c| c.cann)?;
    if entry.in_release(cann) {
        Ok(())
    } else {
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    }
}

/// 207000 unless the emulated product is one of `products` (a chip
/// without the runtime feature a call needs).
pub(crate) fn on_products(products: &[aclmem_core::Product]) -> Result<(), AclError> {
    let product = with_global(|g| Ok(g.emu.product()))?;
    if products.contains(&product) {
        Ok(())
    } else {
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    }
}

/// `aclrtMalloc`'s work (and `aclrtMallocAlign32`'s, with
/// `align32_only`): device memory of the current device handed out
/// through `dev_ptr` (freed again if it cannot be written).
pub(crate) fn malloc_device(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: u32,
    align32_only: bool,
) -> Result<(), AclError> {
    if dev_ptr.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    let size = args::malloc(size)?;
    let policy = aclmem_sys::MallocPolicy::from_raw(policy);
    with_global(|g| {
        let a = g
            .emu
            .malloc_device_checked(Target::Current, size, policy, align32_only)?;
        // SAFETY: the C caller's out parameter.
        unsafe {
            cptr::hand_out(dev_ptr, a as *mut c_void, || {
                let _ = g.emu.free_device(a);
            })
        }
    })
}

/// `aclrtMallocHost`'s work: page-locked host memory handed out through
/// `host_ptr` (freed again if it cannot be written).
pub(crate) fn malloc_host(host_ptr: *mut *mut c_void, size: usize) -> Result<(), AclError> {
    if host_ptr.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    let size = args::malloc(size)?;
    with_global(|g| {
        let a = g.emu.malloc_host_checked(size)?;
        // SAFETY: the C caller's out parameter.
        unsafe {
            cptr::hand_out(host_ptr, a as *mut c_void, || {
                let _ = g.emu.free_host(a);
            })
        }
    })
}

/// Reads `buf.len()` bytes at `addr` as the device reads them: mapped
/// device memory through the emulator, or host memory the device reaches
/// (`aclrtMallocHost`, or registered mapped for it: torch_npu's swapped
/// memory) under the kernel's check.
pub(crate) fn read_reachable(
    emu: &aclmem_emu::Emulator,
    addr: usize,
    buf: &mut [u8],
) -> Result<(), AclError> {
    match emu.read(addr, buf) {
        Err(e) if emu.device_reaches_host(addr, buf.len()) => {
            aclmem_cmem::read_bytes(addr, buf).then_some(()).ok_or(e)
        }
        other => other,
    }
}

/// Writes `data` at `addr` as the device writes it (see [`read_reachable`]).
pub(crate) fn write_reachable(
    emu: &aclmem_emu::Emulator,
    addr: usize,
    data: &[u8],
) -> Result<(), AclError> {
    match emu.write(addr, data) {
        Err(e) if emu.device_reaches_host(addr, data.len()) => {
            // SAFETY: host memory the process allocated or registered for
            // the device, which the device may write as the runtime's
            // contract says; Rust holds no reference into it, and the
            // kernel checks the write.
            unsafe { aclmem_cmem::write_bytes(addr, data) }
                .then_some(())
                .ok_or(e)
        }
        other => other,
    }
}

/// The device memory of this process, as an operator's plan (the operator
/// API's, ATB's) reads and writes it: what the device reaches, through
/// [`read_reachable`] and [`write_reachable`].
pub(crate) struct DeviceMemory;

impl aclmem_ops::aclnn::Memory for DeviceMemory {
    fn read(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError> {
        with_global(|g| read_reachable(&g.emu, addr, buf))
    }

    fn write(&self, addr: usize, data: &[u8]) -> Result<(), AclError> {
        with_global(|g| write_reachable(&g.emu, addr, data))
    }
}
