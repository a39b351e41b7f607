//! Forking while other threads call ACL, on the emulator alone and under
//! `aclmem sanitize`: every child ends (at once, after a call that answers
//! 100001, or after joining the machine itself), none waits on a lock held
//! or handed to a thread it lacks. The program bounds every wait (a hung
//! child is killed and counted) and the run itself is bounded by
//! `timeout`, so a hang fails the test and never the run.

mod sanitizer_harness;

use sanitizer_harness::*;

/// Rounds of fork per forking thread (four threads), and the seconds a child
/// may take before it counts as hung: a hang lasts forever, while a child
/// that joins the machine can wait seconds for its lock on a machine loaded
/// by the parent's threads and the other tests (a run takes under a second
/// unloaded), so the bound is generous.
const ROUNDS: &str = "50";
const DEADLINE_S: &str = "90";
/// Repetitions of each run: a hang showed in 1 to 107 of 200 children per
/// run before, so a few runs find it.
const RUNS: usize = 4;

fn stress() -> PathBuf {
    compile_c(
        &repo().join("crates/cli/tests/programs/fork_stress.c"),
        "fork-stress",
        &["-pthread"],
    )
}

/// Runs `args` bounded by `timeout`; its stdout and exit code.
fn bounded(args: &[&std::ffi::OsStr], machine: &str) -> (String, i32) {
    let out = Command::new("timeout")
        .args(["-s", "KILL", "900"])
        .args(args)
        .env("ACLMEM_EMU_MACHINE", machine)
        .env("ACLMEM_EMU_QUIET", "1")
        .output()
        .expect("timeout runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn assert_every_child_ended(stdout: &str, code: i32, what: &str) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("children="))
        .unwrap_or_else(|| {
            panic!("{what}: no summary (exit {code}; 137 is the run's own timeout): {stdout}")
        });
    assert_eq!(line, "children=200 hung=0 failed=0", "{what}");
    assert_eq!(code, 0, "{what}: {stdout}");
}

#[test]
fn children_forked_while_threads_call_acl_all_end() {
    if under_test_runner() {
        return;
    }
    let exe = stress();
    for run in 0..RUNS {
        let machine = format!("fork-{}-{run}", std::process::id());
        let (stdout, code) = bounded(
            &[exe.as_os_str(), ROUNDS.as_ref(), DEADLINE_S.as_ref()],
            &machine,
        );
        assert_every_child_ended(&stdout, code, &format!("emulator, run {run}"));
    }
}

#[test]
fn children_forked_while_threads_call_acl_all_end_under_the_sanitizer() {
    if under_test_runner() {
        return;
    }
    let exe = stress();
    let lib = target_profile_dir().join("libaclmem_sanitizer.so");
    for run in 0..RUNS {
        let machine = format!("fork-san-{}-{run}", std::process::id());
        let log = std::env::temp_dir().join(format!("aclmem-fork-{machine}.jsonl"));
        let (stdout, code) = bounded(
            &[
                env!("CARGO_BIN_EXE_aclmem").as_ref(),
                "sanitize".as_ref(),
                "--lib".as_ref(),
                lib.as_os_str(),
                "--log".as_ref(),
                log.as_os_str(),
                "--".as_ref(),
                exe.as_os_str(),
                ROUNDS.as_ref(),
                DEADLINE_S.as_ref(),
            ],
            &machine,
        );
        let findings = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        assert_every_child_ended(&stdout, code, &format!("sanitizer, run {run}"));
        assert!(findings.trim().is_empty(), "no findings: {findings}");
    }
}
