//! The limits of the machine, reached on purpose: no room for a machine,
//! an import that times out, and importers and exporters out of
//! descriptors. Each gets an error code and holds nothing, never a crash or
//! a hang.

mod peer;

use peer::*;

/// A filesystem without room for the machine's rendezvous file is an
/// error at `aclInit`, not a `SIGBUS` when it is first written: an 8 KiB
/// tmpfs (mounted in a mount namespace of the peer's own, where the machine
/// allows one). A small one (1 MiB, far less than the state) is enough: the
/// state is a memfd. A file size limit below the state's size is an error
/// too.
#[test]
fn no_room_for_the_machine_is_an_error_not_a_crash() {
    use std::os::unix::process::CommandExt;

    let m = machine("no-room");
    let (base, _) = fresh_base("no-room");
    let dir = base.to_str().unwrap().to_owned();
    let namespaces = std::process::Command::new("unshare")
        .args(["-m", "true"])
        .status()
        .is_ok_and(|s| s.success());
    for (size, room) in [("8k", false), ("1m", true)] {
        if !namespaces || under_test_runner() {
            eprintln!("no mount namespace here: the small-tmpfs case is skipped");
            break;
        }
        let peer = env!("CARGO_BIN_EXE_peer");
        let cmd = Peer::command(&m, &[("ACLMEM_EMU_DIR", &dir)]);
        let script = format!("mount -t tmpfs -o size={size} tmpfs '{dir}' && exec '{peer}'");
        let mut unshared = std::process::Command::new("unshare");
        unshared.args(["-m", "sh", "-c", &script]);
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                unshared.env(k, v);
            }
        }
        drop(cmd);
        unshared.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut p = Peer::from_child("small tmpfs", unshared.spawn().expect("unshare starts"));
        if room {
            p.ok("init");
            let h = p.ok("malloc 2097152");
            p.ok(&format!("fill {h} 7"));
            p.ok(&format!("check {h} 7"));
            p.ok(&format!("free {h}"));
        } else {
            assert_eq!(
                p.err("init"),
                AclError::RT_RESOURCE_ALLOC_FAIL,
                "a {size} tmpfs"
            );
        }
        p.exit();
    }
    let mut cmd = Peer::command(&m, &[("ACLMEM_EMU_DIR", &dir)]);
    // SAFETY: async-signal-safe calls only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: 1 << 20,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut p = Peer::from_child("file size limit", cmd.spawn().expect("the peer starts"));
    assert_eq!(
        p.err("init"),
        AclError::RT_RESOURCE_ALLOC_FAIL,
        "RLIMIT_FSIZE"
    );
    p.exit();
    let _ = std::fs::remove_dir_all(base);
}

/// Stops the child `pid` and returns once all its threads have stopped.
/// `kill` only starts a group stop: until the thread that takes the signal
/// runs, the process's other threads (its listener) go on answering.
fn stopped(pid: i32) {
    // SAFETY: a signal to a child process of this test.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0, "SIGSTOP");
    // SAFETY: `siginfo_t` is plain C data; all zeros is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `info` is a valid out-parameter. Waiting for a stop
        // report of our own child consumes only that report: the child is
        // still reaped by its `Child`.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WSTOPPED) };
        if r == 0 {
            break;
        }
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EINTR),
            "waiting for {pid} to stop"
        );
    }
}

/// An import that times out (the exporter is stopped) leaves nothing held:
/// when the exporter runs again it finds the importer gone, and once it
/// frees the memory the machine has all of it back.
#[test]
fn an_import_that_times_out_holds_nothing() {
    let m = machine("timeout");
    let (mut a, a_pid) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let (mut c, c_pid) = Peer::started("second importer", &m);
    let (_, total) = free_and_total(&a.ok_all("meminfo"));
    let (h, s) = a.exported_to(&[b_pid, c_pid]);
    stopped(a_pid);
    let e = b.err(&format!("import {s} 0"));
    // SAFETY: a signal to a child process of this test.
    unsafe { libc::kill(a_pid, libc::SIGCONT) };
    assert_eq!(
        e,
        AclError::RT_IPC_ERROR,
        "the exporter did not answer in time"
    );
    // The exporter answers connections in the order they came, so once the
    // second importer is served, the stale request has been answered too
    // (and admitted the first importer before its reply bounced).
    let imported = c.ok(&format!("import {s} 0"));
    c.ok(&format!("free {imported}"));
    a.ok(&format!("free {h}"));
    let mut free = 0;
    for _ in 0..500 {
        free = free_and_total(&b.ok_all("meminfo")).0;
        if free == total {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        free, total,
        "the importer that timed out still counts as a holder"
    );
    c.exit();
    b.exit();
    a.exit();
}

#[test]
fn an_importer_out_of_descriptors_is_told_so_and_holds_nothing() {
    let m = machine("nofile");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let (_, total) = free_and_total(&a.ok_all("meminfo"));
    let (h, s) = a.exported_to(&[b_pid]);
    // No descriptor for the socket; then one, for the socket but not for
    // reading who answers it.
    for extra in [0, 1] {
        b.ok(&format!("nofile {extra}"));
        assert_eq!(
            b.err(&format!("import {s} 0")),
            AclError::RT_RESOURCE_ALLOC_FAIL,
            "with {extra} descriptor(s) free"
        );
    }
    // Two are enough: the socket, then the memory's file where the /proc
    // read was.
    b.ok("nofile 2");
    let imported = b.ok(&format!("import {s} 0"));
    b.ok(&format!("free {imported}"));
    a.ok(&format!("free {h}"));
    assert_eq!(
        free_and_total(&a.ok_all("meminfo")),
        (total, total),
        "the failed imports left no holder behind"
    );
    b.exit();
    a.exit();
}

#[test]
fn an_exporter_out_of_descriptors_answers_207005_and_recovers() {
    let m = machine("nofile-export");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let (_, total) = free_and_total(&a.ok_all("meminfo"));
    let h = a.ok("malloc 2097152");
    // The first export starts the process's listener: a socket.
    a.ok("nofile 0");
    assert_eq!(
        a.err(&format!("export {h} 0")),
        AclError::RT_RESOURCE_ALLOC_FAIL
    );
    a.ok("nofile 64");
    let s = a.ok(&format!("export {h} 0"));
    a.ok(&format!("setpid {s} {b_pid}"));
    // One import served: the listener is back waiting in accept(2), which
    // has its descriptor for the next connection already.
    let imported = b.ok(&format!("import {s} 0"));
    b.ok(&format!("free {imported}"));
    // Answering reads the importer's start time from /proc: a descriptor.
    a.ok("nofile 0");
    assert_eq!(
        b.err(&format!("import {s} 0")),
        AclError::RT_RESOURCE_ALLOC_FAIL,
        "the exporter is out of descriptors"
    );
    a.ok("nofile 64");
    let imported = b.ok(&format!("import {s} 0"));
    b.ok(&format!("free {imported}"));
    a.ok(&format!("free {h}"));
    assert_eq!(
        free_and_total(&a.ok_all("meminfo")),
        (total, total),
        "the refused import left no holder behind"
    );
    b.exit();
    a.exit();
}

/// `aclrtIpcMemGetExportKey` out of descriptors (its first export starts
/// the listener: a socket) is 207005 and registers nothing: no key comes
/// back, the block's whole size stays the exporter's alone, and once
/// descriptors are back the block is exported and imported as usual.
#[test]
fn an_ipc_export_out_of_descriptors_is_207005_and_registers_nothing() {
    let m = machine("nofile-ipc");
    let (mut a, _) = Peer::started("exporter", &m);
    let (mut b, b_pid) = Peer::started("importer", &m);
    let (_, total) = free_and_total(&a.ok_all("meminfo"));
    let p = a.ok("devmalloc 2097152");
    a.ok("nofile 0");
    assert_eq!(
        a.err(&format!("ipckey {p} 2097152")),
        AclError::RT_RESOURCE_ALLOC_FAIL
    );
    a.ok("nofile 64");
    a.ok(&format!("devfree {p}"));
    assert_eq!(
        free_and_total(&a.ok_all("meminfo")),
        (total, total),
        "the failed export holds no memory once the block is freed"
    );
    let p = a.ok("devmalloc 2097152");
    let key = a.ok(&format!("ipckey {p} 2097152"));
    a.ok(&format!("ipcpid {key} {b_pid}"));
    b.ok(&format!("ipcimport {key}"));
    b.exit();
    a.ok(&format!("devfree {p}"));
    a.exit();
}
