//! Exports and imports of physical memory, as the process keeps them.

use super::listener;
use crate::args::Checked;
use crate::{Op, Target};
use std::num::NonZeroU64;

use aclmem_core::{AclError, Location, MemAttr};
use aclmem_sys::ExportFlags;

use super::handles::{Alloc, HandleId, Origin, Source};
use super::{Process, Result};
use crate::errors::Situation;
use crate::machine::Pools;
use crate::machine::{ExportInfo, ExportKind, OWN_FILE};

impl Process {
    /// `aclrtIpcMemClose` of the shareable handle `key`: an importer
    /// unmaps its mapping of it; the exporter withdraws it (no new imports;
    /// importers keep what they mapped).
    pub(crate) fn ipc_close(&self, key: u64) -> Result<()> {
        let imported_at = {
            let va = self.va.lock();
            va.maps.iter().find_map(|(&addr, e)| {
                self.shards
                    .lock(e.shard)
                    .allocs
                    .get(e.alloc as usize)
                    .filter(|a| a.export.is_some_and(|e| e.get() == key) && a.is_imported())
                    .map(|_| addr)
            })
        };
        if let Some(addr) = imported_at {
            self.unmap_at(addr, true)?;
            return self.release_range(addr, true);
        }
        let region = &self.machine.region;
        let g = region.lock(self.slot)?;
        match region.export_info(&g, key) {
            Some(i)
                if i.kind == ExportKind::Ipc
                    && (i.exporter.0, i.exporter.1) == (self.slot, self.generation) =>
            {
                region.withdraw(&g, key);
                Ok(())
            }
            _ => Err(Situation::UnknownShareable.code()),
        }
    }

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
                // offset 0 (made at the export, or else at the first
                // import: process/own_file.rs).
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
            listener::ensure_listener(self)
        } else {
            Ok(())
        }
        .and_then(|()| {
            let region = &self.machine.region;
            let g = region.lock(self.slot)?;
            region.export(&g, kind, self.slot, check_pid, pools, info)
        });
        // Between processes the allocation gets its file now, while the
        // claim holds it, so that an import later costs the exporter no
        // descriptor it did not hold at the export. A move that cannot be
        // made now (a mapping in use) is made at the first import instead.
        if registered.is_ok() && self.machine.name.is_some() {
            let _ = self.give_own_file(id.shard, h.alloc);
        }
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
