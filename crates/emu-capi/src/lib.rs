//! `libascendcl.so`, emulated: the ACL physical-memory API with its
//! documented C prototypes, served by `aclmem-emu`.
//!
//! Point the dynamic loader (or `aclmem-driver`, or `ctypes`) at the built
//! library and any program written against ACL's memory API runs on a plain
//! Linux machine, with real memory and real aliasing mappings.
//!
//! Configuration, read by `aclInit`:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `ACLMEM_EMU_SOC` | what `aclrtGetSocName` answers (decides the product) | `Ascend910B3` |
//! | `ACLMEM_EMU_DEVICES` | device count | `8` |
//! | `ACLMEM_EMU_HBM` | device memory per device (`64GiB`, `512MiB`, bytes) | `64GiB` |
//! | `ACLMEM_EMU_RUN_MODE` | `host` (EP, `ACL_HOST`) or `device` (RC, `ACL_DEVICE`) | `host` |
//! | `ACLMEM_EMU_CANN` | the CANN release whose rules and version queries are emulated | `9.0` |
//!
//! A bad value makes `aclInit` fail with `ACL_ERROR_INVALID_PARAM` (100000)
//! and a message on stderr.
//!
//! Conventions: NULL pointers and bad values answer 100000, never crash; a
//! call before `aclInit` answers `ACL_ERROR_UNINITIALIZE` (100001); a memory
//! call from a thread that has not called `aclrtSetDevice` answers
//! `ACL_ERROR_RT_CONTEXT_NULL` (107002) — whether the real runtime requires a
//! device there is UNCONFIRMED, and the samples and torch_npu always set one,
//! so the emulator insists. A panic inside the library is caught and
//! reported as `ACL_ERROR_INTERNAL_ERROR` (500000).

#![warn(missing_docs)]
// Every exported function is an `unsafe extern "C"` entry point whose
// contract is the C prototype; the unsafe operations are pointer writes
// through caller-provided out pointers, each argued at its site.
#![allow(clippy::missing_safety_doc)]

use std::cell::Cell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::num::{NonZeroU64, NonZeroUsize};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use aclmem_core::{AclError, GranularityOption, MemAttr, RawPhysicalMemProp, RunMode};
use aclmem_emu::{EmuConfig, Emulator, parse_size};
use aclmem_hal::{
    DeviceInfo, PhysicalAllocator, RawHandle, ShareableHandle, ShareableMemory, VirtAddr,
    VirtualMemory,
};

/// Referenced by the `libascendcl` shell crate so that this crate, and with
/// it every exported function, is linked into the shared object.
pub const LINKED: () = ();

type AclErrorCode = i32;
type DrvMemHandle = *mut c_void;

const OK: AclErrorCode = 0;

/// `ACL_MEM_HANDLE_TYPE_NONE`.
const HANDLE_TYPE_NONE: u32 = 0;

struct Global {
    emu: Arc<Emulator>,
    soc: &'static CStr,
    generation: u64,
}

static GLOBAL: RwLock<Option<Global>> = RwLock::new(None);
static GENERATION: AtomicU64 = AtomicU64::new(1);
/// SoC names handed out by `aclrtGetSocName`; kept for the life of the
/// process so the returned pointer never dangles (a handful of bytes per
/// distinct name).
static SOC_NAMES: Mutex<Vec<&'static CStr>> = Mutex::new(Vec::new());

thread_local! {
    /// (init generation, device) set by `aclrtSetDevice` on this thread.
    static DEVICE: Cell<(u64, i32)> = const { Cell::new((0, -1)) };
}

/// Runs an entry point, turning a panic into `ACL_ERROR_INTERNAL_ERROR`.
fn guard(f: impl FnOnce() -> Result<(), AclError>) -> AclErrorCode {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or(Err(AclError::INTERNAL_ERROR))
        .map_or_else(|e| e.code(), |()| OK)
}

fn emulator() -> Result<(Arc<Emulator>, u64), AclError> {
    let g = GLOBAL.read().unwrap_or_else(|p| p.into_inner());
    g.as_ref()
        .map(|g| (Arc::clone(&g.emu), g.generation))
        .ok_or(AclError::UNINITIALIZE)
}

/// The emulator and the device set on this thread, for a call that needs
/// one (107002 when none is set since the last `aclInit`).
fn current_device() -> Result<(Arc<Emulator>, i32), AclError> {
    let (emu, generation) = emulator()?;
    let (g, d) = DEVICE.with(Cell::get);
    if g != generation || d < 0 {
        return Err(AclError::RT_CONTEXT_NULL);
    }
    Ok((emu, d))
}

/// The emulator, for a call that needs a device set on this thread.
fn with_device() -> Result<Arc<Emulator>, AclError> {
    current_device().map(|(emu, _)| emu)
}

/// Writes `value` through an out pointer, or 100000 if it is NULL.
///
/// # Safety
/// A non-NULL `out` must be valid for a write of `T` (the C contract of every
/// out parameter).
unsafe fn put<T>(out: *mut T, value: T) -> Result<(), AclError> {
    if out.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    // SAFETY: non-NULL, and valid for writes by the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

fn handle(h: DrvMemHandle) -> Result<RawHandle, AclError> {
    NonZeroU64::new(h as usize as u64)
        .map(RawHandle)
        .ok_or(AclError::INVALID_PARAM)
}

fn addr(p: *mut c_void) -> Result<VirtAddr, AclError> {
    NonZeroUsize::new(p as usize)
        .map(VirtAddr)
        .ok_or(AclError::INVALID_PARAM)
}

fn config_from_env() -> Result<EmuConfig, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let soc = var("ACLMEM_EMU_SOC").unwrap_or_else(|| "Ascend910B3".into());
    let mut config = EmuConfig::from_soc(&soc)
        .map_err(|_| format!("ACLMEM_EMU_SOC=`{soc}` is not a known Ascend SoC name"))?;
    config.devices = 8;
    config.device_memory = 64 << 30;
    if let Some(v) = var("ACLMEM_EMU_DEVICES") {
        config.devices = v
            .parse()
            .ok()
            .filter(|n| (1..=1024).contains(n))
            .ok_or_else(|| {
                format!("ACLMEM_EMU_DEVICES=`{v}` is not a device count from 1 to 1024")
            })?;
    }
    if let Some(v) = var("ACLMEM_EMU_HBM") {
        config.device_memory = parse_size(&v)
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("ACLMEM_EMU_HBM=`{v}` is not a size such as 64GiB"))?;
    }
    if let Some(v) = var("ACLMEM_EMU_CANN") {
        config.cann = aclmem_core::CannVersion::parse(&v).map_err(|_| {
            format!("ACLMEM_EMU_CANN=`{v}` is not a CANN release aclmem models (8.0, 8.1, 8.2, 8.3, 8.5, 9.0)")
        })?;
    }
    if let Some(v) = var("ACLMEM_EMU_RUN_MODE") {
        config.run_mode = match v.as_str() {
            "host" => RunMode::Ep,
            "device" => RunMode::Rc,
            _ => {
                return Err(format!(
                    "ACLMEM_EMU_RUN_MODE=`{v}` must be `host` or `device`"
                ));
            }
        };
    }
    Ok(config)
}

fn intern(name: &str) -> &'static CStr {
    let mut names = SOC_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(n) = names.iter().find(|n| n.to_bytes() == name.as_bytes()) {
        return n;
    }
    // SoC names never contain NUL; fall back to an empty name if one does.
    let leaked: &'static CStr =
        Box::leak(CString::new(name).unwrap_or_default().into_boxed_c_str());
    names.push(leaked);
    leaked
}

/// `aclError aclInit(const char *configPath)`. `configPath` may be NULL; a
/// non-NULL path is accepted and ignored (the emulator reads its environment).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(_config_path: *const c_char) -> AclErrorCode {
    guard(|| {
        let mut g = GLOBAL.write().unwrap_or_else(|p| p.into_inner());
        if g.is_some() {
            return Err(AclError::REPEAT_INITIALIZE);
        }
        let config = config_from_env().map_err(|msg| {
            eprintln!("aclmem-emu: aclInit failed: {msg}");
            AclError::INVALID_PARAM
        })?;
        let soc = intern(&config.soc_name);
        let emu =
            Emulator::new(config).inspect_err(|e| eprintln!("aclmem-emu: aclInit failed: {e}"))?;
        *g = Some(Global {
            emu: Arc::new(emu),
            soc,
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        });
        Ok(())
    })
}

/// `aclError aclFinalize()`. Tears the emulated process down (as process
/// exit would).
#[unsafe(no_mangle)]
pub extern "C" fn aclFinalize() -> AclErrorCode {
    guard(|| {
        let mut g = GLOBAL.write().unwrap_or_else(|p| p.into_inner());
        g.take().map(drop).ok_or(AclError::REPEAT_FINALIZE)
    })
}

/// `aclError aclrtSetDevice(int32_t deviceId)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDevice(device_id: i32) -> AclErrorCode {
    guard(|| {
        let (emu, generation) = emulator()?;
        let count = emu.device_count()?;
        if device_id < 0 || device_id as u32 >= count {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        DEVICE.with(|d| d.set((generation, device_id)));
        Ok(())
    })
}

/// `aclError aclrtResetDevice(int32_t deviceId)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDevice(device_id: i32) -> AclErrorCode {
    guard(|| {
        let (emu, generation) = emulator()?;
        if device_id < 0 || device_id as u32 >= emu.device_count()? {
            return Err(AclError::RT_INVALID_DEVICEID);
        }
        if DEVICE.with(Cell::get) == (generation, device_id) {
            DEVICE.with(|d| d.set((0, -1)));
        }
        Ok(())
    })
}

/// `aclError aclrtGetDevice(int32_t *deviceId)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDevice(device_id: *mut i32) -> AclErrorCode {
    guard(|| {
        let (_, d) = current_device()?;
        // SAFETY: C contract of the out parameter.
        unsafe { put(device_id, d) }
    })
}

/// `aclError aclrtGetDeviceCount(uint32_t *count)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> AclErrorCode {
    guard(|| {
        let (emu, _) = emulator()?;
        // SAFETY: C contract of the out parameter.
        unsafe { put(count, emu.device_count()?) }
    })
}

/// `const char *aclrtGetSocName()`: NULL before `aclInit`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSocName() -> *const c_char {
    catch_unwind(|| {
        let g = GLOBAL.read().unwrap_or_else(|p| p.into_inner());
        g.as_ref().map_or(ptr::null(), |g| g.soc.as_ptr())
    })
    .unwrap_or(ptr::null())
}

/// `aclError aclrtGetRunMode(aclrtRunMode *runMode)`: `ACL_HOST` (1) or
/// `ACL_DEVICE` (0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetRunMode(run_mode: *mut u32) -> AclErrorCode {
    guard(|| {
        let (emu, _) = emulator()?;
        // SAFETY: C contract of the out parameter.
        unsafe { put(run_mode, emu.config().run_mode.to_acl_run_mode()) }
    })
}

/// `aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)`
/// for the current device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemInfo(
    attr: u32,
    free: *mut usize,
    total: *mut usize,
) -> AclErrorCode {
    guard(|| {
        let (emu, device) = current_device()?;
        if free.is_null() || total.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let attr = MemAttr::from_raw(attr).ok_or(AclError::INVALID_PARAM)?;
        let (f, t) = emu.mem_info(attr, device as u32)?;
        // SAFETY: both pointers are non-NULL; C contract of out parameters.
        unsafe {
            put(free, f)?;
            put(total, t)
        }
    })
}

/// `aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
/// const aclrtPhysicalMemProp *prop, uint64_t flags)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocPhysical(
    handle: *mut DrvMemHandle,
    size: usize,
    prop: *const RawPhysicalMemProp,
    flags: u64,
) -> AclErrorCode {
    guard(|| {
        let emu = with_device()?;
        if handle.is_null() || prop.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: non-NULL; the C contract makes it a readable
        // `aclrtPhysicalMemProp`, whose layout `RawPhysicalMemProp` mirrors
        // (plain integers: every bit pattern is valid). Unaligned reads are
        // tolerated.
        let prop = unsafe { prop.read_unaligned() };
        let h = emu.malloc_physical(size, &prop, flags)?;
        // SAFETY: non-NULL; C contract of the out parameter.
        unsafe { put(handle, h.0.get() as usize as DrvMemHandle) }
    })
}

/// `aclError aclrtFreePhysical(aclrtDrvMemHandle handle)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtFreePhysical(handle_: DrvMemHandle) -> AclErrorCode {
    guard(|| with_device()?.free_physical(handle(handle_)?))
}

/// `aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
/// aclrtMemGranularityOptions option, size_t *granularity)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationGranularity(
    prop: *mut RawPhysicalMemProp,
    option: u32,
    granularity: *mut usize,
) -> AclErrorCode {
    guard(|| {
        let emu = with_device()?;
        if prop.is_null() || granularity.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let option = GranularityOption::from_raw(option).ok_or(AclError::INVALID_PARAM)?;
        // SAFETY: as in `aclrtMallocPhysical`.
        let prop = unsafe { prop.read_unaligned() };
        let g = emu.granularity(&prop, option)?;
        // SAFETY: non-NULL; C contract of the out parameter.
        unsafe { put(granularity, g) }
    })
}

/// `aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t
/// alignment, void *expectPtr, uint64_t flags)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReserveMemAddress(
    vir_ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expect_ptr: *mut c_void,
    flags: u64,
) -> AclErrorCode {
    guard(|| {
        let emu = with_device()?;
        if vir_ptr.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let expected = NonZeroUsize::new(expect_ptr as usize).map(VirtAddr);
        let a = emu.reserve(size, alignment, expected, flags)?;
        // SAFETY: non-NULL; C contract of the out parameter.
        unsafe { put(vir_ptr, a.get() as *mut c_void) }
    })
}

/// `aclError aclrtReleaseMemAddress(void *virPtr)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtReleaseMemAddress(vir_ptr: *mut c_void) -> AclErrorCode {
    guard(|| with_device()?.release(addr(vir_ptr)?))
}

/// `aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
/// aclrtDrvMemHandle handle, uint64_t flags)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMapMem(
    vir_ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle_: DrvMemHandle,
    flags: u64,
) -> AclErrorCode {
    guard(|| with_device()?.map(addr(vir_ptr)?, size, offset, handle(handle_)?, flags))
}

/// `aclError aclrtUnmapMem(void *virPtr)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtUnmapMem(vir_ptr: *mut c_void) -> AclErrorCode {
    guard(|| with_device()?.unmap(addr(vir_ptr)?))
}

/// `aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
/// aclrtMemHandleType handleType, uint64_t flags, uint64_t *shareableHandle)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemExportToShareableHandle(
    handle_: DrvMemHandle,
    handle_type: u32,
    flags: u64,
    shareable_handle: *mut u64,
) -> AclErrorCode {
    guard(|| {
        let emu = with_device()?;
        if handle_type != HANDLE_TYPE_NONE || shareable_handle.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let s = emu.export(handle(handle_)?, flags)?;
        // SAFETY: non-NULL; C contract of the out parameter.
        unsafe { put(shareable_handle, s.0) }
    })
}

/// `aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle,
/// int32_t *pid, size_t pidNum)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemSetPidToShareableHandle(
    shareable_handle: u64,
    pid: *mut i32,
    pid_num: usize,
) -> AclErrorCode {
    guard(|| {
        let emu = with_device()?;
        if pid.is_null() || pid_num == 0 {
            return Err(AclError::INVALID_PARAM);
        }
        // SAFETY: non-NULL, and by the C contract `pid` points at `pid_num`
        // readable integers; we only read them, for the length of this call.
        let pids = unsafe { std::slice::from_raw_parts(pid, pid_num) };
        emu.set_pids(ShareableHandle(shareable_handle), pids)
    })
}

/// `aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
/// int32_t deviceId, aclrtDrvMemHandle *handle)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemImportFromShareableHandle(
    shareable_handle: u64,
    device_id: i32,
    handle_: *mut DrvMemHandle,
) -> AclErrorCode {
    guard(|| {
        let emu = with_device()?;
        if handle_.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let device = u32::try_from(device_id).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        let h = emu.import(ShareableHandle(shareable_handle), device)?;
        // SAFETY: non-NULL; C contract of the out parameter.
        unsafe { put(handle_, h.0.get() as usize as DrvMemHandle) }
    })
}

/// `aclError aclrtDeviceGetBareTgid(int32_t *pid)`: the process id to
/// whitelist for sharing. The emulator runs no containers of its own, so it
/// is the kernel's pid of the calling process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetBareTgid(pid: *mut i32) -> AclErrorCode {
    guard(|| {
        emulator()?;
        // SAFETY: C contract of the out parameter.
        unsafe { put(pid, std::process::id() as i32) }
    })
}

/// `aclError aclrtGetVersion(int32_t *major, int32_t *minor, int32_t
/// *patch)`: the ACL interface version of the emulated CANN release.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetVersion(
    major: *mut i32,
    minor: *mut i32,
    patch: *mut i32,
) -> AclErrorCode {
    guard(|| {
        if major.is_null() || minor.is_null() || patch.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let (emu, _) = emulator()?;
        let (a, b, c) = emu.config().cann.acl_interface();
        // SAFETY: all three are non-NULL; C contract of out parameters.
        unsafe {
            put(major, a)?;
            put(minor, b)?;
            put(patch, c)
        }
    })
}

/// Copies `text` into a C `char` array, NUL-terminated (truncated to fit).
fn fill(field: &mut [std::ffi::c_char], text: &str) {
    field.fill(0);
    let room = field.len().saturating_sub(1);
    for (dst, src) in field.iter_mut().zip(text.bytes().take(room)) {
        *dst = src as std::ffi::c_char;
    }
}

/// `aclError aclsysGetCANNVersion(aclCANNPackageName name,
/// aclCANNPackageVersion *version)`: the emulated release for the CANN and
/// runtime packages; any other package is "not installed"
/// (`ACL_ERROR_INVALID_FILE`, 100003), an unknown name 100000.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetCANNVersion(
    name: u32,
    version: *mut aclmem_sys::aclCANNPackageVersion,
) -> AclErrorCode {
    guard(|| {
        if version.is_null() || name > aclmem_sys::ACL_PKG_NAME_DRIVER {
            return Err(AclError::INVALID_PARAM);
        }
        if !matches!(
            name,
            aclmem_sys::ACL_PKG_NAME_CANN | aclmem_sys::ACL_PKG_NAME_RUNTIME
        ) {
            return Err(AclError::INVALID_FILE);
        }
        let (emu, _) = emulator()?;
        let release = emu.config().cann.release();
        let mut out = aclmem_sys::aclCANNPackageVersion::default();
        fill(&mut out.version, release);
        let mut parts = release.split('.').chain(std::iter::repeat("0"));
        for field in [
            &mut out.majorVersion,
            &mut out.minorVersion,
            &mut out.releaseVersion,
            &mut out.patchVersion,
        ] {
            fill(field, parts.next().unwrap_or("0"));
        }
        // SAFETY: non-NULL; C contract of the out parameter (512 bytes).
        unsafe { put(version, out) }
    })
}
