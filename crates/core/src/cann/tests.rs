//! Tests of `cann`.

use super::*;

#[test]
fn release_strings_parse_back() {
    for v in CannVersion::ALL {
        assert_eq!(CannVersion::parse(v.release()), Ok(v));
        assert_eq!(CannVersion::parse(v.id()), Ok(v));
        assert_eq!(v.id().parse::<CannVersion>(), Ok(v));
    }
    for (text, v) in [
        ("8.0.RC2", CannVersion::V8_0),
        ("8.0.RC1", CannVersion::V8_0),
        ("8.1.RC1.beta1", CannVersion::V8_1),
        ("8.2.RC1.alpha002", CannVersion::V8_2),
        ("8.3.RC1.alpha003", CannVersion::V8_3),
        ("8.5.0-beta.1", CannVersion::V8_5),
        ("9.0.0-beta.1", CannVersion::V9_0),
        ("9.1.0-beta.3", CannVersion::V9_1),
        (" 8.3.rc1 ", CannVersion::V8_3),
    ] {
        assert_eq!(CannVersion::parse(text), Ok(v), "{text}");
    }
}

#[test]
fn anything_else_is_refused() {
    for bad in [
        "",
        "8",
        "8.",
        "8.4",
        "7.0.0",
        "9.2",
        "x.y",
        "8.3x",
        "eight",
        "8.3.garbage",
        "9.0.0 and more",
        "8.5.💥",
        "8.3.RC1; rm -rf",
        "8.0.-",
        "8.3-garbage",
        "+8.3",
        "8.03",
        "08.3",
        "8.3.RC",
        "8.3.RC01",
        "8.3.00",
        "8.3.RC1.gamma1",
        "8.3.RC1.alpha",
        "8.3.RC1-beta.1.2",
        "8.3..RC1",
        "8.3.RC1.",
    ] {
        assert_eq!(CannVersion::parse(bad), Err(UnknownCannVersion), "{bad:?}");
        assert_eq!(CannVersion::for_installed(bad), None, "{bad:?}");
    }
}

#[test]
fn newer_installations_use_the_newest_rules() {
    let newest = CannVersion::NEWEST;
    assert_eq!(CannVersion::for_installed("99.2.0"), Some(newest));
    assert_eq!(CannVersion::for_installed("100.0.RC1"), Some(newest));
    assert_eq!(
        CannVersion::for_installed("8.3.RC1"),
        Some(CannVersion::V8_3)
    );
    assert_eq!(CannVersion::for_installed("7.0.0"), None);
    assert_eq!(CannVersion::for_installed("8.4.0"), None);
}

#[test]
fn versions_are_ordered_by_release() {
    assert!(CannVersion::ALL.windows(2).all(|w| w[0] < w[1]));
    assert!(
        CannVersion::ALL
            .windows(2)
            .all(|w| w[0].major_minor() < w[1].major_minor())
    );
    assert_eq!(CannVersion::DEFAULT, CannVersion::V9_0);
    for (i, v) in CannVersion::ALL.into_iter().enumerate() {
        assert_eq!(v as usize, i);
        assert_eq!(RELEASES[i].marker, v.marker_name());
    }
}

#[test]
fn the_list_is_every_id() {
    let ids: std::vec::Vec<_> = CannVersion::ALL.iter().map(|v| v.id()).collect();
    assert_eq!(CannVersion::LIST, ids.join(", "));
    let (init, last) = ids.split_at(ids.len() - 1);
    assert_eq!(
        CannVersion::EXPECTED,
        std::format!(
            "a CANN release aclmem models: {} or {}",
            init.join(", "),
            last[0]
        )
    );
}

#[test]
fn the_unknown_version_message_lists_the_releases() {
    let text = std::format!("{UnknownCannVersion}");
    for v in CannVersion::ALL {
        assert!(text.contains(v.id()), "{text}");
    }
}
