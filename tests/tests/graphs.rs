//! ACL graphs through the emulated `libascendcl.so`, from C
//! (`tests/programs/graph_capture.c`): a step of copies, a host function
//! and a second stream joined by events captured and replayed on new
//! input, a task group updated, and every refusal the runtime makes during
//! capture, each with its code, checked in the program.
//!
//! Needs the emulated library in the target directory (`cargo build`) or
//! `$ACLMEM_ASCENDCL`.

use std::path::Path;

use aclmem_tests::{compile_c, through_test_runner};

#[test]
fn a_captured_step_replays_on_new_input_and_refusals_have_the_runtime_codes() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/graph_capture.c");
    let exe = compile_c(&src, "graph_capture", &[]);
    let out = through_test_runner(exe.to_str().expect("a UTF-8 path"))
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("graphs-{}", std::process::id()),
        )
        .env("ACLMEM_EMU_QUIET", "1")
        .output()
        .expect("the program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.lines().last() == Some("ok"),
        "graph_capture: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
