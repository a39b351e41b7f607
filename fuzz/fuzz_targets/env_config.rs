//! The `ACLMEM_EMU_*` parser on arbitrary values: never panics; what it
//! accepts is a valid configuration; sizes it formats parse back.
#![no_main]

use aclmem_emu::{EmuConfig, parse_size};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    values: Vec<(u8, String)>,
    size: String,
    number: u64,
}

const NAMES: [&str; 7] = [
    "ACLMEM_EMU_SOC",
    "ACLMEM_EMU_DEVICES",
    "ACLMEM_EMU_HBM",
    "ACLMEM_EMU_HOST",
    "ACLMEM_EMU_RUN_MODE",
    "ACLMEM_EMU_CANN",
    "ACLMEM_EMU_MACHINE",
];

fuzz_target!(|i: Input| {
    let get = |name: &str| {
        i.values
            .iter()
            .rev()
            .find(|(k, _)| NAMES[*k as usize % NAMES.len()] == name)
            .map(|(_, v)| v.clone())
    };
    match EmuConfig::from_env_with(get) {
        Ok(config) => {
            assert!(config.validate().is_ok(), "accepted an invalid {config:?}");
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    let _ = parse_size(&i.size);
    let n = i.number as usize;
    if n > 0 {
        assert_eq!(parse_size(&n.to_string()), Ok(n));
    }
});
