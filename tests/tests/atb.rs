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

use std::path::Path;

use aclmem_tests::{compile_cxx, through_test_runner};

#[test]
fn a_cxx_caller_runs_a_paged_attention_through_atbs_virtual_tables() {
    let name = "atb_abi";
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("programs/{name}.cpp"));
    let exe = compile_cxx(&src, name, &[]);
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
