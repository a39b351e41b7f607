// Ascend RC form: no physical memory at all, even the most ordinary kind.
use aclmem_core::{Atlas200IA2, Device, HbmHuge, PhysicalMemProp, Rc};

fn main() {
    let _prop = PhysicalMemProp::<Atlas200IA2<Rc>, Device, HbmHuge>::on_device(0);
}
