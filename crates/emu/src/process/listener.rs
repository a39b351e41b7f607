//! Imports between real processes: the exporter answers on a Unix socket,
//! learns who asks from the kernel (`SO_PEERCRED`), checks the whitelist and
//! sends its pool's descriptor (`SCM_RIGHTS`). A process outside the
//! whitelist never receives one.
//!
//! Each exporting process listens on a socket in the machine's private
//! directory (mode 0700, see `machine/files.rs`), named after the machine,
//! its slot and a random nonce published in its slot; a listener thread is
//! started at its first export. The socket's path, unlike an abstract
//! name, keeps every other user out: connecting takes the right to enter
//! the directory. An importer connects, sends one
//! request and reads one answer, with timeouts on both sides, so a dead or
//! stuck exporter costs a bounded wait (a dead one: none, the connection is
//! refused at once).

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use aclmem_core::AclError;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketAddrUnix, SocketFlags, SocketType, accept_with, bind,
    connect, listen, recvmsg, sendmsg, socket_with, sockopt,
};

use super::Process;
use crate::errors::Situation;
use crate::machine::{
    ExportInfo, ExportKind, IMPORT_TIMEOUT, REPLY_BYTES, REQUEST_BYTES, Reply, Request,
};
use crate::os::pool::PoolFile;
use zerocopy::IntoBytes;

/// How long the exporter's side waits for an importer to take its reply.
const SERVE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long the exporter waits for a request once it accepted a
/// connection: an importer sends its request right after connecting, so a
/// silent peer costs the listener this long, not [`SERVE_TIMEOUT`] (a
/// flood of silent connections must not outlast an importer's wait).
const REQUEST_WAIT: Duration = Duration::from_millis(250);

/// A running listener.
pub struct Listener {
    socket: Arc<ListenSocket>,
    stop: Arc<AtomicBool>,
    path: std::path::PathBuf,
}

impl Listener {
    /// Stops accepting (the thread ends at its next wake-up) and removes
    /// the socket's path.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        let _ = rustix::net::shutdown(&*self.socket, rustix::net::Shutdown::Both);
        let _ = rustix::fs::unlink(&self.path);
    }
}

/// The path of the listener of `slot` of this process's machine.
fn socket_path(process: &Process, slot: u32, nonce: u64) -> Result<std::path::PathBuf, AclError> {
    let name = process
        .machine
        .name
        .as_deref()
        .ok_or(AclError::INTERNAL_ERROR)?;
    crate::machine::listener_path(name, slot, nonce).map_err(|e| {
        static WARNED: AtomicBool = AtomicBool::new(false);
        crate::env::warn_once(&WARNED, &e.to_string());
        AclError::RT_NO_PERMISSION
    })
}

fn socket_name(path: &std::path::Path) -> Result<SocketAddrUnix, AclError> {
    SocketAddrUnix::new(path).map_err(|_| AclError::INTERNAL_ERROR)
}

/// The listening socket, registered for a forked child to close, and
/// forgotten there when it closes (its number may name another file then).
struct ListenSocket(OwnedFd);

impl AsFd for ListenSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl Drop for ListenSocket {
    fn drop(&mut self) {
        crate::os::fork::unregister_fd(&self.0);
    }
}

/// A new Unix sequenced-packet socket (one message is one request or
/// reply).
fn seqpacket() -> Result<OwnedFd, AclError> {
    socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )
    .map_err(crate::env::socket_error)
}

/// Starts this process's listener, once.
pub fn ensure_listener(process: &Process) -> Result<(), AclError> {
    if process.listener.get().is_some() {
        return Ok(());
    }
    let weak = process_weak(process).ok_or(AclError::INTERNAL_ERROR)?;
    let nonce = crate::os::sys::random_u64() | 1;
    let path = socket_path(process, process.slot, nonce)?;
    let addr = socket_name(&path)?;
    let socket = seqpacket()?;
    // A listener that could not take one connection when out of
    // descriptors would leave its importers to time out: the export
    // fails now instead, with the limit named.
    let spare = Spare::open()?;
    bind(&socket, &addr).map_err(|_| AclError::RT_IPC_ERROR)?;
    // Only this user, even where the directory's mode would not say so.
    let private = rustix::fs::chmod(&path, rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR);
    if private.is_err() || listen(&socket, 64).is_err() {
        let _ = rustix::fs::unlink(&path);
        return Err(AclError::RT_IPC_ERROR);
    }
    crate::os::fork::register_fd(&socket);
    let socket = Arc::new(ListenSocket(socket));
    let stop = Arc::new(AtomicBool::new(false));
    let listener = Listener {
        socket: Arc::clone(&socket),
        stop: Arc::clone(&stop),
        path: path.clone(),
    };
    if process.listener.set(listener).is_err() {
        // Another thread started one meanwhile.
        let _ = rustix::fs::unlink(&path);
        return Ok(());
    }
    std::thread::Builder::new()
        .name("aclmem-emu-share".into())
        .spawn(move || serve(socket, stop, weak, spare))
        .map_err(|_| AclError::RT_RESOURCE_ALLOC_FAIL)?;
    process.machine.region.set_listener(process.slot, nonce);
    Ok(())
}

/// The `Weak` of a process of a machine, through the machine's registry.
fn process_weak(process: &Process) -> Option<Weak<Process>> {
    super::join::weak_of(process)
}

/// A descriptor kept in reserve, so that a listener out of descriptors can
/// still accept a connection and tell the importer why (instead of leaving
/// it to time out).
struct Spare(Option<OwnedFd>);

impl Spare {
    fn open() -> Result<Spare, AclError> {
        let fd = rustix::fs::open(
            "/dev/null",
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(crate::env::socket_error)?;
        crate::os::fork::register_fd(&fd);
        Ok(Spare(Some(fd)))
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        if let Some(fd) = &self.0 {
            crate::os::fork::unregister_fd(fd);
        }
    }
}

/// Connections accepted whose request has not come yet, at most this
/// many (the oldest goes first beyond it).
const MAX_WAITING: usize = 128;

/// The listener's loop: it accepts connections and answers each as its
/// request arrives, so a silent connection delays no other importer; one
/// silent for [`REQUEST_WAIT`] is closed.
fn serve(socket: Arc<ListenSocket>, stop: Arc<AtomicBool>, process: Weak<Process>, spare: Spare) {
    let mut spare = spare;
    let mut waiting: std::collections::VecDeque<(OwnedFd, std::time::Instant)> =
        std::collections::VecDeque::new();
    let tick = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    while !stop.load(Ordering::Acquire) {
        let (listening, ready) = {
            let mut fds: Vec<rustix::event::PollFd<'_>> = std::iter::once(socket.as_fd())
                .chain(waiting.iter().map(|(c, _)| c.as_fd()))
                .map(|fd| rustix::event::PollFd::from_borrowed_fd(fd, rustix::event::PollFlags::IN))
                .collect();
            // Idle, it sleeps until a connection comes (`Listener::stop`
            // shuts the socket down, which wakes it too).
            let timeout = (fds.len() > 1).then_some(&tick);
            if rustix::event::poll(&mut fds, timeout).is_err() {
                std::thread::sleep(Duration::from_millis(10));
            }
            let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
            (ready[0], ready[1..].to_vec())
        };
        if stop.load(Ordering::Acquire) {
            break;
        }
        let Some(p) = process.upgrade() else { break };
        // Requests that came, in the order their connections were made.
        let mut still = std::collections::VecDeque::with_capacity(waiting.len());
        for ((conn, since), ready) in waiting.drain(..).zip(ready) {
            if ready {
                answer(&p, &conn);
            } else if since.elapsed() < REQUEST_WAIT {
                still.push_back((conn, since));
            }
        }
        waiting = still;
        if !listening {
            continue;
        }
        if spare.0.is_none() {
            spare = Spare::open().unwrap_or(Spare(None));
        }
        let conn = match accept_with(&*socket, SocketFlags::CLOEXEC) {
            Ok(conn) => conn,
            Err(e) if crate::os::sys::out_of_descriptors(e) && spare.0.is_some() => {
                // Out of descriptors: the spare makes room for one
                // connection, which is told so.
                drop(std::mem::replace(&mut spare, Spare(None)));
                if let Ok(conn) = accept_with(&*socket, SocketFlags::CLOEXEC) {
                    let _ = crate::env::socket_error(e);
                    for way in [sockopt::Timeout::Recv, sockopt::Timeout::Send] {
                        let _ = sockopt::set_socket_timeout(&conn, way, Some(REQUEST_WAIT));
                    }
                    // The request is taken first: an importer whose request
                    // found the connection closed would see no answer.
                    let _ = rustix::io::read(&conn, &mut [0u8; REQUEST_BYTES]);
                    send_reply(
                        &conn,
                        Reply::refusal(Situation::FdLimit.code().code()),
                        None,
                    );
                }
                spare = Spare::open().unwrap_or(Spare(None));
                continue;
            }
            Err(_) => {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let _ = sockopt::set_socket_timeout(&conn, sockopt::Timeout::Recv, Some(REQUEST_WAIT));
        let _ = sockopt::set_socket_timeout(&conn, sockopt::Timeout::Send, Some(SERVE_TIMEOUT));
        if waiting.len() == MAX_WAITING {
            waiting.pop_front();
        }
        waiting.push_back((conn, std::time::Instant::now()));
    }
}

/// Whether the importer hung up (it gave up waiting): its request is not
/// admitted, so an abandoned import costs the exporter nothing.
fn hung_up(conn: &OwnedFd) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        rustix::net::recv(conn, &mut byte, RecvFlags::PEEK | RecvFlags::DONTWAIT),
        Ok((0, _))
    )
}

/// Reads one request and answers it.
fn answer(process: &Process, conn: &OwnedFd) {
    let mut bytes = [0u8; REQUEST_BYTES];
    let n = match rustix::io::read(conn, &mut bytes) {
        Ok(n) => n,
        Err(_) => return,
    };
    let Some(request) = Request::parse(&bytes[..n]) else {
        return;
    };
    if hung_up(conn) {
        return;
    }
    let (id, importer_slot) = (request.id, request.slot);
    let region = &process.machine.region;
    let granted = grant(process, conn, &request);
    // Whatever went out, an importer that is not told it holds the export
    // does not hold it (it timed out and left, say).
    let delivered = match &granted {
        Ok((info, file)) => send_reply(conn, Reply::success(info), Some(file.owned())),
        Err(code) => {
            send_reply(conn, Reply::refusal(code.code()), None);
            false
        }
    };
    if !delivered
        && granted.is_ok()
        && let Ok(g) = region.lock(process.slot)
    {
        region.drop_holder(&g, id, importer_slot);
    }
}

/// The exporter's decision on a request: the export and its file, with
/// the importer made a holder, or the code of the refusal.
fn grant(
    process: &Process,
    conn: &OwnedFd,
    request: &Request,
) -> Result<(ExportInfo, Arc<PoolFile>), AclError> {
    let (id, kind, importer_slot) = (request.id, request.kind(), request.slot);
    // Who asks, according to the kernel.
    let cred = sockopt::socket_peercred(conn).map_err(|_| Situation::NotWhitelisted.code())?;
    let pid = cred.pid.as_raw_nonzero().get();
    let region = &process.machine.region;
    // Only this user's processes, and only the live member the importer
    // says it is: its slot, pid, generation and start time must agree
    // (a process that reused a dead member's pid is not that member).
    // Telling the importer from a process that reuses its pid reads /proc,
    // which takes a descriptor: without one, say so rather than "not
    // whitelisted".
    if let Err(e) = crate::os::sys::start_time(pid)
        && crate::os::sys::out_of_descriptors(e)
    {
        return Err(Situation::FdLimit.code());
    }
    if cred.uid != rustix::process::getuid()
        || !region.is_member(importer_slot, pid, request.generation)
    {
        return Err(Situation::NotWhitelisted.code());
    }
    let info = region.admit(process.slot, (importer_slot, pid), id, kind)?;
    let ours = (info.exporter.0, info.exporter.1) == (process.slot, process.generation);
    let file = if ours {
        process.export_file(&info)
    } else {
        Err(Situation::UnknownShareable.code())
    };
    if file.is_err()
        && let Ok(g) = region.lock(process.slot)
    {
        region.drop_holder(&g, id, importer_slot);
    }
    Ok((info, file?))
}

/// Sends one reply (with a descriptor on success): whether all of it went.
fn send_reply(conn: &OwnedFd, message: Reply, fd: Option<&OwnedFd>) -> bool {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds;
    if let Some(fd) = fd {
        fds = [fd.as_fd()];
        control.push(SendAncillaryMessage::ScmRights(&fds));
    }
    sendmsg(
        conn,
        &[IoSlice::new(message.as_bytes())],
        &mut control,
        SendFlags::NOSIGNAL,
    )
    .is_ok_and(|n| n == REPLY_BYTES)
}

/// Asks the exporter of `id` for its memory. On success this process is
/// a holder of the export, and owns the descriptor; on any failure it holds
/// nothing (an exporter that admitted it and then did not get an answer
/// through is not left counting it).
pub fn request(
    process: &Process,
    id: u64,
    kind: ExportKind,
) -> Result<(ExportInfo, OwnedFd), AclError> {
    let region = &process.machine.region;
    let expected = {
        let g = region.lock(process.slot)?;
        region
            .export_info(&g, id)
            .ok_or(Situation::UnknownShareable.code())?
    };
    let gone = || {
        if let Ok(g) = region.lock(process.slot) {
            region.reap(&g);
        }
        Situation::UnknownShareable.code()
    };
    // Out of descriptors for the socket itself: say so, not "gone".
    let socket = connect_to_exporter(process, &expected)?.ok_or_else(gone)?;
    let request = Request::new(kind, id, process.slot, process.generation);
    let answer = match exchange(&socket, &request) {
        Ok(Some((reply, fd, truncated))) => granted(reply, fd, truncated, &expected),
        // The exporter closed the connection without a word: it is gone.
        Ok(None) => Err(gone()),
        Err(e) => Err(e),
    };
    if answer.is_err()
        && let Ok(g) = region.lock(process.slot)
    {
        region.drop_holder(&g, id, process.slot);
    }
    answer
}

/// A connection to the exporter of `export`, if the one answering is it:
/// this user's live member in the exporter's slot, not a process that took
/// the name after the exporter died. `Ok(None)` when no such exporter
/// answers; an error when this process cannot make the socket.
fn connect_to_exporter(
    process: &Process,
    export: &ExportInfo,
) -> Result<Option<OwnedFd>, AclError> {
    let region = &process.machine.region;
    let (slot, generation, pid) = export.exporter;
    let Some(addr) = region
        .listener(slot)
        .and_then(|l| socket_path(process, slot, l).ok())
        .and_then(|p| socket_name(&p).ok())
    else {
        return Ok(None);
    };
    let socket = seqpacket()?;
    if connect(&socket, &addr).is_err() {
        return Ok(None);
    }
    // Telling the exporter from a process that reuses its pid reads
    // /proc, which takes a descriptor too.
    if let Err(e) = crate::os::sys::start_time(pid)
        && crate::os::sys::out_of_descriptors(e)
    {
        return Err(Situation::FdLimit.code());
    }
    let genuine = sockopt::socket_peercred(&socket).is_ok_and(|c| {
        c.uid == rustix::process::getuid()
            && c.pid.as_raw_nonzero().get() == pid
            && region.is_member(slot, pid, generation)
    });
    if !genuine {
        return Ok(None);
    }
    let _ = sockopt::set_socket_timeout(&socket, sockopt::Timeout::Recv, Some(IMPORT_TIMEOUT));
    let _ = sockopt::set_socket_timeout(&socket, sockopt::Timeout::Send, Some(IMPORT_TIMEOUT));
    Ok(Some(socket))
}

/// Sends the request and reads the reply: the reply, the descriptor sent
/// with it, and whether the kernel had to drop a descriptor for want of
/// room in this process; `None` if the exporter hung up.
fn exchange(
    socket: &OwnedFd,
    request: &Request,
) -> Result<Option<(Reply, Option<OwnedFd>, bool)>, AclError> {
    rustix::io::write(socket, request.as_bytes()).map_err(|_| AclError::RT_IPC_ERROR)?;
    let mut bytes = [0u8; REPLY_BYTES];
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut bytes)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    );
    // Every descriptor received is owned (and closed) here; one is kept.
    let mut fd: Option<OwnedFd> = None;
    for msg in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = msg {
            for f in fds {
                fd.get_or_insert(f);
            }
        }
    }
    // A timeout: the exporter lives but does not answer.
    let got = got.map_err(|_| AclError::RT_IPC_ERROR)?;
    if got.bytes == 0 {
        return Ok(None);
    }
    let reply = Reply::parse(&bytes[..got.bytes]).ok_or(AclError::RT_IPC_ERROR)?;
    let truncated = got.flags.contains(rustix::net::ReturnFlags::CTRUNC);
    Ok(Some((reply, fd, truncated)))
}

/// What a reply grants: success only for exactly the export asked for,
/// with a descriptor of a sealed pool file that holds it. Anything else is
/// the exporter's failure (or this process's want of descriptors).
fn granted(
    reply: Reply,
    fd: Option<OwnedFd>,
    truncated: bool,
    expected: &ExportInfo,
) -> Result<(ExportInfo, OwnedFd), AclError> {
    if reply.code != 0 {
        return Err(refusal(reply.code));
    }
    let info = reply.info(expected.kind);
    let end = info.offset.checked_add(info.size);
    let consistent = info.id == expected.id
        && (info.pool, info.offset, info.size) == (expected.pool, expected.offset, expected.size);
    match (fd, end) {
        (Some(fd), Some(end)) if consistent && crate::os::sys::is_sealed_pool(fd.as_fd(), end) => {
            Ok((info, fd))
        }
        _ if truncated => Err(Situation::FdLimit.code()),
        _ => Err(AclError::RT_IPC_ERROR),
    }
}

/// The code of a refusal the exporter sent: one of those its admission
/// check (or its want of descriptors) answers, else an IPC error (a
/// made-up code is not passed on).
fn refusal(code: i32) -> AclError {
    [
        Situation::UnknownShareable,
        Situation::ImportOwnExport,
        Situation::NotWhitelisted,
        Situation::ImportTwice,
        // The exporter is out of descriptors.
        Situation::FdLimit,
    ]
    .into_iter()
    .map(Situation::code)
    .find(|c| c.code() == code)
    .unwrap_or(AclError::RT_IPC_ERROR)
}

#[cfg(test)]
#[path = "listener_tests.rs"]
mod tests;
