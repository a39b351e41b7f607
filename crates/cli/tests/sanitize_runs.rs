//! `aclmem sanitize` over whole runs: copies across mappings, calls found
//! with `dlsym`, programs that did not run, sleep/wake growth, refused
//! calls, out-of-memory forensics, unsupported calls, replay of a trace and
//! marked phases.

mod sanitizer_harness;

use sanitizer_harness::*;

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

/// A process that ends with `_exit` (no exit handlers: a forked child's
/// usual end, and many error paths) is checked at its end as at `exit`:
/// what it still holds is a leak, at the line that made it.
#[test]
fn what_a_process_holds_at_exit_is_a_leak() {
    if under_test_runner() {
        return;
    }
    let exe = defects("exit");
    let (findings, code) = sanitize(&[], &exe, &["leak-at-_exit"]);
    only_finding(&findings, "leak", "EXIT-LEAK");
    assert_eq!(code, 1);
}

/// A child of `vfork` shares its parent's memory and runs no fork handler:
/// its `_exit` after a failed `exec` leaves the parent's state alone. The
/// parent's leak is reported once, by the parent, at exit.
#[test]
fn a_vfork_childs_exit_leaves_its_parent_alone() {
    if under_test_runner() {
        return;
    }
    let exe = defects("vfork");
    let (findings, code, stdout, _) = sanitize_output(&[], &exe, &["vfork-exec-fails"]);
    let f = only_finding(&findings, "leak", "VFORK-LEAK");
    let parent: u64 = stdout
        .trim()
        .strip_prefix("pid ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the parent's pid: {stdout:?}"));
    assert_eq!(f["pid"].as_u64(), Some(parent), "reported by the parent");
    assert_eq!(code, 1);
}

/// `_exit` from a signal handler (async-signal-safe: a server ending on
/// SIGTERM) while the main thread is inside the hooks ends the process with
/// the handler's code: the end is left unchecked rather than waited on.
#[test]
fn exit_from_a_signal_handler_ends_the_process() {
    if under_test_runner() {
        return;
    }
    let exe = defects("exit-in-handler");
    for _ in 0..5 {
        // Bounded: a process waiting on its own lock would hang the test.
        let (_, code) = sanitize(
            &[],
            Path::new("timeout"),
            &["60", exe.to_str().unwrap(), "_exit-in-handler"],
        );
        assert_eq!(code, 3, "124: it hung");
    }
}

/// A forked worker that never initialises ACL and ends with `_exit` (as
/// Python's `multiprocessing` workers end) ends as it would without the
/// sanitizer: nothing is checked or printed for it.
#[test]
fn a_worker_that_never_used_acl_ends_quietly() {
    if under_test_runner() {
        return;
    }
    let exe = defects("worker");
    let (findings, code, _, stderr) = sanitize_output(&[], &exe, &["worker-_exit"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
    assert_eq!(
        stderr.matches("aclmem-sanitizer: summary").count(),
        1,
        "only the parent's summary: {stderr}"
    );
}

/// `--log` and `--trace` named relative to where `aclmem sanitize` was
/// started receive the findings of a program that changes directory; a log
/// that cannot be written is an error before the program runs.
#[test]
fn a_relative_log_survives_the_programs_chdir() {
    if under_test_runner() {
        return;
    }
    let exe = defects("chdir");
    let dir = std::env::temp_dir().join(format!("aclmem-chdir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |log: &str| {
        Command::new(env!("CARGO_BIN_EXE_aclmem"))
            .current_dir(&dir)
            .arg("sanitize")
            .arg("--lib")
            .arg(target_profile_dir().join("libaclmem_sanitizer.so"))
            .args(["--log", log, "--trace", "trace.jsonl", "--"])
            .arg(&exe)
            .arg("chdir-leak")
            .env(
                "ACLMEM_EMU_MACHINE",
                format!("chdir-{}", std::process::id()),
            )
            .env("ACLMEM_EMU_QUIET", "1")
            .output()
            .expect("aclmem runs")
    };
    let out = run("findings.jsonl");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let log = std::fs::read_to_string(dir.join("findings.jsonl")).unwrap();
    let findings = aclmem_formats::finding::Record::parse_all(&log);
    assert_eq!(findings.len(), 1, "{log}");
    assert!(
        findings[0]
            .site
            .ends_with(&format!("(defects.c:{})", defects_line("CHDIR-LEAK"))),
        "{log}"
    );
    let trace = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    assert!(trace.contains("aclrtMallocPhysical"), "{trace}");
    // An unwritable log: exit 2, and the program never ran (no trace).
    std::fs::remove_file(dir.join("trace.jsonl")).unwrap();
    let out = run("no-such-dir/findings.jsonl");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--log"), "{err}");
    assert!(!dir.join("trace.jsonl").exists());
    let _ = std::fs::remove_dir_all(&dir);
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

/// Memory held through an allocation wrapper: every block is made at the
/// wrapper's line, so the report's places are told apart by their callers
/// (the wrapper's line, then the caller's), two calls on one line are one
/// place, and places are listed largest first.
#[test]
fn out_of_memory_through_a_wrapper_names_its_callers() {
    if under_test_runner() {
        return;
    }
    let exe = defects("oom-wrapped");
    let (findings, code) = sanitize(&[], &exe, &["out-of-memory-wrapped"]);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(code, 1);
    let f = &findings[0];
    assert_eq!(f["class"], "out-of-memory");
    let at = |marker: &str| format!("defects.c:{})", defects_line(marker));
    let mib = 1u64 << 20;
    let holders = f["holders"].as_array().unwrap();
    let got: Vec<_> = holders
        .iter()
        .map(|h| {
            let stack = h["stack"].as_array().unwrap();
            (
                h["bytes"].as_u64().unwrap(),
                h["count"].as_u64().unwrap(),
                h["site"].as_str().unwrap().ends_with(&at("WRAPPER")),
                stack
                    .get(1)
                    .and_then(|s| s.as_str())
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(got.len(), 2, "{holders:#?}");
    assert_eq!(
        (got[0].0, got[0].1, got[0].2),
        (16 * mib, 2, true),
        "{got:?}"
    );
    assert!(got[0].3.ends_with(&at("KV-CACHE")), "{got:?}");
    assert_eq!(
        (got[1].0, got[1].1, got[1].2),
        (4 * mib, 1, true),
        "{got:?}"
    );
    assert!(got[1].3.ends_with(&at("WORKSPACE")), "{got:?}");
}

/// A refusal the test injected (`ACLMEM_EMU_FAULTS`) is not the program's
/// out-of-memory: no report, and the program's real findings only.
#[test]
fn an_injected_refusal_is_no_out_of_memory() {
    if under_test_runner() {
        return;
    }
    let exe = defects("injected");
    let exe = exe.to_str().unwrap();
    let (findings, code) = sanitize(
        &[],
        Path::new("env"),
        &[
            "ACLMEM_EMU_FAULTS=aclrtMallocPhysical@1=207001",
            exe,
            "leak",
        ],
    );
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
    // The same refusal for real is reported.
    let (findings, _) = sanitize(&[], Path::new(exe), &["out-of-memory"]);
    assert_eq!(findings[0]["class"], "out-of-memory", "{findings:#?}");
}

/// A C function is named as written: a demangler would read `f` as the C++
/// type `float`.
#[test]
fn c_functions_keep_their_names() {
    if under_test_runner() {
        return;
    }
    let exe = defects("short-name");
    let (findings, _) = sanitize(&[], &exe, &["short-name"]);
    let f = only_finding(&findings, "leak", "SHORT-NAME");
    assert_eq!(
        f["site"],
        format!("f (defects.c:{})", defects_line("SHORT-NAME")),
        "{f:#}"
    );
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
    // Without targets: the machine `aclmem run` makes from the environment
    // (the default A2), here with 3 MiB; a refusal for room says what the
    // device held.
    let (text, code) = replay(&sleep_wake, &["--hbm", "3MiB"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("this machine (Ascend910B3")
            && text.contains("aclrtMallocPhysical(0x400000")
            && text.contains("(207001): 4 MiB asked, 3 MiB free of the device's 3 MiB"),
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

/// HCCL's misuses of memory, each on a communicator of one rank: a
/// collective on freed memory, activated communication memory freed, a
/// communicator never destroyed; each reported once, with its class and
/// (for the first two) the program's line; the program done right is clean.
#[test]
fn hccl_defects_are_reported_with_their_class_and_line() {
    if under_test_runner() {
        return;
    }
    let src = repo().join("crates/sanitizer/tests/hccl_defects.c");
    let exe = compile(&src, "hccl-defects");
    let trace =
        std::env::temp_dir().join(format!("aclmem-hccl-trace-{}.jsonl", std::process::id()));
    let (findings, code) = sanitize(&["--trace", trace.to_str().unwrap()], &exe, &["clean"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
    // The collective is a record of the trace (the timeline marks it).
    let records = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    let collectives: Vec<serde_json::Value> = records
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["call"] == "HcclAllReduce")
        .collect();
    assert_eq!(collectives.len(), 1, "{records}");
    assert_eq!(collectives[0]["size"], 4096);
    assert_eq!(collectives[0]["ret"], 0);
    for class in [
        "collective-unmapped",
        "comm-memory-released-while-active",
        "communicator-not-destroyed",
    ] {
        let (findings, code) = sanitize(&[], &exe, &[class]);
        assert_eq!(findings.len(), 1, "{class}: {findings:#?}");
        assert_eq!(findings[0]["class"], class);
        assert_eq!(code, 1, "{class}");
        if class != "communicator-not-destroyed" {
            let line = marked_line(src.to_str().unwrap(), &format!("DEFECT: {class} */"));
            let site = findings[0]["site"].as_str().unwrap();
            assert!(
                site.contains(&format!("hccl_defects.c:{line}")),
                "{class}: {site}"
            );
        }
    }
}

/// The mstx memory API's misuses, on a pool of `aclrtMalloc` memory: each
/// seeded defect is reported once, with its class and the program's line,
/// and its message names the registration it is about; the heaps and
/// regions are records of the trace (the timeline marks them); the program
/// done right is clean.
#[test]
fn mstx_pool_defects_are_reported_with_their_class_and_line() {
    if under_test_runner() {
        return;
    }
    let src = repo().join("crates/sanitizer/tests/mstx_defects.c");
    let exe = compile(&src, "mstx-defects");
    let trace =
        std::env::temp_dir().join(format!("aclmem-mstx-trace-{}.jsonl", std::process::id()));
    let (findings, code) = sanitize(&["--trace", trace.to_str().unwrap()], &exe, &["clean"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
    let records = std::fs::read_to_string(&trace).unwrap();
    // The same trace as msMemScope's event file: the documented columns,
    // the pool's allocation and free under one allocation id.
    let out = trace.with_extension("memscope");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_aclmem"))
        .args([
            "timeline",
            trace.to_str().unwrap(),
            "--format",
            "msmemscope",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let csv = std::fs::read_to_string(out.with_extension("csv")).unwrap();
    let _ = std::fs::remove_file(out.with_extension("csv"));
    let _ = std::fs::remove_file(&trace);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
        )
    );
    let rows: Vec<&str> = lines.collect();
    let malloc = rows
        .iter()
        .find(|r| r.contains(",MALLOC,HAL,") && r.contains("size:4096,"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(
        malloc.contains("alloc_type:alloc") && malloc.contains("mstx_defects.c:"),
        "{malloc}"
    );
    let id = malloc
        .split("allocation_id:")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    assert!(
        rows.iter()
            .any(|r| r.contains(",FREE,HAL,") && r.contains(&format!("allocation_id:{id},"))),
        "{csv}"
    );
    assert!(
        rows.iter().any(|r| r.contains(",SYSTEM,ACL_INIT,")),
        "{csv}"
    );
    let calls: Vec<serde_json::Value> = records
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["call"].as_str().is_some_and(|c| c.starts_with("mstxMem")))
        .collect();
    let named = |call: &str| calls.iter().filter(|r| r["call"] == call).count();
    assert_eq!(named("mstxMemHeapRegister"), 1, "{records}");
    assert_eq!(named("mstxMemRegionsRegister"), 2, "{records}");
    assert_eq!(named("mstxMemRegionsUnregister"), 2, "{records}");
    assert_eq!(named("mstxMemHeapUnregister"), 1, "{records}");
    let heap = calls
        .iter()
        .find(|r| r["call"] == "mstxMemHeapRegister")
        .unwrap();
    assert_eq!(heap["size"], 4096);

    for (mode, class, names) in [
        (
            "mstx-heap-unmapped",
            "mstx-heap-unmapped",
            "not (all) mapped",
        ),
        (
            "mstx-region-outside-heap",
            "mstx-region-outside-heap",
            "mstx_defects.c:",
        ),
        (
            "mstx-access-outside-region",
            "mstx-access-outside-region",
            "128 bytes past the end",
        ),
        (
            "mstx-access-after-unregister",
            "mstx-access-outside-region",
            "no region covers",
        ),
        (
            "mstx-freed-while-registered",
            "mstx-freed-while-registered",
            "mstx region of 256 bytes",
        ),
        (
            "mstx-unknown-handle",
            "mstx-unknown-handle",
            "unregistered already",
        ),
    ] {
        let (findings, code) = sanitize(&[], &exe, &[mode]);
        assert_eq!(findings.len(), 1, "{mode}: {findings:#?}");
        assert_eq!(findings[0]["class"], class, "{mode}");
        assert_eq!(code, 1, "{mode}");
        let line = marked_line(src.to_str().unwrap(), &format!("DEFECT: {mode} */"));
        let site = findings[0]["site"].as_str().unwrap();
        assert!(
            site.contains(&format!("mstx_defects.c:{line}")),
            "{mode}: {site}"
        );
        let message = findings[0]["message"].as_str().unwrap();
        assert!(message.contains(names), "{mode}: {message}");
    }
}

/// Memory an ACL graph captured: freed while the graph lives (at the
/// free, naming the graph and the capture), replayed after (at the
/// replay), and a graph never destroyed (at exit); a clean capture,
/// replay and destroy is no finding.
#[test]
fn memory_a_live_graph_captured_is_checked_at_release_replay_and_exit() {
    if under_test_runner() {
        return;
    }
    let exe = compile(
        &repo().join("crates/sanitizer/tests/graph_defects.c"),
        "graph-defects",
    );
    let (findings, code) = sanitize(&[], &exe, &["clean"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);

    let (findings, code) = sanitize(&[], &exe, &["freed"]);
    assert_eq!(code, 1);
    let classes: Vec<&str> = findings
        .iter()
        .map(|f| f["class"].as_str().unwrap())
        .collect();
    assert_eq!(
        classes,
        ["graph-memory-released", "graph-replay-released"],
        "{findings:#?}"
    );
    let line = |m| format!("graph_defects.c:{}", marked_line("graph_defects.c", m));
    let released = &findings[0];
    assert!(
        released["site"]
            .as_str()
            .unwrap()
            .contains(&line("freed-under-graph")),
        "{released:#?}"
    );
    let message = released["message"].as_str().unwrap();
    assert!(message.contains(&line("capture-begin")), "{message}");
    assert!(message.contains(&line("captured-copy")), "{message}");
    let replay = &findings[1];
    assert!(
        replay["site"]
            .as_str()
            .unwrap()
            .contains(&line("replay-after-free")),
        "{replay:#?}"
    );

    // Kept: the frees after the replay are findings too (the graph still
    // holds that memory), and the graph is reported at exit.
    let (findings, code) = sanitize(&[], &exe, &["kept"]);
    assert_eq!(code, 1);
    let classes: Vec<&str> = findings
        .iter()
        .map(|f| f["class"].as_str().unwrap())
        .collect();
    assert_eq!(
        classes,
        [
            "graph-memory-released",
            "graph-memory-released",
            "graph-not-destroyed"
        ],
        "{findings:#?}"
    );
    let kept = &findings[2];
    assert!(
        kept["message"]
            .as_str()
            .unwrap()
            .contains(&line("capture-begin")),
        "{kept:#?}"
    );
}

#[test]
fn pool_and_managed_memory_defects_are_reported_with_their_class_and_line() {
    if under_test_runner() {
        return;
    }
    let exe = compile(
        &repo().join("crates/sanitizer/tests/pool_defects.c"),
        "pool-defects",
    );
    // Pools allocate from CANN 9.1 on, on Atlas A2.
    let env = [
        ("ACLMEM_EMU_CANN", "9.1"),
        ("ACLMEM_EMU_SOC", "Ascend910B3"),
    ];
    let run = |mode| {
        let (findings, code) = sanitize_env(&[], &exe, &[mode], &env);
        let classes: Vec<String> = findings
            .iter()
            .map(|f| f["class"].as_str().unwrap().to_owned())
            .collect();
        (findings, classes, code)
    };
    let line = |m: &str| {
        let at = marked_line("pool_defects.c", &format!("at: {m} "));
        format!("pool_defects.c:{at}")
    };

    // Pool memory and managed memory are device memory to the copy checks.
    let (findings, _, code) = run("clean");
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);

    let (findings, classes, code) = run("freed");
    assert_eq!(code, 1);
    assert_eq!(classes, ["pool-use-after-free"], "{findings:#?}");
    let f = &findings[0];
    assert!(
        f["site"]
            .as_str()
            .unwrap()
            .contains(&line("use-after-free")),
        "{f:#?}"
    );
    let message = f["message"].as_str().unwrap();
    assert!(message.contains(&line("pool-malloc")), "{message}");
    assert!(message.contains(&line("pool-free")), "{message}");

    let (findings, classes, code) = run("destroyed");
    assert_eq!(code, 1);
    assert_eq!(
        &classes[..2],
        ["pool-destroyed-with-live-memory", "pool-use-after-destroy"],
        "{findings:#?}"
    );
    assert!(
        findings[0]["site"]
            .as_str()
            .unwrap()
            .contains(&line("destroy-with-live")),
        "{findings:#?}"
    );
    assert!(
        findings[1]["site"]
            .as_str()
            .unwrap()
            .contains(&line("use-after-destroy")),
        "{findings:#?}"
    );

    let (findings, classes, code) = run("unordered");
    assert_eq!(code, 1);
    assert_eq!(classes, ["pool-stream-unordered"], "{findings:#?}");
    assert!(
        findings[0]["site"]
            .as_str()
            .unwrap()
            .contains(&line("unordered-use")),
        "{findings:#?}"
    );

    let (findings, classes, code) = run("leaked");
    assert_eq!(code, 1);
    assert_eq!(classes, ["managed-memory-leaked"], "{findings:#?}");
    assert!(
        findings[0]["site"]
            .as_str()
            .unwrap()
            .contains(&line("managed-alloc")),
        "{findings:#?}"
    );
}
