//! The sanitizer never touches memory the library would refuse: every
//! function it checks, called with NULL, `(void *)1`, a PROT_NONE page and
//! an unmapped page (`bad_pointers.c`), answers the same codes with the
//! sanitizer preloaded as without it, and the program does not crash.
//!
//! Needs the emulated library (`cargo build -p aclmem-libascendcl`, or
//! `$ACLMEM_ASCENDCL`) and a C compiler. Under `cargo xtask cross` the
//! tests run under qemu, where a host-built C program cannot be preloaded
//! with the aarch64 sanitizer: there they return at once.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use aclmem_tests::{compile_c, sanitizer_in_target_dir, under_test_runner};

fn compile() -> PathBuf {
    compile_c(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_pointers.c"),
        "bad-pointers",
        &["-Werror"],
    )
}

fn run(exe: &Path, preload: Option<&Path>, machine: &str) -> Output {
    let mut c = Command::new(exe);
    c.env(
        "ACLMEM_EMU_MACHINE",
        format!("bad-pointers-{}-{machine}", std::process::id()),
    )
    .env("ACLMEM_EMU_QUIET", "1")
    .env_remove("ACLMEM_SANITIZER_HALT_ON_ERROR")
    .env_remove("LD_PRELOAD");
    if let Some(p) = preload {
        c.env("LD_PRELOAD", p);
    }
    c.output().expect("the program runs")
}

#[test]
fn bad_pointers_get_the_library_codes_with_and_without_the_sanitizer() {
    if under_test_runner() {
        return;
    }
    let exe = compile();
    let san = sanitizer_in_target_dir();
    let plain = run(&exe, None, "plain");
    let checked = run(&exe, Some(&san), "sanitized");
    let _ = std::fs::remove_file(&exe);
    for (what, out) in [("without", &plain), ("with", &checked)] {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{what} the sanitizer: {:?} (a signal is a crash)\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let plain = String::from_utf8(plain.stdout).expect("text");
    let checked = String::from_utf8(checked.stdout).expect("text");
    for (a, b) in plain.lines().zip(checked.lines()) {
        assert_eq!(a, b, "the sanitizer changed a code");
    }
    assert_eq!(plain, checked);
    // Every call ran and printed: the last line counts them.
    let lines: Vec<&str> = plain.lines().collect();
    let calls: usize = lines
        .last()
        .and_then(|l| l.strip_prefix("done "))
        .and_then(|n| n.parse().ok())
        .expect("a last line `done N`");
    assert_eq!(calls, lines.len() - 1);
    assert!(calls > 100, "{calls} calls");
    // The two calls the sanitizer used to crash on, for each kind of bad
    // pointer, answer the library's code.
    for how in ["null", "one", "prot-none", "unmapped"] {
        for call in [
            "aclrtMallocPhysical prop",
            "aclrtMemImportFromShareableHandleV2 shareable",
        ] {
            let line = format!("{call} {how} 100000");
            assert!(lines.contains(&line.as_str()), "{line}\n{plain}");
        }
    }
}
