//! The memory a plan reads and writes.

use aclmem_core::AclError;

/// The device memory a plan reads and writes (from several threads at
/// once when an operation is split into bands).
pub trait Memory: Sync {
    /// Reads `buf.len()` bytes at `addr`.
    fn read(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError>;
    /// Writes `data` at `addr`.
    fn write(&self, addr: usize, data: &[u8]) -> Result<(), AclError>;
}
