// Products are a closed set: a new one cannot be made up outside aclmem-core.
use aclmem_core::{Product, ProductType, RunMode};

#[derive(Clone, Copy, Default)]
struct MyBoard;

impl ProductType for MyBoard {
    type Cann = aclmem_core::Cann9_0;
    const PRODUCT: Product = Product::AtlasA2;
    const RUN_MODE: RunMode = RunMode::Ep;
}

fn main() {}
