use aclmem_core::{AlignedSize, GIB, HbmHuge, HbmHuge1G, MIB, Normal};

const SEGMENT: AlignedSize<HbmHuge> = AlignedSize::new::<{ 20 * MIB }>();
const PAGE_1G: AlignedSize<HbmHuge1G> = AlignedSize::new::<GIB>();

fn main() {
    assert_eq!(SEGMENT.get(), 20 * MIB);
    assert_eq!(SEGMENT.granules(), 10);
    assert_eq!(PAGE_1G.granules(), 1);
    assert_eq!(AlignedSize::<Normal>::new::<{ 2 * MIB }>().get(), 2 * MIB);
}
