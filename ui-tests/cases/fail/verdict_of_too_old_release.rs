// The verdict of a combination the targeted release does not have yet is
// an error that names the release the product needs (A3 counts from 8.2).
use aclmem_core::{AtlasA3, Cann8_1, Device, HbmNormal, PhysicalMemProp};

fn main() {
    let _v = PhysicalMemProp::<AtlasA3<Cann8_1>, Device, HbmNormal>::VERDICT;
}
