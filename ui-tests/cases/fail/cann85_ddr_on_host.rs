// The host-only DDR_* attributes are documented from CANN 9.0.
use aclmem_core::{AtlasA2, Cann8_5, DdrHuge, Host, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2<Cann8_5>, Host, DdrHuge>::on_host();
}
