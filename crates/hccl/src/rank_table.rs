//! Communicators from a rank table (`RANK_TABLE_FILE`,
//! `HcclCommInitClusterInfo(Config)`): every rank knows rank 0's address
//! from the table, so rank 0 serves the rendezvous there and the others
//! connect to it, as they do to a root info's. The table's type, and its
//! JSON, are `aclmem_formats::rank_table`'s (written by `aclmem run` with
//! the same type).

pub use aclmem_formats::rank_table::RankEntry;
use aclmem_formats::rank_table::RankTable;

use crate::types::Hccl;

/// Reads and checks the table at `path`: unreadable is
/// `HCCL_E_OPEN_FILE_FAILURE`, malformed `HCCL_E_PARA` (with a message
/// naming the defect).
pub fn load(path: &str) -> Result<Vec<RankEntry>, Hccl> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        eprintln!("aclmem-hccl: rank table {path}: {e}");
        Hccl::E_OPEN_FILE_FAILURE
    })?;
    RankTable::parse(&text)
        .and_then(|t| t.ranks())
        .map_err(|e| {
            eprintln!("aclmem-hccl: rank table {path}: {e}");
            Hccl::E_PARA
        })
}
