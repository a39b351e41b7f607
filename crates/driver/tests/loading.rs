//! Loading failures are typed errors that say what was tried; nothing here
//! panics.

use std::path::PathBuf;

use aclmem_driver::{AscendCl, LoadError, Policy, SYMBOLS};

/// A shared library that certainly exists and certainly is not ACL: the C
/// library this test binary itself runs on.
fn libc_path() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("Linux /proc");
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so") || p.contains("/libc-"))
        .map(PathBuf::from)
        .expect("the test links the C library")
}

#[test]
fn a_library_without_the_acl_symbols_is_a_missing_symbol_error() {
    let libc = libc_path();
    let err = AscendCl::load(Some(&libc)).unwrap_err();
    match &err {
        LoadError::MissingSymbol { symbol, library } => {
            assert_eq!(*symbol, "aclInit", "the first required symbol");
            assert_eq!(library, &libc.display().to_string());
        }
        other => panic!("unexpected {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("does not export the required symbol `aclInit`"),
        "{text}"
    );
}

// The full search (every place tried, in order) is asserted by the CLI's
// `probe` tests, in a process whose loader path is cleared.

#[test]
fn every_symbol_has_a_policy() {
    let required: Vec<_> = SYMBOLS
        .iter()
        .filter(|(_, p)| *p == Policy::Required)
        .map(|(n, _)| *n)
        .collect();
    for core in [
        "aclInit",
        "aclrtMallocPhysical",
        "aclrtMapMem",
        "aclrtUnmapMem",
        "aclrtReserveMemAddress",
    ] {
        assert!(required.contains(&core), "{core}");
    }
    let optional: Vec<_> = SYMBOLS
        .iter()
        .filter(|(_, p)| *p == Policy::Optional)
        .map(|(n, _)| *n)
        .collect();
    // Not in older CANN headers (torch_npu's vendored 8.x ones).
    assert!(optional.contains(&"aclrtMemGetAllocationGranularity"));
    assert!(optional.contains(&"aclrtMemExportToShareableHandle"));
}
