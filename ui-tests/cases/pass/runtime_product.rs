// Code that learns its product at run time uses the same rules through `check`.
use aclmem_core::{Location, MemAttr, Product, RawPhysicalMemProp, RunMode, check};

fn main() {
    let product = Product::from_soc_name("Ascend910_9391").unwrap();
    assert!(check(product, RunMode::Ep, Location::Device, MemAttr::MemP2pHuge1G).is_ok());
    let (raw, _) = RawPhysicalMemProp::new_checked(
        product,
        RunMode::Ep,
        Location::Device,
        0,
        MemAttr::HbmMemHuge,
    )
    .unwrap();
    assert_eq!(raw.mem_attr, 4);
}
