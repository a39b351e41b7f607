//! Property tests of the run-time helpers.

use aclmem_core::*;
use proptest::prelude::*;

proptest! {
    #[test]
    fn round_up_is_the_least_aligned_size_not_below(bytes in 1usize..(1usize << 48), shift in 12u32..31) {
        let g = 1usize << shift;
        let r = round_up(bytes, g).unwrap();
        prop_assert!(r >= bytes);
        prop_assert!(r - bytes < g);
        prop_assert!(is_aligned(r, g));
    }

    #[test]
    fn raw_prop_validation_agrees_with_check(
        p in 0usize..7, rc in any::<bool>(), v in 0usize..6, loc in 0u32..6, attr in 0u32..20,
        id in any::<u32>(), handle in 0u32..3, reserve in prop_oneof![Just(0u64), any::<u64>()],
    ) {
        let product = Product::ALL[p];
        let run_mode = if rc { RunMode::Rc } else { RunMode::Ep };
        let cann = CannVersion::ALL[v];
        let raw = RawPhysicalMemProp {
            handle_type: handle,
            allocation_type: 0,
            mem_attr: attr,
            location: RawMemLocation { id, type_: loc },
            reserve,
        };
        let got = raw.validate(product, run_mode, cann);
        match check_raw(product, run_mode, cann, loc, attr) {
            Err(d) => prop_assert_eq!(got, Err(d.code())),
            Ok(_) if handle != 0 || reserve != 0 => prop_assert_eq!(got, Err(AclError::INVALID_PARAM)),
            Ok(v) => prop_assert_eq!(got.map(|p| p.verdict), Ok(v)),
        }
    }
}
