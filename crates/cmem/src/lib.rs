//! Memory a C caller passed, read and written under the kernel's check: an
//! address the process may not use is an error, never a fault.
//!
//! - A pointer into the live part of the calling thread's stack (where C
//!   keeps its out parameters) is mapped for certain and used directly.
//! - Anything else is copied by the kernel, `process_vm_readv` and
//!   `process_vm_writev` on this process, which fail with `EFAULT` instead
//!   of faulting.
//! - Where those calls are missing (`ENOSYS` under qemu-user, or refused by
//!   a seccomp filter), through a pipe: `write(2)` from an address and
//!   `read(2)` into one are checked by the kernel the same way.
//!
//! Used by the emulated library (its C ABI and the copies of its engine),
//! the sanitizer (which runs over the real library too, so it cannot use
//! the emulator) and the Python module.

use std::cell::Cell;
use std::ffi::{c_char, c_void};
use std::mem::{MaybeUninit, size_of};

thread_local! {
    /// This thread's stack, `(lowest, highest)` address, found once.
    static STACK: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// This thread's stack, found at its first use.
#[inline]
fn stack() -> (usize, usize) {
    let known = STACK.with(Cell::get);
    if known.1 != 0 {
        return known;
    }
    stack_found()
}

/// The first use of [`stack`] on a thread: found, and kept.
#[cold]
#[inline(never)]
fn stack_found() -> (usize, usize) {
    let found = find_stack();
    STACK.with(|stack| stack.set(found));
    found
}

fn find_stack() -> (usize, usize) {
    let mut attr = MaybeUninit::<libc::pthread_attr_t>::uninit();
    // SAFETY: `pthread_getattr_np` initialises `attr` for the calling thread
    // on success (0); only then is it read and destroyed.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return (0, 0);
        }
        let mut addr: *mut c_void = std::ptr::null_mut();
        let mut size: usize = 0;
        let ok = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        if ok {
            (addr as usize, addr as usize + size)
        } else {
            (0, 0)
        }
    }
}

/// Whether `p..p + len` lies in the part of the calling thread's stack that
/// holds live frames (between this frame and the stack's top): mapped and
/// writable for certain. Only while this frame is on the thread's own
/// stack: on another one (a fiber's, a signal stack), nothing is.
#[inline(never)]
pub fn on_live_stack(p: usize, len: usize) -> bool {
    let here = 0u8;
    let sp = &here as *const u8 as usize;
    let (bottom, top) = stack();
    bottom <= sp && sp < top && p > sp && p.checked_add(len).is_some_and(|end| end <= top)
}

/// The word at `p`, when it lies in the live part of the calling thread's
/// stack (`None` elsewhere).
pub fn stack_word(p: usize) -> Option<usize> {
    if !p.is_multiple_of(align_of::<usize>()) || !on_live_stack(p, size_of::<usize>()) {
        return None;
    }
    // SAFETY: an aligned word between this frame and the top of this
    // thread's stack: mapped, and read as plain data.
    Some(unsafe { (p as *const usize).read_volatile() })
}

/// What the kernel said about a `process_vm_readv` or `_writev`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    Done,
    Refused,
    Unavailable,
}

/// `process_vm_readv` (`write` false: `local` is written from `remote`) or
/// `process_vm_writev` (`remote` written from `local`) of `len` bytes on
/// this process.
///
/// # Safety
/// The local side must be memory the caller may write (for a read) or
/// read (for a write); the remote side is checked by the kernel.
unsafe fn process_vm(local: usize, remote: usize, len: usize, write: bool) -> Kernel {
    // The kernel moves at most about 2 GiB per call: larger copies go in
    // pieces.
    const PIECE: usize = 1 << 30;
    let mut done = 0;
    while done < len {
        let n = PIECE.min(len - done);
        // SAFETY: the caller's contract, for a part of the range.
        match unsafe { process_vm_once(local + done, remote + done, n, write) } {
            Kernel::Done => done += n,
            other => return other,
        }
    }
    Kernel::Done
}

/// One `process_vm_readv`/`_writev` call of at most [`process_vm`]'s piece.
///
/// # Safety
/// As for [`process_vm`].
unsafe fn process_vm_once(local: usize, remote: usize, len: usize, write: bool) -> Kernel {
    let local = libc::iovec {
        iov_base: local as *mut c_void,
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: remote as *mut c_void,
        iov_len: len,
    };
    // SAFETY: the kernel checks both iovecs, which are live locals; the
    // local side is the caller's to read or write.
    let n = unsafe {
        if write {
            libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0)
        } else {
            libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0)
        }
    };
    if n >= 0 {
        // A short transfer: the rest of the range is not usable.
        return if n as usize == len {
            Kernel::Done
        } else {
            Kernel::Refused
        };
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EPERM) => Kernel::Unavailable,
        _ => Kernel::Refused,
    }
}

/// The fallback: `count` bytes from `src` to `dst` through a pipe, a page
/// at a time: `write(2)` from `src` and `read(2)` into `dst`, both checked
/// by the kernel. Err(EMFILE or ENFILE) when no pipe can be made.
///
/// # Safety
/// Any byte of `dst..dst + count` the kernel lets through may be written.
unsafe fn through_pipe(dst: usize, src: usize, count: usize) -> Result<(), i32> {
    // The pipe, and the process that made it: a forked child makes its own
    // (sharing its parent's would mix their bytes; the inherited ends are
    // left open, as the child may exec).
    static PIPE: aclmem_fork::ForkMutex<Option<([libc::c_int; 2], libc::pid_t)>> =
        aclmem_fork::ForkMutex::new(|| None);
    let mut guard = PIPE.lock();
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    if guard.is_some_and(|(_, pid)| pid != me) {
        *guard = None;
    }
    if guard.is_none() {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `pipe2` writes two descriptors into a live local array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EMFILE));
        }
        *guard = Some((fds, me));
    }
    let Some(([rd, wr], _)) = *guard else {
        return Err(libc::EIO);
    };
    // Page-sized pieces: below the pipe's capacity, so a write never
    // blocks; the pipe is drained after each piece (into `dst`, or into a
    // local buffer when `dst` refuses).
    const PIECE: usize = 4096;
    let mut done = 0;
    while done < count {
        let want = PIECE.min(count - done);
        // SAFETY: the kernel reads `src + done..+want`, checking it (EFAULT
        // or a short count if it is not readable).
        let wrote = unsafe { libc::write(wr, (src + done) as *const c_void, want) };
        let wrote = usize::try_from(wrote).unwrap_or(0);
        let mut got = 0;
        let mut refused = wrote != want;
        while got < wrote {
            // SAFETY: the kernel writes `dst + done + got..`, checking it;
            // the caller lets every byte of `dst` be written.
            let n = unsafe { libc::read(rd, (dst + done + got) as *mut c_void, wrote - got) };
            match usize::try_from(n) {
                Ok(n) if n > 0 => got += n,
                _ => {
                    // The destination refused: drain into a buffer of ours.
                    refused = true;
                    let mut sink = [0u8; PIECE];
                    // SAFETY: reads into our own buffer, at most its size.
                    let n = unsafe { libc::read(rd, sink.as_mut_ptr().cast(), wrote - got) };
                    match usize::try_from(n) {
                        Ok(n) if n > 0 => got += n,
                        _ => {
                            // The pipe cannot be drained: start afresh.
                            // SAFETY: our own descriptors, closed once.
                            unsafe {
                                libc::close(rd);
                                libc::close(wr);
                            }
                            *guard = None;
                            return Err(libc::EFAULT);
                        }
                    }
                }
            }
        }
        if refused {
            return Err(libc::EFAULT);
        }
        done += want;
    }
    Ok(())
}

/// Copies `count` bytes from the address `src` to the address `dst`,
/// either of which may be an address a C caller passed: both are checked
/// by the kernel. `Err(errno)`: `EFAULT` when either may not be used,
/// `EMFILE`/`ENFILE` when the fallback finds no descriptor.
///
/// # Safety
/// `dst..dst + count` must not be memory that Rust code holds a reference
/// to (a C caller's memory, or a buffer the caller owns).
pub unsafe fn copy(dst: usize, src: usize, count: usize) -> Result<(), i32> {
    if count == 0 {
        return Ok(());
    }
    if src.checked_add(count).is_none() || dst.checked_add(count).is_none() {
        return Err(libc::EFAULT);
    }
    // SAFETY: `dst` is the caller's to write, by the contract; the kernel
    // checks both sides.
    match unsafe { process_vm(dst, src, count, false) } {
        Kernel::Done => Ok(()),
        Kernel::Refused => Err(libc::EFAULT),
        // SAFETY: as above.
        Kernel::Unavailable => unsafe { through_pipe(dst, src, count) },
    }
}

/// Copies `dst.len()` bytes from the address `src` into `dst`; `false`
/// when the process may not read the whole range.
pub fn read_bytes(src: usize, dst: &mut [u8]) -> bool {
    if src == 0 && !dst.is_empty() {
        return false;
    }
    // SAFETY: `dst` is our own buffer, borrowed mutably.
    unsafe { copy(dst.as_mut_ptr() as usize, src, dst.len()) }.is_ok()
}

/// Copies `src` to the address `dst`; `false` when the process may not
/// write the whole range.
///
/// # Safety
/// As for [`copy`].
pub unsafe fn write_bytes(dst: usize, src: &[u8]) -> bool {
    if dst == 0 && !src.is_empty() {
        return false;
    }
    // SAFETY: the caller's contract.
    unsafe { copy(dst, src.as_ptr() as usize, src.len()) }.is_ok()
}

/// Sets `count` bytes at the address `dst` to `value`, checked by the
/// kernel.
///
/// # Safety
/// As for [`copy`].
pub unsafe fn fill(dst: usize, value: u8, count: usize) -> Result<(), i32> {
    const CHUNK: usize = 1 << 20;
    let pattern = vec![value; CHUNK.min(count)];
    let mut done = 0;
    while done < count {
        let n = CHUNK.min(count - done);
        // SAFETY: the caller's contract; the source is our own pattern.
        unsafe { copy(dst + done, pattern.as_ptr() as usize, n) }?;
        done += n;
    }
    Ok(())
}

/// Reads a `T` through a pointer a C caller passed; `None` for NULL or an
/// address this process may not read.
///
/// # Safety
/// `T` must be valid for every bit pattern (plain C data).
pub unsafe fn read<T: Copy>(p: *const T) -> Option<T> {
    if p.is_null() {
        return None;
    }
    let addr = p as usize;
    if on_live_stack(addr, size_of::<T>()) {
        // SAFETY: the range is mapped (a live stack frame of this thread);
        // `T` accepts any bytes; the read tolerates misalignment.
        return Some(unsafe { p.read_unaligned() });
    }
    let mut value = MaybeUninit::<T>::uninit();
    // SAFETY: a `T`-sized byte view of our own local, only written.
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(value.as_mut_ptr().cast::<u8>(), size_of::<T>()) };
    if !read_bytes(addr, bytes) {
        return None;
    }
    // SAFETY: every byte was written, and `T` accepts any bytes.
    Some(unsafe { value.assume_init() })
}

/// Writes a `T` through a C out pointer; `false` for NULL or an address
/// this process may not write.
///
/// # Safety
/// `p` must not point into memory Rust code references (the C contract:
/// out parameters are the caller's own memory).
pub unsafe fn write<T: Copy>(p: *mut T, value: T) -> bool {
    if p.is_null() {
        return false;
    }
    let addr = p as usize;
    if on_live_stack(addr, size_of::<T>()) {
        // SAFETY: mapped and writable (a live stack frame of this thread);
        // misalignment tolerated.
        unsafe { p.write_unaligned(value) };
        return true;
    }
    // SAFETY: a byte view of a local.
    let bytes =
        unsafe { std::slice::from_raw_parts((&value as *const T).cast::<u8>(), size_of::<T>()) };
    // SAFETY: by the caller's contract the destination is the C caller's.
    unsafe { write_bytes(addr, bytes) }
}

/// Reads `count` values of `T` at `p`; `None` for NULL or memory the
/// process may not read.
///
/// # Safety
/// As for [`read`].
pub unsafe fn read_array<T: Copy + Default>(p: *const T, count: usize) -> Option<Vec<T>> {
    if p.is_null() {
        return None;
    }
    let mut out = vec![T::default(); count];
    let len = count.checked_mul(size_of::<T>())?;
    // SAFETY: a byte view of our own vector, completely overwritten on
    // success; `T` accepts any bytes.
    let bytes = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
    (count == 0 || read_bytes(p as usize, bytes)).then_some(out)
}

/// Reads a NUL-terminated UTF-8 string of at most `max` bytes (the NUL
/// excluded); `None` when longer, unreadable or not UTF-8.
pub fn read_cstr(p: *const c_char, max: usize) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut out = Vec::new();
    let mut at = p as usize;
    // Page by page, so a string ending just before an unmapped page is
    // read.
    while out.len() <= max {
        let to_page_end = 4096 - (at % 4096);
        let mut chunk = vec![0u8; to_page_end.min(max + 1 - out.len())];
        if !read_bytes(at, &mut chunk) {
            return None;
        }
        if let Some(nul) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            return String::from_utf8(out).ok();
        }
        out.extend_from_slice(&chunk);
        at += chunk.len();
    }
    None
}

/// Writes `text` and a NUL into a C buffer of `len` bytes; `false` when it
/// does not fit or the buffer may not be written.
///
/// # Safety
/// As for [`write()`].
pub unsafe fn write_cstr(p: *mut c_char, len: usize, text: &str) -> bool {
    if p.is_null() || text.len() >= len {
        return false;
    }
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: by the caller's contract.
    unsafe { write_bytes(p as usize, &bytes) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests, one at a time: a page one of them unmapped must stay
    /// unmapped until it checks that it is refused (another test's page
    /// would otherwise land in the hole).
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The top page of the address space: no mapping of the process can
    /// ever hold it (the kernel's half on x86_64 and aarch64). A page
    /// mapped and unmapped again is no stand-in: the test harness's other
    /// threads may map that address again at once (the next `mmap` takes
    /// the highest free range), and a write meant to be refused lands in
    /// their memory.
    fn unmapped() -> usize {
        usize::MAX & !4095
    }

    /// A page mapped with `prot`.
    fn page(prot: libc::c_int) -> usize {
        // SAFETY: a fresh anonymous mapping of our own.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        // SAFETY: `p` is our page.
        unsafe {
            p.cast::<u64>().write(0x0123_4567_89ab_cdef);
            assert_eq!(libc::mprotect(p, 4096, prot), 0);
        }
        p as usize
    }

    #[test]
    fn readable_memory_is_read_and_anything_else_is_refused() {
        let _serial = serial();
        let local = 7u64;
        // SAFETY: a live local.
        assert_eq!(unsafe { read(&local) }, Some(7));
        let heap = Box::new(0xfeed_u32);
        // SAFETY: a live heap value.
        assert_eq!(unsafe { read(&*heap) }, Some(0xfeed));
        let ro = page(libc::PROT_READ);
        assert_eq!(
            // SAFETY: the kernel checks the address.
            unsafe { read(ro as *const u64) },
            Some(0x0123_4567_89ab_cdef)
        );
        for bad in [
            0usize,
            1,
            8,
            usize::MAX - 4,
            page(libc::PROT_NONE),
            unmapped(),
        ] {
            // SAFETY: the kernel checks the address; nothing is read.
            assert_eq!(unsafe { read(bad as *const u64) }, None, "{bad:#x}");
        }
    }

    #[test]
    fn writes_land_where_allowed_and_are_refused_elsewhere() {
        let _serial = serial();
        let mut heap = Box::new(0u64);
        // SAFETY: our own box, not borrowed elsewhere during the call.
        assert!(unsafe { write(&mut *heap as *mut u64, 42) });
        assert_eq!(*heap, 42);
        for bad in [0usize, 8, page(libc::PROT_READ), unmapped()] {
            // SAFETY: the kernel checks the address; nothing Rust owns.
            assert!(!unsafe { write(bad as *mut u64, 1) }, "{bad:#x}");
        }
        let mut buf = [0xffu8; 8];
        // SAFETY: our own buffer.
        assert!(unsafe { write_cstr(buf.as_mut_ptr().cast(), 8, "abc") });
        assert_eq!(read_cstr(buf.as_ptr().cast(), 7).as_deref(), Some("abc"));
        // SAFETY: as above; too long is refused before anything is written.
        assert!(!unsafe { write_cstr(buf.as_mut_ptr().cast(), 3, "abc") });
        assert_eq!(read_cstr(buf.as_ptr().cast(), 2), None, "longer than max");
    }

    #[test]
    fn the_pipe_fallback_copies_and_refuses_like_the_kernel_calls() {
        let _serial = serial();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut out = vec![0u8; data.len()];
        // SAFETY: `out` is our own buffer.
        unsafe {
            through_pipe(
                out.as_mut_ptr() as usize,
                data.as_ptr() as usize,
                data.len(),
            )
        }
        .unwrap();
        assert_eq!(out, data);
        let mut small = [0u8; 8];
        for bad in [1usize, page(libc::PROT_NONE), unmapped()] {
            // SAFETY: `small` is ours; the source is checked.
            let r = unsafe { through_pipe(small.as_mut_ptr() as usize, bad, 8) };
            assert_eq!(r, Err(libc::EFAULT), "{bad:#x}");
            // SAFETY: the destination is checked; nothing Rust owns.
            let r = unsafe { through_pipe(bad, data.as_ptr() as usize, 8) };
            assert_eq!(r, Err(libc::EFAULT), "{bad:#x}");
        }
        // Still usable after refusals, and nothing stale is left behind.
        let word = 0x1122_3344_5566_7788u64.to_ne_bytes();
        // SAFETY: `small` is ours.
        unsafe { through_pipe(small.as_mut_ptr() as usize, word.as_ptr() as usize, 8) }.unwrap();
        assert_eq!(small, word);
    }

    #[test]
    fn fills_are_checked() {
        let _serial = serial();
        let mut buf = vec![0u8; 3 << 20];
        // SAFETY: our own buffer.
        unsafe { fill(buf.as_mut_ptr() as usize, 9, buf.len()) }.unwrap();
        assert!(buf.iter().all(|&b| b == 9));
        // SAFETY: the kernel checks the address.
        let r = unsafe { fill(unmapped(), 1, 16) };
        assert_eq!(r, Err(libc::EFAULT));
    }
}

// The README (this crate's page on crates.io) is compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
