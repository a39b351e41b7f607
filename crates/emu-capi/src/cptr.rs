//! Reading and writing through pointers a C caller passed: NULL or garbage
//! gets `ACL_ERROR_INVALID_PARAM`, never a crash.
//!
//! A pointer into the calling thread's own live stack (where C callers keep
//! their out parameters: `aclrtDrvMemHandle h; aclrtMallocPhysical(&h, ...)`)
//! is certainly mapped and writable, and is used directly. Anything else is
//! copied by the kernel (`process_vm_readv`, or through a scratch file where
//! that call is missing), which answers an address the process may not use
//! with an error instead of a fault.

use std::cell::Cell;
use std::ffi::{c_char, c_void};
use std::mem::{MaybeUninit, size_of};

use aclmem_core::AclError;
use aclmem_emu::hostmem;

thread_local! {
    /// The top (highest address) of this thread's stack, found once.
    static STACK_TOP: Cell<usize> = const { Cell::new(0) };
}

fn stack_top() -> usize {
    STACK_TOP.with(|top| {
        if top.get() == 0 {
            top.set(find_stack_top());
        }
        top.get()
    })
}

fn find_stack_top() -> usize {
    let mut attr = MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: `pthread_getattr_np` initialises `attr` for the calling thread
    // on success (0); only then is it read and destroyed.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return 0;
        }
        let mut addr: *mut c_void = std::ptr::null_mut();
        let mut size: usize = 0;
        let ok = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        if ok { addr as usize + size } else { 0 }
    }
}

/// Whether `p..p + len` lies in the part of the calling thread's stack that
/// holds live frames (between this frame and the stack's top): mapped and
/// writable for certain.
#[inline(never)]
fn on_live_stack(p: usize, len: usize) -> bool {
    let here = 0u8;
    let sp = &here as *const u8 as usize;
    let top = stack_top();
    p > sp && p.checked_add(len).is_some_and(|end| end <= top)
}

/// Reads a `T` through a C pointer.
///
/// # Safety
/// `T` must be valid for every bit pattern (plain C data).
pub(crate) unsafe fn read<T: Copy>(p: *const T) -> Result<T, AclError> {
    if p.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    let addr = p as usize;
    if on_live_stack(addr, size_of::<T>()) {
        // SAFETY: the range is mapped (a live stack frame of this thread);
        // `T` accepts any bytes; the read tolerates misalignment.
        return Ok(unsafe { p.read_unaligned() });
    }
    let mut value = MaybeUninit::<T>::uninit();
    // SAFETY: a `T`-sized byte view of our own local; filled completely by a
    // successful read.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(value.as_mut_ptr().cast::<u8>(), size_of::<T>()) };
    if !hostmem::read(addr, bytes) {
        return Err(AclError::INVALID_PARAM);
    }
    // SAFETY: every byte was written, and `T` accepts any bytes.
    Ok(unsafe { value.assume_init() })
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
    if p.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    let addr = p as usize;
    if on_live_stack(addr, size_of::<T>()) {
        // SAFETY: mapped and writable (a live stack frame of this thread);
        // misalignment tolerated.
        unsafe { p.write_unaligned(value) };
        return Ok(());
    }
    // SAFETY: a byte view of a local; by the caller's contract the
    // destination is the C caller's memory.
    let bytes =
        unsafe { std::slice::from_raw_parts((&value as *const T).cast::<u8>(), size_of::<T>()) };
    // SAFETY: as above.
    if unsafe { hostmem::write(addr, bytes) } {
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
    let mut out = vec![T::default(); count];
    let len = count * size_of::<T>();
    // SAFETY: a byte view of our own vector, completely overwritten on
    // success; `T` accepts any bytes.
    let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
    if count > 0 && !hostmem::read(p as usize, bytes) {
        return Err(AclError::INVALID_PARAM);
    }
    Ok(out)
}

/// Reads a NUL-terminated string of at most `max` bytes (the NUL
/// excluded); longer or unreadable is 100000.
pub(crate) fn read_cstr(p: *const c_char, max: usize) -> Result<String, AclError> {
    if p.is_null() {
        return Err(AclError::INVALID_PARAM);
    }
    let mut out = Vec::new();
    let mut at = p as usize;
    // Page by page, so a valid string ending just before an unmapped page
    // is read.
    while out.len() <= max {
        let to_page_end = 4096 - (at % 4096);
        let mut chunk = vec![0u8; to_page_end.min(max + 1 - out.len())];
        if !hostmem::read(at, &mut chunk) {
            return Err(AclError::INVALID_PARAM);
        }
        if let Some(nul) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            return String::from_utf8(out).map_err(|_| AclError::INVALID_PARAM);
        }
        out.extend_from_slice(&chunk);
        at += chunk.len();
    }
    Err(AclError::INVALID_PARAM)
}

/// Writes `text` and a NUL into a C buffer of `len` bytes.
///
/// # Safety
/// As [`write`].
pub(crate) unsafe fn write_cstr(p: *mut c_char, len: usize, text: &str) -> Result<(), AclError> {
    if p.is_null() || text.len() >= len {
        return Err(AclError::INVALID_PARAM);
    }
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: by the caller's contract.
    if unsafe { hostmem::write(p as usize, &bytes) } {
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
        assert!(on_live_stack(&local as *const u64 as usize, 8) || stack_top() == 0);
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
