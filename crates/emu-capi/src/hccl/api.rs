//! HCCL's C functions (`hccl.h`, `hccl_comm.h`), as the catalogue lists
//! them. Every one answers an `HcclResult` (or its documented value) and
//! never unwinds into C; a NULL or unreadable pointer is `HCCL_E_PTR`, a
//! handle that is not a live communicator `HCCL_E_PARA`.

use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use super::comm::{self, Buf, Comm};
use super::engine::{Context, Status};
use super::rendezvous::{self, Client, ROOT_INFO_BYTES, RootInfo};
use super::types::{Hccl, HcclResult, config};
use crate::{cptr, state};

/// `HcclComm`.
pub type HcclComm = *mut c_void;

/// Runs an entry point: a fault armed for it answers first; a panic is
/// `HCCL_E_INTERNAL`.
pub(super) fn entry(name: &'static str, f: impl FnOnce() -> Result<(), Hccl>) -> HcclResult {
    catch_unwind(AssertUnwindSafe(|| match crate::faults::check(name) {
        Some(code) => code,
        None => f().map_or_else(Hccl::code, |()| 0),
    }))
    .unwrap_or(Hccl::E_INTERNAL.code())
}

pub(super) fn ptr_err<T>(r: Result<T, aclmem_core::AclError>) -> Result<T, Hccl> {
    r.map_err(|_| Hccl::E_PTR)
}

/// Seconds from the environment, as milliseconds; `0` is "never" where
/// `zero_is_never`.
fn env_timeout(name: &str, default_s: u64, zero_is_never: bool) -> Result<i64, Hccl> {
    let s = match std::env::var(name) {
        Ok(v) => v.trim().parse::<u64>().map_err(|_| {
            if !aclmem_emu::env::quiet() {
                eprintln!("aclmem-hccl: {name}={v:?} is not a number of seconds");
            }
            Hccl::E_PARA
        })?,
        Err(_) => default_s,
    };
    // "Never" is a year: Gloo takes a finite timeout.
    let s = if s == 0 && zero_is_never {
        365 * 24 * 3600
    } else {
        s.max(1)
    };
    Ok(i64::try_from(s.saturating_mul(1000)).unwrap_or(i64::MAX))
}

/// `HCCL_CONNECT_TIMEOUT` (120 s by default).
fn connect_timeout() -> Result<i64, Hccl> {
    env_timeout("HCCL_CONNECT_TIMEOUT", 120, false)
}

/// `HCCL_EXEC_TIMEOUT` (1836 s by default, 0 never).
fn exec_timeout() -> Result<i64, Hccl> {
    env_timeout("HCCL_EXEC_TIMEOUT", 1836, true)
}

/// What the emulator reads of an `HcclCommConfig`: the name and the
/// execution timeout, when set.
#[derive(Debug, Default)]
struct CommConfig {
    name: Option<String>,
    exec_timeout_s: Option<u32>,
}

/// Reads a config (NULL: none). A wrong magic word is `HCCL_E_PARA`, as
/// HCCL's check answers; fields past the declared size are not read.
fn read_config(p: *const c_void) -> Result<CommConfig, Hccl> {
    if p.is_null() {
        return Ok(CommConfig::default());
    }
    // SAFETY: plain bytes; cptr checks the address.
    let head: [u8; 16] = ptr_err(unsafe { cptr::read(p.cast::<[u8; 16]>()) })?;
    let size = usize::from_ne_bytes(head[..8].try_into().map_err(|_| Hccl::E_INTERNAL)?);
    let magic = u32::from_ne_bytes(head[8..12].try_into().map_err(|_| Hccl::E_INTERNAL)?);
    if magic != config::MAGIC {
        return Err(Hccl::E_PARA);
    }
    let n = size.min(config::READ);
    // SAFETY: as above, `n` bytes the config declares.
    let bytes = ptr_err(unsafe {
        cptr::read_array(
            p.cast::<u8>(),
            n,
            config::READ,
            aclmem_core::AclError::INVALID_PARAM,
        )
    })?;
    let mut out = CommConfig::default();
    let (at, len) = config::COMM_NAME;
    if let Some(field) = bytes.get(at..at + len) {
        let end = field.iter().position(|b| *b == 0).unwrap_or(len);
        let name = String::from_utf8_lossy(&field[..end]).into_owned();
        out.name = (!name.is_empty()).then_some(name);
    }
    if let Some(field) = bytes.get(config::EXEC_TIMEOUT..config::EXEC_TIMEOUT + 4) {
        let v = u32::from_ne_bytes(field.try_into().map_err(|_| Hccl::E_INTERNAL)?);
        out.exec_timeout_s = (v != config::NOT_SET && v != 0 && v < i32::MAX as u32).then_some(v);
    }
    Ok(out)
}

fn failure_code(f: &super::engine::Failure, connecting: bool) -> Hccl {
    if !aclmem_emu::env::quiet() || f.status == Status::Internal {
        eprintln!("aclmem-hccl: {}", f.message);
    }
    match f.status {
        Status::Timeout => Hccl::E_TIMEOUT,
        Status::Io if connecting => Hccl::E_TCP_CONNECT,
        Status::Io => Hccl::E_TCP_TRANSFER,
        Status::Invalid => Hccl::E_PARA,
        // The engine could not be loaded (or failed in itself).
        Status::Internal => Hccl::E_NOT_SUPPORT,
    }
}

/// Connects rank `rank` of `n` to the root info's other ranks.
fn connect(
    n: u32,
    root: &RootInfo,
    rank: u32,
    cfg: &CommConfig,
    host: Option<std::net::IpAddr>,
) -> Result<Comm, Hccl> {
    if n == 0 || rank >= n {
        return Err(Hccl::E_PARA);
    }
    super::engine::available().map_err(|message| {
        eprintln!("aclmem-hccl: {message}");
        Hccl::E_NOT_SUPPORT
    })?;
    let connect_ms = connect_timeout()?;
    let exec_ms = match cfg.exec_timeout_s {
        Some(s) => i64::from(s) * 1000,
        None => exec_timeout()?,
    };
    let host = match host {
        Some(h) => h,
        None => rendezvous::host_address().map_err(|e| {
            eprintln!("aclmem-hccl: {e}");
            Hccl::E_PARA
        })?,
    };
    let deadline = Instant::now() + Duration::from_millis(connect_ms as u64);
    let mut client = Client::connect(root.addr, deadline).map_err(|e| {
        if !aclmem_emu::env::quiet() {
            eprintln!("aclmem-hccl: {e}");
        }
        Hccl::E_TCP_CONNECT
    })?;
    let store = client.raw();
    let context = Context::connect(rank, n, &host.to_string(), &store, connect_ms)
        .map_err(|f| failure_code(&f, true))?;
    drop(client);
    // Every rank is connected: the store has served its purpose.
    rendezvous::stop(&root.identifier);
    let name = cfg.name.clone().unwrap_or_else(|| root.identifier.clone());
    Ok(Comm::new(rank, n, name, exec_ms, context))
}

/// The calling thread must be on a device, as HCCL's calls are.
fn on_device() -> Result<(), Hccl> {
    state::with_global(|g| g.emu.current_device())
        .map(|_| ())
        .map_err(|_| Hccl::E_RUNTIME)
}

fn init(
    n_ranks: u32,
    root_info: *const c_void,
    rank: u32,
    config: *const c_void,
    comm: *mut HcclComm,
) -> Result<(), Hccl> {
    if root_info.is_null() || comm.is_null() {
        return Err(Hccl::E_PTR);
    }
    // SAFETY: plain bytes; cptr checks the address.
    let bytes: [u8; ROOT_INFO_BYTES] = ptr_err(unsafe { cptr::read(root_info.cast()) })?;
    let root = RootInfo::decode(&bytes).ok_or(Hccl::E_PARA)?;
    let cfg = read_config(config)?;
    on_device()?;
    let made = match super::fake::world()? {
        Some(world) => {
            if n_ranks == 0 || rank >= n_ranks || n_ranks > world {
                return Err(Hccl::E_PARA);
            }
            let name = cfg.name.clone().unwrap_or_else(|| root.identifier.clone());
            Comm::fake(rank, n_ranks, name)
        }
        None => connect(n_ranks, &root, rank, &cfg, None)?,
    };
    let handle = comm::register(made);
    // SAFETY: the caller's out parameter, checked by cptr; a bad one
    // destroys what was made.
    ptr_err(unsafe {
        cptr::hand_out(comm.cast::<usize>(), handle, || {
            let _ = comm::destroy(handle);
        })
    })
}

/// `HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)`: starts the
/// rendezvous on this host's address (`docs/hccl.md`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRootInfo(root_info: *mut c_void) -> HcclResult {
    entry("HcclGetRootInfo", || {
        if root_info.is_null() {
            return Err(Hccl::E_PTR);
        }
        if super::fake::world()?.is_some() {
            // No peers will come: nothing to serve.
            let info = RootInfo::fake();
            // SAFETY: the caller's out parameter, checked by cptr.
            return ptr_err(unsafe {
                cptr::write(root_info.cast::<[u8; ROOT_INFO_BYTES]>(), info.encode())
            });
        }
        let ip = rendezvous::host_address().map_err(|e| {
            eprintln!("aclmem-hccl: {e}");
            Hccl::E_PARA
        })?;
        let info = rendezvous::serve(ip).map_err(|e| {
            eprintln!("aclmem-hccl: {e}");
            Hccl::E_TCP_CONNECT
        })?;
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(root_info.cast::<[u8; ROOT_INFO_BYTES]>(), info.encode()) })
            .inspect_err(|_| rendezvous::stop(&info.identifier))
    })
}

/// `HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo
/// *rootInfo, uint32_t rank, HcclComm *comm)`: blocks until every rank has
/// joined, or `HCCL_CONNECT_TIMEOUT` passes (`HCCL_E_TIMEOUT`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfo(
    n_ranks: u32,
    root_info: *const c_void,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitRootInfo", || {
        init(n_ranks, root_info, rank, std::ptr::null(), comm)
    })
}

/// `HcclResult HcclCommInitRootInfoConfig(..., const HcclCommConfig
/// *config, HcclComm *comm)`: as [`HcclCommInitRootInfo`]; the config's
/// name and execution timeout are used, the rest accepted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfoConfig(
    n_ranks: u32,
    root_info: *const c_void,
    rank: u32,
    config: *const c_void,
    comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitRootInfoConfig", || {
        init(n_ranks, root_info, rank, config, comm)
    })
}

/// `HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm
/// *comms)`: one communicator per device of this process, rank i on
/// `devices[i]`, connected on the loopback address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitAll(
    ndev: u32,
    devices: *mut i32,
    comms: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitAll", || {
        if devices.is_null() || comms.is_null() {
            return Err(Hccl::E_PTR);
        }
        if ndev == 0 {
            return Err(Hccl::E_PARA);
        }
        let count = state::with_config(|c| c.devices).map_err(|_| Hccl::E_RUNTIME)?;
        // SAFETY: `ndev` ints, checked by cptr.
        let devs = ptr_err(unsafe {
            cptr::read_array(
                devices.cast_const(),
                ndev as usize,
                64,
                aclmem_core::AclError::INVALID_PARAM,
            )
        })
        .map_err(|_| if ndev > 64 { Hccl::E_PARA } else { Hccl::E_PTR })?;
        if devs.iter().any(|d| *d < 0 || *d as u32 >= count) {
            return Err(Hccl::E_PARA);
        }
        if super::fake::world()?.is_some_and(|w| w < ndev) {
            return Err(Hccl::E_PARA);
        }
        if super::fake::world()?.is_some() {
            let root = RootInfo::fake();
            let handles: Vec<usize> = (0..ndev)
                .map(|r| comm::register(Comm::fake(r, ndev, root.identifier.clone())))
                .collect();
            return hand_out_all(comms, &handles);
        }
        let root = rendezvous::serve(std::net::Ipv4Addr::LOCALHOST.into()).map_err(|e| {
            eprintln!("aclmem-hccl: {e}");
            Hccl::E_TCP_CONNECT
        })?;
        let cfg = CommConfig::default();
        let made: Vec<Result<Comm, Hccl>> = std::thread::scope(|s| {
            let joins: Vec<_> = (0..ndev)
                .map(|r| {
                    let (root, cfg) = (&root, &cfg);
                    s.spawn(move || connect(ndev, root, r, cfg, None))
                })
                .collect();
            joins
                .into_iter()
                .map(|j| j.join().unwrap_or(Err(Hccl::E_INTERNAL)))
                .collect()
        });
        rendezvous::stop(&root.identifier);
        let made: Vec<Comm> = made.into_iter().collect::<Result<_, _>>()?;
        let handles: Vec<usize> = made.into_iter().map(comm::register).collect();
        hand_out_all(comms, &handles)
    })
}

/// Writes `handles` to the caller's array; if it cannot, destroys them all.
fn hand_out_all(comms: *mut HcclComm, handles: &[usize]) -> Result<(), Hccl> {
    for (i, h) in handles.iter().enumerate() {
        // SAFETY: the caller's array of one handle per device, each slot
        // checked by cptr.
        if unsafe { cptr::write(comms.cast::<usize>().wrapping_add(i), *h) }.is_err() {
            for h in handles {
                let _ = comm::destroy(*h);
            }
            return Err(Hccl::E_PTR);
        }
    }
    Ok(())
}

/// `HcclResult HcclCommDestroy(HcclComm comm)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDestroy(comm: HcclComm) -> HcclResult {
    entry("HcclCommDestroy", || comm::destroy(comm as usize))
}

/// `HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankSize(comm: HcclComm, rank_size: *mut u32) -> HcclResult {
    entry("HcclGetRankSize", || {
        let c = comm::lookup(comm as usize)?;
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(rank_size, c.size) })
    })
}

/// `HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankId(comm: HcclComm, rank: *mut u32) -> HcclResult {
    entry("HcclGetRankId", || {
        let c = comm::lookup(comm as usize)?;
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(rank, c.rank) })
    })
}

/// `HcclResult HcclGetCommName(HcclComm comm, char *commName)`: the
/// config's name, else the root info's identifier; at most 127 bytes and a
/// NUL (torch_npu's buffer is 128).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommName(comm: HcclComm, name: *mut c_char) -> HcclResult {
    entry("HcclGetCommName", || {
        let c = comm::lookup(comm as usize)?;
        if name.is_null() {
            return Err(Hccl::E_PTR);
        }
        let mut text = c.name.clone();
        while text.len() > 127 {
            text.pop();
        }
        // SAFETY: the caller's buffer of 128 bytes, checked by cptr.
        ptr_err(unsafe { cptr::write_cstr(name, 128, &text) })
    })
}

/// `HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult
/// *asyncError)`: the error that broke the communicator (a peer lost:
/// `HCCL_E_TCP_TRANSFER`; a timeout: `HCCL_E_TIMEOUT`), else 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommAsyncError(
    comm: HcclComm,
    error: *mut HcclResult,
) -> HcclResult {
    entry("HcclGetCommAsyncError", || {
        let c = comm::lookup(comm as usize)?;
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(error, c.async_error()) })
    })
}

/// `const char *HcclGetErrorString(HcclResult code)`: never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn HcclGetErrorString(code: HcclResult) -> *const c_char {
    Hccl::text_of(code).as_ptr().cast()
}

/// `uint32_t HcclGetCommConfigCapability(void)`.
#[unsafe(no_mangle)]
pub extern "C" fn HcclGetCommConfigCapability() -> u32 {
    config::CAPABILITY
}

/// `HCCL_DETERMINISTIC`'s value, as set.
static DETERMINISTIC: AtomicI32 = AtomicI32::new(0);

/// `HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue value)`:
/// `HCCL_DETERMINISTIC` (0) takes 0 or 1 (the emulator's reductions are
/// deterministic either way); anything else is `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub extern "C" fn HcclSetConfig(config: u32, value: i32) -> HcclResult {
    entry("HcclSetConfig", || match (config, value) {
        (0, 0 | 1) => {
            DETERMINISTIC.store(value, Ordering::Release);
            Ok(())
        }
        _ => Err(Hccl::E_PARA),
    })
}

/// `HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *value)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetConfig(config: u32, value: *mut i32) -> HcclResult {
    entry("HcclGetConfig", || {
        if config != 0 {
            return Err(Hccl::E_PARA);
        }
        // SAFETY: the caller's out parameter, checked by cptr.
        ptr_err(unsafe { cptr::write(value, DETERMINISTIC.load(Ordering::Acquire)) })
    })
}

/// `HcclResult HcclCommSuspend(HcclComm comm)`: operations answer
/// `HCCL_E_SUSPENDING` until resumed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSuspend(comm: HcclComm) -> HcclResult {
    entry("HcclCommSuspend", || {
        comm::lookup(comm as usize)?.suspend(true);
        Ok(())
    })
}

/// `HcclResult HcclCommResume(HcclComm comm)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommResume(comm: HcclComm) -> HcclResult {
    entry("HcclCommResume", || {
        comm::lookup(comm as usize)?.suspend(false);
        Ok(())
    })
}

/// `HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr,
/// size_t size, size_t alignment, uint64_t flags)`: recorded; a range
/// overlapping one already set is `HCCL_E_PARA` (HCCL's rule).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSetMemoryRange(
    comm: HcclComm,
    base: *mut c_void,
    size: usize,
    _alignment: usize,
    _flags: u64,
) -> HcclResult {
    entry("HcclCommSetMemoryRange", || {
        let c = comm::lookup(comm as usize)?;
        if base.is_null() {
            return Err(Hccl::E_PTR);
        }
        let new = Buf {
            addr: base as usize,
            len: size,
        };
        if size == 0 || new.addr.checked_add(size).is_none() {
            return Err(Hccl::E_PARA);
        }
        let mut r = c.ranges.lock();
        let overlaps = |&(a, l): &(usize, usize)| a < new.addr + size && new.addr < a + l;
        if r.set.iter().any(overlaps) {
            return Err(Hccl::E_PARA);
        }
        r.set.push((new.addr, size));
        Ok(())
    })
}

/// `HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void
/// *baseVirPtr)`: a base never set is `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommUnsetMemoryRange(comm: HcclComm, base: *mut c_void) -> HcclResult {
    entry("HcclCommUnsetMemoryRange", || {
        let c = comm::lookup(comm as usize)?;
        let mut r = c.ranges.lock();
        let at = r
            .set
            .iter()
            .position(|(a, _)| *a == base as usize)
            .ok_or(Hccl::E_PARA)?;
        r.set.swap_remove(at);
        Ok(())
    })
}

/// `HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr,
/// size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)`:
/// recorded. It is not checked against the set ranges: torch_npu sets its
/// ranges with the address of its own parameter (`docs/hccl.md`), which
/// HCCL evidently accepts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommActivateCommMemory(
    comm: HcclComm,
    ptr: *mut c_void,
    size: usize,
    _offset: usize,
    _handle: *mut c_void,
    _flags: u64,
) -> HcclResult {
    entry("HcclCommActivateCommMemory", || {
        let c = comm::lookup(comm as usize)?;
        if ptr.is_null() {
            return Err(Hccl::E_PTR);
        }
        if size == 0 {
            return Err(Hccl::E_PARA);
        }
        c.ranges.lock().active.push((ptr as usize, size));
        Ok(())
    })
}

/// `HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr)`:
/// memory never activated is `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDeactivateCommMemory(
    comm: HcclComm,
    ptr: *mut c_void,
) -> HcclResult {
    entry("HcclCommDeactivateCommMemory", || {
        let c = comm::lookup(comm as usize)?;
        let mut r = c.ranges.lock();
        let at = r
            .active
            .iter()
            .position(|(a, _)| *a == ptr as usize)
            .ok_or(Hccl::E_PARA)?;
        r.active.swap_remove(at);
        Ok(())
    })
}

fn init_cluster(
    path: *const c_char,
    rank: u32,
    config: *const c_void,
    comm: *mut HcclComm,
) -> Result<(), Hccl> {
    if path.is_null() || comm.is_null() {
        return Err(Hccl::E_PTR);
    }
    let path = cptr::read_cstr(path, 4096).map_err(|_| Hccl::E_PTR)?;
    let ranks = super::rank_table::load(&path)?;
    let n = u32::try_from(ranks.len()).map_err(|_| Hccl::E_PARA)?;
    let me = ranks.get(rank as usize).ok_or(Hccl::E_PARA)?.clone();
    let cfg = read_config(config)?;
    on_device()?;
    let root = &ranks[0];
    let identifier = format!("{}_{}_ranktable", root.addr.ip(), root.addr.port());
    let made = if super::fake::world()?.is_some_and(|w| n <= w) {
        Comm::fake(rank, n, cfg.name.clone().unwrap_or(identifier))
    } else {
        let info = if rank == 0 {
            rendezvous::serve_at(root.addr, identifier).map_err(|e| {
                eprintln!("aclmem-hccl: {e}");
                Hccl::E_TCP_CONNECT
            })?
        } else {
            RootInfo {
                addr: root.addr,
                identifier,
            }
        };
        connect(n, &info, rank, &cfg, Some(me.addr.ip()))
            .inspect_err(|_| rendezvous::stop(&info.identifier))?
    };
    let handle = comm::register(made);
    // SAFETY: the caller's out parameter, checked by cptr; a bad one
    // destroys what was made.
    ptr_err(unsafe {
        cptr::hand_out(comm.cast::<usize>(), handle, || {
            let _ = comm::destroy(handle);
        })
    })
}

/// `HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t
/// rank, HcclComm *comm)`: rank `rank` of the rank table at `clusterInfo`
/// (a path), connected through rank 0's address there
/// (`docs/hccl.md`); an unreadable table is
/// `HCCL_E_OPEN_FILE_FAILURE` (10), a malformed one `HCCL_E_PARA`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfo(
    path: *const c_char,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitClusterInfo", || {
        init_cluster(path, rank, std::ptr::null(), comm)
    })
}

/// `HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo,
/// uint32_t rank, HcclCommConfig *config, HcclComm *comm)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfoConfig(
    path: *const c_char,
    rank: u32,
    config: *mut c_void,
    comm: *mut HcclComm,
) -> HcclResult {
    entry("HcclCommInitClusterInfoConfig", || {
        init_cluster(path, rank, config.cast_const(), comm)
    })
}
