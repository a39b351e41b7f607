// Ascend RC form: host memory through the physical-memory API is refused too.
use aclmem_core::{Atlas200IA2, DdrHuge, Host, PhysicalMemProp, Rc};

fn main() {
    let _prop = PhysicalMemProp::<Atlas200IA2<Rc>, Host, DdrHuge>::on_host();
}
