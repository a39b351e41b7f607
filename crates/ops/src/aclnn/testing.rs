//! Flat memory from address 0 for the operator API's tests: what a plan
//! reads and writes, without the emulator.

use std::sync::Mutex;

use aclmem_core::AclError;

use super::memory::Memory;

/// Memory as one byte vector from address 0; an access outside it is
/// `ACL_ERROR_INVALID_PARAM`.
pub(crate) struct Flat(pub(crate) Mutex<Vec<u8>>);

impl Memory for Flat {
    fn read(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError> {
        let m = self.0.lock().unwrap();
        let src = m
            .get(addr..addr + buf.len())
            .ok_or(AclError::INVALID_PARAM)?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn write(&self, addr: usize, data: &[u8]) -> Result<(), AclError> {
        let mut m = self.0.lock().unwrap();
        let dst = m
            .get_mut(addr..addr + data.len())
            .ok_or(AclError::INVALID_PARAM)?;
        dst.copy_from_slice(data);
        Ok(())
    }
}
