//! The harness of the multi-process tests: scripted peer processes on one
//! emulated machine (the `peer` binary of this crate), each with a
//! watchdog on its replies. Shared by `processes.rs`, `hostile.rs` and
//! `hostile_listener.rs`, which do not each use every helper.

#![allow(dead_code, unused_imports)]

pub use std::io::{BufRead, BufReader, Write};
pub use std::process::{Child, ChildStdin, Stdio};
pub use std::sync::mpsc::{Receiver, channel};
pub use std::time::Duration;

pub use aclmem_core::AclError;
pub use aclmem_tests::{emulated_library_in_target_dir, through_test_runner, under_test_runner};

pub const WATCHDOG: Duration = Duration::from_secs(60);

/// One scripted process.
pub struct Peer {
    pub name: String,
    pub child: Child,
    pub stdin: ChildStdin,
    pub lines: Receiver<String>,
}

/// A machine name no other test (or earlier run) uses.
pub fn machine(test: &str) -> String {
    format!("t-{test}-{}", std::process::id())
}

impl Peer {
    /// The command that runs a peer on `machine`, with `env` on top.
    pub fn command(machine: &str, env: &[(&str, &str)]) -> std::process::Command {
        let mut cmd = through_test_runner(env!("CARGO_BIN_EXE_peer"));
        cmd.env(
            "ACLMEM_ASCENDCL",
            std::env::var_os("ACLMEM_ASCENDCL")
                .unwrap_or_else(|| emulated_library_in_target_dir().into()),
        )
        .env("ACLMEM_EMU_MACHINE", machine)
        .env("ACLMEM_EMU_SOC", "Ascend910B3")
        .env("ACLMEM_EMU_HBM", "64GiB")
        .env("ACLMEM_EMU_QUIET", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    pub fn start(name: &str, machine: &str, env: &[(&str, &str)]) -> Peer {
        let child = Peer::command(machine, env)
            .spawn()
            .expect("the peer starts");
        Peer::from_child(name, child)
    }

    pub fn from_child(name: &str, mut child: Child) -> Peer {
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            name: name.to_owned(),
            child,
            stdin,
            lines,
        }
    }

    /// Sends a command, returns the reply: `Ok(values)` or `Err(code)`.
    pub fn call(&mut self, command: &str) -> Result<Vec<String>, String> {
        writeln!(self.stdin, "{command}")
            .and_then(|()| self.stdin.flush())
            .unwrap_or_else(|e| panic!("{}: cannot send `{command}`: {e}", self.name));
        let reply = self
            .lines
            .recv_timeout(WATCHDOG)
            .unwrap_or_else(|e| panic!("{}: no reply to `{command}`: {e}", self.name));
        let mut words = reply.split_whitespace().map(str::to_owned);
        match words.next().as_deref() {
            Some("ok") => Ok(words.collect()),
            Some("err") => Err(words.collect::<Vec<_>>().join(" ")),
            _ => panic!("{}: `{command}` answered `{reply}`", self.name),
        }
    }

    /// A command that must succeed; all its values.
    pub fn ok_all(&mut self, command: &str) -> Vec<String> {
        self.call(command)
            .unwrap_or_else(|e| panic!("{}: `{command}` failed with {e}", self.name))
    }

    /// A command that must succeed; its first value, if any.
    pub fn ok(&mut self, command: &str) -> String {
        match self.call(command) {
            Ok(values) => values.into_iter().next().unwrap_or_default(),
            Err(e) => panic!("{}: `{command}` failed with {e}", self.name),
        }
    }

    /// Allocates 2 MiB, exports it with pid checks on and whitelists
    /// `pids`: the handle and the shareable id.
    pub fn exported_to(&mut self, pids: &[i32]) -> (String, String) {
        let h = self.ok("malloc 2097152");
        let s = self.ok(&format!("export {h} 0"));
        let pids: Vec<String> = pids.iter().map(i32::to_string).collect();
        self.ok(&format!("setpid {s} {}", pids.join(" ")));
        (h, s)
    }

    /// A command that must fail; its code.
    pub fn err(&mut self, command: &str) -> AclError {
        match self.call(command) {
            Ok(v) => panic!("{}: `{command}` succeeded ({v:?})", self.name),
            Err(e) => e
                .parse()
                .ok()
                .and_then(AclError::from_code)
                .unwrap_or_else(|| panic!("{}: `{command}` failed without a code: {e}", self.name)),
        }
    }

    pub fn started(name: &str, machine: &str) -> (Peer, i32) {
        Peer::started_with(name, machine, &[])
    }

    pub fn started_with(name: &str, machine: &str, env: &[(&str, &str)]) -> (Peer, i32) {
        let mut p = Peer::start(name, machine, env);
        p.ok("init");
        let pid = p.ok("pid").parse().expect("a pid");
        (p, pid)
    }

    pub fn kill(mut self) {
        self.child.kill().expect("the peer can be killed");
        self.child.wait().expect("reaped");
    }

    /// Ends a peer that may never have initialised.
    pub fn exit_quietly(&mut self) {
        let _ = writeln!(self.stdin, "exit");
        let _ = self.child.wait();
    }

    pub fn exit(mut self) {
        writeln!(self.stdin, "exit").expect("sent");
        let status = self.child.wait().expect("reaped");
        assert!(status.success(), "{} exited with {status}", self.name);
    }
}

/// (free, total) from a `meminfo` reply.
pub fn free_and_total(values: &[String]) -> (u64, u64) {
    (values[0].parse().unwrap(), values[1].parse().unwrap())
}

/// This user's private directory for machine files under a fresh base
/// directory (what `ACLMEM_EMU_DIR` names), for the tests that plant
/// things there.
pub fn fresh_base(test: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let base = std::env::temp_dir().join(format!("aclmem-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("a scratch directory");
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let private = base.join(format!("aclmem-emu.{uid}"));
    (base, private)
}

/// The socket paths of `machine`'s listeners, as `/proc/net/unix` lists
/// them (in the machine's private directory): the listening sockets only
/// (flag `__SO_ACCEPTCON`), since a connection the listener accepted is
/// listed under the listener's path too.
pub fn listener_names(machine: &str) -> Vec<String> {
    /// `__SO_ACCEPTCON`, the flag of a listening socket in the list.
    const LISTENING: u32 = 0x1_0000;
    let dir = aclmem_emu::machine_path(machine);
    let prefix = format!("{}.", dir.display());
    std::fs::read_to_string("/proc/net/unix")
        .expect("/proc/net/unix")
        .lines()
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let flags = u32::from_str_radix(fields.get(3)?, 16).ok()?;
            (flags & LISTENING != 0).then_some(*fields.get(7)?)
        })
        .filter(|n| n.starts_with(&prefix) && n.ends_with(".sock"))
        .map(str::to_owned)
        .collect()
}

/// The Unix socket address of the path `name`.
pub fn socket_addr(name: &str) -> (libc::sockaddr_un, libc::socklen_t) {
    // SAFETY: a zeroed sockaddr_un is valid.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    assert!(name.len() < addr.sun_path.len(), "{name}: too long");
    for (d, s) in addr.sun_path.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + name.len() + 1;
    (addr, len as libc::socklen_t)
}
