//! The trybuild suite lives in `tests/ui.rs`; the cases are under `cases/`.
//!
//! Diagnostics differ between compiler versions, so the suite is meant to run
//! on the pinned toolchain (`rust-toolchain.toml`). Regenerate the expected
//! output with `TRYBUILD=overwrite cargo test -p aclmem-ui-tests` and review
//! every changed `.stderr`.
