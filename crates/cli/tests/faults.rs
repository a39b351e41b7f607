//! Faults for any program: `aclmem run --fault` and `ACLMEM_EMU_FAULTS` on
//! a C program that prints every call's answer (`programs/faults.c`): the
//! Nth call, the Nth and later, calls from one source line, a lost device,
//! `@machine` counting, and a bad spec refused before anything runs.
//!
//! Needs `cargo build` (the emulated library, in the target directory) and
//! a C compiler.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use aclmem_tests::{compile_c, under_test_runner};

fn program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c(&source(), "faults", &[]))
}

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/faults.c")
}

/// The line of `faults.c` that holds `marker`.
fn line_of(marker: &str) -> usize {
    std::fs::read_to_string(source())
        .unwrap()
        .lines()
        .position(|l| l.contains(marker))
        .expect("the marker is in faults.c")
        + 1
}

struct Run {
    answers: BTreeMap<String, String>,
    stderr: String,
    code: Option<i32>,
}

/// Runs the program under `aclmem run` with `faults` as `--fault` options
/// and `env` added; its answers by label.
fn run(faults: &[&str], env: &[(&str, &str)], test: &str) -> Run {
    run_with(faults, env, test, &[])
}

fn run_with(faults: &[&str], env: &[(&str, &str)], test: &str, args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_aclmem"));
    cmd.arg("run");
    for f in faults {
        cmd.arg("--fault").arg(f);
    }
    cmd.arg("--")
        .arg(program())
        .args(args)
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("faults-{}-{test}", std::process::id()),
        )
        .env("ACLMEM_EMU_DEVICES", "1")
        .env("ACLMEM_EMU_HBM", "64MiB")
        .env_remove("ACLMEM_EMU_FAULTS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("aclmem runs");
    let answers = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    Run {
        answers,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
    }
}

impl Run {
    fn get(&self, label: &str) -> &str {
        self.answers
            .get(label)
            .unwrap_or_else(|| panic!("no {label} in {:?}\n{}", self.answers, self.stderr))
    }
}

#[test]
fn the_nth_call_fails_and_makes_nothing() {
    if under_test_runner() {
        return;
    }
    let r = run(&["aclrtMalloc@2=207001"], &[], "nth");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.get("malloc1"), "0 made");
    assert_eq!(r.get("malloc2"), "207001 null", "failed, nothing written");
    assert_eq!(r.get("malloc3"), "0 made");
    assert_eq!(r.get("site"), "0 made");
    assert!(!r.answers.contains_key("free2"));
    assert_eq!(r.get("fin"), "0");
    assert!(
        r.stderr.contains("fault: aclrtMalloc (call 2") && r.stderr.contains("207001"),
        "the firing is reported: {}",
        r.stderr
    );
}

#[test]
fn later_calls_and_every_call() {
    if under_test_runner() {
        return;
    }
    let r = run(
        &["aclrtMalloc@3+=207001", "aclrtFree@*=107000"],
        &[],
        "from",
    );
    assert_eq!(r.get("malloc2"), "0 made");
    assert_eq!(r.get("malloc3"), "207001 null");
    assert_eq!(r.get("malloc4"), "207001 null");
    assert_eq!(r.get("site"), "207001 null");
    assert_eq!(r.get("free1"), "107000");
    assert_eq!(r.get("free2"), "107000");
    assert_eq!(r.get("count"), "0", "other functions are not counted");
}

#[test]
fn a_site_filter_counts_only_calls_from_that_line() {
    if under_test_runner() {
        return;
    }
    let line = line_of("FAULT-SITE");
    let spec = format!("aclrtMalloc@1:faults.c:{line}=207001");
    let r = run(&[&spec], &[], "site");
    for i in 1..=4 {
        assert_eq!(r.get(&format!("malloc{i}")), "0 made", "{}", r.stderr);
    }
    assert_eq!(r.get("site"), "207001 null");
}

#[test]
fn a_lost_device_answers_every_later_call() {
    if under_test_runner() {
        return;
    }
    // Calls: aclInit 1, aclrtSetDevice 2, aclrtMalloc 3, 4, 5, ...
    let r = run(&["device-lost@5"], &[], "lost");
    assert_eq!(r.get("malloc1"), "0 made");
    assert_eq!(r.get("set"), "0");
    assert_eq!(r.get("malloc2"), "0 made");
    assert_eq!(r.get("malloc3"), "507010 null");
    assert_eq!(r.get("site"), "507010 null");
    assert_eq!(r.get("free1"), "507010");
    assert_eq!(r.get("count"), "507010");
    assert_eq!(r.get("fin"), "507010");
}

#[test]
fn the_environment_and_the_options_combine_and_machine_counts_are_shared() {
    if under_test_runner() {
        return;
    }
    let env = [("ACLMEM_EMU_FAULTS", "aclrtMalloc@1=207001")];
    let r = run(&["aclrtFree@1=107000"], &env, "combine");
    assert_eq!(r.get("malloc1"), "207001 null");
    assert_eq!(r.get("free2"), "107000");
    // Counted by the machine: a second process on it (a forked child, the
    // parent still on the machine) goes on from where the first stopped,
    // 5 calls of aclrtMalloc each; counted per process, it starts again.
    let r = run_with(&["aclrtMalloc@7=207001@machine"], &[], "shared", &["fork"]);
    assert!(
        !r.answers
            .iter()
            .any(|(k, v)| !k.starts_with("child") && v.starts_with("207001"))
    );
    assert_eq!(r.get("child-init"), "0", "{}", r.stderr);
    assert_eq!(r.get("child-malloc1"), "0 made");
    assert_eq!(r.get("child-malloc2"), "207001 null", "{}", r.stderr);
    let r = run_with(&["aclrtMalloc@2=207001"], &[], "own", &["fork"]);
    assert_eq!(r.get("malloc2"), "207001 null");
    assert_eq!(r.get("child-malloc2"), "207001 null", "counted afresh");
    assert_eq!(r.get("child-malloc3"), "0 made");
}

#[test]
fn a_bad_spec_is_refused_before_the_program_runs() {
    if under_test_runner() {
        return;
    }
    let r = run(&["aclrtMallocc@1=207001"], &[], "bad");
    assert_eq!(r.code, Some(2));
    assert!(r.answers.is_empty(), "the program did not run");
    assert!(
        r.stderr.contains("not a function of the catalogue"),
        "{}",
        r.stderr
    );
    // Set directly, the emulator refuses it at aclInit with 100000.
    let out = Command::new(program())
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("faults-{}-env", std::process::id()),
        )
        .env("ACLMEM_EMU_FAULTS", "aclrtMalloc@0=207001")
        .env("ACLMEM_EMU_DEVICES", "1")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "init 100000");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ACLMEM_EMU_FAULTS") && err.contains("from 1"),
        "{err}"
    );
}
