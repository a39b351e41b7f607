//! The root info and the rendezvous behind it.
//!
//! As HCCL's `HcclGetRootInfo` starts a TCP server on the root and writes
//! its address into the 4108-byte `HcclRootInfo`, the emulator's starts a
//! key-value store for Gloo's rendezvous (Gloo's `Store` is an interface
//! for exactly this) and writes its address there. Each rank's Gloo
//! context publishes its own addresses in the store and reads its peers';
//! once every rank is connected (a barrier over Gloo), the maker stops the
//! store. The store carries a few hundred bytes per rank and nothing else:
//! every collective's data goes over Gloo's own connections.
//!
//! The exchange is JSON lines over TCP: `{"set":KEY,"value":[bytes]}`
//! answered `{"ok":true}`, and `{"get":KEY,"timeout_ms":N}` answered
//! `{"ok":true,"value":[bytes]}` once the key is set, or `{"ok":false}`
//! after the timeout.

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use aclmem_fork::ForkMutex;
use parking_lot::{Condvar, Mutex};
use serde_json::{Value, json};

use crate::engine::{GlooStore, Status};

/// `HCCL_ROOT_INFO_BYTES`.
pub const ROOT_INFO_BYTES: usize = 4108;
/// What marks a root info made by this library (after HCCL's own fields).
const MAGIC: &[u8; 16] = b"aclmem-hccl-v1\0\0";
const IP: (usize, usize) = (0, 64);
const PORT: usize = 64;
const IDENTIFIER: (usize, usize) = (72, 128);
const MAGIC_AT: usize = 204;
/// The longest line either side reads.
const MAX_LINE: u64 = 16 << 20;

/// Microseconds since the epoch: the last part of an identifier.
fn micros() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
}

/// A decoded root info: where the store is, and the communicator's
/// identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootInfo {
    /// The store's address.
    pub addr: SocketAddr,
    /// `ip_port_pid_microseconds`, unique per root info.
    pub identifier: String,
}

fn text(bytes: &[u8]) -> Option<&str> {
    CStr::from_bytes_until_nul(bytes).ok()?.to_str().ok()
}

impl RootInfo {
    /// The 4108 bytes: HCCL's layout (`ip[64]`, `port`, `nicDeploy`,
    /// `identifier[128]`, `rankId`), then this library's mark; zero
    /// elsewhere.
    pub fn encode(&self) -> [u8; ROOT_INFO_BYTES] {
        let mut out = [0u8; ROOT_INFO_BYTES];
        let ip = self.addr.ip().to_string();
        out[IP.0..IP.0 + ip.len()].copy_from_slice(ip.as_bytes());
        out[PORT..PORT + 4].copy_from_slice(&u32::from(self.addr.port()).to_ne_bytes());
        let id = self.identifier.as_bytes();
        let n = id.len().min(IDENTIFIER.1 - 1);
        out[IDENTIFIER.0..IDENTIFIER.0 + n].copy_from_slice(&id[..n]);
        out[MAGIC_AT..MAGIC_AT + MAGIC.len()].copy_from_slice(MAGIC);
        out
    }

    /// A root info of the fake world: no store behind it.
    pub fn fake() -> RootInfo {
        RootInfo {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
            identifier: format!("fake_{}_{}", std::process::id(), micros()),
        }
    }

    /// Reads one; `None` when it was not made by `HcclGetRootInfo` of this
    /// library (garbage, or another HCCL's).
    pub fn decode(bytes: &[u8; ROOT_INFO_BYTES]) -> Option<RootInfo> {
        if &bytes[MAGIC_AT..MAGIC_AT + MAGIC.len()] != MAGIC {
            return None;
        }
        let ip: IpAddr = text(&bytes[IP.0..IP.0 + IP.1])?.parse().ok()?;
        let port = u32::from_ne_bytes(bytes[PORT..PORT + 4].try_into().ok()?);
        let identifier = text(&bytes[IDENTIFIER.0..IDENTIFIER.0 + IDENTIFIER.1])?.to_owned();
        Some(RootInfo {
            addr: SocketAddr::new(ip, u16::try_from(port).ok()?),
            identifier,
        })
    }
}

/// The address this host's ranks listen on: `HCCL_IF_IP`, else the first
/// IPv4 address of `HCCL_SOCKET_IFNAME`, else of the first interface that
/// is up and not loopback, else 127.0.0.1 (HCCL's order, docker interfaces
/// not set apart).
pub fn host_address() -> Result<IpAddr, String> {
    if let Ok(ip) = std::env::var("HCCL_IF_IP") {
        return ip
            .trim()
            .parse()
            .map_err(|_| format!("HCCL_IF_IP={ip:?} is not an IP address"));
    }
    let wanted = std::env::var("HCCL_SOCKET_IFNAME").ok();
    let interfaces = interfaces();
    if let Some(name) = wanted {
        let name = name.trim_start_matches('=').to_owned();
        return interfaces
            .iter()
            .find(|(n, _, _)| n.starts_with(name.as_str()))
            .map(|(_, ip, _)| IpAddr::V4(*ip))
            .ok_or_else(|| {
                format!("HCCL_SOCKET_IFNAME={name:?}: no such interface with an IPv4 address")
            });
    }
    Ok(interfaces
        .iter()
        .find(|(_, ip, up)| *up && !ip.is_loopback())
        .map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |(_, ip, _)| {
            IpAddr::V4(*ip)
        }))
}

/// The host's IPv4 interfaces: name, address, up.
fn interfaces() -> Vec<(String, Ipv4Addr, bool)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut at = head;
    while !at.is_null() {
        // SAFETY: a node of the list getifaddrs made, alive until freed.
        let ifa = unsafe { &*at };
        at = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: a sockaddr of the list; its family says its type.
        let family = unsafe { (*ifa.ifa_addr).sa_family };
        if i32::from(family) != libc::AF_INET {
            continue;
        }
        // SAFETY: an AF_INET address is a sockaddr_in.
        let sin = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_in>() };
        let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
        // SAFETY: the name is a NUL-terminated string of the list.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        let up = ifa.ifa_flags & libc::IFF_UP as u32 != 0;
        out.push((name, ip, up));
    }
    // SAFETY: the list getifaddrs made, freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// A store served by this process.
struct Served {
    values: Mutex<HashMap<String, Vec<u8>>>,
    changed: Condvar,
    stop: AtomicBool,
    addr: SocketAddr,
    accepting: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// Stores this process serves, by root info identifier.
static SERVED: ForkMutex<Vec<(String, Arc<Served>)>> = ForkMutex::new(Vec::new);

/// Starts a store on `ip` (`HCCL_IF_BASE_PORT` and the 31 ports after it
/// when set, else a port the kernel picks) and gives its root info.
pub fn serve(ip: IpAddr) -> Result<RootInfo, String> {
    let listener = bind(ip)?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let identifier = format!("{}_{}_{}_{}", ip, addr.port(), std::process::id(), micros());
    start(listener, identifier)
}

/// Starts a store at exactly `addr` (rank 0's address in a rank table).
pub fn serve_at(addr: SocketAddr, identifier: String) -> Result<RootInfo, String> {
    let listener = TcpListener::bind(addr).map_err(|e| {
        format!("cannot listen on {addr} (rank 0's address in the rank table): {e}")
    })?;
    start(listener, identifier)
}

fn start(listener: TcpListener, identifier: String) -> Result<RootInfo, String> {
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let served = Arc::new(Served {
        values: Mutex::new(HashMap::new()),
        changed: Condvar::new(),
        stop: AtomicBool::new(false),
        addr,
        accepting: Mutex::new(None),
    });
    let s = Arc::clone(&served);
    let handle = std::thread::Builder::new()
        .name("aclmem-hccl-store".into())
        .spawn(move || accept(listener, s))
        .map_err(|e| e.to_string())?;
    *served.accepting.lock() = Some(handle);
    SERVED.lock().push((identifier.clone(), served));
    Ok(RootInfo { addr, identifier })
}

fn bind(ip: IpAddr) -> Result<TcpListener, String> {
    match std::env::var("HCCL_IF_BASE_PORT") {
        Ok(base) => {
            let base: u16 = base
                .trim()
                .parse()
                .map_err(|_| format!("HCCL_IF_BASE_PORT={base:?} is not a port"))?;
            (base..=base.saturating_add(31))
                .find_map(|p| TcpListener::bind((ip, p)).ok())
                .ok_or_else(|| {
                    format!(
                        "no free port in {base}..{} on {ip}",
                        base.saturating_add(31)
                    )
                })
        }
        Err(_) => TcpListener::bind((ip, 0)).map_err(|e| format!("cannot listen on {ip}: {e}")),
    }
}

/// Stops the store made for `identifier`, if this process serves it.
pub fn stop(identifier: &str) {
    let served = {
        let mut all = SERVED.lock();
        let at = all.iter().position(|(id, _)| id == identifier);
        at.map(|i| all.swap_remove(i).1)
    };
    if let Some(s) = served {
        s.stop.store(true, Ordering::Release);
        s.changed.notify_all();
        // Wakes the accepting thread, which then sees `stop` and closes
        // the listening socket.
        let _ = TcpStream::connect_timeout(&s.addr, Duration::from_secs(1));
        if let Some(h) = s.accepting.lock().take() {
            let _ = h.join();
        }
    }
}

fn accept(listener: TcpListener, served: Arc<Served>) {
    for conn in listener.incoming() {
        if served.stop.load(Ordering::Acquire) {
            return;
        }
        let Ok(conn) = conn else { continue };
        let s = Arc::clone(&served);
        let _ = std::thread::Builder::new()
            .name("aclmem-hccl-store".into())
            .spawn(move || answer(conn, s));
    }
}

fn bytes_of(v: &Value) -> Option<Vec<u8>> {
    v.as_array()?
        .iter()
        .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
        .collect()
}

/// Answers one peer's requests until it hangs up (or sends garbage).
fn answer(conn: TcpStream, served: Arc<Served>) {
    let Ok(mut writer) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        match (&mut reader).take(MAX_LINE).read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Ok(req) = serde_json::from_str::<Value>(&line) else {
            return;
        };
        let reply = if let Some(key) = req.get("set").and_then(Value::as_str) {
            let Some(value) = req.get("value").and_then(bytes_of) else {
                return;
            };
            served.values.lock().insert(key.to_owned(), value);
            served.changed.notify_all();
            json!({"ok": true})
        } else if let Some(key) = req.get("get").and_then(Value::as_str) {
            let timeout = req.get("timeout_ms").and_then(Value::as_u64).unwrap_or(0);
            let deadline = Instant::now() + Duration::from_millis(timeout);
            let mut values = served.values.lock();
            loop {
                if let Some(v) = values.get(key) {
                    break json!({"ok": true, "value": v});
                }
                if served.stop.load(Ordering::Acquire)
                    || served.changed.wait_until(&mut values, deadline).timed_out()
                {
                    break json!({"ok": false});
                }
            }
        } else {
            return;
        };
        if writeln!(writer, "{reply}").is_err() {
            return;
        }
    }
}

/// A rank's connection to the store of a root info.
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    /// Connects, retrying until `deadline` (the maker may not listen yet
    /// only if the root info came from elsewhere; a refused connection is
    /// retried all the same).
    pub fn connect(addr: SocketAddr, deadline: Instant) -> Result<Client, String> {
        loop {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
                Ok(conn) => {
                    let _ = conn.set_nodelay(true);
                    let writer = conn.try_clone().map_err(|e| e.to_string())?;
                    return Ok(Client {
                        reader: BufReader::new(conn),
                        writer,
                    });
                }
                Err(e) if Instant::now() >= deadline => {
                    return Err(format!("cannot reach the root's store at {addr}: {e}"));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    fn request(&mut self, req: &Value, wait: Duration) -> Result<Value, Status> {
        self.writer
            .set_write_timeout(Some(Duration::from_secs(30)))
            .map_err(|_| Status::Io)?;
        writeln!(self.writer, "{req}").map_err(|_| Status::Io)?;
        self.reader
            .get_ref()
            .set_read_timeout(Some(wait + Duration::from_secs(10)))
            .map_err(|_| Status::Io)?;
        let mut line = String::new();
        match (&mut self.reader).take(MAX_LINE).read_line(&mut line) {
            Ok(0) => Err(Status::Io),
            Ok(_) => serde_json::from_str(&line).map_err(|_| Status::Io),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(Status::Timeout)
            }
            Err(_) => Err(Status::Io),
        }
    }

    /// Sets `key`.
    pub fn set(&mut self, key: &str, value: &[u8]) -> Result<(), Status> {
        let reply = self.request(&json!({"set": key, "value": value}), Duration::ZERO)?;
        if reply.get("ok") == Some(&Value::Bool(true)) {
            Ok(())
        } else {
            Err(Status::Io)
        }
    }

    /// Gets `key`, waiting up to `timeout` for it to be set.
    pub fn get(&mut self, key: &str, timeout: Duration) -> Result<Vec<u8>, Status> {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let reply = self.request(&json!({"get": key, "timeout_ms": ms}), timeout)?;
        match reply.get("value").and_then(bytes_of) {
            Some(v) if reply.get("ok") == Some(&Value::Bool(true)) => Ok(v),
            _ => Err(Status::Timeout),
        }
    }

    /// The store as the engine calls it; valid while `self` is borrowed.
    pub fn raw(&mut self) -> GlooStore {
        GlooStore {
            ctx: std::ptr::from_mut(self).cast(),
            set: store_set,
            get: store_get,
            release: store_release,
        }
    }
}

/// # Safety
/// `ctx` is the `Client` of [`Client::raw`], borrowed for the call; `key`
/// NUL-terminated; `data` readable for `len` bytes.
unsafe extern "C" fn store_set(
    ctx: *mut c_void,
    key: *const c_char,
    data: *const c_void,
    len: usize,
) -> i32 {
    // SAFETY: the contract above; an empty value may come with a NULL
    // pointer (an empty `std::vector`'s data), which no slice may have.
    let (client, key, data) = unsafe {
        (
            &mut *ctx.cast::<Client>(),
            CStr::from_ptr(key),
            if len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(data.cast::<u8>(), len)
            },
        )
    };
    let Ok(key) = key.to_str() else {
        return Status::Invalid.raw();
    };
    client.set(key, data).map_or_else(Status::raw, |()| 0)
}

/// # Safety
/// As [`store_set`]; `data` and `len` writable.
unsafe extern "C" fn store_get(
    ctx: *mut c_void,
    key: *const c_char,
    timeout_ms: i64,
    data: *mut *mut c_void,
    len: *mut usize,
) -> i32 {
    // SAFETY: the contract above.
    let (client, key) = unsafe { (&mut *ctx.cast::<Client>(), CStr::from_ptr(key)) };
    let Ok(key) = key.to_str() else {
        return Status::Invalid.raw();
    };
    let timeout = Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
    match client.get(key, timeout) {
        Ok(v) => {
            let v = v.into_boxed_slice();
            // SAFETY: the engine's out parameters; the box is given back
            // through `store_release` with its length.
            unsafe {
                *len = v.len();
                *data = Box::into_raw(v).cast();
            }
            0
        }
        Err(s) => s.raw(),
    }
}

/// # Safety
/// `data` and `len` as `store_get` handed them out, given back once.
unsafe extern "C" fn store_release(_ctx: *mut c_void, data: *mut c_void, len: usize) {
    // SAFETY: a boxed slice of `len` bytes made by `store_get`.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data.cast::<u8>(), len)) });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_info_round_trips_and_refuses_garbage() {
        let info = RootInfo {
            addr: "10.1.2.3:45678".parse().unwrap(),
            identifier: "10.1.2.3_45678_7_99".into(),
        };
        let bytes = info.encode();
        assert_eq!(&bytes[..8], b"10.1.2.3");
        assert_eq!(RootInfo::decode(&bytes), Some(info));
        assert_eq!(RootInfo::decode(&[0; ROOT_INFO_BYTES]), None);
        let mut bad = bytes;
        bad[0] = b'x';
        assert_eq!(RootInfo::decode(&bad), None);
    }

    #[test]
    fn the_store_hands_values_to_waiting_clients_and_times_out() {
        let info = serve(IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut a = Client::connect(info.addr, deadline).unwrap();
        let mut b = Client::connect(info.addr, deadline).unwrap();
        let waiter = std::thread::spawn(move || b.get("k", Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        a.set("k", &[1, 2, 255]).unwrap();
        assert_eq!(waiter.join().unwrap(), Ok(vec![1, 2, 255]));
        assert_eq!(
            a.get("absent", Duration::from_millis(30)),
            Err(Status::Timeout)
        );
        stop(&info.identifier);
        // Stopped: the port is closed.
        assert!(Client::connect(info.addr, Instant::now()).is_err());
    }
}
