// RC form and an attribute of a later release: the RC form is reported, as
// `check` reports it (Denial::RcForm), since no release changes it.
use aclmem_core::{Atlas200IA2, Cann8_3, Device, Huge, PhysicalMemProp, Rc};

fn main() {
    let _prop = PhysicalMemProp::<Atlas200IA2<Rc, Cann8_3>, Device, Huge>::on_device(0);
}
