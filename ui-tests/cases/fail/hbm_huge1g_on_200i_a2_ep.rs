// Atlas 200I/500 A2 in EP form has the API, but no 1 GiB pages.
use aclmem_core::{Atlas200IA2, Device, Ep, HbmHuge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<Atlas200IA2<Ep>, Device, HbmHuge1G>::on_device(0);
}
