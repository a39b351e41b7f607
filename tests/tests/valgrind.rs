//! The emulated library under valgrind's memcheck, as a user checks their
//! own C program: it runs (rustix reads the ELF auxiliary vector through
//! libc's `getauxval`; its own reader faulted under valgrind at
//! `aclInit`), and memcheck finds no invalid access, no use of
//! uninitialised memory and nothing definitely lost, in the program or in
//! the library.
//!
//! Needs valgrind (`cargo xtask ci` installs it) and the emulated library
//! in the target directory (`cargo build`).

use std::path::Path;
use std::process::Command;

use aclmem_tests::{compile_c, under_test_runner};

/// Runs the example `source` under memcheck: its exit code and output.
fn under_memcheck(source: &str, name: &str) -> (Option<i32>, String, String) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/emu-capi/examples/c")
        .join(source);
    let exe = compile_c(&src, &format!("valgrind-{name}"), &[]);
    let out = Command::new("valgrind")
        .args([
            "-q",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
        ])
        .arg(&exe)
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("valgrind-{name}-{}", std::process::id()),
        )
        .output()
        .expect("valgrind runs (apt install valgrind; cargo xtask ci installs it)");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_c_examples_run_clean_under_memcheck() {
    if under_test_runner() {
        // Under qemu-user there is no valgrind for the target.
        return;
    }
    for (source, name, last) in [
        ("vmm_demo.c", "vmm-demo", "all checks passed"),
        ("sleep_wake.c", "sleep-wake", "PASSED: 0 failure(s)"),
    ] {
        let (code, stdout, stderr) = under_memcheck(source, name);
        assert_eq!(
            code,
            Some(0),
            "{source} under memcheck:\n{stdout}\n{stderr}"
        );
        assert_eq!(
            stdout.lines().last(),
            Some(last),
            "{source}:\n{stdout}\n{stderr}"
        );
    }
}
