//! What the test files `cli.rs` and `matrix.rs` share.

#![allow(dead_code, unused_imports)]

pub use std::process::Command;

pub use aclmem_tests::{through_test_runner, under_test_runner};

/// The `aclmem` binary, started through `$ACLMEM_TEST_RUNNER` when the
/// tests themselves run under an emulator (`cargo xtask cross`).
pub fn bin() -> Command {
    through_test_runner(env!("CARGO_BIN_EXE_aclmem"))
}

/// Cells of one platform's grid, and of the whole matrix of one release,
/// from the tables.
pub const PER_PLATFORM: usize =
    aclmem_core::Location::ALL.len() * aclmem_core::MemAttr::ALLOCATABLE.len();
pub const CELLS: usize = aclmem_core::PLATFORMS.len() * PER_PLATFORM;

pub fn aclmem(args: &[&str]) -> (bool, String) {
    let out = bin().args(args).output().expect("aclmem runs");
    (
        out.status.success(),
        String::from_utf8(out.stdout).expect("UTF-8"),
    )
}

pub fn json_rows(args: &[&str]) -> Vec<serde_json::Value> {
    let (ok, stdout) = aclmem(args);
    assert!(ok);
    serde_json::from_str(&stdout).expect("valid JSON")
}

pub fn find<'a>(
    rows: &'a [serde_json::Value],
    product: &str,
    mode: &str,
    loc: &str,
    attr: &str,
) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| {
            r["product"] == product
                && r["run_mode"] == mode
                && r["location"] == loc
                && r["attribute"] == attr
        })
        .unwrap_or_else(|| panic!("no row {product}/{mode}/{loc}/{attr}"))
}
