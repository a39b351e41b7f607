//! CANN 9.x's additions around mappings and IPC:
//! `aclrtReserveMemAddressNoUCMemory`, `aclrtMemMapNoAccess`,
//! `aclrtMemMapSelectedLink`, `aclrtMemMapSetLink`,
//! `aclrtHostMemMapCapabilities`, `aclrtIpcMemSetAttr`,
//! `aclrtIpcMemImportPidInterServer`.
//!
//! The ACL layer's checks here (100000), the runtime's and the work in
//! `aclmem_emu`. The emulated machine has one kind of link between devices
//! and one server: a link chosen (SIO or HCCS) is checked and changes
//! nothing; pids of other servers are whitelisted as
//! `aclrtIpcMemSetImportPid` whitelists pids.

use std::ffi::{c_char, c_void};

use aclmem_core::{AclError, Product};
use aclmem_emu::{args, ipc_key_id};
use aclmem_hal::{VirtAddr, VirtualMemory};
use aclmem_sys::{ACL_IPC_KEY_LEN, aclrtDrvMemHandle};

use crate::cptr;
use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `aclrtServerPid`: `{ uint32_t sdid; int32_t* pid; size_t num; }` (24
/// bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct aclrtServerPid {
    /// The super-pod device id of the server.
    pub sdid: u32,
    /// Its pids.
    pub pid: *mut i32,
    /// How many.
    pub num: usize,
}

impl Default for aclrtServerPid {
    fn default() -> aclrtServerPid {
        aclrtServerPid {
            sdid: 0,
            pid: std::ptr::null_mut(),
            num: 0,
        }
    }
}

/// The products of the A3 interconnect calls (documented: A3 only).
const A3: &[Product] = &[Product::AtlasA3];
/// The most entries read from one array.
const MAX_ENTRIES: usize = 1 << 16;
/// `ACL_RT_HAC_TYPE_CCU` + 1: the number of hardware accelerator types.
const HAC_TYPES: u32 = 10;
/// `ACL_RT_MEM_ACCESS_LINK_SIO` 0, `HCCS` 1, `UB_ONE_PORT_PATH` 2,
/// `UB_MULTI_PORT_PATH` 3.
const LINK_HCCS: u32 = 1;
const LINK_UB_MULTI: u32 = 3;

/// Whether the product has the link (`aclrtMemLinkType`, the IPC access
/// link): A3's are SIO and HCCS, Atlas 350's the UB paths (207021
/// otherwise); other products have no such call (207000).
fn link_exists(link: u32) -> Result<(), AclError> {
    let product = with_global(|g| Ok(g.emu.product()))?;
    match product {
        Product::AtlasA3 if link <= LINK_HCCS => Ok(()),
        Product::Atlas350 if (LINK_HCCS + 1..=LINK_UB_MULTI).contains(&link) => Ok(()),
        Product::AtlasA3 | Product::Atlas350 => Err(AclError::RT_LINK_TYPE_NOT_SUPPORTED),
        _ => Err(AclError::RT_FEATURE_NOT_SUPPORT),
    }
}

/// `aclError aclrtReserveMemAddressNoUCMemory(void** virPtr, size_t size,
/// size_t alignment, void* expectPtr, uint64_t flags)`: virPtr NULL, size
/// 0 or flags other than 0 and 1 100000; A3 only (207000); then a
/// reservation at `expectPtr` (NULL 207000), a multiple of 1 GiB.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReserveMemAddressNoUCMemory(
    vir_ptr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expect_ptr: *mut c_void,
    flags: u64,
) -> AclErrorCode {
    guard("aclrtReserveMemAddressNoUCMemory", || {
        shared::in_release("aclrtReserveMemAddressNoUCMemory")?;
        if vir_ptr.is_null() || size == 0 || flags > 1 {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(A3)?;
        let expected = std::num::NonZeroUsize::new(expect_ptr as usize).map(VirtAddr);
        with_global(|g| {
            let addr = g.emu.reserve_no_uc(size, alignment, expected)?;
            // SAFETY: the C caller's out parameter.
            unsafe {
                cptr::hand_out(vir_ptr, addr.get() as *mut c_void, || {
                    let _ = g.emu.release(addr);
                })
            }
        })
    })
}

/// `aclError aclrtMemMapNoAccess(void* virPtr, size_t size, size_t offset,
/// aclrtDrvMemHandle handle, uint64_t flags)`: virPtr or handle NULL, size
/// 0, flags not 0 100000; mapped as `aclrtMapMem` maps, with no access
/// until `aclrtMemSetAccess`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemMapNoAccess(
    vir_ptr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> AclErrorCode {
    guard("aclrtMemMapNoAccess", || {
        shared::in_release("aclrtMemMapNoAccess")?;
        let request = args::map(vir_ptr as usize, size, handle as usize as u64, flags)?;
        with_global(|g| g.emu.map_no_access(request, offset))
    })
}

/// `aclError aclrtMemMapSelectedLink(void* virPtrDst, size_t size, void*
/// virPtrSrc, uint32_t linkIdx)`: either address NULL, size 0 or a link
/// above HCCS (1) 100000; A3 only (207000); the physical memory mapped at
/// `virPtrSrc` mapped again at `virPtrDst`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemMapSelectedLink(
    vir_ptr_dst: *mut c_void,
    size: usize,
    vir_ptr_src: *mut c_void,
    link_idx: u32,
) -> AclErrorCode {
    guard("aclrtMemMapSelectedLink", || {
        shared::in_release("aclrtMemMapSelectedLink")?;
        if vir_ptr_dst.is_null() || vir_ptr_src.is_null() || size == 0 || link_idx > LINK_HCCS {
            return Err(AclError::INVALID_PARAM);
        }
        shared::on_products(A3)?;
        with_global(|g| {
            g.emu
                .map_selected_link(vir_ptr_dst as usize, size, vir_ptr_src as usize)
        })
    })
}

/// `aclError aclrtMemMapSetLink(aclrtDrvMemHandle handle, aclrtMemLinkType
/// adviceLink)`: handle NULL 100000; a product without the call 207000, a
/// link it lacks 207021; the handle must be live. The link changes
/// nothing on the emulated machine.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtMemMapSetLink(handle: aclrtDrvMemHandle, advice_link: u32) -> AclErrorCode {
    guard("aclrtMemMapSetLink", || {
        shared::in_release("aclrtMemMapSetLink")?;
        let handle = args::handle(handle as usize as u64)?;
        link_exists(advice_link)?;
        with_global(|g| g.emu.allocation_properties(handle).map(drop))
    })
}

/// `aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType
/// hacType, aclrtHostMemMapCapability* capabilities)`: capabilities NULL
/// 100000; a device the process lacks 107001; a type above CCU 107000.
/// Every accelerator reaches registered host memory on the products whose
/// host memory the emulator maps for the device (A2, A3, Atlas 350:
/// `ACL_RT_HOST_MEM_MAP_SUPPORTED`); elsewhere NOT_SUPPORTED.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostMemMapCapabilities(
    device_id: u32,
    hac_type: u32,
    capabilities: *mut u32,
) -> AclErrorCode {
    guard("aclrtHostMemMapCapabilities", || {
        shared::in_release("aclrtHostMemMapCapabilities")?;
        if capabilities.is_null() {
            return Err(AclError::INVALID_PARAM);
        }
        let device = i32::try_from(device_id).map_err(|_| AclError::RT_INVALID_DEVICEID)?;
        with_global(|g| g.emu.check_device(device))?;
        if hac_type >= HAC_TYPES {
            return Err(AclError::RT_PARAM_INVALID);
        }
        let supported =
            shared::on_products(&[Product::AtlasA2, Product::AtlasA3, Product::Atlas350]).is_ok();
        // SAFETY: the C caller's out parameter.
        unsafe { cptr::write(capabilities, u32::from(supported)) }
    })
}

/// The IPC key a C caller passed (NULL or unreadable 107000, the runtime's
/// check; text that is no key of the emulator 107000).
fn key(key: *const c_char) -> Result<String, AclError> {
    if key.is_null() {
        return Err(AclError::RT_PARAM_INVALID);
    }
    let text = cptr::read_cstr(key, ACL_IPC_KEY_LEN - 1).map_err(|_| AclError::RT_PARAM_INVALID)?;
    ipc_key_id(&text).ok_or(AclError::RT_PARAM_INVALID)?;
    Ok(text)
}

/// `aclError aclrtIpcMemSetAttr(const char* key, aclrtIpcMemAttrType type,
/// uint64_t attr)`: no ACL-layer checks; a key that is none 107000; a
/// type other than `ACL_RT_IPC_MEM_ATTR_ACCESS_LINK` (0) 107000; a link
/// the product lacks 207021, a product without the call 207000 (documented:
/// A3). The link changes nothing on the emulated machine.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtIpcMemSetAttr(
    key_text: *const c_char,
    attr_type: u32,
    attr: u64,
) -> AclErrorCode {
    guard("aclrtIpcMemSetAttr", || {
        shared::in_release("aclrtIpcMemSetAttr")?;
        key(key_text)?;
        if attr_type != 0 || attr > u64::from(LINK_UB_MULTI) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        link_exists(attr as u32)
    })
}

/// `aclError aclrtIpcMemImportPidInterServer(const char* key,
/// aclrtServerPid* serverPids, size_t num)`: key or serverPids NULL, num 0,
/// a `pid` array NULL 107000 (the runtime's checks); A3 only (207000);
/// every pid of every server is whitelisted for the key, as
/// `aclrtIpcMemSetImportPid` whitelists them (the emulated machine is one
/// server: `sdid` names no other).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtIpcMemImportPidInterServer(
    key_text: *const c_char,
    server_pids: *mut aclrtServerPid,
    num: usize,
) -> AclErrorCode {
    guard("aclrtIpcMemImportPidInterServer", || {
        shared::in_release("aclrtIpcMemImportPidInterServer")?;
        if key_text.is_null() || server_pids.is_null() || num == 0 {
            return Err(AclError::RT_PARAM_INVALID);
        }
        // SAFETY: the C caller's array, read through the kernel-checked
        // path.
        let servers = unsafe {
            cptr::read_array(
                server_pids.cast_const(),
                num,
                MAX_ENTRIES,
                AclError::RT_PARAM_INVALID,
            )?
        };
        if servers.iter().any(|s| s.pid.is_null()) {
            return Err(AclError::RT_PARAM_INVALID);
        }
        shared::on_products(A3)?;
        let text = key(key_text)?;
        let mut pids = Vec::new();
        for s in &servers {
            let count = s.num & (i32::MAX as usize);
            // SAFETY: as above.
            pids.extend(unsafe {
                cptr::read_array(
                    s.pid.cast_const(),
                    count,
                    MAX_ENTRIES,
                    AclError::RT_PARAM_INVALID,
                )?
            });
        }
        let pids = args::ipc_pids(&pids)?;
        with_global(|g| g.emu.ipc_set_pids_checked(&text, pids))
    })
}
