//! Sharing physical memory between processes:
//! `aclrtMemExportToShareableHandle(V2)`, `aclrtMemSetPidToShareableHandle(V2)`,
//! `aclrtMemImportFromShareableHandle(V2)`.
//!
//! An export runs claim (the shard: mark the handle, hold the allocation),
//! register (the machine's registry, no process lock), commit (the shard
//! again), so the machine's lock is never taken under a process lock and a
//! handle freed meanwhile never has its memory reused under the export.

use crate::process::sharing::checks_pid;

use aclmem_core::AclError;
use aclmem_hal::{RawHandle, ShareHandleType, ShareableHandle, ShareableHandleV2, ShareableMemory};

use crate::Target;
use crate::args::{self, Checked};
use crate::calls::physical::raw_handle;
use crate::errors::Situation;
use crate::machine::ExportKind;
use crate::process::Result;
use crate::process::handles::HandleId;
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
        p.machine().vmm_api()?;
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
