//! What the tests of `aclmem sanitize` share: the seeded-defect programs,
//! compiled once per test, and a run of the sanitizer over one, with its
//! findings. Each test file uses what it needs.

#![allow(dead_code, unused_imports)]

pub use std::path::{Path, PathBuf};
pub use std::process::Command;

pub use aclmem_tests::{compile_c, compile_cxx, through_test_runner, under_test_runner};

pub fn target_profile_dir() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_aclmem"));
    exe.parent().expect("target/<profile>").to_path_buf()
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compiles a C program (with -g, for call sites) against the emulated
/// library.
pub fn compile(src: &Path, name: &str) -> PathBuf {
    compile_c(src, &format!("sanitize-{name}"), &[])
}

/// Runs `program args` under `aclmem sanitize`; returns the findings (JSON
/// lines) and the exit code.
pub fn sanitize(extra: &[&str], program: &Path, args: &[&str]) -> (Vec<serde_json::Value>, i32) {
    let (findings, code, _, _) = sanitize_output(extra, program, args);
    (findings, code)
}

/// [`sanitize`] on a machine configured by `env` (`ACLMEM_EMU_CANN`, …).
pub fn sanitize_env(
    extra: &[&str],
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Vec<serde_json::Value>, i32) {
    let (findings, code, _, _) = sanitize_output_env(extra, program, args, env);
    (findings, code)
}

/// [`sanitize`], with what the run wrote to stdout and to stderr.
pub fn sanitize_output(
    extra: &[&str],
    program: &Path,
    args: &[&str],
) -> (Vec<serde_json::Value>, i32, String, String) {
    sanitize_output_env(extra, program, args, &[])
}

/// [`sanitize_output`] with variables set for the run.
pub fn sanitize_output_env(
    extra: &[&str],
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Vec<serde_json::Value>, i32, String, String) {
    // The run's own log and machine (numbered: machine names are short), so
    // that runs may go at once.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let key = format!(
        "{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let log = std::env::temp_dir().join(format!("aclmem-sanitize-{key}.jsonl"));
    let _ = std::fs::remove_file(&log);
    let out = Command::new(env!("CARGO_BIN_EXE_aclmem"))
        .arg("sanitize")
        .arg("--lib")
        .arg(target_profile_dir().join("libaclmem_sanitizer.so"))
        .arg("--log")
        .arg(&log)
        .args(extra)
        .arg("--")
        .arg(program)
        .args(args)
        .env("ACLMEM_EMU_MACHINE", format!("sanitize-{key}"))
        .env("ACLMEM_EMU_QUIET", "1")
        .envs(env.iter().copied())
        .output()
        .expect("aclmem runs");
    let findings = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let _ = std::fs::remove_file(&log);
    (
        findings,
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The seeded-defect program, compiled for one test (tests run in
/// parallel: each gets its own executable).
pub fn defects(test: &str) -> PathBuf {
    compile(
        &repo().join("crates/sanitizer/tests/defects.c"),
        &format!("defects-{test}"),
    )
}

/// The line of the test program `file` (in crates/sanitizer/tests) that
/// holds `marker`.
pub fn marked_line(file: &str, marker: &str) -> usize {
    let source = std::fs::read_to_string(repo().join("crates/sanitizer/tests").join(file)).unwrap();
    source
        .lines()
        .position(|l| l.contains(marker))
        .expect("marked")
        + 1
}

/// The line of `defects.c` that holds `marker`.
pub fn defects_line(marker: &str) -> usize {
    marked_line("defects.c", marker)
}

/// The only finding of `findings`, of `class`, reported at the line of
/// `defects.c` that holds `marker`.
pub fn only_finding<'a>(
    findings: &'a [serde_json::Value],
    class: &str,
    marker: &str,
) -> &'a serde_json::Value {
    let [f] = findings else {
        panic!("one finding: {findings:#?}");
    };
    assert_eq!(f["class"], class, "{f:#}");
    let site = f["site"].as_str().unwrap_or_default();
    assert!(
        site.ends_with(&format!("(defects.c:{})", defects_line(marker))),
        "{class} at {marker}: {site}"
    );
    f
}

/// The one `cycle-growth` finding: +2 MiB per cycle over 5 cycles, made at
/// the line of `defects.c` that holds `marker`.
pub fn assert_growth(findings: &[serde_json::Value], marker: &str) {
    let growth: Vec<_> = findings
        .iter()
        .filter(|f| f["class"] == "cycle-growth")
        .collect();
    assert_eq!(growth.len(), 1, "{findings:#?}");
    let message = growth[0]["message"].as_str().unwrap();
    assert!(
        message.contains("+2.0 MiB per cycle over 5 cycles"),
        "{message}"
    );
    let site = growth[0]["site"].as_str().unwrap();
    assert!(
        site.ends_with(&format!("defects.c:{})", defects_line(marker))),
        "{site}"
    );
}
