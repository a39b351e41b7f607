//! Sharing between processes when a peer misbehaves or descriptors run
//! short: silent connections to an exporter delay no import and leave it
//! nothing; a descriptor limit is named (207005), never taken for a
//! permission problem (207006) or a timeout (507022).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use aclmem_tests::{compile_c, under_test_runner};

fn program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/sharing_limits.c");
        compile_c(&src, "sharing-limits", &[])
    })
}

fn machine(test: &str) -> String {
    format!("hostile-{test}-{}", std::process::id())
}

fn run(machine: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_aclmem"));
    cmd.args(["run", "--devices", "1", "--machine", machine, "--"])
        .arg(program())
        .args(args)
        .env("ACLMEM_EMU_QUIET", "1");
    cmd
}

/// A program that keeps running until its stdin closes, and the first
/// line it printed.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    line: String,
}

impl Running {
    fn start(mut cmd: Command) -> Running {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("it starts");
        let stdin = child.stdin.take();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        Running { child, stdin, line }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn finish(mut self) -> bool {
        drop(self.stdin.take());
        self.child.wait().unwrap().success()
    }
}

/// The exporter's handle from its line `export 0 handle H`.
fn handle(exporter: &Running) -> String {
    let words: Vec<&str> = exporter.line.split_whitespace().collect();
    assert_eq!(words[..2], ["export", "0"], "{}", exporter.line);
    words[3].to_owned()
}

/// What the descriptors of process `pid` point at.
fn descriptors(pid: u32) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|p| p.display().to_string())
        .collect();
    out.sort();
    out
}

/// Imports `handle` in a new process (with RLIMIT_NOFILE `limit`): its
/// line and its stderr.
fn import(machine: &str, handle: &str, limit: Option<u32>) -> (String, String) {
    let limit = limit.map(|l| l.to_string());
    let mut args = vec!["import", handle];
    args.extend(limit.as_deref());
    let mut cmd = run(machine, &args);
    cmd.env_remove("ACLMEM_EMU_QUIET");
    let out = cmd.output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn silent_connections_delay_no_import_and_leave_nothing() {
    // The C program is built by the host's compiler: under qemu (`cargo
    // xtask cross`) it cannot load the target's library.
    if under_test_runner() {
        return;
    }
    let m = machine("flood");
    let exporter = Running::start(run(&m, &["export"]));
    let h = handle(&exporter);
    let before = descriptors(exporter.pid());
    // More silent connections than the listener's backlog, at its socket
    // in the machine's private directory.
    let prefix = format!("{}/aclmem-emu.{}/{m}.", machine_dir(), uid());
    let flood = Running::start(run(&m, &["flood", &prefix, "70"]));
    assert!(flood.line.starts_with("connected "), "{}", flood.line);
    let connected: u32 = flood.line[10..].trim().parse().unwrap();
    assert!(connected >= 60, "{}", flood.line);
    // The import is answered while the flood holds its connections (it
    // timed out with 507022 when each silent one held the listener).
    let (out, err) = import(&m, &h, None);
    assert_eq!(out, "import 0", "{err}");
    assert!(flood.finish());
    // Once the silent connections are gone, the exporter holds what it
    // held before the flood: the allocation got its own file at the
    // export, and every connection accepted is closed.
    let deadline = Instant::now() + Duration::from_secs(20);
    let after = loop {
        let now = descriptors(exporter.pid());
        if now == before || Instant::now() > deadline {
            break now;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(after, before);
    assert!(exporter.finish());
}

/// Where machines' private directories are (`ACLMEM_EMU_DIR`, else
/// `/dev/shm`), as the emulator reads it.
fn machine_dir() -> String {
    std::env::var("ACLMEM_EMU_DIR")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/dev/shm".into())
}

/// The uid as the private directory's name has it.
fn uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn joining_with_too_few_descriptors_is_the_limit_not_a_permission() {
    // The C program is built by the host's compiler: under qemu (`cargo
    // xtask cross`) it cannot load the target's library.
    if under_test_runner() {
        return;
    }
    let m = machine("join-limit");
    let exporter = Running::start(run(&m, &["export"]));
    let h = handle(&exporter);
    // Joining a live machine reaches its state through /proc/PID/fd: with
    // six descriptors, that open is the one refused.
    let (out, err) = import(&m, &h, Some(6));
    assert_eq!(out, "aclInit 207005", "{err}");
    assert!(err.contains("RLIMIT_NOFILE"), "{err}");
    // With enough, the same import works.
    let (out, err) = import(&m, &h, None);
    assert_eq!(out, "import 0", "{err}");
    assert!(exporter.finish());
}

#[test]
fn an_exporter_out_of_descriptors_answers_the_limit_at_once() {
    // The C program is built by the host's compiler: under qemu (`cargo
    // xtask cross`) it cannot load the target's library.
    if under_test_runner() {
        return;
    }
    let m = machine("export-limit");
    let exporter = Running::start(run(&m, &["export", "tight"]));
    let h = handle(&exporter);
    // The exporter can open nothing more: its listener accepts with the
    // descriptor it kept in reserve and says why (it left the importer to
    // time out with 507022 before).
    let (out, err) = import(&m, &h, None);
    assert_eq!(out, "import 207005", "{err}");
    assert!(exporter.finish());
}
