//! HCCL on the emulated machine, driven by a C program over the HCCL API
//! itself (`tests/programs/hccl.c`): every collective and data type on 1 to
//! 4 ranks with results checked on the host, arguments HCCL refuses and
//! ranks that disagree (every rank answers, none hangs), and a rank that
//! dies (its peers fail at once and say why).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use aclmem_tests::{compile_c, under_test_runner};

fn program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/hccl.c");
        compile_c(&src, "hccl", &[])
    })
}

/// Runs `n` ranks of the program in `mode`, each a process of its own on
/// one emulated machine, and gives each rank's output.
fn ranks(test: &str, n: usize, mode: &str) -> Vec<Output> {
    let dir = std::env::temp_dir().join(format!("aclmem-hccl-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = ranks_with(test, n, mode, &dir.join("root-info"));
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// [`ranks`], the root info at `root` (a rank table when it ends in
/// `.json`).
fn ranks_with(test: &str, n: usize, mode: &str, root: &Path) -> Vec<Output> {
    let children: Vec<_> = (0..n)
        .map(|r| {
            Command::new(program())
                .args([&r.to_string(), &n.to_string()])
                .arg(root)
                .arg(mode)
                .env(
                    "ACLMEM_EMU_MACHINE",
                    format!("hccl-{test}-{}", std::process::id()),
                )
                .env("ACLMEM_EMU_DEVICES", n.to_string())
                .env("ACLMEM_EMU_HBM", "1GiB")
                // Short, so that a defect fails the test instead of hanging it.
                .env("HCCL_CONNECT_TIMEOUT", "60")
                .env("HCCL_EXEC_TIMEOUT", "60")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("a rank starts")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("a rank ends"))
        .collect()
}

fn assert_all_ok(outputs: &[Output]) {
    assert_ranks_print(outputs, |_| "ok\n");
}

/// Every rank exits 0 having printed what `expect` says for it.
fn assert_ranks_print(outputs: &[Output], expect: impl Fn(usize) -> &'static str) {
    for (r, o) in outputs.iter().enumerate() {
        assert!(
            o.status.success(),
            "rank {r} failed ({:?}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&o.stdout), expect(r), "rank {r}");
    }
}

#[test]
fn every_collective_and_type_on_one_to_four_ranks() {
    if under_test_runner() {
        return;
    }
    for n in [1, 2, 3, 4] {
        assert_all_ok(&ranks(&format!("all{n}"), n, "all"));
    }
}

#[test]
fn refused_and_differing_arguments_answer_on_every_rank() {
    if under_test_runner() {
        return;
    }
    for n in [2, 4] {
        assert_all_ok(&ranks(&format!("bad{n}"), n, "bad"));
    }
}

/// Communicators from a rank table (`HcclCommInitClusterInfoConfig`): rank
/// 0 serves the rendezvous at its address in the table; every collective
/// as from a root info.
#[test]
fn communicators_from_a_rank_table() {
    if under_test_runner() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let devices: Vec<String> = (0..3)
        .map(|r| {
            format!(
                r#"{{"device_id":"{r}","device_ip":"127.0.0.1","device_port":"{}","rank_id":"{r}"}}"#,
                port + r
            )
        })
        .collect();
    let table = format!(
        r#"{{"status":"completed","version":"1.0","server_count":"1","server_list":[{{"server_id":"one","device":[{}]}}]}}"#,
        devices.join(",")
    );
    let dir = std::env::temp_dir().join(format!("aclmem-hccl-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("table.json");
    std::fs::write(&path, table).unwrap();
    let out = ranks_with("table", 3, "all", &path);
    let _ = std::fs::remove_dir_all(&dir);
    assert_all_ok(&out);
}

/// Without the Gloo engine, making a communicator answers
/// `HCCL_E_NOT_SUPPORT` (5) and says what is missing; the rest of the
/// library works (the program got that far).
#[test]
fn without_the_engine_a_communicator_is_refused_with_the_reason() {
    if under_test_runner() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("aclmem-hccl-none-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(program())
        .args(["0", "1"])
        .arg(dir.join("root-info"))
        .arg("all")
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("hccl-none-{}", std::process::id()),
        )
        .env("ACLMEM_EMU_DEVICES", "1")
        .env("ACLMEM_EMU_HBM", "1GiB")
        .env("ACLMEM_GLOO_ENGINE", dir.join("no-such-engine.so"))
        .output()
        .expect("it runs");
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("HcclCommInitRootInfoConfig") && err.contains("answered 5"),
        "{err}"
    );
    assert!(
        err.contains("libaclmem_gloo.so") && err.contains("libgloo-dev"),
        "{err}"
    );
}

/// One process plays rank 5 of 1024 (`ACLMEM_HCCL_FAKE_WORLD`): every
/// operation completes at once, with the documented outputs.
#[test]
fn one_rank_of_a_fake_world_of_1024() {
    if under_test_runner() {
        return;
    }
    let out = Command::new(program())
        .args(["5", "1024", "/nonexistent", "fake"])
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("hccl-fake-{}", std::process::id()),
        )
        .env("ACLMEM_EMU_DEVICES", "8")
        .env("ACLMEM_EMU_HBM", "1GiB")
        .env("ACLMEM_HCCL_FAKE_WORLD", "1024")
        .output()
        .expect("it runs");
    assert_ranks_print(&[out], |_| "ok\n");
}

#[test]
fn a_dead_rank_fails_its_peers_at_once_with_the_reason() {
    if under_test_runner() {
        return;
    }
    let out = ranks("die", 3, "die");
    assert_ranks_print(&out, |r| if r == 1 { "dead\n" } else { "ok\n" });
}
