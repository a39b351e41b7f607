//! Processes that do not play by the rules, against one emulated machine:
//! planted, corrupt or truncated machine files, imports forged by hand,
//! reused pids, a squatter on an exporter's socket, an importer that asks
//! for more than the export. Each gets an error code, never memory it may
//! not have, a crash or a hang.

mod peer;

use peer::*;

/// Whoever plants the machine's directory or file (a link, a directory
/// other users may enter, a link in place of the file) gets `aclInit`
/// refused with 207006, and nothing is written through what was planted.
#[test]
fn planted_machine_files_are_refused() {
    use std::os::unix::fs::{PermissionsExt, symlink};

    let m = machine("planted");
    // The private directory is a link to a directory of the attacker's.
    let (base, private) = fresh_base("planted-link");
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, &private).unwrap();
    // The private directory exists but is open to others.
    let (open_base, open_dir) = fresh_base("planted-open");
    std::fs::create_dir(&open_dir).unwrap();
    std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The machine file is a link to a file of the victim's.
    let (file_base, file_dir) = fresh_base("planted-file");
    std::fs::create_dir(&file_dir).unwrap();
    std::fs::set_permissions(&file_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let victim = file_base.join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    symlink(&victim, file_dir.join(&m)).unwrap();

    for (what, dir) in [
        ("a linked directory", &base),
        ("an open directory", &open_base),
        ("a linked file", &file_base),
    ] {
        let dir = dir.to_str().unwrap();
        let mut p = Peer::start(what, &m, &[("ACLMEM_EMU_DIR", dir)]);
        assert_eq!(p.err("init"), AclError::RT_NO_PERMISSION, "{what}");
        p.exit();
    }
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    for b in [base, open_base, file_base] {
        let _ = std::fs::remove_dir_all(b);
    }
}

/// A machine whose shared state was scribbled over while a process of it
/// lives is refused to joiners, never initialised again under the live
/// process, which carries on with its memory.
#[test]
fn a_corrupt_machine_with_a_live_process_is_refused_not_reset() {
    use std::os::unix::fs::FileExt;

    let m = machine("corrupt");
    let (mut a, _) = Peer::started("resident", &m);
    let h = a.ok("malloc 2097152");
    let state = aclmem_emu::machine_state_path(&m).expect("a live process shows the state");
    let file = std::fs::OpenOptions::new().write(true).open(state).unwrap();
    file.write_all_at(&[0xAB; 8], 0).unwrap();
    let mut b = Peer::start("joiner", &m, &[]);
    assert_eq!(b.err("init"), AclError::RT_NO_PERMISSION);
    b.exit();
    a.ok(&format!("free {h}"));
    a.ok("malloc 2097152");
    a.exit();
}

/// Nothing done to the machine's files makes a member fault: the
/// rendezvous file truncated and scribbled over leaves the members working
/// (their state is a memfd, which refuses to shrink or grow), and a joiner
/// that can no longer find the state is refused with a code, not crashed.
#[test]
fn truncating_the_machine_files_crashes_no_member() {
    let m = machine("truncated");
    let (mut a, _) = Peer::started("member", &m);
    let h = a.ok("malloc 2097152");
    a.ok(&format!("fill {h} 9"));
    let state = aclmem_emu::machine_state_path(&m).expect("a live process shows the state");
    let state = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(state)
        .expect("the state opens for this user");
    let len = state.metadata().unwrap().len();
    for to in [0, 4096, len + 4096] {
        let e = state.set_len(to).expect_err("the state's size is sealed");
        assert_eq!(e.raw_os_error(), Some(libc::EPERM), "set_len({to}): {e}");
    }
    let rendezvous = std::fs::OpenOptions::new()
        .write(true)
        .open(aclmem_emu::machine_path(&m))
        .unwrap();
    rendezvous.set_len(0).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&rendezvous, &[0xEE; 64 << 10], 0).unwrap();
    rendezvous.set_len(1).unwrap();
    a.ok(&format!("check {h} 9"));
    let h2 = a.ok("malloc 2097152");
    a.ok(&format!("fill {h2} 3"));
    a.ok("meminfo");
    let mut b = Peer::start("joiner", &m, &[]);
    assert_eq!(b.err("init"), AclError::RT_NO_PERMISSION);
    b.exit();
    a.ok(&format!("free {h2}"));
    a.ok(&format!("free {h}"));
    a.exit();
}

/// Tests that choose the next pid take turns (another test of this binary
/// forking meanwhile can still take it: they try again).
static NEXT_PID: std::sync::Mutex<()> = std::sync::Mutex::new(());
const PID_TRIES: usize = 1000;

/// Makes `pid` the next pid the kernel hands out, if it is free (root).
fn set_next_pid(pid: i32) {
    std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string())
        .expect("root sets the next pid");
}

/// An import request made by hand (the wire format of the emulator's
/// listener: magic, kind, id, the slot and generation the asker claims),
/// sent to listener `name` from a child process, under `uid` when given:
/// the code of the reply (minus the errno when it cannot connect), and
/// whether a descriptor came with it.
fn forged_import(name: &str, id: u64, claim: (u32, u64), uid: Option<u32>) -> (i32, bool) {
    forged_import_as(name, id, claim, uid, None).expect("no pid asked for")
}

/// [`forged_import`] from a child whose pid is `pid` when given (root
/// only: the kernel's next pid is set first); `None` if another process
/// took that pid meanwhile.
fn forged_import_as(
    name: &str,
    id: u64,
    claim: (u32, u64),
    uid: Option<u32>,
    pid: Option<i32>,
) -> Option<(i32, bool)> {
    let mut request = [0u8; 32];
    request[0..4].copy_from_slice(&0x4143_4c4du32.to_ne_bytes());
    request[4..8].copy_from_slice(&1u32.to_ne_bytes());
    request[8..16].copy_from_slice(&id.to_ne_bytes());
    request[16..20].copy_from_slice(&claim.0.to_ne_bytes());
    request[24..32].copy_from_slice(&claim.1.to_ne_bytes());
    let (addr, len) = socket_addr(name);
    let mut pipe = [0i32; 2];
    // SAFETY: fork in a test process: the child makes only system calls on
    // buffers prepared above, and leaves with `_exit`; the parent reads the
    // child's 8-byte answer from a pipe and reaps it.
    unsafe {
        // Close-on-exec: a process another test spawns meanwhile must not
        // keep the write end open (the read would never end).
        assert_eq!(libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC), 0);
        if let Some(pid) = pid {
            set_next_pid(pid);
        }
        match libc::fork() {
            0 => {
                if pid.is_some_and(|p| p != libc::getpid()) {
                    libc::_exit(0);
                }
                if let Some(uid) = uid
                    && (libc::setgid(uid) != 0 || libc::setuid(uid) != 0)
                {
                    libc::_exit(3);
                }
                let mut answer = [0xFFu8; 8];
                let s = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0);
                let connected = s >= 0 && libc::connect(s, (&raw const addr).cast(), len) == 0;
                if !connected {
                    // Why not, as a negative code.
                    let errno = *libc::__errno_location();
                    answer[..4].copy_from_slice(&(-errno).to_ne_bytes());
                }
                if connected && libc::send(s, request.as_ptr().cast(), 32, 0) == 32 {
                    let mut reply = [0u8; 64];
                    let mut iov = libc::iovec {
                        iov_base: reply.as_mut_ptr().cast(),
                        iov_len: 64,
                    };
                    let mut control = [0u64; 8];
                    let mut msg: libc::msghdr = std::mem::zeroed();
                    msg.msg_iov = &raw mut iov;
                    msg.msg_iovlen = 1;
                    msg.msg_control = control.as_mut_ptr().cast();
                    msg.msg_controllen = std::mem::size_of_val(&control) as _;
                    if libc::recvmsg(s, &raw mut msg, 0) >= 8 {
                        answer[..4].copy_from_slice(&reply[4..8]);
                        let first = libc::CMSG_FIRSTHDR(&raw const msg);
                        answer[4] =
                            u8::from(!first.is_null() && (*first).cmsg_type == libc::SCM_RIGHTS);
                    }
                }
                libc::write(pipe[1], answer.as_ptr().cast(), 8);
                libc::_exit(0);
            }
            child => {
                libc::close(pipe[1]);
                let mut answer = [0u8; 8];
                let n = libc::read(pipe[0], answer.as_mut_ptr().cast(), 8);
                libc::close(pipe[0]);
                libc::waitpid(child, std::ptr::null_mut(), 0);
                if n == 0 && pid.is_some() {
                    return None;
                }
                assert_eq!(n, 8, "the forging child answered");
                let code = i32::from_ne_bytes(answer[..4].try_into().unwrap());
                Some((code, answer[4] == 1))
            }
        }
    }
}

/// Imports made by hand, bypassing the library, get no memory: not from a
/// process of this user that is no member of the machine (whatever slot it
/// claims), not from another user (when the tests run as root, as
/// `nobody`), even for an export any member may import; a real member's
/// import of the same export works.
#[test]
fn forged_imports_receive_no_memory() {
    let m = machine("forged");
    let (mut a, _) = Peer::started("exporter", &m);
    let h = a.ok("malloc 2097152");
    a.ok(&format!("fill {h} 7"));
    let s = a.ok(&format!("export {h} 1"));
    let (mut b, _) = Peer::started("member", &m);
    let names = listener_names(&m);
    assert_eq!(names.len(), 1, "one exporter listens: {names:?}");
    let id: u64 = s.parse().unwrap();
    let refused = AclError::RT_NO_PERMISSION.code();
    for claim in [(0, 1), (1, 1), (2, 1), (1, u64::MAX)] {
        assert_eq!(
            forged_import(&names[0], id, claim, None),
            (refused, false),
            "a non-member claiming {claim:?}"
        );
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Another user does not even reach the listener: its socket is in
        // the machine's private directory.
        for claim in [(0, 1), (1, 1)] {
            assert_eq!(
                forged_import(&names[0], id, claim, Some(65534)),
                (-libc::EACCES, false),
                "another user claiming {claim:?}"
            );
        }
    } else {
        eprintln!("not root: the other-user case needs a second uid and is skipped");
    }
    let hb = b.ok(&format!("import {s} 0"));
    assert_eq!(b.ok(&format!("check {hb} 7")), "yes");
    b.ok(&format!("free {hb}"));
    a.ok(&format!("free {h}"));
    b.exit();
    a.exit();
}

/// A whitelisted member is killed before it imports; a process that gets
/// its pid (root sets the kernel's next pid, as a patient attacker forks
/// until it wraps) and claims its slot gets no memory: the slot is dead and
/// the start time is not the member's.
#[test]
fn a_reused_pid_is_not_the_member_it_was() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: choosing the next pid needs root; skipped");
        return;
    }
    let m = machine("reused-pid");
    let (mut a, _) = Peer::started("exporter", &m);
    let (b, b_pid) = Peer::started("victim", &m);
    let (h, s) = a.exported_to(&[b_pid]);
    b.kill();
    let names = listener_names(&m);
    let id: u64 = s.parse().unwrap();
    let mut tried = 0;
    // The victim's slot and generation are among the first few.
    for slot in 0..4u32 {
        for generation in 1..4u64 {
            let claim = (slot, generation);
            let answer = (0..PID_TRIES).find_map(|_| {
                let _one = NEXT_PID.lock().unwrap();
                forged_import_as(&names[0], id, claim, None, Some(b_pid))
            });
            if let Some(answer) = answer {
                tried += 1;
                assert_eq!(
                    answer,
                    (AclError::RT_NO_PERMISSION.code(), false),
                    "pid {b_pid} claiming {claim:?}"
                );
            }
        }
    }
    assert!(tried > 0, "pid {b_pid} could never be taken again");
    a.ok(&format!("free {h}"));
    a.exit();
}

/// A whitelisted process leaves; a later process that gets its pid and
/// joins the machine as a member of its own is still not whitelisted: the
/// whitelist knows when the process it names started.
#[test]
fn a_whitelist_names_a_process_not_a_pid() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: choosing the next pid needs root; skipped");
        return;
    }
    let m = machine("whitelist-pid");
    let (mut a, _) = Peer::started("exporter", &m);
    let (b, b_pid) = Peer::started("whitelisted", &m);
    let (h, s) = a.exported_to(&[b_pid]);
    // Start times count clock ticks (10 ms): a process that started within
    // the tick of the named one is not told apart (taking a pid that fast
    // needs root; see docs/security.md). The successor starts later.
    std::thread::sleep(Duration::from_millis(30));
    b.exit();
    let successor = (0..PID_TRIES).find_map(|_| {
        let child = {
            let _one = NEXT_PID.lock().unwrap();
            set_next_pid(b_pid);
            Peer::command(&m, &[]).spawn().expect("the peer starts")
        };
        if child.id() as i32 == b_pid {
            Some(Peer::from_child("successor", child))
        } else {
            let mut other = Peer::from_child("bystander", child);
            other.exit_quietly();
            None
        }
    });
    let Some(mut c) = successor else {
        panic!("pid {b_pid} could never be taken again");
    };
    c.ok("init");
    assert_eq!(c.ok("pid"), b_pid.to_string());
    assert_eq!(c.err(&format!("import {s} 0")), AclError::RT_NO_PERMISSION);
    c.exit();
    a.ok(&format!("free {h}"));
    a.exit();
}

/// After the exporter died, a process of this user (the only one that may
/// enter the directory of the exporter's socket) binds the socket's path
/// and answers the import with a
/// success and memory of its own: the importer does not believe it (the
/// answering process is not the exporter's live member), maps nothing and
/// answers the export is gone.
#[test]
fn a_squatter_on_the_exporters_socket_is_not_believed() {
    let m = machine("squatter");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let (_, s) = a.exported_to(&[b_pid]);
    let name = listener_names(&m).pop().expect("the exporter listens");
    a.kill();
    let id: u64 = s.parse().unwrap();
    let (ready, is_ready) = channel();
    let squatter = std::thread::spawn(move || squat(&name, id, ready));
    is_ready.recv().expect("the squatter binds the name");
    let e = b.err(&format!("import {s} 0"));
    assert_eq!(e, AclError::RT_PARAM_INVALID, "the export is gone: {e}");
    assert!(
        squatter.join().unwrap(),
        "the importer reached the squatter"
    );
    b.exit();
}

/// Binds `name` and answers one import request with a forged success and
/// a descriptor of a memfd of its own. Whether an importer connected.
fn squat(name: &str, id: u64, ready: std::sync::mpsc::Sender<()>) -> bool {
    // SAFETY: plain socket calls on descriptors made here and closed here;
    // the message buffers are live locals.
    unsafe {
        let s = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0);
        let (addr, len) = socket_addr(name);
        // The killed exporter left its socket's path: the squatter (this
        // user, who may enter the directory) takes its place.
        let path = std::ffi::CString::new(name).unwrap();
        libc::unlink(path.as_ptr());
        // The name is free once the killed exporter's socket is closed.
        let mut bound = false;
        for _ in 0..500 {
            if libc::bind(s, (&raw const addr).cast(), len) == 0 {
                bound = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if !bound || libc::listen(s, 1) != 0 {
            libc::close(s);
            return false;
        }
        let _ = ready.send(());
        let mut poll = libc::pollfd {
            fd: s,
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&raw mut poll, 1, 10_000) != 1 {
            libc::close(s);
            return false;
        }
        let conn = libc::accept(s, std::ptr::null_mut(), std::ptr::null_mut());
        let mut request = [0u8; 32];
        libc::recv(conn, request.as_mut_ptr().cast(), 32, 0);
        // Sealed like a pool file: only who answers gives the squatter away.
        let memfd = libc::memfd_create(
            c"squatter".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        );
        libc::ftruncate(memfd, 4 << 20);
        libc::fcntl(
            memfd,
            libc::F_ADD_SEALS,
            libc::F_SEAL_SHRINK | libc::F_SEAL_GROW,
        );
        // A success reply: magic, code 0, the id, offset 0, 2 MiB, HBM.
        let mut reply = [0u8; 64];
        reply[0..4].copy_from_slice(&0x4143_4c4du32.to_ne_bytes());
        reply[8..16].copy_from_slice(&id.to_ne_bytes());
        reply[24..32].copy_from_slice(&(2u64 << 20).to_ne_bytes());
        reply[32..36].copy_from_slice(&4u32.to_ne_bytes());
        let mut iov = libc::iovec {
            iov_base: reply.as_mut_ptr().cast(),
            iov_len: 64,
        };
        let mut control = [0u64; 4];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(4) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(4) as _;
        libc::CMSG_DATA(cmsg).cast::<i32>().write_unaligned(memfd);
        // An importer that checks who answers hangs up before it asks: the
        // send fails then, and that is the point.
        libc::sendmsg(conn, &raw const msg, libc::MSG_NOSIGNAL);
        for fd in [memfd, conn, s] {
            libc::close(fd);
        }
        conn >= 0
    }
}

/// What an importer receives reaches the exported bytes and nothing else:
/// the exporter's other memory on the device (a secret here) is in no
/// descriptor the importer holds, and the one it holds is as long as the
/// export.
#[test]
fn an_importer_receives_the_exported_bytes_only() {
    let m = machine("isolation");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let secret = a.ok("malloc 2097152");
    a.ok(&format!("fill {secret} 66"));
    let shared = a.ok("malloc 2097152");
    a.ok(&format!("fill {shared} 7"));
    let s = a.ok(&format!("export {shared} 0"));
    a.ok(&format!("setpid {s} {b_pid}"));
    let imported = b.ok(&format!("import {s} 0"));
    assert_eq!(b.ok(&format!("check {imported} 7")), "yes");
    // Every memory file the importer holds, read through /proc.
    let mut seen = 0;
    for entry in std::fs::read_dir(format!("/proc/{b_pid}/fd"))
        .unwrap()
        .flatten()
    {
        let target = std::fs::read_link(entry.path()).unwrap_or_default();
        let name = target.to_string_lossy();
        // The machine's shared state (counters and tables, no device
        // memory) is a memfd too.
        if !name.starts_with("/memfd:aclmem-emu") || name.starts_with("/memfd:aclmem-emu-machine") {
            continue;
        }
        let Ok(file) = std::fs::File::open(entry.path()) else {
            continue;
        };
        let len = file.metadata().unwrap().len();
        let mut bytes = Vec::new();
        use std::io::Read;
        (&file).take(64 << 20).read_to_end(&mut bytes).unwrap();
        assert!(
            !bytes.contains(&66),
            "{}: the exporter's secret",
            target.display()
        );
        if bytes.contains(&7) {
            assert_eq!(len, 2 << 20, "{}: longer than the export", target.display());
            seen += 1;
        }
    }
    assert_eq!(seen, 1, "one descriptor with the exported bytes");
    b.ok(&format!("free {imported}"));
    a.ok(&format!("free {shared}"));
    a.ok(&format!("free {secret}"));
    b.exit();
    a.exit();
}
