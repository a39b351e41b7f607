//! Sub-communicators of a communicator (`HcclCreateSubCommConfig`): the
//! members' lowest rank starts a rendezvous as `HcclGetRootInfo` does and
//! sends its root info to the other members over the parent's connections;
//! each member then joins the new communicator as from a root info. Only
//! the members call it, as HCCL requires.

use std::ffi::c_void;

use super::api::{CommConfig, HcclComm, connect, entry, on_device, ptr_err, read_config};
use super::comm::{self, Buf, Comm, Transfer};
use super::rendezvous::{self, ROOT_INFO_BYTES, RootInfo};
use super::types::{DataType, Hccl, HcclResult};
use crate::cptr;

/// `HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum,
/// uint32_t *rankIds, uint64_t subCommId, uint32_t subCommRankId,
/// HcclCommConfig *config, HcclComm *subComm)`: `rankIds` are ranks of the
/// parent, each once, and this rank must be `rankIds[subCommRankId]`
/// (`HCCL_E_PARA` otherwise).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCreateSubCommConfig(
    comm: *mut HcclComm,
    rank_num: u32,
    rank_ids: *mut u32,
    _sub_comm_id: u64,
    sub_rank: u32,
    config: *mut c_void,
    sub_comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCreateSubCommConfig", || {
        if comm.is_null() || rank_ids.is_null() || sub_comm.is_null() {
            return Err(Hccl::E_PTR);
        }
        // SAFETY: the caller's handle, plain data; cptr checks the address.
        let parent = ptr_err(unsafe { cptr::read(comm.cast::<usize>()) })?;
        let parent = comm::lookup(parent)?;
        if rank_num == 0 || rank_num > parent.size || sub_rank >= rank_num {
            return Err(Hccl::E_PARA);
        }
        // SAFETY: `rank_num` ints, checked by cptr.
        let ids = ptr_err(unsafe {
            cptr::read_array(
                rank_ids.cast_const(),
                rank_num as usize,
                1 << 16,
                aclmem_core::AclError::INVALID_PARAM,
            )
        })?;
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != ids.len()
            || ids.iter().any(|r| *r >= parent.size)
            || ids[sub_rank as usize] != parent.rank
        {
            return Err(Hccl::E_PARA);
        }
        let cfg = read_config(config.cast_const())?;
        on_device()?;
        let made = if parent.is_fake() {
            Comm::fake(
                sub_rank,
                rank_num,
                cfg.name.clone().unwrap_or_else(|| parent.name.clone()),
            )
        } else {
            join(&parent, &ids, sub_rank, &cfg)?
        };
        let handle = comm::register(made);
        // SAFETY: the caller's out parameter, checked by cptr; a bad one
        // destroys what was made.
        ptr_err(unsafe {
            cptr::hand_out(sub_comm.cast::<usize>(), handle, || {
                let _ = comm::destroy(handle);
            })
        })
    })
}

/// The root info from the members' leader (`ids[0]`), over the parent;
/// then the new communicator.
fn join(parent: &Comm, ids: &[u32], sub_rank: u32, cfg: &CommConfig) -> Result<Comm, Hccl> {
    let leader = ids[0];
    let mut bytes = [0u8; ROOT_INFO_BYTES];
    let mine = if parent.rank == leader {
        let ip = rendezvous::host_address().map_err(|e| {
            eprintln!("aclmem-hccl: {e}");
            Hccl::E_PARA
        })?;
        let info = rendezvous::serve(ip).map_err(|e| {
            eprintln!("aclmem-hccl: {e}");
            Hccl::E_TCP_CONNECT
        })?;
        bytes = info.encode();
        let sends: Vec<Transfer> = ids[1..]
            .iter()
            .map(|peer| Transfer {
                send: true,
                peer: *peer,
                buf: Buf {
                    addr: bytes.as_ptr() as usize,
                    len: ROOT_INFO_BYTES,
                },
                data_type: DataType::UINT8,
            })
            .collect();
        parent
            .point_to_point(&sends, Ok(()))
            .inspect_err(|_| rendezvous::stop(&info.identifier))?;
        info
    } else {
        let recv = Transfer {
            send: false,
            peer: leader,
            buf: Buf {
                addr: bytes.as_mut_ptr() as usize,
                len: ROOT_INFO_BYTES,
            },
            data_type: DataType::UINT8,
        };
        parent.point_to_point(&[recv], Ok(()))?;
        RootInfo::decode(&bytes).ok_or(Hccl::E_INTERNAL)?
    };
    connect(ids.len() as u32, &mine, sub_rank, cfg, None)
}
