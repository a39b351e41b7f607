//! Host memory a C caller passed to a copy: may the emulator read or write
//! it with a plain `memcpy`?
//!
//! A copy through the kernel (`pread`/`pwrite` on the device's pool file)
//! turns any address the process may not use into `EFAULT`, but reaches
//! only 0.4–0.7× the bandwidth of `memcpy(3)` (measured; see
//! `docs/benchmarks.md`). A large copy therefore asks the kernel first, in
//! two `ioctl`s whose cost does not grow with the number of mappings:
//!
//! * `PROCMAP_QUERY` on `/proc/self/maps` (Linux 6.11), once per VMA the
//!   range spans: every one must be private anonymous memory with the
//!   needed permission. File-backed memory (which faults past its end),
//!   shared memory and device mappings take the kernel path;
//! * `PAGEMAP_SCAN` on `/proc/self/pagemap` for guard pages
//!   (`MADV_GUARD_INSTALL`, Linux 6.13; reported from 6.14): a range with
//!   one takes the kernel path.
//!
//! Anything the kernel cannot answer (an older kernel, a sandbox without
//! `/proc`) takes the kernel path too, so the check only ever decides
//! *fast or safe*, never *crash*. What no check can exclude is another
//! thread of the caller unmapping or protecting the buffer during the copy:
//! that is a data race in the caller, as it is with the real runtime.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags, open};
use rustix::io::Errno;

use super::sys::pid;

/// Copies below this size take the kernel path: one system call beats the
/// two a check costs (the measured crossover is between 4 and 64 KiB).
pub(crate) const PLAIN_COPY_MIN: usize = 64 << 10;

/// How a copy uses the host range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// The copy reads it (host to device).
    Read,
    /// The copy writes it (device to host).
    Write,
}

/// `struct procmap_query` of the kernel's ABI (`linux/fs.h`).
#[repr(C)]
#[derive(Default)]
struct ProcmapQuery {
    size: u64,
    query_flags: u64,
    query_addr: u64,
    vma_start: u64,
    vma_end: u64,
    vma_flags: u64,
    vma_page_size: u64,
    vma_offset: u64,
    inode: u64,
    dev_major: u32,
    dev_minor: u32,
    vma_name_size: u32,
    build_id_size: u32,
    vma_name_addr: u64,
    build_id_addr: u64,
}

/// `struct pm_scan_arg` (`linux/fs.h`).
#[repr(C)]
#[derive(Default)]
struct PmScanArg {
    size: u64,
    flags: u64,
    start: u64,
    end: u64,
    walk_end: u64,
    vec: u64,
    vec_len: u64,
    max_pages: u64,
    category_inverted: u64,
    category_mask: u64,
    category_anyof_mask: u64,
    return_mask: u64,
}

/// `struct page_region`.
#[repr(C)]
#[derive(Default)]
struct PageRegion {
    start: u64,
    end: u64,
    categories: u64,
}

/// `_IOWR('f', nr, T)`, the generic encoding (x86_64 and aarch64 alike).
const fn iowr<T>(nr: u64) -> u64 {
    (3 << 30) | ((size_of::<T>() as u64) << 16) | ((b'f' as u64) << 8) | nr
}

const PROCMAP_QUERY: u64 = iowr::<ProcmapQuery>(17);
const PAGEMAP_SCAN: u64 = iowr::<PmScanArg>(16);
const VMA_READABLE: u64 = 0x01;
const VMA_WRITABLE: u64 = 0x02;
const PAGE_IS_GUARD: u64 = 1 << 8;
const PAGE: u64 = 4096;

/// A byte of read-only data: an address known to be mapped.
static PROBE: u8 = 0;

/// `/proc/self/maps` and `/proc/self/pagemap` of the process that opened
/// them (after `fork` they describe the parent: reopened when the pid
/// changes).
struct ProcFiles {
    pid: i32,
    maps: OwnedFd,
    pagemap: OwnedFd,
}

/// The files, or `None` once the kernel showed it cannot answer.
static FILES: aclmem_fork::ForkMutex<Option<Option<Arc<ProcFiles>>>> =
    aclmem_fork::ForkMutex::new(|| None);

fn files() -> Option<Arc<ProcFiles>> {
    let me = pid();
    let mut files = FILES.lock();
    if let Some(known) = &*files
        && known.as_ref().is_none_or(|f| f.pid == me)
    {
        return known.clone();
    }
    let opened = open_files(me);
    *files = Some(opened.clone());
    opened
}

fn open_files(me: i32) -> Option<Arc<ProcFiles>> {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC;
    let f = ProcFiles {
        pid: me,
        maps: open("/proc/self/maps", flags, Mode::empty()).ok()?,
        pagemap: open("/proc/self/pagemap", flags, Mode::empty()).ok()?,
    };
    // Both queries must be understood: probe with a read-only static,
    // which is mapped and readable.
    let probe = (&raw const PROBE) as usize;
    (vma_at(&f, probe).is_some() && guard_pages(&f, probe, 1).is_some()).then(|| Arc::new(f))
}

/// The VMA containing `addr`: (end, flags, file-backed).
fn vma_at(f: &ProcFiles, addr: usize) -> Option<(usize, u64, bool)> {
    let mut q = ProcmapQuery {
        size: size_of::<ProcmapQuery>() as u64,
        query_addr: addr as u64,
        ..ProcmapQuery::default()
    };
    // SAFETY: `q` is a live, correctly sized `procmap_query` that the
    // kernel reads and writes for the duration of the call only; its name
    // and build-id buffers are absent (sizes 0).
    let r = unsafe { libc::ioctl(f.maps.as_raw_fd(), PROCMAP_QUERY as _, &mut q) };
    (r == 0).then_some((
        q.vma_end as usize,
        q.vma_flags,
        q.inode != 0 || q.dev_major != 0 || q.dev_minor != 0,
    ))
}

/// Whether a page of `addr..addr + len` is a guard page (`None`: the
/// kernel cannot tell).
fn guard_pages(f: &ProcFiles, addr: usize, len: usize) -> Option<bool> {
    let mut found = PageRegion::default();
    let start = addr as u64 & !(PAGE - 1);
    let end = (addr as u64)
        .checked_add(len as u64)?
        .next_multiple_of(PAGE);
    let mut arg = PmScanArg {
        size: size_of::<PmScanArg>() as u64,
        start,
        end,
        vec: &raw mut found as u64,
        vec_len: 1,
        category_mask: PAGE_IS_GUARD,
        return_mask: PAGE_IS_GUARD,
        ..PmScanArg::default()
    };
    // SAFETY: `arg` is a live `pm_scan_arg`; the kernel writes at most
    // `vec_len` (1) regions to `found`, which lives across the call.
    let r = unsafe { libc::ioctl(f.pagemap.as_raw_fd(), PAGEMAP_SCAN as _, &mut arg) };
    (r >= 0).then_some(r > 0)
}

/// Whether a plain copy may `access` `addr..addr + len`: private anonymous
/// memory with the permission, no guard page. `false` means "take the
/// kernel's path", which answers a bad address with an error.
pub(crate) fn plain(addr: usize, len: usize, access: Use) -> bool {
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    if len < PLAIN_COPY_MIN {
        return false;
    }
    let Some(f) = files() else {
        return false;
    };
    let need = match access {
        Use::Read => VMA_READABLE,
        Use::Write => VMA_READABLE | VMA_WRITABLE,
    };
    let mut at = addr;
    while at < end {
        match vma_at(&f, at) {
            Some((vma_end, flags, false)) if flags & need == need && vma_end > at => at = vma_end,
            _ => return false,
        }
    }
    guard_pages(&f, addr, len) == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 4 * PLAIN_COPY_MIN;

    #[test]
    fn anonymous_memory_is_plain_and_everything_else_is_not() {
        let buf = vec![0u8; N];
        let a = buf.as_ptr() as usize;
        if files().is_none() {
            eprintln!(
                "this kernel cannot answer PROCMAP_QUERY/PAGEMAP_SCAN: copies take the kernel path"
            );
            assert!(!plain(a, N, Use::Read));
            return;
        }
        assert!(plain(a, N, Use::Read));
        assert!(plain(a, N, Use::Write));
        assert!(!plain(a, PLAIN_COPY_MIN - 1, Use::Read), "small copies");
        assert!(!plain(usize::MAX - 8, N, Use::Read), "wraps around");
        // Read-only data and code: readable, not writable, and file-backed.
        let rodata = (&raw const PROBE) as usize;
        assert!(!plain(rodata, N, Use::Write));
        assert!(!plain(rodata, N, Use::Read));
        // An unmapped range and a PROT_NONE one.
        let hole = crate::os::sys::reserve_arena(2 * N, None).unwrap();
        assert!(!plain(hole, N, Use::Read));
        // SAFETY: the arena reserved just above, unused by anything else.
        unsafe { crate::os::sys::release_arena(hole, 2 * N).unwrap() };
        assert!(!plain(hole, N, Use::Read));
    }
}

/// Host memory of `aclrtMallocHost`: an anonymous read-write mapping,
/// unmapped when its owner drops it (not in a forked child, whose copy the
/// C program may still use).
#[derive(Debug)]
pub struct HostBlock {
    addr: usize,
    len: usize,
    fork_gen: u64,
}

impl HostBlock {
    /// `len` bytes (page aligned) at an address the kernel chooses.
    pub fn new(len: usize) -> Result<HostBlock, rustix::io::Errno> {
        Ok(HostBlock {
            addr: super::sys::map_anonymous(len)?,
            len,
            fork_gen: super::fork::generation(),
        })
    }

    /// Where the block starts.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Its length in bytes.
    pub fn bytes(&self) -> usize {
        self.len
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        if super::fork::forked_since(self.fork_gen) {
            return;
        }
        // SAFETY: the block was mapped by `map_anonymous` with this length
        // and is owned by `self`. Rust never borrows it (the emulator hands
        // out its address only); a C caller that frees memory it still
        // uses breaks its own contract, as with `free`.
        let _ = unsafe { super::sys::unmap_region(self.addr, self.len) };
    }
}

/// A caller's promise about the host addresses it passes in one call (a
/// copy, a fill): what the caller of `memcpy(3)` promises. The emulator
/// still asks the kernel before it touches host memory directly, so an
/// address the process may not use is an error code, never a crash; the
/// promise covers what the kernel cannot see (Rust references).
#[derive(Debug)]
pub struct CallerMemory(());

impl CallerMemory {
    /// The promise.
    ///
    /// # Safety
    /// For the call the value is passed to: every host byte of a
    /// destination range is memory the caller may overwrite, with no Rust
    /// reference into it alive, and the host bytes of a source range are
    /// not written by anyone during the call.
    pub unsafe fn vouch() -> CallerMemory {
        CallerMemory(())
    }
}

/// Copies `count` bytes between host ranges a C caller passed, directly
/// when the kernel says both are private anonymous memory with the access
/// the copy needs (they may overlap): `false` otherwise (then the kernel's
/// path is taken).
pub(crate) fn copy_plain(dst: usize, src: usize, count: usize, _caller: &CallerMemory) -> bool {
    if !(plain(src, count, Use::Read) && plain(dst, count, Use::Write)) {
        return false;
    }
    // SAFETY: both ranges are private anonymous memory the process may
    // read (source) and write (destination), as the kernel just said, and
    // the caller vouched that no Rust reference covers them; `copy`
    // allows overlap.
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count) };
    true
}

/// Zeros `count` bytes of a host range a C caller passed as a copy's
/// destination (plan mode's device-to-host copy): directly when the kernel
/// says the range is writable private memory, else through the kernel,
/// which refuses what may not be written.
pub(crate) fn zero(dst: usize, count: usize, _caller: &CallerMemory) -> Result<(), Errno> {
    if plain(dst, count, Use::Write) {
        // SAFETY: private anonymous memory the process may write, as the
        // kernel just said; the caller vouched that no Rust reference
        // covers it.
        unsafe { std::ptr::write_bytes(dst as *mut u8, 0, count) };
        return Ok(());
    }
    // SAFETY: as above; the kernel checks every byte.
    unsafe { aclmem_cmem::fill(dst, 0, count) }.map_err(Errno::from_raw_os_error)
}

/// Whether the process may read `count` bytes at `src`, a host range a C
/// caller passed as a copy's source (plan mode's host-to-device copy, which
/// moves nothing but refuses what a copy would): asked of the kernel, in
/// chunks read into one scratch buffer, never kept.
pub(crate) fn readable(src: usize, count: usize) -> bool {
    if plain(src, count, Use::Read) {
        return true;
    }
    const CHUNK: usize = 1 << 20;
    let mut scratch = vec![0u8; CHUNK.min(count)];
    let mut done = 0;
    while done < count {
        let n = CHUNK.min(count - done);
        if !aclmem_cmem::read_bytes(src + done, &mut scratch[..n]) {
            return false;
        }
        done += n;
    }
    true
}

impl HostBlock {
    /// Sets `count` bytes at `addr` (inside the block) to `value`:
    /// directly when the kernel says the range is writable private memory,
    /// else through the kernel (the program may have changed its
    /// protection), which refuses what may not be written.
    pub(crate) fn fill(&self, addr: usize, value: u8, count: usize) -> Result<(), Errno> {
        let inside = addr >= self.addr
            && addr
                .checked_add(count)
                .is_some_and(|end| end <= self.addr + self.len);
        if !inside {
            return Err(Errno::FAULT);
        }
        if plain(addr, count, Use::Write) {
            // SAFETY: inside this block, which is mapped while it lives (the
            // caller holds it), writable as the kernel just said; Rust never
            // borrows a block.
            unsafe { std::ptr::write_bytes(addr as *mut u8, value, count) };
            return Ok(());
        }
        // SAFETY: as above; the kernel checks every byte.
        unsafe { aclmem_cmem::fill(addr, value, count) }.map_err(Errno::from_raw_os_error)
    }
}

/// Runs `f` with the address of `data` and the promise it needs as the
/// source of a copy: `data` is borrowed for the whole call, so no one
/// writes it meanwhile. `f` must pass no other host address with it.
pub(crate) fn from_slice<R>(data: &[u8], f: impl FnOnce(usize, &CallerMemory) -> R) -> R {
    // SAFETY: the only host range of the call is `data`, a source that
    // stays borrowed (read-only) until `f` returns.
    let caller = unsafe { CallerMemory::vouch() };
    f(data.as_ptr() as usize, &caller)
}

/// As [`from_slice`], for `buf` as the destination: borrowed exclusively
/// for the whole call, so no other reference into it is alive.
pub(crate) fn into_slice<R>(buf: &mut [u8], f: impl FnOnce(usize, &CallerMemory) -> R) -> R {
    // SAFETY: the only host range of the call is `buf`, a destination
    // borrowed mutably until `f` returns.
    let caller = unsafe { CallerMemory::vouch() };
    f(buf.as_mut_ptr() as usize, &caller)
}
