// 1 GiB pages need 1 GiB multiples; 2 MiB is not enough.
use aclmem_core::{AlignedSize, HbmHuge1G, MIB};

fn main() {
    let _size = AlignedSize::<HbmHuge1G>::new::<{ 2 * MIB }>();
}
