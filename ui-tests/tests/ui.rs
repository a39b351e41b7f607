//! Compile-fail and compile-pass cases. Both kinds live in one `TestCases`
//! so that trybuild runs `cargo build` rather than `cargo check`: the
//! `AlignedSize` constant checks are post-monomorphization errors that
//! `cargo check` does not report.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("cases/fail/*.rs");
    t.pass("cases/pass/*.rs");
}
