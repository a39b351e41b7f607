// An A2 on CANN 8.3: the HBM attributes on the device, 1 GiB pages included.
use aclmem_core::{AlignedSize, AtlasA2, Cann8_3, Device, HbmHuge, HbmHuge1G, PhysicalMemProp, GIB, MIB};

type Npu = AtlasA2<Cann8_3>;

fn main() {
    let small = PhysicalMemProp::<Npu, Device, HbmHuge>::on_device(0);
    let big = PhysicalMemProp::<Npu, Device, HbmHuge1G>::on_device(0);
    assert_eq!(small.raw().mem_attr, 4);
    assert_eq!(big.raw().mem_attr, 10);
    let _sizes = (AlignedSize::<HbmHuge>::new::<{ 2 * MIB }>(), AlignedSize::<HbmHuge1G>::new::<GIB>());
}
