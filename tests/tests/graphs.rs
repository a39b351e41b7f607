//! ACL graphs through the emulated `libascendcl.so`, from C
//! (`tests/programs/graph_capture.c`): a step of copies, a host function
//! and a second stream joined by events captured and replayed on new
//! input, a task group updated, and every refusal the runtime makes during
//! capture, each with its code, checked in the program; and conditional
//! tasks (`tests/programs/graph_conds.c`).
//!
//! Needs the emulated library in the target directory (`cargo build`) or
//! `$ACLMEM_ASCENDCL`.

use std::path::Path;

use aclmem_tests::{compile_c, through_test_runner};

/// Compiles and runs one of the C programs of this file's scenarios under
/// the test runner, on a machine of its own; it prints "ok" last when every
/// check in it held.
fn run_program(name: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("programs/{name}.c"));
    let exe = compile_c(&src, name, &[]);
    let out = through_test_runner(exe.to_str().expect("a UTF-8 path"))
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("{name}-{}", std::process::id()),
        )
        .env("ACLMEM_EMU_QUIET", "1")
        .output()
        .expect("the program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.lines().last() == Some("ok"),
        "{name}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_captured_step_replays_on_new_input_and_refusals_have_the_runtime_codes() {
    run_program("graph_capture");
}

/// `tests/programs/graph_conds.c`: IF (one and two bodies), WHILE and
/// SWITCH tasks select their bodies from the condition value as each
/// execution finds it (set by the host, copied inside the graph, or reset
/// to its default), and the handle and task calls refuse what the runtime
/// refuses.
#[test]
fn conditional_tasks_run_the_bodies_their_value_selects() {
    run_program("graph_conds");
}
