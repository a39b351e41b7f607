// Generic code can require a release; older targets are refused.
use aclmem_core::{AtLeast, AtlasA2, Cann8_3, Cann8_5, ProductType};

fn needs_85<P: ProductType<Cann: AtLeast<Cann8_5>>>() {}

fn main() {
    needs_85::<AtlasA2<Cann8_3>>();
}
