//! Reading and writing through pointers a C caller passed: NULL or garbage
//! gets `ACL_ERROR_INVALID_PARAM`, never a crash.
//!
//! A pointer into the calling thread's own live stack (where C callers keep
//! their out parameters: `aclrtDrvMemHandle h; aclrtMallocPhysical(&h, ...)`)
//! is certainly mapped and writable, and is used directly. Anything else is
//! copied by the kernel (`process_vm_readv`/`_writev`, or through a pipe
//! where those calls are missing), which answers an address the process may
//! not use with an error instead of a fault: `aclmem-cmem`, shared with the
//! sanitizer and the Python module.

use std::ffi::c_char;

use aclmem_core::AclError;

/// Reads a `T` through a C pointer.
///
/// # Safety
/// `T` must be valid for every bit pattern (plain C data).
pub(crate) unsafe fn read<T: Copy>(p: *const T) -> Result<T, AclError> {
    // SAFETY: the caller's contract, passed on.
    unsafe { aclmem_cmem::read(p) }.ok_or(AclError::INVALID_PARAM)
}

/// Hands `value` out through the caller's out parameter `p`; if `p` is
/// not memory the caller may have written, undoes what the call made
/// (`undo`) and answers the error: nothing is left behind that the caller
/// never learnt of.
///
/// # Safety
/// As for [`write`].
pub(crate) unsafe fn hand_out<T: Copy>(
    p: *mut T,
    value: T,
    undo: impl FnOnce(),
) -> Result<(), AclError> {
    // SAFETY: the caller's contract, passed on.
    unsafe { write(p, value) }.inspect_err(|_| undo())
}

/// Writes a `T` through a C out pointer.
///
/// # Safety
/// `p` must not point into memory this library's Rust code references (the
/// C contract: out parameters are the caller's own memory).
pub(crate) unsafe fn write<T: Copy>(p: *mut T, value: T) -> Result<(), AclError> {
    // SAFETY: the caller's contract, passed on.
    if unsafe { aclmem_cmem::write(p, value) } {
        Ok(())
    } else {
        Err(AclError::INVALID_PARAM)
    }
}

/// Reads `count` values of `T` (at most `max`; more is `over`).
///
/// # Safety
/// As [`read`].
pub(crate) unsafe fn read_array<T: Copy + Default>(
    p: *const T,
    count: usize,
    max: usize,
    over: AclError,
) -> Result<Vec<T>, AclError> {
    if p.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    if count > max {
        return Err(over);
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { aclmem_cmem::read_array(p, count) }.ok_or(AclError::INVALID_PARAM)
}

/// Reads a NUL-terminated string of at most `max` bytes (the NUL
/// excluded); longer or unreadable is 100000.
pub(crate) fn read_cstr(p: *const c_char, max: usize) -> Result<String, AclError> {
    aclmem_cmem::read_cstr(p, max).ok_or(AclError::INVALID_PARAM)
}

/// Writes `text` and a NUL into a C buffer of `len` bytes.
///
/// # Safety
/// As [`write`].
pub(crate) unsafe fn write_cstr(p: *mut c_char, len: usize, text: &str) -> Result<(), AclError> {
    // SAFETY: the caller's contract, passed on.
    if unsafe { aclmem_cmem::write_cstr(p, len, text) } {
        Ok(())
    } else {
        Err(AclError::INVALID_PARAM)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_pointers_are_direct_and_garbage_is_refused() {
        let mut local = 0u64;
        // SAFETY: a live local of this frame.
        unsafe { write(&mut local, 7).unwrap() };
        assert_eq!(local, 7);
        let heap = Box::new(5u32);
        // SAFETY: a live heap value.
        assert_eq!(unsafe { read(&*heap) }, Ok(5));
        for garbage in [8usize, 0xdead_0000, usize::MAX - 16] {
            assert_eq!(
                // SAFETY: the kernel checks the address; nothing is read.
                unsafe { read(garbage as *const u64) },
                Err(AclError::INVALID_PARAM)
            );
            assert_eq!(
                // SAFETY: as above; nothing is written.
                unsafe { write(garbage as *mut u64, 1) },
                Err(AclError::INVALID_PARAM)
            );
        }
        assert_eq!(read_cstr(c"key".as_ptr(), 64), Ok("key".into()));
        assert_eq!(
            read_cstr(c"toolong".as_ptr(), 3),
            Err(AclError::INVALID_PARAM)
        );
    }
}
