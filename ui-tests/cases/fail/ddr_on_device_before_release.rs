// A host-only attribute on the device, in a release before the attribute:
// the location rule is reported first, as `check` reports it
// (Denial::HostOnlyAttr), then the release.
use aclmem_core::{AtlasA2, Cann8_3, DdrHuge, Device, PhysicalMemProp};

fn main() {
    let _prop = PhysicalMemProp::<AtlasA2<Cann8_3>, Device, DdrHuge>::on_device(0);
}
