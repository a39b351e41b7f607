// 1 GiB HBM pages are product-gated: not on the Atlas training series. The
// error names the rule and lists no other attributes.
use aclmem_core::{AtlasTraining, Device, HbmHuge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasTraining, Device, HbmHuge1G>::on_device(0);
}
