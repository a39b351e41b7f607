//! Tests of `library`.

use super::*;

#[test]
fn the_marker_is_found_anywhere_in_a_file_and_only_there() {
    let dir = std::env::temp_dir().join(format!("aclmem-driver-marker-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let with = dir.join("with.so");
    let mut bytes = vec![0u8; 1 << 20];
    bytes[700_001..700_001 + EMULATOR_MARKER.len()].copy_from_slice(EMULATOR_MARKER);
    std::fs::write(&with, &bytes).unwrap();
    let without = dir.join("without.so");
    // The marker cut short by one byte, at the very end.
    let cut = &EMULATOR_MARKER[..EMULATOR_MARKER.len() - 1];
    bytes[700_001..700_001 + EMULATOR_MARKER.len()].fill(0);
    let end = bytes.len() - cut.len();
    bytes[end..].copy_from_slice(cut);
    std::fs::write(&without, &bytes).unwrap();
    assert!(contains_marker(&with).unwrap());
    assert!(!contains_marker(&without).unwrap());
    assert!(contains_marker(&dir.join("missing.so")).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
