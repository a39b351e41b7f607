//! The measurement tools kept beside the benchmarks build and run:
//! `tests/benches/sanitizer_slices.c`, goal 9's measurement in C, over the
//! emulated library and the sanitizer, and over
//! `tests/benches/sanitizer_cold.c`, a library that does nothing but evict
//! the caches. The ratios and times they print are measurements and are
//! not asserted; that they measure (the cycle runs, clean under the
//! sanitizer, and the figures are printed) is.
//!
//! Needs the emulated library and the sanitizer in the target directory
//! (`cargo build`) and a C compiler.

use std::path::{Path, PathBuf};
use std::process::Command;

use aclmem_tests::{compile_c, library_for_c, sanitizer_in_target_dir, under_test_runner};

/// The slice harness, built from `tests/benches/sanitizer_slices.c` as
/// `name`.
fn harness(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/sanitizer_slices.c");
    compile_c(&src, name, &["-ldl"])
}

/// Runs the harness over 4 slices of `library` and the sanitizer: it must
/// succeed, with the cycle clean under the sanitizer. What it printed.
fn run_clean(exe: &Path, library: &Path, env: &[(&str, &str)]) -> String {
    let out = Command::new(exe)
        .arg(library)
        .arg(sanitizer_in_target_dir())
        .arg("4")
        .env("ACLMEM_ASCENDCL", library)
        .envs(env.iter().copied())
        .output()
        .expect("the harness runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("aclmem-sanitizer: summary: no findings"),
        "the cycle is clean under the sanitizer: {stderr}"
    );
    stdout
}

#[test]
fn the_sanitizer_slice_harness_runs_the_cycle_clean_and_prints_a_ratio() {
    if under_test_runner() {
        return;
    }
    let machine = format!("bench-tools-{}", std::process::id());
    let stdout = run_clean(
        &harness("sanitizer-slices"),
        &library_for_c(),
        &[
            ("ACLMEM_EMU_MACHINE", machine.as_str()),
            ("ACLMEM_EMU_QUIET", "1"),
            ("ACLMEM_EMU_HBM", "64GiB"),
        ],
    );
    let ratio: f64 = stdout
        .strip_prefix("median ")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("a median ratio: {stdout}"));
    assert!(ratio.is_finite() && ratio > 0.0, "{stdout}");
    assert!(stdout.trim_end().ends_with("of 4 slices"), "{stdout}");
}

#[test]
fn over_the_cold_library_the_harness_prints_both_sides_times_and_the_cycle_is_clean() {
    if under_test_runner() {
        return;
    }
    let exe = harness("sanitizer-slices-cold");
    let lib = exe.with_file_name("libsanitizer_cold.so");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-O2", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-o",
        ])
        .arg(&lib)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/sanitizer_cold.c"))
        .status()
        .expect("the compiler runs");
    assert!(status.success(), "sanitizer_cold.c compiles");
    let stdout = run_clean(
        &exe,
        &lib,
        &[
            ("ACLMEM_SLICES_TIMES", "1"),
            ("COLD_EVICT_CODE", "1"),
            ("COLD_EVICT_DATA", "64"),
        ],
    );
    let times: Vec<f64> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("median ns per cycle: first "))
        .unwrap_or_else(|| panic!("the times: {stdout}"))
        .split([',', '(', ')'])
        .filter_map(|w| w.split_whitespace().last()?.parse().ok())
        .collect();
    assert_eq!(
        times.len(),
        3,
        "first, second and their difference: {stdout}"
    );
    assert!(
        times[..2].iter().all(|t| t.is_finite() && *t > 0.0),
        "{stdout}"
    );
}
