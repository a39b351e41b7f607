//! Another user and a flood against one emulated machine's files and its
//! exporters' listeners: another user can write nothing of the machine
//! (its files, its sockets, its processes' memory files), and a flood of
//! connections leaves an exporter no descriptor it did not hold before.

mod peer;

use peer::*;

/// Runs `attempts` in a child process under uid and gid 65534 (`nobody`):
/// how many of them succeeded (the child's exit code).
fn as_other_user(attempts: impl FnOnce() -> u8) -> u8 {
    // SAFETY: fork in a test process: the child drops its privileges, makes
    // the attempts (system calls on paths prepared by the caller, through
    // std) and leaves with `_exit`; the parent reaps it.
    unsafe {
        match libc::fork() {
            0 => {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(65534) != 0
                    || libc::setuid(65534) != 0
                {
                    libc::_exit(255);
                }
                libc::_exit(i32::from(attempts()));
            }
            child => {
                let mut status = 0;
                assert_eq!(libc::waitpid(child, &raw mut status, 0), child);
                assert!(
                    libc::WIFEXITED(status),
                    "the other user's child ended: {status}"
                );
                let code = libc::WEXITSTATUS(status);
                assert_ne!(code, 255, "the child could not become uid 65534");
                code as u8
            }
        }
    }
}

/// Another user can write nothing of a machine: not its rendezvous file,
/// not a new file in its directory, not the sockets its exporters listen
/// on (connecting is writing to them), not the memory files of its
/// processes through `/proc/PID/fd`. Needs root (to be another user).
#[test]
fn another_user_can_write_nothing_of_the_machine() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: becoming another user needs root; skipped");
        return;
    }
    let m = machine("other-user");
    let (mut a, a_pid) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let h = a.ok("malloc 2097152");
    let s = a.ok(&format!("export {h} 1"));
    let hb = b.ok(&format!("import {s} 0"));
    let rendezvous = aclmem_emu::machine_path(&m);
    let dir = rendezvous.parent().unwrap().to_owned();
    let sockets = listener_names(&m);
    assert_eq!(sockets.len(), 1, "one exporter listens: {sockets:?}");
    // Every descriptor of both processes (the state, pools, the export's
    // file, sockets, ...).
    let fds: Vec<std::path::PathBuf> = [a_pid, b_pid]
        .iter()
        .flat_map(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(fds.len() > 6, "{fds:?}");
    let planted = dir.join("planted");
    let succeeded = as_other_user(|| {
        use std::os::unix::fs::OpenOptionsExt;
        let mut n = 0u8;
        let writable = |p: &std::path::Path| {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(p)
                .is_ok()
        };
        n += u8::from(writable(&rendezvous));
        n += u8::from(std::fs::File::create(&planted).is_ok());
        for socket in &sockets {
            n += u8::from(connects(socket));
        }
        for fd in &fds {
            n = n.saturating_add(u8::from(writable(fd)));
        }
        n
    });
    assert_eq!(succeeded, 0, "another user wrote to the machine");
    assert!(!planted.exists());
    // The machine still works for its own user.
    assert_eq!(b.ok(&format!("check {hb} 0")), "yes");
    b.ok(&format!("free {hb}"));
    a.ok(&format!("free {h}"));
    b.exit();
    a.exit();
}

/// Whether a sequenced-packet connection to the socket at `path` is made.
fn connects(path: &str) -> bool {
    let (addr, len) = socket_addr(path);
    // SAFETY: a socket made, used and closed here; `addr` is a live local.
    unsafe {
        let s = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0);
        let ok = s >= 0 && libc::connect(s, (&raw const addr).cast(), len) == 0;
        if s >= 0 {
            libc::close(s);
        }
        ok
    }
}

/// What the descriptors of process `pid` point at, sorted.
fn descriptors(pid: i32) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|p| p.display().to_string())
        .collect();
    out.sort();
    out
}

/// A flood of 70 connections at an exporter's listener (more than its
/// backlog): silent ones, ones that send garbage, forged requests of a
/// non-member (refused) and ones closed at once, while a member imports.
/// The import is answered, and once the flood is gone the exporter holds
/// exactly the descriptors it held before it: every accepted connection,
/// refused or not, is closed, and the import cost it nothing lasting.
#[test]
fn a_flood_of_connections_leaves_the_exporter_nothing() {
    let m = machine("flood");
    let (mut a, a_pid) = Peer::started("exporter", &m);
    let (mut b, _) = Peer::started("importer", &m);
    let h = a.ok("malloc 2097152");
    a.ok(&format!("fill {h} 5"));
    let s = a.ok(&format!("export {h} 1"));
    let id: u64 = s.parse().unwrap();
    let name = listener_names(&m).pop().expect("the exporter listens");
    let before = descriptors(a_pid);
    let mut request = [0u8; 32];
    request[0..4].copy_from_slice(&0x4143_4c4du32.to_ne_bytes());
    request[4..8].copy_from_slice(&1u32.to_ne_bytes());
    request[8..16].copy_from_slice(&id.to_ne_bytes());
    request[16..20].copy_from_slice(&3u32.to_ne_bytes());
    request[24..32].copy_from_slice(&1u64.to_ne_bytes());
    let (addr, len) = socket_addr(&name);
    let mut flood = Vec::new();
    // SAFETY: sockets made here, kept in `flood` and closed below; `addr`
    // and `request` are live locals.
    unsafe {
        for i in 0..70 {
            let c = libc::socket(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            );
            assert!(c >= 0, "a socket");
            if libc::connect(c, (&raw const addr).cast(), len) != 0 {
                // Beyond the backlog.
                libc::close(c);
                continue;
            }
            match i % 4 {
                0 => {}
                1 => {
                    libc::send(c, b"garbage".as_ptr().cast(), 7, libc::MSG_NOSIGNAL);
                }
                2 => {
                    libc::send(c, request.as_ptr().cast(), 32, libc::MSG_NOSIGNAL);
                }
                _ => {
                    libc::close(c);
                    continue;
                }
            }
            flood.push(c);
        }
    }
    assert!(flood.len() >= 40, "{} connections held", flood.len());
    let hb = b.ok(&format!("import {s} 0"));
    assert_eq!(b.ok(&format!("check {hb} 5")), "yes");
    for c in flood {
        // SAFETY: a descriptor made above, closed once.
        unsafe { libc::close(c) };
    }
    b.ok(&format!("free {hb}"));
    b.exit();
    // The listener closes what it accepted as each connection ends (or
    // after its wait for a request): bounded, never a hang.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let after = loop {
        let now = descriptors(a_pid);
        if now == before || std::time::Instant::now() > deadline {
            break now;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(after, before, "the exporter's descriptors after the flood");
    a.ok(&format!("free {h}"));
    a.exit();
}
