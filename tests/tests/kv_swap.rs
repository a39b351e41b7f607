//! vllm-ascend's KV-block swap through the emulated `libascendcl.so`, from
//! C (`tests/programs/kv_swap.c`): blocks of device memory out to pinned
//! host memory and back with `aclrtMemcpyBatchAsync`, exactly as
//! `swap_blocks_batch` calls it, the bytes compared in the program; a
//! refusal names its copy in `failIndex`.
//!
//! Needs the emulated library in the target directory (`cargo build`) or
//! `$ACLMEM_ASCENDCL`.

use aclmem_tests::run_checked_program;

#[test]
fn a_vllm_ascend_kv_swap_round_trips_byte_for_byte() {
    run_checked_program("kv_swap.c");
}
