// 1 GiB huge pages are device-only.
use aclmem_core::{AtlasA2, Host, Huge1G, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2, Host, Huge1G>::on_host();
}
