//! `aclmem explore` on a C program with one seeded defect per error path
//! (`programs/explore.c`): each fault's outcome is found at its line, the
//! log has one JSON line per fault, and a program whose explored paths are
//! all handled exits 0; a program whose every error path is right
//! (`programs/explore_clean.c`) is clean in each of 20 explorations; a
//! program's own crash handler is kept.
//!
//! Needs `cargo build` (the emulated library and the sanitizer, in the
//! target directory) and a C compiler.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use aclmem_tests::{compile_c, under_test_runner};

/// The test program `name` of `tests/programs`.
fn program(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(name)
}

fn source() -> PathBuf {
    program("explore.c")
}

/// `file:line` of the line of test program `name` that holds `marker`.
fn marked(name: &str, marker: &str) -> String {
    let n = std::fs::read_to_string(program(name))
        .unwrap()
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("the marker {marker} is in {name}"))
        + 1;
    format!("{name}:{n}")
}

fn line_of(marker: &str) -> String {
    marked("explore.c", marker)
}

/// `aclmem explore ARGS` over `programs/explore.c`: the log's records,
/// the exit code and stderr.
fn explore(args: &[&str], name: &str) -> (Vec<serde_json::Value>, Option<i32>, String) {
    let exe = compile_c(&source(), &format!("explore-{name}"), &[]);
    explore_program(&exe, args, name, &[])
}

/// `aclmem explore ARGS -- EXE` with `env` added: the log's records, the
/// exit code and stderr.
fn explore_program(
    exe: &Path,
    args: &[&str],
    name: &str,
    env: &[(&str, &str)],
) -> (Vec<serde_json::Value>, Option<i32>, String) {
    let log = std::env::temp_dir().join(format!(
        "aclmem-explore-{}-{name}.jsonl",
        std::process::id()
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_aclmem"))
        .arg("explore")
        .arg("--log")
        .arg(&log)
        .args(args)
        .arg("--")
        .arg(exe)
        .envs(env.iter().copied())
        .output()
        .expect("aclmem runs");
    let records = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let _ = std::fs::remove_file(&log);
    (
        records,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn each_error_path_gets_its_outcome_at_its_line() {
    if under_test_runner() {
        return;
    }
    let (records, code, stderr) = explore(&["--timeout", "5", "--jobs", "2"], "all");
    assert_eq!(code, Some(1), "{stderr}");
    let by_site: BTreeMap<String, &serde_json::Value> = records
        .iter()
        .map(|r| (r["site"].as_str().unwrap().to_owned(), r))
        .collect();
    let outcome = |marker: &str| {
        let r = by_site
            .get(&line_of(marker))
            .unwrap_or_else(|| panic!("no fault at {marker}: {records:#?}"));
        r["outcome"].as_str().unwrap().to_owned()
    };
    assert_eq!(outcome("EXPLORE-HANDLED"), "handled");
    assert_eq!(outcome("EXPLORE-LEAK"), "leak");
    assert_eq!(outcome("EXPLORE-MISUSE"), "misuse");
    assert_eq!(outcome("EXPLORE-CRASH"), "crash");
    assert_eq!(outcome("EXPLORE-HANG"), "hang");
    // What each found, at the line of the defect.
    let leak = by_site[&line_of("EXPLORE-LEAK")];
    assert_eq!(leak["function"], "aclrtMallocPhysical");
    assert_eq!(
        (leak["nth"].as_u64(), leak["code"].as_i64()),
        (Some(1), Some(207001))
    );
    let found = &leak["findings"][0];
    assert_eq!(found["class"], "leak");
    assert!(
        found["site"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{})", line_of("EXPLORE-HANDLED")))
    );
    let misuse = by_site[&line_of("EXPLORE-MISUSE")];
    assert!(
        misuse["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["class"] == "double-free"),
        "{misuse:#}"
    );
    assert!(
        stderr.contains("hang:") && stderr.contains("aclmem explore:"),
        "{stderr}"
    );
    // Where the crash happened and where the hang waits, at their lines.
    let place = |marker: &str| {
        by_site[&line_of(marker)]["where"]["site"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        place("EXPLORE-CRASH"),
        format!("main ({})", line_of("EXPLORE-CRASH-AT"))
    );
    assert_eq!(by_site[&line_of("EXPLORE-CRASH")]["where"]["signal"], 6);
    assert_eq!(
        place("EXPLORE-HANG"),
        format!("main ({})", line_of("EXPLORE-HANG-AT"))
    );
    assert!(
        stderr.contains(&format!("waiting at main ({})", line_of("EXPLORE-HANG-AT"))),
        "{stderr}"
    );
    // Other outcomes have no place.
    assert!(by_site[&line_of("EXPLORE-LEAK")]["where"].is_null());
}

/// A program that handles the crash signal itself keeps its own handling,
/// whether it installed its handler before `aclInit` (the sanitizer then
/// installs none) or after (it replaces the sanitizer's): it ends by its
/// handler's exit code, and no crash or place is recorded.
#[test]
fn a_programs_own_crash_handler_is_kept() {
    if under_test_runner() {
        return;
    }
    let exe = compile_c(&source(), "explore-own-handler", &[]);
    for when in ["before", "after"] {
        let (records, _, stderr) = explore_program(
            &exe,
            &["--only", "aclrtMapMem", "--timeout", "30"],
            &format!("own-handler-{when}"),
            &[("EXPLORE_OWN_HANDLER", when)],
        );
        let [r] = records.as_slice() else {
            panic!("{when}: {records:#?}\n{stderr}");
        };
        assert_eq!(r["site"], line_of("EXPLORE-CRASH"), "{when}: {r:#}");
        assert_ne!(r["outcome"], "crash", "{when}: {r:#}");
        assert_eq!(r["exit"], 3, "{when}: {r:#}");
        assert!(r["where"].is_null(), "{when}: {r:#}");
    }
}

/// A program whose every error path is right (`programs/explore_clean.c`)
/// is reported clean, the same way, in each of 20 explorations: every
/// call site failed at its 1st and 2nd call, every fault `handled`, exit 0.
#[test]
fn a_clean_program_is_clean_in_20_explorations() {
    if under_test_runner() {
        return;
    }
    let src = program("explore_clean.c");
    let exe = compile_c(&src, "explore-clean", &[]);
    let mut first: Option<Vec<String>> = None;
    for run in 0..20 {
        let (records, code, stderr) =
            explore_program(&exe, &["--depth", "2"], &format!("clean-{run}"), &[]);
        assert_eq!(code, Some(0), "run {run}: {stderr}");
        let not_handled: Vec<_> = records
            .iter()
            .filter(|r| r["outcome"] != "handled")
            .collect();
        assert!(not_handled.is_empty(), "run {run}: {not_handled:#?}");
        let mut faults: Vec<String> = records
            .iter()
            .map(|r| format!("{}@{} at {}", r["function"], r["nth"], r["site"]))
            .collect();
        faults.sort();
        match &first {
            None => {
                // The releases and the copy of both cycles are among the
                // faults tried, and the last call of all.
                for (f, calls) in [
                    ("aclrtUnmapMem", 2),
                    ("aclrtFreePhysical", 2),
                    ("aclrtMemcpy", 2),
                    ("aclFinalize", 1),
                ] {
                    for nth in 1..=calls {
                        assert!(
                            faults
                                .iter()
                                .any(|x| x.starts_with(&format!("\"{f}\"@{nth} "))),
                            "{f}@{nth} not tried: {faults:#?}"
                        );
                    }
                }
                first = Some(faults);
            }
            Some(first) => assert_eq!(&faults, first, "run {run} tried other faults"),
        }
    }
}

#[test]
fn handled_paths_only_exit_zero() {
    if under_test_runner() {
        return;
    }
    let (records, code, stderr) = explore(&["--only", "aclrtMalloc,aclrtSetDevice"], "only");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(records.len(), 2, "{records:#?}");
    assert!(records.iter().all(|r| r["outcome"] == "handled"));
}

/// The C sleep/wake example, explored: every call site of the program is
/// tried, none hangs or crashes, and a failed `aclrtMemcpy` is handled (the
/// example checks every call and stops).
#[test]
fn the_sleep_wake_example_is_explored_whole() {
    if under_test_runner() {
        return;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../emu-capi/examples/c/sleep_wake.c");
    let exe = compile_c(&src, "explore-sleep-wake", &[]);
    let (records, code, stderr) = explore_program(&exe, &["--timeout", "60"], "sw", &[]);
    assert_eq!(code, Some(1), "{stderr}");
    let functions: std::collections::BTreeSet<&str> = records
        .iter()
        .map(|r| r["function"].as_str().unwrap())
        .collect();
    for f in [
        "aclInit",
        "aclrtSetDevice",
        "aclrtReserveMemAddress",
        "aclrtMallocPhysical",
        "aclrtMapMem",
        "aclrtMemcpy",
        "aclrtUnmapMem",
        "aclrtFreePhysical",
        "aclrtReleaseMemAddress",
    ] {
        assert!(functions.contains(f), "{f} not explored: {functions:?}");
    }
    for r in &records {
        assert!(
            r["site"].as_str().unwrap().starts_with("sleep_wake.c:"),
            "{r}"
        );
        assert!(
            !["hang", "crash"].contains(&r["outcome"].as_str().unwrap()),
            "{r}"
        );
        if r["function"] == "aclrtMemcpy" {
            assert_eq!(r["outcome"], "handled", "{r}");
        }
    }
}

/// The line of `programs/explore_child.c` that holds `marker`.
fn child_line_of(marker: &str) -> String {
    marked("explore_child.c", marker)
}

/// A forked child that ends with `_exit` (no exit handlers) is explored
/// too: its calls are learned and failed; its failed `aclrtMalloc`, which
/// leaves holding its parent's export, is a leak at that line, and its
/// abort on a failed import is a crash, though the parent ends well. Two
/// calls on one line are two faults, each record's `fault` naming its own
/// call (`aclmem run --fault` takes it back).
#[test]
fn a_child_ending_with_exit_is_explored_and_same_line_calls_are_told_apart() {
    if under_test_runner() {
        return;
    }
    let src = program("explore_child.c");
    let exe = compile_c(&src, "explore-child", &[]);
    let (records, code, stderr) = explore_program(
        &exe,
        &["--only", "aclrtMalloc,aclrtMemImportFromShareableHandle"],
        "child",
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    let at = |marker: &str| -> Vec<&serde_json::Value> {
        records
            .iter()
            .filter(|r| r["site"] == child_line_of(marker))
            .collect()
    };
    let [leak] = at("CHILD-LEAK")[..] else {
        panic!("the child's call: {records:#?}\n{stderr}");
    };
    assert_eq!(leak["outcome"], "leak", "{leak:#}");
    assert!(
        leak["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["class"] == "import-held-at-exit"),
        "{leak:#}"
    );
    // The child's crash, though the parent ends well, where it crashed.
    let [crash] = at("CHILD-CRASH")[..] else {
        panic!("the child's import: {records:#?}\n{stderr}");
    };
    assert_eq!(crash["outcome"], "crash", "{crash:#}");
    assert_eq!(crash["exit"], 0, "{crash:#}");
    assert_eq!(crash["where"]["signal"], 6, "{crash:#}");
    assert_eq!(
        crash["where"]["site"],
        format!("child ({})", child_line_of("CHILD-CRASH-AT")),
        "{crash:#}"
    );
    let same = at("SAME-LINE");
    assert_eq!(same.len(), 2, "{records:#?}");
    // Handled, with the program's own exit code (an injected refusal is no
    // finding of the run).
    assert!(
        same.iter()
            .all(|r| r["outcome"] == "handled" && r["exit"] == 0),
        "{same:#?}"
    );
    let faults: std::collections::BTreeSet<&str> =
        same.iter().map(|r| r["fault"].as_str().unwrap()).collect();
    assert_eq!(faults.len(), 2, "{same:#?}");
    // Each fault, given back, is a valid spec that fails one call.
    for fault in faults {
        let out = Command::new(env!("CARGO_BIN_EXE_aclmem"))
            .args(["run", "--fault", fault, "--"])
            .arg(&exe)
            .env("ACLMEM_EMU_QUIET", "0")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{fault}: {err}");
        assert!(err.contains("aclrtMalloc (call 1"), "{fault}: {err}");
    }
    // Mistakes are errors before any run.
    assert_eq!(explore_errors(&["--only", "aclrtMallok"], &exe), Some(2));
    assert_eq!(
        explore_errors(&["--log", "/nonexistent/aclmem/x.jsonl"], &exe),
        Some(2)
    );
}

/// `aclmem explore`'s exit code for ARGS over EXE, its log unwritten.
fn explore_errors(args: &[&str], exe: &Path) -> Option<i32> {
    let out = Command::new(env!("CARGO_BIN_EXE_aclmem"))
        .arg("explore")
        .args(args)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    out.status.code()
}

/// The processes running `exe` with a fault armed (a run of explore's, not
/// its learning run).
fn fault_runs_of(exe: &Path) -> Vec<u32> {
    let exe = std::fs::canonicalize(exe).unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == exe)
                && std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                    env.split(|b| *b == 0)
                        .any(|v| v.starts_with(b"ACLMEM_EMU_FAULTS="))
                })
        })
        .collect()
}

/// A run's program starts with no signal blocked. Stopping explore
/// (SIGTERM, or the terminal's Ctrl-C) stops the runs under way with it (each is in a process group of its own, which the
/// terminal's signal does not reach) and removes its directory: a hung run
/// is not left running.
#[test]
fn stopping_explore_stops_its_runs() {
    if under_test_runner() {
        return;
    }
    let exe = compile_c(&source(), "explore-stopped", &[]);
    let mut explore = Command::new(env!("CARGO_BIN_EXE_aclmem"))
        .args(["explore", "--only", "aclrtMemset", "--timeout", "600", "--"])
        .arg(&exe)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Waits for the hanging run to start (the learning run ends first).
    let mut waited = 0;
    while fault_runs_of(&exe).is_empty() {
        assert!(waited < 6000, "the fault run never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
        waited += 1;
    }
    // The run's program blocks no signal (explore's own threads block the
    // ones it stops on; the run must not inherit that).
    for pid in fault_runs_of(&exe) {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if let Some(blocked) = status.lines().find(|l| l.starts_with("SigBlk:")) {
            assert_eq!(
                blocked.split_whitespace().nth(1),
                Some("0000000000000000"),
                "{blocked}"
            );
        }
    }
    // SAFETY: signals the child this test started.
    unsafe { libc::kill(explore.id() as i32, libc::SIGTERM) };
    let status = explore.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    let dir = std::env::temp_dir().join(format!("aclmem-explore-{}", explore.id()));
    assert!(!dir.exists(), "{} left", dir.display());
    // SIGKILL is sent to the run's group before explore exits; the kernel
    // ends its processes as soon as it delivers it.
    let mut waited = 0;
    while !fault_runs_of(&exe).is_empty() {
        assert!(waited < 1000, "the hung run was left running");
        std::thread::sleep(std::time::Duration::from_millis(10));
        waited += 1;
    }
}
