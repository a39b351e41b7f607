//! Making communicators: from a root info (rank 0's rendezvous), for every
//! device of one process, or from a rank table, each connected through the
//! engine or, in the fake world, without peers. The timeouts come from
//! HCCL's variables (`HCCL_CONNECT_TIMEOUT`, `HCCL_EXEC_TIMEOUT`) or the
//! caller's `HcclCommConfig`.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::comm::Comm;
use crate::engine::{self, Context, Failure, Status};
use crate::rank_table::RankEntry;
use crate::rendezvous::{self, Client, RootInfo};
use crate::types::{Hccl, config};

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
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CommConfig {
    /// `hcclCommName`, when not empty.
    pub name: Option<String>,
    /// `hcclExecTimeOut` in seconds, when set.
    pub exec_timeout_s: Option<u32>,
}

impl CommConfig {
    /// How many bytes of a config to read, from its first 16 (its `size`
    /// and `magicWord`): a wrong magic word is `HCCL_E_PARA`, as HCCL's
    /// check answers; fields past the declared size are not read.
    pub fn declared_len(head: &[u8; 16]) -> Result<usize, Hccl> {
        let size = usize::from_ne_bytes(head[..8].try_into().map_err(|_| Hccl::E_INTERNAL)?);
        let magic = u32::from_ne_bytes(head[8..12].try_into().map_err(|_| Hccl::E_INTERNAL)?);
        if magic != config::MAGIC {
            return Err(Hccl::E_PARA);
        }
        Ok(size.min(config::READ))
    }

    /// The fields of a config's first bytes (as many as it declares).
    pub fn parse(bytes: &[u8]) -> CommConfig {
        let mut out = CommConfig::default();
        let (at, len) = config::COMM_NAME;
        if let Some(field) = bytes.get(at..at + len) {
            let end = field.iter().position(|b| *b == 0).unwrap_or(len);
            let name = String::from_utf8_lossy(&field[..end]).into_owned();
            out.name = (!name.is_empty()).then_some(name);
        }
        if let Some(field) = bytes.get(config::EXEC_TIMEOUT..config::EXEC_TIMEOUT + 4) {
            let mut word = [0u8; 4];
            word.copy_from_slice(field);
            let v = u32::from_ne_bytes(word);
            out.exec_timeout_s =
                (v != config::NOT_SET && v != 0 && v < i32::MAX as u32).then_some(v);
        }
        out
    }
}

fn failure_code(f: &Failure, connecting: bool) -> Hccl {
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

/// Connects rank `rank` of `n` to the root info's other ranks, listening
/// on `host` (by default the address the rendezvous names).
pub fn connect(
    n: u32,
    root: &RootInfo,
    rank: u32,
    cfg: &CommConfig,
    host: Option<IpAddr>,
) -> Result<Comm, Hccl> {
    if n == 0 || rank >= n {
        return Err(Hccl::E_PARA);
    }
    engine::available().map_err(|message| {
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

/// Rank `rank` of `n_ranks` through a root info: connected, or in the fake
/// world a communicator without peers (a world smaller than `n_ranks` is
/// `HCCL_E_PARA`).
pub fn from_root_info(
    n_ranks: u32,
    root: &RootInfo,
    rank: u32,
    cfg: &CommConfig,
) -> Result<Comm, Hccl> {
    match crate::fake::world()? {
        Some(world) => {
            if n_ranks == 0 || rank >= n_ranks || n_ranks > world {
                return Err(Hccl::E_PARA);
            }
            let name = cfg.name.clone().unwrap_or_else(|| root.identifier.clone());
            Ok(Comm::fake(rank, n_ranks, name))
        }
        None => connect(n_ranks, root, rank, cfg, None),
    }
}

/// `ndev` communicators of one process (`HcclCommInitAll`), rank i for the
/// caller's device i, connected on the loopback address (or of the fake
/// world).
pub fn all_local(ndev: u32) -> Result<Vec<Comm>, Hccl> {
    if ndev == 0 {
        return Err(Hccl::E_PARA);
    }
    if let Some(world) = crate::fake::world()? {
        if world < ndev {
            return Err(Hccl::E_PARA);
        }
        let root = RootInfo::fake();
        return Ok((0..ndev)
            .map(|r| Comm::fake(r, ndev, root.identifier.clone()))
            .collect());
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
    made.into_iter().collect()
}

/// Rank `rank` of a rank table's `ranks` (`crate::rank_table::load`),
/// connected through rank 0's address there (rank 0 serves the
/// rendezvous), or of the fake world.
pub fn from_rank_table(ranks: &[RankEntry], rank: u32, cfg: &CommConfig) -> Result<Comm, Hccl> {
    let n = u32::try_from(ranks.len()).map_err(|_| Hccl::E_PARA)?;
    let me = *ranks.get(rank as usize).ok_or(Hccl::E_PARA)?;
    let root = &ranks[0];
    let identifier = format!("{}_{}_ranktable", root.addr.ip(), root.addr.port());
    if crate::fake::world()?.is_some_and(|w| n <= w) {
        return Ok(Comm::fake(rank, n, cfg.name.clone().unwrap_or(identifier)));
    }
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
    connect(n, &info, rank, cfg, Some(me.addr.ip()))
        .inspect_err(|_| rendezvous::stop(&info.identifier))
}

/// The root info `HcclGetRootInfo` hands out: the rendezvous served on this
/// host's address, or in the fake world one that serves nothing (no peers
/// will come).
pub fn new_root_info() -> Result<RootInfo, Hccl> {
    if crate::fake::world()?.is_some() {
        return Ok(RootInfo::fake());
    }
    let ip = rendezvous::host_address().map_err(|e| {
        eprintln!("aclmem-hccl: {e}");
        Hccl::E_PARA
    })?;
    rendezvous::serve(ip).map_err(|e| {
        eprintln!("aclmem-hccl: {e}");
        Hccl::E_TCP_CONNECT
    })
}
