//! Property tests of the run-time helpers.

use aclmem_core::*;
use proptest::prelude::*;

proptest! {
    #[test]
    fn round_up_is_the_least_aligned_size_not_below(bytes in 1usize..(1usize << 48), shift in 12u32..31) {
        let g = 1usize << shift;
        let r = round_up(bytes, g).unwrap();
        prop_assert!(r >= bytes);
        prop_assert!(r - bytes < g);
        prop_assert!(is_aligned(r, g));
    }

    #[test]
    fn raw_prop_validation_agrees_with_check(
        p in 0usize..Product::ALL.len(), rc in any::<bool>(), v in 0usize..CannVersion::COUNT, loc in 0u32..6, attr in 0u32..20,
        id in any::<u32>(), handle in 0u32..3, reserve in prop_oneof![Just(0u64), any::<u64>()],
    ) {
        let product = Product::ALL[p];
        let run_mode = if rc { RunMode::Rc } else { RunMode::Ep };
        let cann = CannVersion::ALL[v];
        let raw = RawPhysicalMemProp {
            handle_type: handle,
            allocation_type: 0,
            mem_attr: attr,
            location: RawMemLocation { id, type_: loc },
            reserve,
        };
        let got = raw.validate(product, run_mode, cann);
        match check_raw(product, run_mode, cann, loc, attr) {
            Err(d) => prop_assert_eq!(got, Err(d.code())),
            Ok(_) if handle != 0 || reserve != 0 => prop_assert_eq!(got, Err(AclError::INVALID_PARAM)),
            Ok(v) => prop_assert_eq!(got.map(|p| p.verdict), Ok(v)),
        }
    }
}

/// A release string of the documented forms, for a modelled line, in a
/// random ASCII case: `8.3`, `8.3.RC1`, `8.0.0`, with an optional
/// pre-release (`.alpha002`, `-beta.1`, `.beta1`).
fn release_string() -> impl Strategy<Value = (CannVersion, String)> {
    let patch = prop_oneof![
        Just(String::new()),
        (1u32..20).prop_map(|n| format!(".RC{n}")),
        (0u32..20).prop_map(|n| format!(".{n}")),
    ];
    let pre = prop_oneof![
        Just(String::new()),
        (
            prop_oneof![Just("."), Just("-")],
            prop_oneof![Just("alpha"), Just("beta")],
            prop_oneof![Just(""), Just(".")],
            "[0-9]{1,3}"
        )
            .prop_map(|(sep, word, dot, n)| format!("{sep}{word}{dot}{n}")),
    ];
    (
        prop::sample::select(CannVersion::ALL.to_vec()),
        patch,
        pre,
        any::<u64>(),
    )
        .prop_map(|(v, patch, pre, case)| {
            // A pre-release belongs to a release, not to the bare line.
            let pre = if patch.is_empty() { String::new() } else { pre };
            let text: String = format!("{}{patch}{pre}", v.id())
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if case >> (i % 64) & 1 == 1 {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect();
            (v, text)
        })
}

proptest! {
    #[test]
    fn documented_release_strings_parse((v, text) in release_string()) {
        prop_assert_eq!(CannVersion::parse(&text), Ok(v));
        prop_assert_eq!(text.parse::<CannVersion>(), Ok(v));
        prop_assert_eq!(CannVersion::for_installed(&text), Some(v));
    }

    #[test]
    fn trailing_text_is_refused(
        (_, text) in release_string(),
        junk in "[^0-9A-Za-z.\\-\\s][^\\s]{0,8}|[ \\t]+[^\\s]{1,8}",
    ) {
        let bad = format!("{text}{junk}");
        prop_assert_eq!(CannVersion::parse(&bad), Err(UnknownCannVersion), "{:?}", bad);
        prop_assert_eq!(CannVersion::for_installed(&bad), None, "{:?}", bad);
    }

    #[test]
    fn signs_and_leading_zeros_are_refused((_, text) in release_string(), sign in "[+\\-0]") {
        let bad = format!("{sign}{text}");
        prop_assert_eq!(CannVersion::parse(&bad), Err(UnknownCannVersion), "{:?}", bad);
        let (major, rest) = text.split_once('.').unwrap();
        let bad = format!("{major}.0{rest}");
        prop_assert_eq!(CannVersion::parse(&bad), Err(UnknownCannVersion), "{:?}", bad);
    }

    #[test]
    fn arbitrary_text_is_a_release_or_refused(text in "\\PC{0,16}") {
        match CannVersion::parse(&text) {
            Ok(v) => prop_assert!(text.trim().starts_with(v.id()), "{:?} -> {:?}", text, v),
            Err(e) => prop_assert_eq!(e, UnknownCannVersion),
        }
    }
}

proptest! {
    #[test]
    fn names_parse_or_suggest_a_name_that_parses(text in "\\PC{0,24}|[A-Za-z0-9_ -]{0,24}") {
        fn check_kind<T: std::str::FromStr<Err = UnknownName> + PartialEq + std::fmt::Debug>(
            text: &str,
        ) -> Result<(), TestCaseError> {
            if let Err(e) = text.parse::<T>() {
                if let Some(s) = e.suggestion() {
                    prop_assert!(s.parse::<T>().is_ok(), "{:?} suggests {:?}", text, s);
                }
                prop_assert!(e.to_string().starts_with("unknown "));
            }
            Ok(())
        }
        check_kind::<Product>(&text)?;
        check_kind::<Location>(&text)?;
        check_kind::<MemAttr>(&text)?;
        check_kind::<RunMode>(&text)?;
    }
}
