//! HCCL (`libhccl.so`): the sanitizer forwards each call unchanged to the
//! library underneath (the next definition, or `libhccl.so` opened by
//! name, as torch_npu reaches it) and checks the memory communication uses:
//!
//! * a collective or transfer whose buffer, sized by its count and data
//!   type (`aclmem_sys::hccl`), is not mapped or `aclrtMalloc` memory of
//!   the process: `collective-unmapped`, with the communicator's rank and
//!   size;
//! * memory a communicator has activated (`HcclCommActivateCommMemory`)
//!   freed or unmapped before `HcclCommDeactivateCommMemory`:
//!   `comm-memory-released-while-active`;
//! * a communicator never destroyed: `communicator-not-destroyed` at exit.
//!
//! Each collective is also a record of the trace, so the timeline shows
//! every rank's communication.

use std::collections::HashMap;
use std::ffi::c_void;

use aclmem_fork::ForkMutex;
use aclmem_formats::finding::Class;

use crate::report::{Finding, Site, report};

/// The functions, as the audit redirects them.
pub const NAMES: [&str; 12] = [
    "HcclAllReduce",
    "HcclBroadcast",
    "HcclAllGather",
    "HcclReduceScatter",
    "HcclReduce",
    "HcclSend",
    "HcclRecv",
    "HcclCommInitRootInfo",
    "HcclCommInitRootInfoConfig",
    "HcclCommDestroy",
    "HcclCommActivateCommMemory",
    "HcclCommDeactivateCommMemory",
];

type Comm = *mut c_void;
type Ptr = *mut c_void;
/// `HCCL_E_NOT_SUPPORT`, when nothing is underneath.
const NOT_SUPPORTED: i32 = 5;

/// Calls the definition underneath as `F`, or answers 5.
macro_rules! forward_hccl {
    ($name:literal: fn($($t:ty),*) ($($arg:expr),*)) => {
        $crate::underneath::forward_in!(c"libhccl.so", $name: fn($($t),*) -> i32, NOT_SUPPORTED, ($($arg),*))
    };
}

/// Communicators made and not destroyed: handle -> where.
fn comms() -> &'static ForkMutex<HashMap<usize, Site>> {
    static COMMS: ForkMutex<HashMap<usize, Site>> = ForkMutex::new(HashMap::new);
    &COMMS
}

/// Whether any communication memory was ever activated: until then a
/// release has nothing to be checked against, and takes no lock.
static EVER_ACTIVATED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Activated communication memory: address -> (size, where).
fn active() -> &'static ForkMutex<HashMap<usize, (usize, Site)>> {
    static ACTIVE: ForkMutex<HashMap<usize, (usize, Site)>> = ForkMutex::new(HashMap::new);
    &ACTIVE
}

/// "rank r of n", as the library underneath says.
fn rank_of(comm: Comm) -> String {
    let (mut rank, mut size) = (u32::MAX, 0u32);
    let a = forward_hccl!(c"HcclGetRankId": fn(Comm, *mut u32) (comm, &mut rank));
    let b = forward_hccl!(c"HcclGetRankSize": fn(Comm, *mut u32) (comm, &mut size));
    if a == 0 && b == 0 {
        format!("rank {rank} of {size}")
    } else {
        "a communicator that does not answer its rank".to_owned()
    }
}

/// Before a collective: each buffer (name, address, bytes) must be device
/// memory of the process.
fn check(call: &'static str, comm: Comm, buffers: &[(&str, Ptr, u64, u32)]) -> Site {
    let site = Site::outside();
    for &(which, addr, count, data_type) in buffers {
        let Some(size) = aclmem_sys::hccl::data_type_size(data_type) else {
            continue; // the library answers a bad type itself
        };
        let bytes = usize::try_from(count)
            .unwrap_or(usize::MAX)
            .saturating_mul(size);
        if bytes == 0 || crate::model::device_range(addr as usize, bytes) {
            continue;
        }
        report(Finding {
            class: Class::CollectiveUnmapped,
            call,
            args: format!("{which} {addr:p}, count {count}, data type {data_type}"),
            message: format!(
                "the {which} buffer ({bytes} bytes at {addr:p}) is not mapped device memory of this process ({})",
                rank_of(comm)
            ),
            code: Some(2),
            site: site.with_stack(),
        });
        break;
    }
    site
}

/// After an operation: a record of the trace, for the timeline.
fn traced(call: &'static str, bytes: u64, r: i32) {
    crate::trace::call(call, None, usize::try_from(bytes).unwrap_or(usize::MAX), r);
}

fn bytes(count: u64, data_type: u32) -> u64 {
    count.saturating_mul(aclmem_sys::hccl::data_type_size(data_type).unwrap_or(0) as u64)
}

/// Before `aclrtFree` or `aclrtUnmapMem` of `addr..addr + len`: activated
/// communication memory in it is a finding. Asked at every release:
/// whether memory was ever activated is decided inline, the look is not.
#[inline]
pub(crate) fn check_release(
    call: &'static str,
    addr: usize,
    len: usize,
    site: impl FnOnce() -> Site,
) {
    if EVER_ACTIVATED.load(std::sync::atomic::Ordering::Acquire) {
        check_release_activated(call, addr, len, site);
    }
}

/// [`check_release`] in a process that activated communication memory
/// (rare: HCCL's zero-copy memory).
#[cold]
#[inline(never)]
fn check_release_activated(
    call: &'static str,
    addr: usize,
    len: usize,
    site: impl FnOnce() -> Site,
) {
    let end = addr.saturating_add(len.max(1));
    let hit = active()
        .lock()
        .iter()
        .find(|(a, (s, _))| **a < end && addr < a.saturating_add(*s))
        .map(|(a, (s, at))| (*a, *s, *at));
    if let Some((a, s, at)) = hit {
        report(Finding {
            class: Class::CommMemoryReleasedWhileActive,
            call,
            args: format!("{addr:#x}"),
            message: format!(
                "{s} bytes at {a:#x} are still activated for a communicator (HcclCommActivateCommMemory at {}) and were never deactivated",
                at.describe()
            ),
            code: None,
            site: site().with_stack(),
        });
    }
}

/// At exit: communicators never destroyed.
pub(crate) fn report_leaks() {
    let left: Vec<(usize, Site)> = comms().lock().drain().collect();
    for (h, site) in left {
        report(Finding {
            class: Class::CommunicatorNotDestroyed,
            call: "HcclCommDestroy",
            args: format!("{h:#x}"),
            message: "an HCCL communicator was never destroyed (HcclCommDestroy)".to_owned(),
            code: None,
            site,
        });
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllReduce(
    send: Ptr,
    recv: Ptr,
    count: u64,
    dt: u32,
    op: u32,
    comm: Comm,
    stream: Ptr,
) -> i32 {
    check(
        "HcclAllReduce",
        comm,
        &[("send", send, count, dt), ("receive", recv, count, dt)],
    );
    let r = forward_hccl!(c"HcclAllReduce": fn(Ptr, Ptr, u64, u32, u32, Comm, Ptr) (send, recv, count, dt, op, comm, stream));
    traced("HcclAllReduce", bytes(count, dt), r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclBroadcast(
    buf: Ptr,
    count: u64,
    dt: u32,
    root: u32,
    comm: Comm,
    stream: Ptr,
) -> i32 {
    check("HcclBroadcast", comm, &[("broadcast", buf, count, dt)]);
    let r = forward_hccl!(c"HcclBroadcast": fn(Ptr, u64, u32, u32, Comm, Ptr) (buf, count, dt, root, comm, stream));
    traced("HcclBroadcast", bytes(count, dt), r);
    r
}

/// The communicator's size, for the buffers sized by it (1 when it does
/// not answer: the library refuses the call then).
fn size_of(comm: Comm) -> u64 {
    let mut size = 1u32;
    let r = forward_hccl!(c"HcclGetRankSize": fn(Comm, *mut u32) (comm, &mut size));
    if r == 0 { u64::from(size.max(1)) } else { 1 }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllGather(
    send: Ptr,
    recv: Ptr,
    count: u64,
    dt: u32,
    comm: Comm,
    stream: Ptr,
) -> i32 {
    let n = size_of(comm);
    check(
        "HcclAllGather",
        comm,
        &[
            ("send", send, count, dt),
            ("receive", recv, count.saturating_mul(n), dt),
        ],
    );
    let r = forward_hccl!(c"HcclAllGather": fn(Ptr, Ptr, u64, u32, Comm, Ptr) (send, recv, count, dt, comm, stream));
    traced("HcclAllGather", bytes(count.saturating_mul(n), dt), r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduceScatter(
    send: Ptr,
    recv: Ptr,
    count: u64,
    dt: u32,
    op: u32,
    comm: Comm,
    stream: Ptr,
) -> i32 {
    let n = size_of(comm);
    check(
        "HcclReduceScatter",
        comm,
        &[
            ("send", send, count.saturating_mul(n), dt),
            ("receive", recv, count, dt),
        ],
    );
    let r = forward_hccl!(c"HcclReduceScatter": fn(Ptr, Ptr, u64, u32, u32, Comm, Ptr) (send, recv, count, dt, op, comm, stream));
    traced("HcclReduceScatter", bytes(count.saturating_mul(n), dt), r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduce(
    send: Ptr,
    recv: Ptr,
    count: u64,
    dt: u32,
    op: u32,
    root: u32,
    comm: Comm,
    stream: Ptr,
) -> i32 {
    check("HcclReduce", comm, &[("send", send, count, dt)]);
    let r = forward_hccl!(c"HcclReduce": fn(Ptr, Ptr, u64, u32, u32, u32, Comm, Ptr) (send, recv, count, dt, op, root, comm, stream));
    traced("HcclReduce", bytes(count, dt), r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclSend(
    buf: Ptr,
    count: u64,
    dt: u32,
    peer: u32,
    comm: Comm,
    stream: Ptr,
) -> i32 {
    check("HcclSend", comm, &[("send", buf, count, dt)]);
    let r = forward_hccl!(c"HcclSend": fn(Ptr, u64, u32, u32, Comm, Ptr) (buf, count, dt, peer, comm, stream));
    traced("HcclSend", bytes(count, dt), r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclRecv(
    buf: Ptr,
    count: u64,
    dt: u32,
    peer: u32,
    comm: Comm,
    stream: Ptr,
) -> i32 {
    check("HcclRecv", comm, &[("receive", buf, count, dt)]);
    let r = forward_hccl!(c"HcclRecv": fn(Ptr, u64, u32, u32, Comm, Ptr) (buf, count, dt, peer, comm, stream));
    traced("HcclRecv", bytes(count, dt), r);
    r
}

/// Records a communicator made through `out`.
fn made(out: *mut Comm, r: i32) {
    if r != 0 {
        return;
    }
    // SAFETY: a pointer is plain data; the kernel checks the address.
    if let Some(h) = unsafe { crate::cmem::read(out.cast::<usize>()) } {
        comms().lock().insert(h, Site::outside().with_stack());
    }
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfo(
    n: u32,
    root: *const c_void,
    rank: u32,
    out: *mut Comm,
) -> i32 {
    let r = forward_hccl!(c"HcclCommInitRootInfo": fn(u32, *const c_void, u32, *mut Comm) (n, root, rank, out));
    made(out, r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfoConfig(
    n: u32,
    root: *const c_void,
    rank: u32,
    config: *const c_void,
    out: *mut Comm,
) -> i32 {
    let r = forward_hccl!(c"HcclCommInitRootInfoConfig": fn(u32, *const c_void, u32, *const c_void, *mut Comm) (n, root, rank, config, out));
    made(out, r);
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDestroy(comm: Comm) -> i32 {
    let r = forward_hccl!(c"HcclCommDestroy": fn(Comm) (comm));
    if r == 0 {
        comms().lock().remove(&(comm as usize));
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommActivateCommMemory(
    comm: Comm,
    ptr: Ptr,
    size: usize,
    offset: usize,
    handle: Ptr,
    flags: u64,
) -> i32 {
    let r = forward_hccl!(c"HcclCommActivateCommMemory": fn(Comm, Ptr, usize, usize, Ptr, u64) (comm, ptr, size, offset, handle, flags));
    if r == 0 {
        active()
            .lock()
            .insert(ptr as usize, (size, Site::outside().with_stack()));
        EVER_ACTIVATED.store(true, std::sync::atomic::Ordering::Release);
    }
    r
}

/// # Safety
/// The C prototype's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDeactivateCommMemory(comm: Comm, ptr: Ptr) -> i32 {
    let r = forward_hccl!(c"HcclCommDeactivateCommMemory": fn(Comm, Ptr) (comm, ptr));
    if r == 0 {
        active().lock().remove(&(ptr as usize));
    }
    r
}
