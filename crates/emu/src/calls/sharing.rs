//! Sharing physical memory between processes:
//! `aclrtMemExportToShareableHandle(V2)`, `aclrtMemSetPidToShareableHandle(V2)`,
//! `aclrtMemImportFromShareableHandle(V2)`.
//!
//! An export runs claim (the shard: mark the handle, hold the allocation),
//! register (the machine's registry, no process lock), commit (the shard
//! again), so the machine's lock is never taken under a process lock and a
//! handle freed meanwhile never has its memory reused under the export.

use std::num::NonZeroU64;

use aclmem_core::{AclError, Location, MemAttr};
use aclmem_hal::{RawHandle, ShareHandleType, ShareableHandle, ShareableHandleV2, ShareableMemory};

use crate::args::{self, Checked};
use crate::calls::physical::raw_handle;
use crate::calls::runtime::Target;
use crate::errors::Situation;
use crate::machine::{ExportInfo, ExportKind, OWN_FILE};
use crate::process::charge::Pools;
use crate::process::handles::{Alloc, HandleId, Origin, Source};
use crate::process::{Process, Result};
use crate::{Emulator, Op};
use aclmem_sys::ExportFlags;

/// The 128-byte FABRIC handle: the machine's shareable handle, marked.
pub const FABRIC_MAGIC: [u8; 8] = *b"aclmemFB";

/// Writes a shareable handle as a FABRIC handle.
pub fn fabric_handle(id: u64) -> [u8; 128] {
    let mut out = [0u8; 128];
    out[..8].copy_from_slice(&FABRIC_MAGIC);
    out[8..16].copy_from_slice(&id.to_le_bytes());
    out
}

/// Reads a FABRIC handle back (`None` if it is not one of the emulator's).
pub fn fabric_id(handle: &[u8; 128]) -> Option<u64> {
    let id: [u8; 8] = handle[8..16].try_into().ok()?;
    (handle[..8] == FABRIC_MAGIC).then(|| u64::from_le_bytes(id))
}

impl Process {
    /// Exports the memory behind handle `id`: its shareable id.
    pub(crate) fn export_handle(
        &self,
        id: HandleId,
        check_pid: bool,
        kind: ExportKind,
    ) -> Result<u64> {
        // Claim: check, mark the handle exported, hold the allocation.
        let (h, info, pools) = {
            let mut shard = self.shards.of(id)?;
            let (h, a) = shard.resolve(id)?;
            if h.exported {
                return Err(Situation::ExportTwice.code());
            }
            if h.imported {
                return Err(Situation::ExportImported.code());
            }
            if a.location != Location::Device {
                return Err(Situation::ExportHostMemory.code());
            }
            if a.exported_handle || a.export.is_some() {
                return Err(Situation::ExportTwice.code());
            }
            let info = ExportInfo {
                id: 0,
                kind,
                check_pid,
                exporter: (self.slot, self.generation, self.pid),
                // An importer gets a file of the allocation's own, from
                // offset 0 (made at the first import: process/own_file.rs).
                pool: OWN_FILE,
                offset: 0,
                size: a.size,
                location: (a.location_id, a.location.raw()),
                attr: a.attr.raw(),
                device: a.location_id,
            };
            let pools = a.charged;
            if let Some(a) = shard.allocs.get_mut(h.alloc as usize) {
                a.refs += 1;
                a.exported_handle = true;
            }
            if let Some(e) = shard.handles.get_mut(id.index as usize) {
                e.exported = true;
            }
            (h, info, pools)
        };
        // Register, with no process lock held; between processes the
        // exporter must be able to answer first (a process out of
        // descriptors fails here, with nothing registered).
        let registered = if self.machine.name.is_some() {
            crate::machine::listener::ensure_listener(self)
        } else {
            Ok(())
        }
        .and_then(|()| {
            let region = &self.machine.region;
            let g = region.lock(self.slot)?;
            region.export(&g, kind, self.slot, check_pid, pools, info)
        });
        // Commit, or roll back; either way the claim's reference goes.
        let released = {
            let mut shard = self.shards.lock(id.shard);
            if let Some(a) = shard.allocs.get_mut(h.alloc as usize) {
                match registered {
                    Ok(export) => a.export = NonZeroU64::new(export),
                    Err(_) => a.exported_handle = false,
                }
            }
            if registered.is_err()
                && let Some(e) = shard.handles.get_mut(id.index as usize)
                && e.generation == id.generation
            {
                e.exported = false;
            }
            shard.unref(h.alloc)
        };
        self.finish_release(id.shard, released);
        registered
    }

    /// `aclrtMemSetPidToShareableHandle` (and the IPC key's): adds pids to
    /// the whitelist of an export of this process.
    pub(crate) fn set_pids(&self, shareable: u64, pids: Checked<&[i32]>) -> Result<()> {
        let pids = pids.into_inner();
        self.enter_vmm(Op::SetPids)?;
        if pids.iter().any(|&p| p <= 0) {
            return Err(Situation::BadPid.code());
        }
        // Who each pid is now (its start time), read before the machine's
        // lock is taken: a later process with the same pid is not it.
        // A pid with no process yet is recorded without a start time (the
        // process that takes it later is on the list); one this process
        // cannot look up for want of descriptors is an error, since
        // recording it without a start time would let any process with
        // that pid in.
        let processes = pids
            .iter()
            .map(|&p| match self.machine.name {
                // Simulated processes of a private machine have made-up pids.
                None => Ok((p, 0)),
                Some(_) => match crate::os::sys::start_time(p) {
                    Err(e) if crate::os::sys::out_of_descriptors(e) => {
                        Err(Situation::FdLimit.code())
                    }
                    t => Ok((p, t.unwrap_or(0))),
                },
            })
            .collect::<Result<Vec<(i32, u64)>>>()?;
        let region = &self.machine.region;
        let g = region.lock(self.slot)?;
        let info = region
            .export_info(&g, shareable)
            .ok_or(Situation::UnknownShareable.code())?;
        if (info.exporter.0, info.exporter.1) != (self.slot, self.generation) {
            return Err(Situation::NotExporter.code());
        }
        match region.add_to_whitelist(&g, shareable, &processes) {
            Some(true) => Ok(()),
            Some(false) => Err(Situation::WhitelistFull.code()),
            None => Err(Situation::UnknownShareable.code()),
        }
    }

    /// Imports `shareable` onto `device`: a new handle of this process.
    pub(crate) fn import_handle(
        &self,
        shareable: u64,
        target: Target,
        kind: ExportKind,
    ) -> Result<HandleId> {
        self.enter(Op::Import)?;
        let device = self.target(target)?;
        self.on_device()?;
        if kind == ExportKind::Vmm {
            self.machine.vmm_api()?;
        }
        // Refuse what needs no exporter first.
        {
            let region = &self.machine.region;
            let g = region.lock(self.slot)?;
            match region.export_info(&g, shareable) {
                None => return Err(Situation::UnknownShareable.code()),
                Some(i) if i.kind != kind => return Err(Situation::UnknownShareable.code()),
                Some(i) if i.exporter.0 == self.slot => {
                    return Err(Situation::ImportOwnExport.code());
                }
                Some(_) if region.holds(&g, shareable, self.slot) => {
                    return Err(Situation::ImportTwice.code());
                }
                Some(_) => {}
            }
        }
        let (info, file) = self.fetch(shareable, kind)?;
        let Some(attr) = MemAttr::from_raw(info.attr) else {
            // Not an attribute: the reply is not the registry's.
            if let Ok(g) = self.machine.region.lock(self.slot) {
                self.machine.region.drop_holder(&g, shareable, self.slot);
            }
            return Err(AclError::RT_IPC_ERROR);
        };
        let index = device as u8;
        let mut shard = self.shards.lock(index);
        let mut alloc = Alloc::new(
            Source::Imported(file),
            info.offset,
            info.size,
            (Location::Device, device, attr),
            Pools::NONE,
            if kind == ExportKind::Ipc {
                Origin::Plain
            } else {
                Origin::Physical
            },
        );
        alloc.export = NonZeroU64::new(shareable);
        let alloc = shard.allocs.insert(alloc) as u32;
        Ok(self.shards.new_handle(&mut shard, index, alloc, true))
    }
}

/// The runtime layer's check of export flags (107000 for a value the
/// enumeration lacks): whether importers must be whitelisted.
pub(crate) fn checks_pid(flags: ExportFlags) -> Result<bool> {
    match flags {
        ExportFlags::Default => Ok(true),
        ExportFlags::DisablePidValidation => Ok(false),
        ExportFlags::Unknown(_) => Err(AclError::RT_PARAM_INVALID),
    }
}

impl Emulator {
    /// `aclrtMemExportToShareableHandle(V2)`: the export's shareable handle
    /// of type `kind` (FABRIC on Atlas A3 only).
    pub fn export_shareable(
        &self,
        handle: RawHandle,
        flags: ExportFlags,
        kind: ShareHandleType,
    ) -> Result<ShareableHandleV2> {
        let p = &self.process;
        p.enter(Op::Export)?;
        // The runtime layer's argument check comes before the context.
        let check_pid = checks_pid(flags)?;
        p.on_device()?;
        if kind == ShareHandleType::Fabric && self.product() != aclmem_core::Product::AtlasA3 {
            return Err(Situation::FabricNotA3.code());
        }
        p.machine.vmm_api()?;
        let id = p.export_handle(
            HandleId::decode(handle.0.get())?,
            check_pid,
            ExportKind::Vmm,
        )?;
        Ok(match kind {
            ShareHandleType::Default => ShareableHandleV2::Default(id),
            ShareHandleType::Fabric => ShareableHandleV2::Fabric(fabric_handle(id)),
        })
    }

    /// `aclrtMemSetPidToShareableHandle(V2)` with a pid list the ACL layer
    /// accepted ([`args::pids`]).
    pub fn set_pids_checked(
        &self,
        shareable: &ShareableHandleV2,
        pids: Checked<&[i32]>,
    ) -> Result<()> {
        let id = self.v2_id(shareable)?;
        self.process.set_pids(id, pids)
    }

    /// `aclrtMemImportFromShareableHandle(V2)` onto `device`.
    pub fn import_shareable(
        &self,
        shareable: &ShareableHandleV2,
        device: impl Into<Target>,
    ) -> Result<RawHandle> {
        let id = self.v2_id(shareable)?;
        raw_handle(
            self.process
                .import_handle(id, device.into(), ExportKind::Vmm)?,
        )
    }

    /// The machine's id of a V2 shareable handle, if the type is allowed
    /// here.
    fn v2_id(&self, shareable: &ShareableHandleV2) -> Result<u64> {
        match shareable {
            ShareableHandleV2::Default(id) => Ok(*id),
            ShareableHandleV2::Fabric(_) if self.product() != aclmem_core::Product::AtlasA3 => {
                Err(Situation::FabricNotA3.code())
            }
            ShareableHandleV2::Fabric(bytes) => {
                fabric_id(bytes).ok_or(Situation::UnknownShareable.code())
            }
        }
    }
}

impl ShareableMemory for Emulator {
    fn export(&self, handle: RawHandle, flags: u64) -> Result<ShareableHandle> {
        match self.export_shareable(
            handle,
            ExportFlags::from_raw(flags),
            ShareHandleType::Default,
        )? {
            ShareableHandleV2::Default(id) => Ok(ShareableHandle(id)),
            ShareableHandleV2::Fabric(_) => Err(AclError::INTERNAL_ERROR),
        }
    }

    fn set_pids(&self, shareable: ShareableHandle, pids: &[i32]) -> Result<()> {
        self.process.set_pids(shareable.0, args::pids(pids)?)
    }

    fn import(&self, shareable: ShareableHandle, device_id: u32) -> Result<RawHandle> {
        self.import_shareable(&ShareableHandleV2::Default(shareable.0), device_id)
    }

    fn export_v2(
        &self,
        handle: RawHandle,
        flags: u64,
        kind: ShareHandleType,
    ) -> Result<ShareableHandleV2> {
        self.export_shareable(handle, ExportFlags::from_raw(flags), kind)
    }

    fn set_pids_v2(&self, shareable: &ShareableHandleV2, pids: &[i32]) -> Result<()> {
        self.set_pids_checked(shareable, args::pids(pids)?)
    }

    fn import_v2(&self, shareable: &ShareableHandleV2, device_id: u32) -> Result<RawHandle> {
        self.import_shareable(shareable, device_id)
    }
}
