//! What a process keeps of the pool files it imported from, and how it
//! gets one: from the exporting process on a private machine, over the
//! exporter's listener on a shared one.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Weak};

use super::handles::{Alloc, Source};
use super::{Process, Result};
use crate::errors::Situation;
use crate::machine::{ExportInfo, ExportKind};
use crate::os::pool::PoolFile;

/// What an importer remembers of a received pool file, so that importing
/// many handles of one exporter needs one descriptor.
pub(crate) struct ImportedPool {
    exporter: (u32, u64),
    pool: u32,
    file: Weak<PoolFile>,
}

impl Process {
    /// Gets the exporter's pool file for an admitted import: from the
    /// exporter's `Process` on a private machine, over its listener socket
    /// on a shared one.
    pub(crate) fn fetch(&self, id: u64, kind: ExportKind) -> Result<(ExportInfo, Arc<PoolFile>)> {
        if self.machine.name.is_some() {
            let (info, fd) = super::listener::request(self, id, kind)?;
            return Ok((info, self.adopt_pool(info, fd)));
        }
        let region = &self.machine.region;
        let info = region.admit(self.slot, (self.slot, self.pid), id, kind)?;
        let exporter = super::join::member(self, info.exporter.0, info.exporter.1);
        let file = exporter
            .ok_or(Situation::UnknownShareable.code())
            .and_then(|p| p.export_file(&info));
        if file.is_err()
            && let Ok(g) = region.lock(self.slot)
        {
            region.drop_holder(&g, id, self.slot);
        }
        Ok((info, file?))
    }

    /// Keeps one descriptor per exporter pool: a second import of the same
    /// pool reuses the first one's file and closes the new descriptor.
    fn adopt_pool(&self, info: ExportInfo, fd: OwnedFd) -> Arc<PoolFile> {
        let mut imported = self.imported.lock();
        imported.retain(|p| p.file.strong_count() > 0);
        let identity = rustix::fs::fstat(&fd).map(|st| (st.st_dev, st.st_ino)).ok();
        if let Some(existing) = imported.iter().find_map(|p| {
            let f = p.file.upgrade()?;
            (p.exporter == (info.exporter.0, info.exporter.1)
                && p.pool == info.pool
                && Some(f.identity) == identity)
                .then_some(f)
        }) {
            return existing;
        }
        let f = Arc::new(PoolFile::adopt(fd));
        imported.push(ImportedPool {
            exporter: (info.exporter.0, info.exporter.1),
            pool: info.pool,
            file: Arc::downgrade(&f),
        });
        f
    }

    /// The file a listener sends for an export of this process: 207005 if
    /// moving the allocation into it needs a descriptor this process
    /// cannot have, "unknown shareable handle" for anything else.
    pub(crate) fn export_file(&self, info: &ExportInfo) -> Result<Arc<PoolFile>> {
        let unknown = Situation::UnknownShareable.code();
        // The allocation exported as `info.id`, on its device's shard, in a
        // file of its own (moved there at its first import).
        let index = u8::try_from(info.device).map_err(|_| unknown)?;
        if info.pool != crate::machine::OWN_FILE
            || usize::from(index) >= self.machine.config.devices as usize
        {
            return Err(unknown);
        }
        let alloc = {
            let mut shard = self.shards.lock(index);
            let (alloc, a) = shard
                .allocs
                .iter_mut()
                .find(|(_, a)| a.export.is_some_and(|e| e.get() == info.id))
                .ok_or(unknown)?;
            if let Source::Own(file) = a.source() {
                return Ok(Arc::clone(file));
            }
            // Held while it moves.
            a.refs += 1;
            alloc as u32
        };
        let moved = self.give_own_file(index, alloc);
        let mut shard = self.shards.lock(index);
        let file = match (shard.allocs.get(alloc as usize).map(Alloc::source), moved) {
            (Some(Source::Own(file)), Ok(())) => Ok(Arc::clone(file)),
            (_, Err(e)) if e == Situation::FdLimit.code() => Err(e),
            _ => Err(unknown),
        };
        let released = shard.unref(alloc);
        drop(shard);
        self.finish_release(index, released);
        file
    }
}
