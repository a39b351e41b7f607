//! ACL graphs through the emulated `libascendcl.so`, from C
//! (`tests/programs/graph_capture.c`): a step of copies, a host function
//! and a second stream joined by events captured and replayed on new
//! input, a task group updated, and every refusal the runtime makes during
//! capture, each with its code, checked in the program; and conditional
//! tasks (`tests/programs/graph_conds.c`).
//!
//! Needs the emulated library in the target directory (`cargo build`) or
//! `$ACLMEM_ASCENDCL`.

use aclmem_tests::run_checked_program;

#[test]
fn a_captured_step_replays_on_new_input_and_refusals_have_the_runtime_codes() {
    run_checked_program("graph_capture.c");
}

/// `tests/programs/graph_conds.c`: IF (one and two bodies), WHILE and
/// SWITCH tasks select their bodies from the condition value as each
/// execution finds it (set by the host, copied inside the graph, or reset
/// to its default), and the handle and task calls refuse what the runtime
/// refuses.
#[test]
fn conditional_tasks_run_the_bodies_their_value_selects() {
    run_checked_program("graph_conds.c");
}
