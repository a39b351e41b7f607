//! The two messages of an import between real processes: the importer's
//! request and the exporter's reply (with the descriptor alongside, as
//! `SCM_RIGHTS`). Both are fixed-size `#[repr(C)]` values read and written
//! whole, never at hand-counted offsets; both ends run on one machine, so
//! native byte order is the wire's.

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

use super::layout::{ExportInfo, ExportKind};

/// Marks both messages ("ACLM").
pub(crate) const MAGIC: u32 = 0x4143_4c4d;

/// What an importer asks: export `id` of `kind`, for the process in
/// `slot` (of `generation`), whose pid the exporter learns from the kernel.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct Request {
    pub(crate) magic: u32,
    pub(crate) kind: u32,
    pub(crate) id: u64,
    pub(crate) slot: u32,
    pub(crate) _pad: u32,
    pub(crate) generation: u64,
}

/// The exporter's answer: a code, and on success where the memory is in
/// the descriptor sent with it.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct Reply {
    pub(crate) magic: u32,
    pub(crate) code: i32,
    pub(crate) id: u64,
    pub(crate) offset: u64,
    pub(crate) size: u64,
    pub(crate) attr: u32,
    pub(crate) location_id: u32,
    pub(crate) location_type: u32,
    pub(crate) pool: u32,
    pub(crate) device: u32,
    pub(crate) exporter_slot: u32,
    pub(crate) exporter_generation: u64,
}

impl Request {
    pub(crate) fn new(kind: ExportKind, id: u64, slot: u32, generation: u64) -> Request {
        Request {
            magic: MAGIC,
            kind: kind as u32,
            id,
            slot,
            _pad: 0,
            generation,
        }
    }

    /// The request in `bytes`, if it is one.
    pub(crate) fn parse(bytes: &[u8]) -> Option<Request> {
        Request::read_from_bytes(bytes)
            .ok()
            .filter(|r| r.magic == MAGIC)
    }

    pub(crate) fn kind(&self) -> ExportKind {
        ExportKind::from_raw(self.kind)
    }
}

impl Reply {
    /// A refusal with `code`.
    pub(crate) fn refusal(code: i32) -> Reply {
        Reply {
            magic: MAGIC,
            code,
            ..Reply::new_zeroed()
        }
    }

    /// Success: the export's placement.
    pub(crate) fn success(info: &ExportInfo) -> Reply {
        Reply {
            magic: MAGIC,
            code: 0,
            id: info.id,
            offset: info.offset,
            size: info.size,
            attr: info.attr,
            location_id: info.location.0,
            location_type: info.location.1,
            pool: info.pool,
            device: info.device,
            exporter_slot: info.exporter.0,
            exporter_generation: info.exporter.1,
        }
    }

    /// The reply in `bytes`, if it is one.
    pub(crate) fn parse(bytes: &[u8]) -> Option<Reply> {
        Reply::read_from_bytes(bytes)
            .ok()
            .filter(|r| r.magic == MAGIC)
    }

    /// What a successful reply says of the export.
    pub(crate) fn info(&self, kind: ExportKind) -> ExportInfo {
        ExportInfo {
            id: self.id,
            kind,
            check_pid: true,
            exporter: (self.exporter_slot, self.exporter_generation, 0),
            pool: self.pool,
            offset: self.offset,
            size: self.size,
            location: (self.location_id, self.location_type),
            attr: self.attr,
            device: self.device,
        }
    }
}

/// The size of a request.
pub(crate) const REQUEST_BYTES: usize = size_of::<Request>();
/// The size of a reply.
pub(crate) const REPLY_BYTES: usize = size_of::<Reply>();

const _: () = assert!(REQUEST_BYTES == 32 && REPLY_BYTES == 64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_garbage_is_refused() {
        let r = Request::new(ExportKind::Ipc, 77, 3, 9);
        let back = Request::parse(r.as_bytes()).unwrap();
        assert_eq!(
            (back.kind(), back.id, back.slot, back.generation),
            (ExportKind::Ipc, 77, 3, 9)
        );
        assert!(Request::parse(&[0u8; REQUEST_BYTES]).is_none());
        assert!(Request::parse(&r.as_bytes()[..31]).is_none());
        let refusal = Reply::refusal(207006);
        assert_eq!(Reply::parse(refusal.as_bytes()).unwrap().code, 207006);
        assert!(Reply::parse(&[0xFF; REPLY_BYTES]).is_none());
    }
}
