//! `aclmem sanitize` on seeded-defect C programs over the emulated library:
//! each defect reported exactly once, with its class and call site; clean
//! programs report nothing.
//!
//! Needs `cargo build` (the emulated library and the sanitizer, in the
//! target directory) and a C compiler. Under `cargo xtask cross` the tests
//! run under qemu, where a host-built C program cannot be preloaded with
//! the aarch64 sanitizer: there they return at once.

use std::path::{Path, PathBuf};
use std::process::Command;

use aclmem_tests::{compile_c, compile_cxx, through_test_runner, under_test_runner};

fn target_profile_dir() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_aclmem"));
    exe.parent().expect("target/<profile>").to_path_buf()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compiles a C program (with -g, for call sites) against the emulated
/// library.
fn compile(src: &Path, name: &str) -> PathBuf {
    compile_c(src, &format!("sanitize-{name}"), &[])
}

/// Runs `program args` under `aclmem sanitize`; returns the findings (JSON
/// lines) and the exit code.
fn sanitize(extra: &[&str], program: &Path, args: &[&str]) -> (Vec<serde_json::Value>, i32) {
    let log = std::env::temp_dir().join(format!(
        "aclmem-sanitize-{}-{}.jsonl",
        std::process::id(),
        args.join("-")
    ));
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
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("sanitize-{}-{}", std::process::id(), args.join("-")),
        )
        .env("ACLMEM_EMU_QUIET", "1")
        .output()
        .expect("aclmem runs");
    let findings = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let _ = std::fs::remove_file(&log);
    (findings, out.status.code().unwrap_or(-1))
}

/// The seeded-defect program, compiled for one test (tests run in
/// parallel: each gets its own executable).
fn defects(test: &str) -> PathBuf {
    compile(
        &repo().join("crates/sanitizer/tests/defects.c"),
        &format!("defects-{test}"),
    )
}

/// The line of the test program `file` (in crates/sanitizer/tests) that
/// holds `marker`.
fn marked_line(file: &str, marker: &str) -> usize {
    let source = std::fs::read_to_string(repo().join("crates/sanitizer/tests").join(file)).unwrap();
    source
        .lines()
        .position(|l| l.contains(marker))
        .expect("marked")
        + 1
}

/// The line of `defects.c` that holds `marker`.
fn defects_line(marker: &str) -> usize {
    marked_line("defects.c", marker)
}

/// The one `cycle-growth` finding: +2 MiB per cycle over 5 cycles, made at
/// the line of `defects.c` that holds `marker`.
fn assert_growth(findings: &[serde_json::Value], marker: &str) {
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

#[test]
fn each_seeded_defect_is_reported_once_with_its_class_and_call_site() {
    if under_test_runner() {
        return;
    }
    let exe = defects("each");
    let source = std::fs::read_to_string(repo().join("crates/sanitizer/tests/defects.c")).unwrap();
    let leak_line = source
        .lines()
        .position(|l| l.contains("LEAK-SITE"))
        .expect("marked")
        + 1;
    for class in [
        "rule",
        "double-free",
        "free-while-mapped",
        "use-after-free",
        "unmap-unmapped",
        "release-while-mapped",
        "release-unreserved",
        "overlapping-map",
        "copy-unmapped",
        "import-own-export",
        "leak",
    ] {
        let (findings, code) = sanitize(&[], &exe, &[class]);
        assert_eq!(findings.len(), 1, "{class}: {findings:#?}");
        assert_eq!(findings[0]["class"], class, "{findings:#?}");
        let site = findings[0]["site"].as_str().unwrap();
        assert!(site.contains("defects.c:"), "{class}: call site {site}");
        // A native stack of several frames, the call site first.
        let stack = findings[0]["stack"].as_array().unwrap();
        assert!(stack.len() >= 2, "{class}: {stack:?}");
        assert_eq!(stack[0].as_str(), Some(site), "{class}");
        assert_eq!(code, 1, "{class}: a finding makes the run fail");
        if class == "leak" {
            assert!(site.ends_with(&format!("defects.c:{leak_line})")), "{site}");
        }
    }
}

#[test]
fn a_call_refused_on_an_older_release_of_the_fleet_is_reported() {
    if under_test_runner() {
        return;
    }
    let exe = defects("fleet");
    let (findings, _) = sanitize(&["--targets", "a2@8.3"], &exe, &["portability"]);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["class"], "portability");
    assert_eq!(findings[0]["code"], 100000);
    assert!(findings[0]["message"].as_str().unwrap().contains("8.5"));
    // On 9.0 alone, the same program is fine.
    let (findings, code) = sanitize(&[], &exe, &["portability"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
}

/// A target names a run mode too: the RC form of Atlas 200I/500 A2 has no
/// physical-memory API, so an allocation that runs on the EP form is
/// flagged for it; a rule finding states its rule and its code once; and
/// `--error-exitcode` is the code of a run with findings.
#[test]
fn run_modes_are_targets_rules_are_stated_once_and_the_exit_code_is_chosen() {
    if under_test_runner() {
        return;
    }
    let exe = defects("run-mode");
    let (findings, code) = sanitize(&["--targets", "200i-a2:rc@8.3"], &exe, &["double-free"]);
    let portability: Vec<&str> = findings
        .iter()
        .filter(|f| f["class"] == "portability")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(portability.len(), 1, "{findings:#?}");
    assert!(
        portability[0].contains("(RC form, CANN 8.3")
            && portability[0].contains("RC form does not support"),
        "{}",
        portability[0]
    );
    assert_eq!(code, 1);
    let (findings, code) = sanitize(&["--error-exitcode", "42"], &exe, &["rule"]);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let message = findings[0]["message"].as_str().unwrap();
    assert_eq!(message.matches("host-only").count(), 1, "{message}");
    assert!(
        !message.contains("100000"),
        "the code is the finding's `code`: {message}"
    );
    assert_eq!(findings[0]["code"], 100000);
    assert_eq!(code, 42);
}

/// A misspelt `--targets` entry is refused before the program runs (exit 2,
/// naming the entry and the closest name), not skipped.
#[test]
fn targets_are_checked_before_the_program_runs() {
    for (targets, says) in [
        ("a2,zz", "`zz`: unknown product"),
        ("a2:xp", "`a2:xp`: unknown run mode; did you mean `ep`?"),
        ("a22@8.3", "`a22@8.3`: unknown product; did you mean `a2`?"),
        ("a2@8.4", "`a2@8.4`:"),
    ] {
        let out = through_test_runner(env!("CARGO_BIN_EXE_aclmem"))
            .args([
                "sanitize",
                "--targets",
                targets,
                "--",
                "/nonexistent/never-run",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{targets}: {stderr}");
        assert!(stderr.contains(says), "{targets}: {stderr}");
        assert!(
            !stderr.contains("cannot run"),
            "{targets}: it ran: {stderr}"
        );
    }
}

/// The clean programs (the defects program's clean and fork-after-init
/// paths, two processes sharing memory with a whitelist, the C examples of
/// sleep/wake and legacy IPC) report nothing, in 20 runs each, with every
/// line of the JSON log parsing each time (`sanitize` parses them all).
#[test]
fn clean_programs_report_nothing_in_20_runs() {
    if under_test_runner() {
        return;
    }
    let mut programs = vec![
        (defects("clean"), vec!["--targets", "a2,a3"], "clean"),
        (defects("clean-fork"), vec![], "fork"),
        (sharing_program("clean"), vec![], "clean"),
    ];
    for example in ["c/sleep_wake.c", "c/ipc_key.c"] {
        let src = repo().join("crates/emu-capi/examples").join(example);
        let name = example.trim_start_matches("c/").trim_end_matches(".c");
        programs.push((compile(&src, name), vec![], ""));
    }
    for (exe, extra, mode) in &programs {
        let args: Vec<&str> = [*mode].into_iter().filter(|m| !m.is_empty()).collect();
        for run in 0..20 {
            let (findings, code) = sanitize(extra, exe, &args);
            assert!(
                findings.is_empty(),
                "{} {mode} run {run}: {findings:#?}",
                exe.display()
            );
            assert_eq!(code, 0, "{} {mode} run {run}", exe.display());
        }
    }
}

/// `--leak-check none` reports no leak; `full` and the default `program`
/// report the C program's own (nothing of it is a framework's cache).
#[test]
fn leak_check_chooses_what_is_a_leak() {
    if under_test_runner() {
        return;
    }
    let exe = defects("leak-check");
    let (findings, code) = sanitize(&["--leak-check", "none"], &exe, &["leak"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
    for mode in ["program", "full"] {
        let (findings, code) = sanitize(&["--leak-check", mode], &exe, &["leak"]);
        assert_eq!(findings.len(), 1, "{mode}: {findings:#?}");
        assert_eq!(findings[0]["class"], "leak");
        assert_eq!(code, 1);
    }
}

/// Stacks are reused for calls from the same place at the same depth only
/// when the stack still holds them: one call site reached through two
/// callers with identical frames keeps each call's own caller (four leaks:
/// first, first, second, first).
#[test]
fn stacks_name_each_calls_own_caller() {
    if under_test_runner() {
        return;
    }
    let exe = defects("two-callers");
    let (findings, _) = sanitize(&[], &exe, &["two-callers"]);
    assert_eq!(findings.len(), 4, "{findings:#?}");
    let mut callers: Vec<String> = findings
        .iter()
        .map(|f| {
            assert!(
                f["site"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("(defects.c:{})", defects_line("TWO-CALLERS"))),
                "{f}"
            );
            let frame = f["stack"][1].as_str().unwrap();
            frame.split(' ').next().unwrap().to_owned()
        })
        .collect();
    callers.sort();
    assert_eq!(
        callers,
        [
            "first_caller",
            "first_caller",
            "first_caller",
            "second_caller"
        ]
    );
}

/// C++ code's shapes of the defects (an RAII owner copied, a handle kept
/// past a move, an owner never destroyed, a whitelisted child that never
/// imports): each reported once, at the marked line of `defects.cpp`, with
/// the C++ frames (destructor, caller, `main`) below it; the clean path
/// (owners in vectors) reports nothing.
#[test]
fn cpp_defects_are_reported_with_their_frames() {
    if under_test_runner() {
        return;
    }
    let src = repo().join("crates/sanitizer/tests/defects.cpp");
    let exe = compile_cxx(&src, "sanitize-defects-cpp", &[]);
    let line_of = |marker: &str| marked_line("defects.cpp", marker);
    for (class, marker, caller) in [
        ("double-free", "// FREED", "CopyTwice (defects.cpp:"),
        ("use-after-free", "// USE-AFTER-MOVE", "main (defects.cpp:"),
        ("leak", "// MADE", "Forget (defects.cpp:"),
        (
            "whitelisted-never-imported",
            "// WHITELIST",
            "main (defects.cpp:",
        ),
    ] {
        let (findings, code) = sanitize(&[], &exe, &[class]);
        assert_eq!(findings.len(), 1, "{class}: {findings:#?}");
        assert_eq!(findings[0]["class"], class, "{findings:#?}");
        let site = findings[0]["site"].as_str().unwrap();
        assert!(
            site.ends_with(&format!("(defects.cpp:{})", line_of(marker))),
            "{class}: {site}"
        );
        let stack: Vec<&str> = findings[0]["stack"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f.as_str())
            .collect();
        assert!(
            stack.len() >= 2 && stack[1].starts_with(caller),
            "{class}: {stack:?}"
        );
        assert_eq!(code, 1, "{class}");
    }
    let (findings, code) = sanitize(&[], &exe, &["clean"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
}

/// The sharing defects program, compiled for one test.
fn sharing_program(test: &str) -> PathBuf {
    compile(
        &repo().join("crates/sanitizer/tests/sharing.c"),
        &format!("sharing-{test}"),
    )
}

/// Each sharing defect, in one process or across two, is reported exactly
/// once, at the marked line of `sharing.c`, with a stack of several
/// frames; a finding across processes names the other side (its process,
/// call and site) and the handle's lifecycle.
#[test]
fn sharing_defects_across_processes_name_both_sides() {
    if under_test_runner() {
        return;
    }
    let exe = sharing_program("defects");
    let line_of = |marker: &str| marked_line("sharing.c", marker);
    for (mode, class, marker, other) in [
        (
            "import-after-free",
            "import-after-free",
            "IMPORT-AFTER-FREE",
            Some("FREED-BEFORE-IMPORT"),
        ),
        (
            "whitelisted-never-imported",
            "whitelisted-never-imported",
            "WHITELIST",
            None,
        ),
        (
            "import-held-at-exit",
            "import-held-at-exit",
            "HELD-MAP",
            None,
        ),
        (
            "exporter-exited-while-mapped",
            "exporter-exited-while-mapped",
            "EXPORTER",
            None,
        ),
        // The exporter ends by _exit (no exit handler runs): its end is
        // seen from outside.
        (
            "exporter-ended-by-_exit",
            "exporter-exited-while-mapped",
            "EXPORTER",
            None,
        ),
        (
            "handle-type-as-device",
            "handle-type-as-device",
            "TYPE-AS-DEVICE",
            None,
        ),
        ("ipc-key-on-vmm", "ipc-key-on-vmm", "IPC-KEY", None),
    ] {
        let (findings, code) = sanitize(&[], &exe, &[mode]);
        assert_eq!(findings.len(), 1, "{mode}: {findings:#?}");
        let f = &findings[0];
        assert_eq!(f["class"], class, "{findings:#?}");
        let site = f["site"].as_str().unwrap();
        assert!(
            site.ends_with(&format!("(sharing.c:{})", line_of(marker))),
            "{class}: {site}"
        );
        let stack = f["stack"].as_array().unwrap();
        assert!(stack.len() >= 2, "{class}: {stack:?}");
        assert_eq!(stack[0].as_str(), Some(site), "{class}");
        assert_eq!(code, 1, "{class}");
        if f["other"].is_object() {
            let o = &f["other"];
            let other_site = o["site"].as_str().unwrap();
            assert!(other_site.contains("(sharing.c:"), "{class}: {o}");
            assert!(o["stack"].as_array().unwrap().len() >= 2, "{class}: {o}");
            if let Some(m) = other {
                assert!(
                    other_site.ends_with(&format!("(sharing.c:{})", line_of(m))),
                    "{class}: {other_site}"
                );
            }
            if class != "whitelisted-never-imported" {
                assert_ne!(o["pid"], f["pid"], "{class}: two processes");
            }
            assert!(
                f["lifecycle"].as_array().is_some_and(|l| l.len() >= 2),
                "{class}: {f}"
            );
        } else {
            assert!(
                ["handle-type-as-device", "ipc-key-on-vmm"].contains(&class),
                "{class}: the other side is named: {f}"
            );
        }
    }
}

/// Processes that share one log (a program and its children, or parallel
/// jobs) leave whole JSON lines in it: each record is one write to a file
/// opened to append.
#[test]
fn findings_of_concurrent_processes_are_whole_lines() {
    if under_test_runner() {
        return;
    }
    let exe = defects("concurrent");
    let log = std::env::temp_dir().join(format!("aclmem-concurrent-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let (processes, rounds) = (8, 5);
    for round in 0..rounds {
        let children: Vec<_> = (0..processes)
            .map(|i| {
                Command::new(&exe)
                    .arg("double-free")
                    .env(
                        "LD_PRELOAD",
                        target_profile_dir().join("libaclmem_sanitizer.so"),
                    )
                    .env("ACLMEM_SANITIZER_LOG", &log)
                    .env(
                        "ACLMEM_EMU_MACHINE",
                        format!("concurrent-{}-{round}-{i}", std::process::id()),
                    )
                    .env("ACLMEM_EMU_QUIET", "1")
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("the program starts")
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().expect("the program ends");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                stderr.matches("aclmem-sanitizer: double-free").count(),
                1,
                "{stderr}"
            );
        }
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let classes: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            v["class"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(classes.len(), processes * rounds, "{text}");
    assert!(classes.iter().all(|c| c == "double-free"), "{classes:?}");
}

/// A copy may span adjacent mappings (an expandable segment is mapped
/// handle by handle and used as one range); across a gap it is a finding.
#[test]
fn copies_across_adjacent_mappings_are_not_findings_across_a_gap_they_are() {
    if under_test_runner() {
        return;
    }
    let exe = defects("adjacent");
    let (findings, code) = sanitize(&[], &exe, &["adjacent"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
    let (findings, code) = sanitize(&[], &exe, &["adjacent", "gap"]);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["class"], "copy-unmapped");
    assert_eq!(code, 1);
}

/// A program that opens libascendcl.so itself and calls every function
/// through a pointer `dlsym` found on that handle (as torch_npu does):
/// `LD_PRELOAD` alone sees none of its calls; with the sanitizer auditing
/// the bindings (`aclmem sanitize` sets `LD_AUDIT`), each seeded defect is
/// reported as for a program linked against the library, with the
/// program's call site.
#[test]
fn calls_looked_up_with_dlsym_are_checked_too() {
    if under_test_runner() {
        return;
    }
    let header = repo().join("crates/sanitizer/tests/by_name.h");
    let header = header.to_str().unwrap();
    let exe = compile_c(
        &repo().join("crates/sanitizer/tests/defects.c"),
        "sanitize-defects-by-name",
        &["-include", header, "-Wl,--as-needed"],
    );
    let needed = Command::new("readelf")
        .arg("-d")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&needed.stdout).contains("libascendcl"),
        "the program does not link the library: it opens it"
    );
    for class in ["double-free", "use-after-free", "overlapping-map", "leak"] {
        let (findings, code) = sanitize(&[], &exe, &[class]);
        assert_eq!(findings.len(), 1, "{class}: {findings:#?}");
        assert_eq!(findings[0]["class"], class);
        let site = findings[0]["site"].as_str().unwrap();
        assert!(site.contains("defects.c:"), "{class}: call site {site}");
        assert_eq!(code, 1);
    }
    let (findings, code) = sanitize(&[], &exe, &["clean"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
    // Without the auditor (the sanitizer only preloaded), the same defect
    // goes unseen: what the test above sees is the audit's doing.
    let lib = target_profile_dir().join("libaclmem_sanitizer.so");
    let log =
        std::env::temp_dir().join(format!("aclmem-preload-only-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let out = Command::new(&exe)
        .arg("double-free")
        .env("LD_PRELOAD", &lib)
        .env("ACLMEM_SANITIZER_LOG", &log)
        .env(
            "ACLMEM_ASCENDCL",
            target_profile_dir().join("libascendcl.so"),
        )
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("preload-only-{}", std::process::id()),
        )
        .env("ACLMEM_EMU_QUIET", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let seen = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert!(seen.trim().is_empty(), "preload alone saw: {seen}");
}

/// A program that never ran (the shell's 127) is said to be so, with its
/// exit code, never reported as a clean run.
#[test]
fn a_program_that_did_not_run_is_not_a_clean_run() {
    if under_test_runner() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_aclmem"))
        .arg("sanitize")
        .arg("--lib")
        .arg(target_profile_dir().join("libaclmem_sanitizer.so"))
        .args(["--", "sh", "-c", "exec ./no-such-program-here"])
        .output()
        .expect("aclmem runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(127), "{err}");
    assert!(err.contains("did not run (exit 127"), "{err}");
    assert!(!err.contains("no findings"), "{err}");
}

/// A child forked after `aclInit` starts with nothing of its parent's: its
/// import of the parent's export is not "its own", the parent's handle is
/// not its leak; the clean program stays clean in both processes.
#[test]
fn a_child_forked_after_init_inherits_no_findings() {
    if under_test_runner() {
        return;
    }
    let exe = defects("fork");
    for _ in 0..3 {
        let (findings, code) = sanitize(&[], &exe, &["fork"]);
        assert!(findings.is_empty(), "{findings:#?}");
        assert_eq!(code, 0);
    }
}

/// vllm-ascend #9563's shape: each wake makes a 2 MiB handle it never
/// frees. The memory held at the end of each sleep grows by 2 MiB per
/// cycle, and the finding names that and the place that makes the handle;
/// the same loop without the extra handle is clean.
#[test]
fn growth_per_sleep_wake_cycle_is_reported_with_its_site() {
    if under_test_runner() {
        return;
    }
    let exe = defects("cycles");
    let (findings, code) = sanitize(&[], &exe, &["cycle-growth"]);
    assert_growth(&findings, "GROWTH-SITE");
    let growth = findings
        .iter()
        .find(|f| f["class"] == "cycle-growth")
        .unwrap();
    let message = growth["message"].as_str().unwrap();
    assert!(
        message.contains("5 handle(s) of 10.0 MiB made in 5 of the wakes"),
        "{message}"
    );
    // The handles themselves are leaks too, each with the same site.
    assert_eq!(findings.iter().filter(|f| f["class"] == "leak").count(), 5);
    assert_eq!(code, 1);
    let (findings, code) = sanitize(&[], &exe, &["sleep-wake"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
}

/// `--report-api-errors`: every call the library refused is a finding with
/// its code and call site, checked calls and forwarded ones alike; without
/// the option, refused calls are the program's business.
#[test]
fn refused_calls_are_reported_when_asked() {
    if under_test_runner() {
        return;
    }
    let exe = defects("api-error");
    let source = std::fs::read_to_string(repo().join("crates/sanitizer/tests/defects.c")).unwrap();
    let line = |marker: &str| {
        source
            .lines()
            .position(|l| l.contains(marker))
            .expect("marked")
            + 1
    };
    let (findings, code) = sanitize(&["--report-api-errors"], &exe, &["api-error"]);
    assert_eq!(findings.len(), 2, "{findings:#?}");
    assert_eq!(code, 1);
    for (f, (call, marker)) in findings.iter().zip([
        ("aclrtMallocPhysical", "API-ERROR-1"),
        ("aclrtGetDeviceCount", "API-ERROR-2"),
    ]) {
        assert_eq!(f["class"], "api-error");
        assert_eq!(f["call"], call);
        assert_eq!(f["code"], 100000);
        let site = f["site"].as_str().unwrap();
        assert!(
            site.ends_with(&format!("defects.c:{})", line(marker))),
            "{site}"
        );
    }
    let (findings, code) = sanitize(&[], &exe, &["api-error"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
}

/// An allocation refused for lack of memory is an `out-of-memory` finding
/// at the refused call, naming what held the device: three places, largest
/// first, each with its bytes, count and stack.
#[test]
fn out_of_memory_names_what_held_the_device() {
    if under_test_runner() {
        return;
    }
    let exe = defects("out-of-memory");
    let (findings, code) = sanitize(&[], &exe, &["out-of-memory"]);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(code, 1);
    let f = &findings[0];
    assert_eq!(f["class"], "out-of-memory");
    assert_eq!(f["call"], "aclrtMallocPhysical");
    assert_eq!(f["code"], 207001);
    let at = |marker: &str| format!("defects.c:{})", defects_line(marker));
    assert!(
        f["site"].as_str().unwrap().ends_with(&at("OOM-REFUSED")),
        "{f:#}"
    );
    assert_eq!(f["device"], 0);
    assert_eq!(f["requested"], 1u64 << 40);
    let mib = 1u64 << 20;
    assert_eq!(f["held"], 68 * mib);
    let holders = f["holders"].as_array().unwrap();
    let got: Vec<_> = holders
        .iter()
        .map(|h| (h["bytes"].as_u64().unwrap(), h["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, [(48 * mib, 3), (16 * mib, 2), (4 * mib, 1)]);
    for (h, (marker, function)) in holders.iter().zip([
        ("OOM-WEIGHTS", "load_weights"),
        ("OOM-CACHE", "fill_cache"),
        ("OOM-ACTIVATIONS", "activations"),
    ]) {
        let site = h["site"].as_str().unwrap();
        assert!(
            site.ends_with(&at(marker)) && site.contains(function),
            "{site}"
        );
        let stack = h["stack"].as_array().unwrap();
        assert!(
            stack
                .iter()
                .any(|fr| fr.as_str().unwrap().starts_with("main ")),
            "{stack:?}"
        );
    }
    assert!(f["address_space"]["reserved"].is_u64());
}

/// A function the emulator does not support, called by a program under the
/// sanitizer, is reported from the emulator's record: once per function,
/// with its count, its code and where it was first called.
#[test]
fn calls_the_emulator_does_not_support_are_findings() {
    if under_test_runner() {
        return;
    }
    let exe = defects("unsupported");
    let (findings, code) = sanitize(&[], &exe, &["unsupported"]);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f["class"], "unsupported-call");
    assert_eq!(f["call"], "aclrtGetDeviceUtilizationRate");
    assert_eq!(f["code"], 207000);
    assert!(f["message"].as_str().unwrap().contains("2 call(s)"), "{f}");
    assert!(
        f["site"]
            .as_str()
            .unwrap()
            .contains("sanitize-defects-unsupported"),
        "{f}"
    );
    assert_eq!(code, 1);
}

/// `aclmem replay`: a trace recorded under the sanitizer is made again on
/// other products, releases and capacities; the first call that would
/// fail on each is named with its code and rule, and the exit code says
/// whether any target fails.
#[test]
fn a_recorded_trace_replays_on_other_targets() {
    if under_test_runner() {
        return;
    }
    let record = |mode: &str| {
        let exe = defects(&format!("replay-{mode}"));
        let trace =
            std::env::temp_dir().join(format!("aclmem-replay-{}-{mode}.jsonl", std::process::id()));
        let (findings, code) = sanitize(&["--trace", trace.to_str().unwrap()], &exe, &[mode]);
        assert!(findings.is_empty() && code == 0, "{findings:#?}");
        trace
    };
    let replay = |trace: &Path, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_aclmem"))
            .arg("replay")
            .arg(trace)
            .args(args)
            .output()
            .expect("aclmem runs");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.code(),
        )
    };
    let sleep_wake = record("sleep-wake");
    let (text, code) = replay(&sleep_wake, &["--targets", "a2@8.0,a3,inference"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("26 physical-memory calls to replay"),
        "{text}"
    );
    assert_eq!(text.matches("runs through").count(), 3, "{text}");
    // No physical-memory API in the RC form; too little memory for the
    // weights.
    let (text, code) = replay(&sleep_wake, &["--targets", "200i-a2:rc"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("fails at call 1 of 26 (trace line 2,")
            && text.contains(
                "aclrtReserveMemAddress(0x400000) answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000)"
            ),
        "{text}"
    );
    let (text, code) = replay(&sleep_wake, &["--targets", "a2", "--hbm", "3MiB"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("aclrtMallocPhysical(0x400000") && text.contains("(207001)"),
        "{text}"
    );
    // ACL_MEM_HUGE came with CANN 8.5: refused before it, with the rule.
    let huge = record("portability");
    let (text, code) = replay(&huge, &["--targets", "a2@8.3,a2@8.5"]);
    assert_eq!(code, Some(1), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].contains("a2@8.3")
            && lines[1].contains(
                "answers ACL_ERROR_INVALID_PARAM (100000): ACL_MEM_HUGE needs CANN 8.5 or later"
            ),
        "{text}"
    );
    assert!(
        lines[2].contains("a2@8.5") && lines[2].ends_with("runs through"),
        "{text}"
    );
    // A misspelt target is refused before anything runs.
    let (_, code) = replay(&huge, &["--targets", "a9"]);
    assert_eq!(code, Some(2));
    for t in [sleep_wake, huge] {
        let _ = std::fs::remove_file(t);
    }
}

/// Phases the program marks (`aclmem_sanitizer_phase("sleep" / "wake")`)
/// bound the cycles where the heuristic cannot see them (each wake maps at
/// another address): the growth is reported with its site; unmarked, the
/// same loop is not taken for sleep/wake cycles. (The handles are freed at
/// the end, so what grows is found while the loop runs, not as a leak.)
#[test]
fn marked_phases_bound_the_cycles() {
    if under_test_runner() {
        return;
    }
    let exe = defects("phases");
    let (findings, _) = sanitize(&[], &exe, &["phases"]);
    assert_growth(&findings, "PHASE-GROWTH-SITE");
    // The same phases as mstx ranges around each sleep, the functions
    // looked up with dlsym in libms_tools_ext.so (the emulated library
    // under that name): the program exits 0 only if every range got an id.
    let (findings, code) = sanitize(&[], &exe, &["phases-mstx"]);
    assert_growth(&findings, "PHASE-GROWTH-SITE");
    assert_eq!(code, 1, "{findings:#?}");
    let (findings, code) = sanitize(&[], &exe, &["phases-unmarked"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
}
