//! The memory chapter by theme (`MEMORY_THEMES`) names each function once,
//! and each is in the catalogue.

use std::collections::BTreeSet;

use aclmem_sys::catalogue::{MEMORY_THEMES, entries};

#[test]
fn every_memory_function_is_in_one_theme_and_in_the_catalogue() {
    let names: Vec<&str> = MEMORY_THEMES
        .iter()
        .flat_map(|(_, _, f)| f.iter().copied())
        .collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "a function in two themes");
    let missing: Vec<&&str> = unique
        .iter()
        .filter(|n| !entries().any(|e| e.name == **n))
        .collect();
    assert!(missing.is_empty(), "not in the catalogue: {missing:?}");
}
