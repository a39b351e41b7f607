//! Reading C data through pointers a program passed, checked by the kernel:
//! an address the process may not read is answered with `None`, never a
//! fault.
//!
//! The sanitizer reads what a call hands in (a `aclrtPhysicalMemProp`, a
//! DEFAULT shareable handle) before the library underneath has seen it, and
//! out values after the library answered. A program may pass NULL, `1`, or
//! a page it unmapped: the library answers those with a code (100000), and
//! the sanitizer must not turn them into a crash. So it reads like the
//! emulated library does (`crates/emu-capi/src/cptr.rs`), with no
//! dependency on it (the sanitizer runs over the real library too):
//!
//! * a pointer into the live part of the calling thread's stack (where C
//!   keeps its out parameters) is mapped for certain and read directly;
//! * anything else is copied by the kernel, `process_vm_readv` on this
//!   process, which fails with `EFAULT` instead of faulting;
//! * where that call is unavailable (`ENOSYS`, or refused by a seccomp
//!   filter), through a pipe: `write(2)` from the address is checked by the
//!   kernel the same way.

use std::cell::Cell;
use std::ffi::c_void;
use std::mem::{MaybeUninit, size_of};

use parking_lot::Mutex;

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
/// holds live frames (between this frame and the stack's top): mapped for
/// certain.
#[inline(never)]
fn on_live_stack(p: usize, len: usize) -> bool {
    let here = 0u8;
    let sp = &here as *const u8 as usize;
    let top = stack_top();
    p > sp && p.checked_add(len).is_some_and(|end| end <= top)
}

/// The word at `p`, when it lies in the live part of the calling thread's
/// stack (`None` elsewhere: the stack cache reads only its own thread's
/// frames).
pub(crate) fn stack_word(p: usize) -> Option<usize> {
    if !p.is_multiple_of(align_of::<usize>()) || !on_live_stack(p, size_of::<usize>()) {
        return None;
    }
    // SAFETY: an aligned word between this frame and the top of this
    // thread's stack: mapped, and read as plain data.
    Some(unsafe { (p as *const usize).read_volatile() })
}

/// What the kernel said about a `process_vm_readv`.
enum Kernel {
    Read,
    Refused,
    Unavailable,
}

fn process_vm_read(src: usize, dst: &mut [u8]) -> Kernel {
    let local = libc::iovec {
        iov_base: dst.as_mut_ptr().cast(),
        iov_len: dst.len(),
    };
    let remote = libc::iovec {
        iov_base: src as *mut c_void,
        iov_len: dst.len(),
    };
    // SAFETY: the kernel reads `remote` (checking it) and writes `local`,
    // our own buffer; the iovecs are live locals.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n >= 0 {
        // A short read: the rest of the range is not readable.
        return if n as usize == dst.len() {
            Kernel::Read
        } else {
            Kernel::Refused
        };
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EFAULT) => Kernel::Refused,
        _ => Kernel::Unavailable,
    }
}

/// The fallback: `write(2)` from the address into a pipe (the kernel
/// checks the source), then read back.
fn pipe_read(src: usize, dst: &mut [u8]) -> bool {
    static PIPE: Mutex<Option<[libc::c_int; 2]>> = Mutex::new(None);
    let mut guard = PIPE.lock();
    if guard.is_none() {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `pipe2` writes two descriptors into a live local array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return false;
        }
        *guard = Some(fds);
    }
    let Some([rd, wr]) = *guard else {
        return false;
    };
    // Page-sized pieces: below the pipe's capacity, so a write never
    // blocks and the pipe is empty again after each piece.
    const PIECE: usize = 4096;
    let mut done = 0;
    let mut ok = true;
    while ok && done < dst.len() {
        let want = PIECE.min(dst.len() - done);
        // SAFETY: the kernel reads `src + done..+want`, checking it (EFAULT
        // or a short count if it is not readable).
        let wrote = unsafe { libc::write(wr, (src + done) as *const c_void, want) };
        let wrote = usize::try_from(wrote).unwrap_or(0);
        ok = wrote == want;
        let mut got = 0;
        while got < wrote {
            // SAFETY: reads into our own buffer; `wrote - got` bytes are in
            // the pipe, and at most that many fit from `done + got` on
            // (`wrote <= want <= dst.len() - done`).
            let n = unsafe { libc::read(rd, dst.as_mut_ptr().add(done + got).cast(), wrote - got) };
            match usize::try_from(n) {
                Ok(n) if n > 0 => got += n,
                _ => {
                    // The pipe cannot be drained: start afresh next time.
                    // SAFETY: our own descriptors, closed once.
                    unsafe {
                        libc::close(rd);
                        libc::close(wr);
                    }
                    *guard = None;
                    return false;
                }
            }
        }
        done += want;
    }
    ok
}

/// Copies `dst.len()` bytes from the address `src` into `dst`; `false` (and
/// nothing read) when the process may not read the whole range.
pub(crate) fn read_bytes(src: usize, dst: &mut [u8]) -> bool {
    if dst.is_empty() {
        return true;
    }
    if src == 0 || src.checked_add(dst.len()).is_none() {
        return false;
    }
    match process_vm_read(src, dst) {
        Kernel::Read => true,
        Kernel::Refused => false,
        Kernel::Unavailable => pipe_read(src, dst),
    }
}

/// Reads a `T` through a pointer a C caller passed; `None` for NULL or an
/// address this process may not read.
///
/// # Safety
/// `T` must be valid for every bit pattern (plain C data).
pub(crate) unsafe fn read<T: Copy>(p: *const T) -> Option<T> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A page mapped with `prot`, or unmapped again when `prot` is `None`.
    fn page(prot: Option<libc::c_int>) -> usize {
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
            match prot {
                Some(prot) => assert_eq!(libc::mprotect(p, 4096, prot), 0),
                None => assert_eq!(libc::munmap(p, 4096), 0),
            }
        }
        p as usize
    }

    #[test]
    fn readable_memory_is_read_and_anything_else_is_refused() {
        let local = 7u64;
        // SAFETY: a live local.
        assert_eq!(unsafe { read(&local) }, Some(7));
        let heap = Box::new(0xfeed_u32);
        // SAFETY: a live heap value.
        assert_eq!(unsafe { read(&*heap) }, Some(0xfeed));
        let ro = page(Some(libc::PROT_READ));
        // SAFETY: the kernel checks the address.
        let word = unsafe { read(ro as *const u64) };
        assert_eq!(word, Some(0x0123_4567_89ab_cdef));
        for bad in [
            0usize,
            1,
            8,
            usize::MAX - 4,
            page(Some(libc::PROT_NONE)),
            page(None),
        ] {
            // SAFETY: the kernel checks the address; nothing is read.
            assert_eq!(unsafe { read(bad as *const u64) }, None, "{bad:#x}");
        }
    }

    #[test]
    fn the_pipe_fallback_reads_and_refuses_like_the_kernel_call() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut out = vec![0u8; data.len()];
        assert!(pipe_read(data.as_ptr() as usize, &mut out));
        assert_eq!(out, data);
        let mut small = [0u8; 8];
        for bad in [1usize, page(Some(libc::PROT_NONE)), page(None)] {
            assert!(!pipe_read(bad, &mut small), "{bad:#x}");
        }
        // Still usable after a refusal, and nothing stale is left behind.
        let word = 0x1122_3344_5566_7788u64.to_ne_bytes();
        assert!(pipe_read(word.as_ptr() as usize, &mut small));
        assert_eq!(small, word);
    }
}
