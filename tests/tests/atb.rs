//! ATB's C++ ABI through the emulated `libatb.so`, from C++
//! (`tests/programs/atb_abi.cpp`): the program declares ATB's classes as
//! its headers lay them out, so the compiler calls the library's virtual
//! tables, returns `std::string` and `std::vector` by value (the
//! caller's storage a hidden first argument on x86-64, register x8 on
//! aarch64) and destroys them; a paged attention set up and executed on
//! device memory matches the definition computed in the program, and the
//! refusals have ATB's statuses.
//!
//! Needs the emulated library in the target directory (`cargo build`) or
//! `$ACLMEM_ASCENDCL`.

use aclmem_tests::run_checked_program;

#[test]
fn a_cxx_caller_runs_a_paged_attention_through_atbs_virtual_tables() {
    run_checked_program("atb_abi.cpp");
}
