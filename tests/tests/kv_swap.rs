//! vllm-ascend's KV-block swap through the emulated `libascendcl.so`, from
//! C (`tests/programs/kv_swap.c`): blocks of device memory out to pinned
//! host memory and back with `aclrtMemcpyBatchAsync`, exactly as
//! `swap_blocks_batch` calls it, the bytes compared in the program; a
//! refusal names its copy in `failIndex`.
//!
//! Needs the emulated library in the target directory (`cargo build`) or
//! `$ACLMEM_ASCENDCL`.

use std::path::Path;

use aclmem_tests::{compile_c, through_test_runner};

#[test]
fn a_vllm_ascend_kv_swap_round_trips_byte_for_byte() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/kv_swap.c");
    let exe = compile_c(&src, "kv_swap", &[]);
    let out = through_test_runner(exe.to_str().expect("a UTF-8 path"))
        .env(
            "ACLMEM_EMU_MACHINE",
            format!("kv-swap-{}", std::process::id()),
        )
        .env("ACLMEM_EMU_QUIET", "1")
        .output()
        .expect("the program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.lines().last() == Some("ok"),
        "kv_swap: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
