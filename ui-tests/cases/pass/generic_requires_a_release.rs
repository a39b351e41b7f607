// Generic code states the release it needs and the capability it uses.
use aclmem_core::{
    AtLeast, AtlasA2, AtlasA3, Cann8_5, Cann9_0, Device, Huge, PhysicalMemProp, ProductType, Supports,
};

fn generic_huge<P>() -> PhysicalMemProp<P, Device, Huge>
where
    P: ProductType<Cann: AtLeast<Cann8_5>> + Supports<Device, Huge>,
{
    PhysicalMemProp::on_device(0)
}

fn main() {
    let _ = generic_huge::<AtlasA2<Cann8_5>>();
    let _ = generic_huge::<AtlasA3<Cann9_0>>();
    let _ = generic_huge::<AtlasA2>();
}
