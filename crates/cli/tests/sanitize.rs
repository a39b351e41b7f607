//! `aclmem sanitize` on seeded-defect C programs over the emulated library:
//! each defect reported exactly once, with its class and call site; clean
//! programs report nothing.
//!
//! Needs `cargo build` (the emulated library and the sanitizer, in the
//! target directory) and a C compiler. Under `cargo xtask cross` the tests
//! run under qemu, where a host-built C program cannot be preloaded with
//! the aarch64 sanitizer: there they return at once.

mod sanitizer_harness;

use sanitizer_harness::*;

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

/// Four threads on handles and addresses of their own (other shards of
/// the sanitizer's model), each unmapping its mapping twice and freeing its
/// handle twice every round, beside the two threads racing to unmap one
/// mapping, after a mapping that crosses a boundary of the address shards:
/// every finding exactly once, nothing else.
#[test]
fn threads_on_other_shards_beside_a_race_get_exactly_their_findings() {
    if under_test_runner() {
        return;
    }
    let exe = defects("sharded-races");
    let (findings, code) = sanitize(&[], &exe, &["sharded-races"]);
    let at = |class: &str, marker: &str| {
        let line = defects_line(marker);
        findings
            .iter()
            .filter(|f| {
                f["class"] == class
                    && f["site"]
                        .as_str()
                        .is_some_and(|s| s.ends_with(&format!("defects.c:{line})")))
            })
            .count()
    };
    assert_eq!(at("unmap-unmapped", "RACING-UNMAP"), 50, "{findings:#?}");
    assert_eq!(
        at("unmap-unmapped", "SHARD-UNMAP-AGAIN"),
        4 * 40,
        "{findings:#?}"
    );
    assert_eq!(
        at("double-free", "SHARD-DOUBLE-FREE"),
        4 * 40,
        "{findings:#?}"
    );
    assert_eq!(at("overlapping-map", "SHARD-OVERLAP"), 1, "{findings:#?}");
    assert_eq!(
        at("release-while-mapped", "SHARD-RELEASE-MAPPED"),
        1,
        "{findings:#?}"
    );
    assert_eq!(
        findings.len(),
        50 + 2 * 4 * 40 + 2,
        "nothing else: {findings:#?}"
    );
    assert_eq!(code, 1);
}

/// Two threads unmapping one mapping at once: the library answers one of
/// them, and the sanitizer judges the pair in the order the calls ran (a
/// check, its call and the model's update are one step), so every round
/// has exactly one `unmap-unmapped`, never none (both checks passed before
/// either update) and never two.
#[test]
fn of_two_threads_unmapping_one_mapping_at_once_the_second_is_reported_every_time() {
    if under_test_runner() {
        return;
    }
    let exe = defects("racing-unmaps");
    let (findings, code) = sanitize(&[], &exe, &["racing-unmaps"]);
    let line = defects_line("RACING-UNMAP");
    let races = findings
        .iter()
        .filter(|f| {
            f["class"] == "unmap-unmapped"
                && f["site"]
                    .as_str()
                    .is_some_and(|s| s.ends_with(&format!("defects.c:{line})")))
        })
        .count();
    assert_eq!(races, 50, "{findings:#?}");
    assert_eq!(findings.len(), 50, "nothing else: {findings:#?}");
    assert_eq!(code, 1);
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
    // The programs at once, each on its own machine; a program's 20 runs
    // one after the other.
    std::thread::scope(|s| {
        for (exe, extra, mode) in &programs {
            s.spawn(move || {
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
            });
        }
    });
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
        // However the importer or the exporter ends: _exit and a signal
        // run no exit handler.
        (
            "import-held-at-_exit",
            "import-held-at-exit",
            "HELD-MAP",
            None,
        ),
        (
            "import-held-at-signal",
            "import-held-at-exit",
            "HELD-MAP",
            None,
        ),
        (
            "exporter-killed-while-mapped",
            "exporter-exited-while-mapped",
            "EXPORTER",
            None,
        ),
        // A forked child that joined the machine itself frees its export,
        // finalises and exits while its parent still maps it: the exit's
        // line, and the parent's map.
        (
            "exporter-freed-and-exited-while-mapped",
            "exporter-exited-while-mapped",
            "EXPORTER-EXIT",
            Some("PARENT-MAP"),
        ),
        (
            "import-own-export-after-fork",
            "import-own-export",
            "OWN-IMPORT",
            None,
        ),
        // The importer's finding names the exporter's export too.
        (
            "handle-type-as-device",
            "handle-type-as-device",
            "TYPE-AS-DEVICE",
            Some("EXPORTED-TO-CHILD"),
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
                ["ipc-key-on-vmm", "import-own-export"].contains(&class),
                "{class}: the other side is named: {f}"
            );
        }
        if class == "import-own-export" {
            // Both lines: the import's, and the export's in the message.
            let export = format!("(sharing.c:{})", line_of("OWN-EXPORT"));
            assert!(f["message"].as_str().unwrap().contains(&export), "{f}");
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
