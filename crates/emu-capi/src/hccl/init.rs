//! The HCCL C functions that make communicators: from a root info, for
//! every device of the process, from a rank table. Each marshals its
//! arguments into `aclmem_hccl::connect`, which connects them.

use std::ffi::{c_char, c_void};

use aclmem_core::AclError;
use aclmem_hccl::comm::{self, Comm};
use aclmem_hccl::connect::{self, CommConfig};
use aclmem_hccl::rank_table;
use aclmem_hccl::rendezvous::{self, ROOT_INFO_BYTES, RootInfo};
use aclmem_hccl::types::{Hccl, HcclResult};

use super::args::{HcclComm, entry, hand_out, on_device, ptr_err, read_config};
use crate::{cptr, state};

/// `HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)`: starts the
/// rendezvous on this host's address (`docs/hccl.md`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRootInfo(root_info: *mut c_void) -> HcclResult {
    entry("HcclGetRootInfo", || {
        if root_info.is_null() {
            return Err(Hccl::E_PTR);
        }
        let info = connect::new_root_info()?;
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(root_info.cast::<[u8; ROOT_INFO_BYTES]>(), info.encode()) })
            .inspect_err(|_| rendezvous::stop(&info.identifier))
    })
}

fn init(
    n_ranks: u32,
    root_info: *const c_void,
    rank: u32,
    config: *const c_void,
    comm: *mut HcclComm,
) -> Result<(), Hccl> {
    if root_info.is_null() || comm.is_null() {
        return Err(Hccl::E_PTR);
    }
    // SAFETY: plain bytes; cptr checks the address.
    let bytes: [u8; ROOT_INFO_BYTES] = ptr_err(unsafe { cptr::read(root_info.cast()) })?;
    let root = RootInfo::decode(&bytes).ok_or(Hccl::E_PARA)?;
    let cfg = read_config(config)?;
    on_device()?;
    hand_out(comm, connect::from_root_info(n_ranks, &root, rank, &cfg)?)
}

/// `HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo
/// *rootInfo, uint32_t rank, HcclComm *comm)`: blocks until every rank has
/// joined, or `HCCL_CONNECT_TIMEOUT` passes (`HCCL_E_TIMEOUT`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfo(
    n_ranks: u32,
    root_info: *const c_void,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitRootInfo", || {
        init(n_ranks, root_info, rank, std::ptr::null(), comm)
    })
}

/// `HcclResult HcclCommInitRootInfoConfig(..., const HcclCommConfig
/// *config, HcclComm *comm)`: as [`HcclCommInitRootInfo`]; the config's
/// name and execution timeout are used, the rest accepted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfoConfig(
    n_ranks: u32,
    root_info: *const c_void,
    rank: u32,
    config: *const c_void,
    comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitRootInfoConfig", || {
        init(n_ranks, root_info, rank, config, comm)
    })
}

/// `HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm
/// *comms)`: one communicator per device of this process, rank i on
/// `devices[i]`, connected on the loopback address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitAll(
    ndev: u32,
    devices: *mut i32,
    comms: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitAll", || {
        if devices.is_null() || comms.is_null() {
            return Err(Hccl::E_PTR);
        }
        if ndev == 0 {
            return Err(Hccl::E_PARA);
        }
        let count = state::with_config(|c| c.devices).map_err(|_| Hccl::E_RUNTIME)?;
        // SAFETY: `ndev` ints, checked by cptr.
        let devs = ptr_err(unsafe {
            cptr::read_array(
                devices.cast_const(),
                ndev as usize,
                64,
                AclError::INVALID_PARAM,
            )
        })
        .map_err(|_| if ndev > 64 { Hccl::E_PARA } else { Hccl::E_PTR })?;
        if devs.iter().any(|d| *d < 0 || *d as u32 >= count) {
            return Err(Hccl::E_PARA);
        }
        let handles: Vec<usize> = connect::all_local(ndev)?
            .into_iter()
            .map(comm::register)
            .collect();
        hand_out_all(comms, &handles)
    })
}

/// Writes `handles` to the caller's array; if it cannot, destroys them all.
fn hand_out_all(comms: *mut HcclComm, handles: &[usize]) -> Result<(), Hccl> {
    for (i, h) in handles.iter().enumerate() {
        // SAFETY: the caller's array of one handle per device, each slot
        // checked by cptr.
        if unsafe { cptr::write(comms.cast::<usize>().wrapping_add(i), *h) }.is_err() {
            for h in handles {
                let _ = comm::destroy(*h);
            }
            return Err(Hccl::E_PTR);
        }
    }
    Ok(())
}

fn init_cluster(
    path: *const c_char,
    rank: u32,
    config: *const c_void,
    comm: *mut HcclComm,
) -> Result<(), Hccl> {
    if path.is_null() || comm.is_null() {
        return Err(Hccl::E_PTR);
    }
    let path = cptr::read_cstr(path, 4096).map_err(|_| Hccl::E_PTR)?;
    let ranks = rank_table::load(&path)?;
    if rank as usize >= ranks.len() {
        return Err(Hccl::E_PARA);
    }
    let cfg: CommConfig = read_config(config)?;
    on_device()?;
    let made: Comm = connect::from_rank_table(&ranks, rank, &cfg)?;
    hand_out(comm, made)
}

/// `HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t
/// rank, HcclComm *comm)`: rank `rank` of the rank table at `clusterInfo`
/// (a path), connected through rank 0's address there
/// (`docs/hccl.md`); an unreadable table is
/// `HCCL_E_OPEN_FILE_FAILURE` (10), a malformed one `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfo(
    path: *const c_char,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitClusterInfo", || {
        init_cluster(path, rank, std::ptr::null(), comm)
    })
}

/// `HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo,
/// uint32_t rank, HcclCommConfig *config, HcclComm *comm)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfoConfig(
    path: *const c_char,
    rank: u32,
    config: *mut c_void,
    comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitClusterInfoConfig", || {
        init_cluster(path, rank, config.cast_const(), comm)
    })
}
