// A physical allocation cannot be empty.
use aclmem_core::{AlignedSize, Huge};

fn main() {
    let _size = AlignedSize::<Huge>::new::<0>();
}
