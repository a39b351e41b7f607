//! `docs/extending.md`, kept true. The table of releases in `cann.rs` has
//! a `#[cfg(test)]` row, CANN 9.9, that exists only in this crate's unit
//! tests; no `match`, list or other table mentions it. Everything below
//! must pick it up from the row alone: if one of them needed a hand-written
//! arm, this crate's tests would not compile or these would fail.

use std::string::ToString;

use crate::matrix::{Markdown, Matrix};
use crate::*;

const FAKE: CannVersion = CannVersion::V9_9;

#[test]
fn the_row_is_a_release() {
    assert_eq!(CannVersion::ALL.last(), Some(&FAKE));
    assert_eq!(CannVersion::NEWEST, FAKE);
    assert_eq!(CannVersion::COUNT, CannVersion::ALL.len());
    // The default is the row marked `@default`, not the newest.
    assert_eq!(CannVersion::DEFAULT, CannVersion::V9_0);
    assert_eq!(FAKE.id(), "9.9");
    assert_eq!(FAKE.release(), "9.9.0");
    assert_eq!(FAKE.marker_name(), "Cann9_9");
    assert_eq!(FAKE.acl_interface(), (1, 99, 0));
    assert_eq!(FAKE.expected_address(), ExpectedAddress::Window16To24TiB);
    assert!(FAKE.granularity_answers(MemAttr::DdrMemHuge));
    assert!(FAKE > CannVersion::V9_1);
}

#[test]
fn parsing_and_help_text_list_it() {
    for text in ["9.9", "9.9.0", "9.9.RC1", "9.9.0-beta.1"] {
        assert_eq!(CannVersion::parse(text), Ok(FAKE), "{text}");
    }
    assert_eq!(CannVersion::for_installed("9.9.1"), Some(FAKE));
    assert_eq!(CannVersion::for_installed("10.0.0"), Some(FAKE));
    // `--cann`'s help and every "expected one of" message are built from
    // these.
    assert!(
        CannVersion::LIST.ends_with("9.1, 9.9"),
        "{}",
        CannVersion::LIST
    );
    assert!(CannVersion::EXPECTED.ends_with("9.1 or 9.9"));
    assert!(UnknownCannVersion.to_string().contains("9.9"));
}

#[test]
fn the_generated_matrix_has_its_table() {
    let md = Markdown.to_string();
    assert!(md.contains("\n## CANN 9.9\n"), "no table for 9.9");
    assert!(md.contains("9.9 = 9.9.0 (test only)"));
    assert_eq!(md.matches("\n## CANN ").count(), CannVersion::COUNT);
    let table = Matrix::of(FAKE).table().to_string();
    assert!(table.starts_with("CANN 9.9 rules"));
    // No gate after 9.0: the new release allows what 9.0 allows.
    let newest: std::vec::Vec<_> = Matrix::of(FAKE).cells().map(|c| c.result).collect();
    let before: std::vec::Vec<_> = Matrix::of(CannVersion::V9_0)
        .cells()
        .map(|c| c.result)
        .collect();
    assert_eq!(newest, before);
    assert!(newest.iter().any(Result::is_ok) && newest.iter().any(Result::is_err));
}

#[test]
fn the_types_know_it() {
    assert_eq!(<Cann9_9 as CannType>::VERSION, FAKE);
    // The order: a bound on 9.0 holds for 9.9, and so does every gate.
    fn newest<V: AtLeast<Cann9_0>>() -> PhysicalMemProp<AtlasA2<V>, HostNuma, DdrHuge> {
        PhysicalMemProp::on_numa_node(0)
    }
    assert_eq!(newest::<Cann9_9>().location_id(), 0);
    assert_eq!(
        PhysicalMemProp::<AtlasA3<Cann9_9>, Device, P2pHuge1G>::VERDICT,
        Verdict::AllowedIfDeviceConfirms
    );
    // Dispatch from the value reaches the marker.
    struct Name;
    impl ProductVisitor for Name {
        type Output = &'static str;
        fn visit<P: ProductType>(self) -> &'static str {
            core::any::type_name::<P>()
        }
    }
    let name = dispatch(Product::AtlasA2, RunMode::Ep, FAKE, Name).unwrap();
    assert!(name.ends_with("Cann9_9>"), "{name}");
}
