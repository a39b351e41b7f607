// A 3 MiB constant is not a multiple of the 2 MiB granularity.
use aclmem_core::{AlignedSize, HbmHuge, MIB};

fn main() {
    let _size = AlignedSize::<HbmHuge>::new::<{ 3 * MIB }>();
}
