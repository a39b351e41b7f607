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

/// The emulated library `cargo build` puts beside the test executables
/// (`$ACLMEM_ASCENDCL` when set, as `cargo xtask ci` does).
fn emulated_library() -> PathBuf {
    let lib = std::env::var_os("ACLMEM_ASCENDCL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let exe = std::env::current_exe().unwrap();
            exe.parent()
                .unwrap()
                .parent()
                .unwrap()
                .join("libascendcl.so")
        });
    assert!(
        lib.exists(),
        "{} missing: run `cargo build` first (`cargo xtask ci` does)",
        lib.display()
    );
    lib
}

#[test]
fn the_emulated_library_is_told_from_its_file() {
    let lib = emulated_library();
    let cl = AscendCl::load(Some(&lib)).unwrap();
    let file = cl.file().expect("dladdr knows the library");
    assert_eq!(file, std::fs::canonicalize(&lib).unwrap());
    let emulated = cl.emulated().expect("aclmem's emulator");
    let machine = std::env::var("ACLMEM_EMU_MACHINE").unwrap_or_default();
    let want = if machine.is_empty() {
        "default"
    } else {
        machine.as_str()
    };
    assert_eq!(emulated.machine, want);
    // The C library exports ACL's symbols' opposite: loaded by name it is
    // no `AscendCl`, but its file is readable and holds no marker.
    let libc = std::fs::read(libc_path()).unwrap();
    assert!(
        !libc
            .windows(aclmem_driver::EMULATOR_MARKER.len())
            .any(|w| w == aclmem_driver::EMULATOR_MARKER)
    );
}
