//! IPC keys: `aclrtIpcMemGetExportKey`, `aclrtIpcMemSetImportPid`,
//! `aclrtIpcMemImportByKey`, `aclrtIpcMemClose`. A key exports a whole
//! `aclrtMalloc` block; an import maps it at an address the runtime
//! chooses.

use aclmem_core::{AclError, Product, RunMode};

use crate::Target;
use crate::args::{self, Checked};
use crate::errors::Situation;
use crate::machine::ExportKind;
use crate::os::pool::PAGE;
use crate::process::Result;
use crate::{Emulator, Op};

/// The IPC key string of an export: what `aclrtIpcMemGetExportKey` writes
/// (fits the documented 65-byte buffer).
pub fn ipc_key(id: u64) -> String {
    format!("aclmem-ipc-{id:016x}")
}

/// Parses an IPC key back.
pub fn ipc_key_id(key: &str) -> Option<u64> {
    u64::from_str_radix(key.strip_prefix("aclmem-ipc-")?, 16).ok()
}

/// The id a key names; 0 (never an export's id, so unknown where it is
/// looked up, after the checks that come first) for text that is no key.
fn key_id(key: &str) -> u64 {
    ipc_key_id(key).unwrap_or(0)
}

impl Emulator {
    /// `aclrtIpcMemGetExportKey`: the key of the `aclrtMalloc` block that
    /// starts at `addr` (the whole block: `size` must fit in it and be page
    /// aligned).
    pub fn ipc_export_key(&self, addr: usize, size: usize, flags: u64) -> Result<String> {
        self.ipc_export_key_checked(addr, args::ipc_export(size, flags)?)
    }

    /// `aclrtIpcMemGetExportKey` with a size and flags the runtime layer
    /// accepted ([`args::ipc_export`]).
    pub fn ipc_export_key_checked(
        &self,
        addr: usize,
        checked: Checked<(usize, bool)>,
    ) -> Result<String> {
        let p = &self.process;
        let (size, check_pid) = checked.into_inner();
        p.enter_rt(Op::Export)?;
        if p.machine().product == Product::Atlas200IA2 || p.machine().config.run_mode == RunMode::Rc
        {
            return Err(AclError::RT_FEATURE_NOT_SUPPORT);
        }
        // Export through a temporary internal handle of the block, made
        // under the locks that found the block.
        let id = p.new_handle_of_mapping(addr, Situation::IpcRange, |m| {
            if !m.plain || size > m.mapped || !size.is_multiple_of(PAGE as usize) {
                return Err(Situation::IpcRange.code());
            }
            if m.imported {
                return Err(Situation::ExportImported.code());
            }
            Ok(())
        })?;
        let exported = p.export_handle(id, check_pid, ExportKind::Ipc);
        // The block's mapping keeps the memory; drop the temporary handle.
        p.drop_handle(id);
        exported.map(ipc_key)
    }

    /// `aclrtIpcMemSetImportPid`.
    pub fn ipc_set_pids(&self, key: &str, pids: &[i32]) -> Result<()> {
        self.ipc_set_pids_checked(key, args::ipc_pids(pids)?)
    }

    /// `aclrtIpcMemSetImportPid` with a pid list the runtime layer accepted
    /// ([`args::ipc_pids`]).
    pub fn ipc_set_pids_checked(&self, key: &str, pids: Checked<&[i32]>) -> Result<()> {
        self.process.set_pids(key_id(key), pids)
    }

    /// `aclrtIpcMemImportByKey` onto `device` (the calling thread's, for
    /// the C library): the address where the block is mapped.
    pub fn ipc_import(&self, key: &str, device: impl Into<Target>, flags: u64) -> Result<usize> {
        args::ipc_import_flags(flags)?;
        let p = &self.process;
        let id = p.import_handle(key_id(key), device.into(), ExportKind::Ipc)?;
        let size = p.handle_size(id)?;
        p.map_internal(id, size)
    }

    /// `aclrtIpcMemClose`: an importer unmaps its mapping of `key`; the
    /// exporter withdraws the key (no new imports; importers keep what they
    /// mapped, and its `aclrtFree` frees the block).
    pub fn ipc_close(&self, key: &str) -> Result<()> {
        let p = &self.process;
        p.on_device()?;
        p.ipc_close(key_id(key))
    }
}
