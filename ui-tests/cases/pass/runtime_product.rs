// Code that learns its product and CANN release at run time uses the same
// rules through `check`.
use aclmem_core::{CannVersion, Location, MemAttr, Product, RawPhysicalMemProp, RunMode, check};

fn main() {
    let product = Product::from_soc_name("Ascend910_9391").unwrap();
    let cann = CannVersion::parse("9.0.0").unwrap();
    assert!(check(product, RunMode::Ep, cann, Location::Device, MemAttr::MemP2pHuge1G).is_ok());
    let older = CannVersion::parse("8.5.0").unwrap();
    assert!(check(product, RunMode::Ep, older, Location::Device, MemAttr::MemP2pHuge1G).is_err());
    let (raw, _) = RawPhysicalMemProp::new_checked(
        product,
        RunMode::Ep,
        cann,
        Location::Device,
        0,
        MemAttr::HbmMemHuge,
    )
    .unwrap();
    assert_eq!(raw.mem_attr, 4);
}
