//! `RawPhysicalMemProp::validate` and `check_raw` on arbitrary values: they
//! never panic, they agree with each other, and a valid prop is exactly a
//! combination `check` allows.
#![no_main]

use aclmem_core::{
    CannVersion, Location, MemAttr, Product, RawMemLocation, RawPhysicalMemProp, RunMode, check,
    check_raw,
};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    product: u8,
    rc: bool,
    cann: u8,
    handle_type: u32,
    allocation_type: u32,
    mem_attr: u32,
    id: u32,
    location: u32,
    reserve: u64,
}

fuzz_target!(|i: Input| {
    let product = Product::ALL[i.product as usize % Product::ALL.len()];
    let run_mode = if i.rc { RunMode::Rc } else { RunMode::Ep };
    let cann = CannVersion::ALL[i.cann as usize % CannVersion::ALL.len()];
    let prop = RawPhysicalMemProp {
        handle_type: i.handle_type,
        allocation_type: i.allocation_type,
        mem_attr: i.mem_attr,
        location: RawMemLocation {
            id: i.id,
            type_: i.location,
        },
        reserve: i.reserve,
    };
    let valid = prop.validate(product, run_mode, cann);
    let raw = check_raw(product, run_mode, cann, i.location, i.mem_attr);
    if let Ok(v) = valid {
        // A valid prop is an allowed combination, with the same verdict.
        assert_eq!(raw.ok(), Some(v.verdict));
        assert_eq!(
            check(product, run_mode, cann, v.location, v.attr),
            Ok(v.verdict)
        );
        assert_eq!(v.attr.raw(), i.mem_attr);
        assert_eq!(v.location.raw(), i.location);
    }
    if let (Some(l), Some(a), true) = (
        Location::from_raw(i.location),
        MemAttr::from_raw(i.mem_attr),
        raw.is_ok(),
    ) {
        assert_eq!(raw, check(product, run_mode, cann, l, a));
    }
    if let Err(d) = raw {
        // Every denial has a code and a rule to show.
        assert_ne!(d.code().code(), 0);
        assert!(!d.rule().is_empty());
    }
});
