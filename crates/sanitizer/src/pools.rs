//! Stream-ordered memory pools (`aclrtMemPool*`) and managed memory
//! (`aclrtMemAllocManaged`): the sanitizer forwards each call unchanged to
//! the library underneath and follows the memory they hand out, which the
//! model of `aclrtMalloc` and mappings does not hold:
//!
//! * a copy or fill (`aclrtMemcpy`, `aclrtMemcpyAsync`, `aclrtMemset`)
//!   that touches a pool block after `aclrtMemPoolFreeAsync` gave it back:
//!   `pool-use-after-free` (the block may already be another
//!   allocation's);
//! * one that touches a block of a pool destroyed since:
//!   `pool-use-after-destroy`;
//! * `aclrtMemPoolDestroy` of a pool with blocks still allocated (the
//!   runtime frees them without a word): `pool-destroyed-with-live-memory`;
//! * a copy enqueued on one stream (`aclrtMemcpyAsync`), or a free
//!   (`aclrtMemPoolFreeAsync`), of a block allocated on another, with
//!   nothing ordering the two streams: no event recorded on the allocating
//!   stream after the allocation and waited for by the other
//!   (`aclrtRecordEvent`, `aclrtStreamWaitEvent`), no synchronisation of
//!   the allocating stream or the device since: `pool-stream-unordered`
//!   (the use may run before the allocation);
//! * managed memory never freed (`aclrtFree`): `managed-memory-leaked` at
//!   exit.
//!
//! Live pool blocks and managed memory are device memory to the copy
//! checks, so they are not `copy-unmapped`. Each call is a record of the
//! trace.

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

use aclmem_fork::ForkMutex;
use aclmem_formats::finding::Class;

use aclmem_sys as sys;

use crate::report::{Finding, Site, report};
use crate::underneath::forward;

/// The functions, as the audit redirects them (the synchronisations are
/// in the typed list, which it redirects anyway).
pub const NAMES: [&str; 7] = [
    "aclrtMemPoolCreate",
    "aclrtMemPoolDestroy",
    "aclrtMemPoolMallocAsync",
    "aclrtMemPoolFreeAsync",
    "aclrtMemAllocManaged",
    "aclrtRecordEvent",
    "aclrtStreamWaitEvent",
];

type Ptr = *mut c_void;
/// `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`, when nothing is underneath.
const NOT_SUPPORTED: i32 = 207_000;

/// Calls the definition underneath as `F`, or answers 207000.
macro_rules! forward_pool {
    ($name:literal: fn($($t:ty),*) ($($arg:expr),*)) => {
        $crate::underneath::forward_in!(c"libascendcl.so", $name: fn($($t),*) -> i32, NOT_SUPPORTED, ($($arg),*))
    };
}

/// A pool block handed out: its pool, the bytes asked for, the stream it
/// was made on and its place in that stream's order, where.
struct Block {
    pool: usize,
    size: usize,
    stream: usize,
    seq: u64,
    made: Site,
}

/// What orders streams, as the program told the runtime: per stream the
/// count of its allocations; per event the stream and count it was
/// recorded at; per (waiting stream, stream) the count waited for; per
/// stream the count the host synchronised at.
#[derive(Default)]
struct Order {
    ops: HashMap<usize, u64>,
    events: HashMap<usize, (usize, u64)>,
    waited: HashMap<(usize, usize), u64>,
    synced: HashMap<usize, u64>,
    /// (block, stream) pairs reported: one finding each.
    reported: std::collections::HashSet<(usize, usize)>,
}

impl Order {
    /// Whether work on `stream` comes after `block`'s allocation.
    fn after(&self, block: &Block, stream: usize) -> bool {
        stream == block.stream
            || self
                .waited
                .get(&(stream, block.stream))
                .is_some_and(|&n| n >= block.seq)
            || self
                .synced
                .get(&block.stream)
                .is_some_and(|&n| n >= block.seq)
    }
}

/// Why a block's memory is no longer the program's.
#[derive(Clone, Copy)]
enum Gone {
    /// `aclrtMemPoolFreeAsync`, there.
    Freed(Site),
    /// `aclrtMemPoolDestroy` of its pool, there.
    PoolDestroyed(Site),
}

#[derive(Default)]
struct State {
    /// Live pools: handle -> where made.
    pools: HashMap<usize, Site>,
    /// Blocks in use: address -> block.
    live: BTreeMap<usize, Block>,
    /// Blocks given back, until the address is handed out again: address
    /// -> (bytes, where it was made, why it is gone).
    gone: BTreeMap<usize, (usize, Site, Gone)>,
    /// Managed memory not freed: address -> (bytes, where made).
    managed: BTreeMap<usize, (usize, Site)>,
    order: Order,
}

fn state() -> &'static ForkMutex<State> {
    static STATE: ForkMutex<State> = ForkMutex::new(State::default);
    &STATE
}

/// Whether a pool block or managed memory was ever handed out: until then
/// a copy asks nothing.
static EVER: AtomicBool = AtomicBool::new(false);

/// The entry of `map` whose range `addr..addr + size` overlaps
/// `at..at + len`.
fn overlapping<V>(
    map: &BTreeMap<usize, V>,
    size: impl Fn(&V) -> usize,
    at: usize,
    len: usize,
) -> Option<(usize, &V)> {
    let end = at.saturating_add(len.max(1));
    map.range(..end)
        .next_back()
        .filter(|(a, v)| at < a.saturating_add(size(v).max(1)))
        .map(|(a, v)| (*a, v))
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolCreate(pool: *mut Ptr, props: *const c_void) -> i32 {
    let site = Site::outside();
    let r = forward_pool!(c"aclrtMemPoolCreate": fn(*mut Ptr, *const c_void) (pool, props));
    if r == 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(p) = unsafe { crate::cmem::read(pool) }
    {
        state().lock().pools.insert(p as usize, site.with_stack());
    }
    crate::trace::call("aclrtMemPoolCreate", None, 0, r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolDestroy(pool: Ptr) -> i32 {
    let site = Site::outside().with_stack();
    let held: Vec<(usize, usize, Site)> = state()
        .lock()
        .live
        .iter()
        .filter(|(_, b)| b.pool == pool as usize)
        .map(|(a, b)| (*a, b.size, b.made))
        .collect();
    if let Some((a, n, made)) = held.first() {
        report(Finding {
            class: Class::PoolDestroyedWithLiveMemory,
            call: "aclrtMemPoolDestroy",
            args: format!("{pool:p}"),
            message: format!(
                "{} block(s) of the pool are still allocated, the first {n} bytes at {a:#x} (aclrtMemPoolMallocAsync at {}): the runtime frees them with the pool, and their users hold released memory",
                held.len(),
                made.describe()
            ),
            code: None,
            site,
        });
    }
    let r = forward_pool!(c"aclrtMemPoolDestroy": fn(Ptr) (pool));
    if r == 0 {
        let mut s = state().lock();
        s.pools.remove(&(pool as usize));
        for (a, n, made) in held {
            s.live.remove(&a);
            s.gone.insert(a, (n, made, Gone::PoolDestroyed(site)));
        }
    }
    crate::trace::call("aclrtMemPoolDestroy", None, 0, r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolMallocAsync(
    ptr: *mut Ptr,
    size: usize,
    pool: Ptr,
    stream: Ptr,
) -> i32 {
    let site = Site::outside();
    let r = forward_pool!(c"aclrtMemPoolMallocAsync": fn(*mut Ptr, usize, Ptr, Ptr) (ptr, size, pool, stream));
    let mut made = None;
    if r == 0
        && size != 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(p) = unsafe { crate::cmem::read(ptr) }
    {
        EVER.store(true, Ordering::Release);
        let addr = p as usize;
        made = Some(addr);
        let mut s = state().lock();
        // The range is the program's again.
        while let Some((a, _)) = overlapping(&s.gone, |g| g.0, addr, size) {
            s.gone.remove(&a);
        }
        let ops = s.order.ops.entry(stream as usize).or_default();
        *ops += 1;
        let seq = *ops;
        s.live.insert(
            addr,
            Block {
                pool: pool as usize,
                size,
                stream: stream as usize,
                seq,
                made: site.with_stack(),
            },
        );
    }
    // The block is a segment of the timeline and memory_viz.
    crate::trace::call_with("aclrtMemPoolMallocAsync", None, size, r, |t| {
        t.va = made.map(|a| a as u64);
        t.site = made.map(|_| crate::trace::site_id(site.with_stack()));
    });
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemPoolFreeAsync(ptr: Ptr, stream: Ptr) -> i32 {
    let site = Site::outside();
    if EVER.load(Ordering::Acquire) {
        check_order(
            "aclrtMemPoolFreeAsync",
            ptr as usize,
            1,
            stream as usize,
            site,
        );
    }
    let r = forward_pool!(c"aclrtMemPoolFreeAsync": fn(Ptr, Ptr) (ptr, stream));
    let mut size = 0;
    if r == 0 {
        let mut s = state().lock();
        if let Some(b) = s.live.remove(&(ptr as usize)) {
            size = b.size;
            s.gone.insert(
                ptr as usize,
                (b.size, b.made, Gone::Freed(site.with_stack())),
            );
        }
    }
    crate::trace::call_with("aclrtMemPoolFreeAsync", None, size, r, |t| {
        t.va = Some(ptr as u64);
    });
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemAllocManaged(ptr: *mut Ptr, size: u64, flag: u32) -> i32 {
    let site = Site::outside();
    let r = forward_pool!(c"aclrtMemAllocManaged": fn(*mut Ptr, u64, u32) (ptr, size, flag));
    if r == 0
        // SAFETY: a pointer is plain data; the kernel checks the address.
        && let Some(p) = unsafe { crate::cmem::read(ptr) }
        && !p.is_null()
    {
        EVER.store(true, Ordering::Release);
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        state()
            .lock()
            .managed
            .insert(p as usize, (size, site.with_stack()));
    }
    crate::trace::call("aclrtMemAllocManaged", None, size as usize, r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRecordEvent(event: Ptr, stream: Ptr) -> i32 {
    let r = forward_pool!(c"aclrtRecordEvent": fn(Ptr, Ptr) (event, stream));
    if r == 0 && EVER.load(Ordering::Acquire) {
        let mut s = state().lock();
        let at = s.order.ops.get(&(stream as usize)).copied().unwrap_or(0);
        s.order.events.insert(event as usize, (stream as usize, at));
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamWaitEvent(stream: Ptr, event: Ptr) -> i32 {
    let r = forward_pool!(c"aclrtStreamWaitEvent": fn(Ptr, Ptr) (stream, event));
    if r == 0 && EVER.load(Ordering::Acquire) {
        let mut s = state().lock();
        if let Some(&(source, at)) = s.order.events.get(&(event as usize)) {
            let waited = s.order.waited.entry((stream as usize, source)).or_default();
            *waited = (*waited).max(at);
        }
    }
    r
}

/// The host waited for `stream` (`None`: every stream of the device).
fn synchronised(stream: Option<usize>) {
    if !EVER.load(Ordering::Acquire) {
        return;
    }
    let mut s = state().lock();
    let Order { ops, synced, .. } = &mut s.order;
    for (&st, &n) in ops.iter() {
        if stream.is_none_or(|x| x == st) {
            synced.insert(st, n);
        }
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeStream(stream: sys::aclrtStream) -> sys::aclError {
    let r = forward!(aclrtSynchronizeStream(stream));
    if r == 0 {
        synchronised(Some(stream as usize));
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeStreamWithTimeout(
    stream: sys::aclrtStream,
    timeout: i32,
) -> sys::aclError {
    let r = forward!(aclrtSynchronizeStreamWithTimeout(stream, timeout));
    if r == 0 {
        synchronised(Some(stream as usize));
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeDevice() -> sys::aclError {
    let r = forward!(aclrtSynchronizeDevice());
    if r == 0 {
        synchronised(None);
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> sys::aclError {
    let r = forward!(aclrtSynchronizeDeviceWithTimeout(timeout));
    if r == 0 {
        synchronised(None);
    }
    r
}

/// Before work on `stream` that touches `addr..addr + count`: a live pool
/// block made on another stream, with nothing ordering the two, is a
/// finding (once per block and stream).
pub(crate) fn check_order(
    call: &'static str,
    addr: usize,
    count: usize,
    stream: usize,
    site: Site,
) {
    if stream == 0 {
        return;
    }
    let mut s = state().lock();
    let Some((a, b)) = overlapping(&s.live, |b| b.size, addr, count) else {
        return;
    };
    if s.order.after(b, stream) {
        return;
    }
    let (n, made, from) = (b.size, b.made, b.stream);
    if !s.order.reported.insert((a, stream)) {
        return;
    }
    drop(s);
    report(Finding {
        class: Class::PoolStreamUnordered,
        call,
        args: format!("{addr:#x}, stream {stream:#x}"),
        message: format!(
            "the pool block of {n} bytes at {a:#x} was allocated on stream {from:#x} (aclrtMemPoolMallocAsync at {}); nothing orders stream {stream:#x} after that allocation (an event recorded there and waited for with aclrtStreamWaitEvent, or a synchronisation), so this may run before it",
            made.describe()
        ),
        code: None,
        site: if site.ra() == 0 {
            Site::outside().with_stack()
        } else {
            site
        },
    });
}

/// After a successful `aclrtFree(addr)`: managed memory is freed so.
pub(crate) fn freed(addr: usize) {
    if EVER.load(Ordering::Acquire) {
        state().lock().managed.remove(&addr);
    }
}

/// Before a copy or fill touching `addr..addr + count` (each side): `true`
/// when the range is pool or managed memory, which this module checks (a
/// block given back, or of a destroyed pool, is reported), so the model's
/// check of mapped memory does not apply.
#[inline]
pub(crate) fn check_access(
    call: &'static str,
    addr: usize,
    count: usize,
    stream: Option<usize>,
    site: Site,
) -> bool {
    EVER.load(Ordering::Acquire) && addr != 0 && check_access_slow(call, addr, count, stream, site)
}

#[cold]
#[inline(never)]
fn check_access_slow(
    call: &'static str,
    addr: usize,
    count: usize,
    stream: Option<usize>,
    site: Site,
) -> bool {
    let s = state().lock();
    if overlapping(&s.live, |b| b.size, addr, count).is_some() {
        drop(s);
        if let Some(stream) = stream {
            check_order(call, addr, count, stream, site);
        }
        return true;
    }
    if overlapping(&s.managed, |m| m.0, addr, count).is_some() {
        return true;
    }
    let Some((a, &(n, made, gone))) = overlapping(&s.gone, |g| g.0, addr, count) else {
        return false;
    };
    drop(s);
    let (class, why) = match gone {
        Gone::Freed(at) => (
            Class::PoolUseAfterFree,
            format!(
                "given back to its pool by aclrtMemPoolFreeAsync at {}",
                at.describe()
            ),
        ),
        Gone::PoolDestroyed(at) => (
            Class::PoolUseAfterDestroy,
            format!(
                "its pool was destroyed by aclrtMemPoolDestroy at {}",
                at.describe()
            ),
        ),
    };
    report(Finding {
        class,
        call,
        args: format!("{addr:#x}, {count:#x}"),
        message: format!(
            "the range lies in the pool block of {n} bytes at {a:#x} (aclrtMemPoolMallocAsync at {}), {why}",
            made.describe()
        ),
        code: None,
        // A hook of six arguments hands over no call site: find it.
        site: if site.ra() == 0 {
            Site::outside().with_stack()
        } else {
            site
        },
    });
    true
}

/// At exit: managed memory never freed.
pub(crate) fn report_leaks() {
    if !EVER.load(Ordering::Acquire) {
        return;
    }
    let left: Vec<(usize, usize, Site)> = std::mem::take(&mut state().lock().managed)
        .into_iter()
        .map(|(a, (n, s))| (a, n, s))
        .collect();
    for (addr, size, made) in left {
        report(Finding {
            class: Class::ManagedMemoryLeaked,
            call: "aclrtMemAllocManaged",
            args: format!("{addr:#x}, {size:#x}"),
            message: format!(
                "{size} bytes of managed memory at {addr:#x}, allocated at {}, were never freed (aclrtFree)",
                made.describe()
            ),
            code: None,
            site: made,
        });
    }
}
