//! The two projections of the rules table agree: for every product × run
//! mode × location × attribute, the compiler accepts `P: Supports<L, A>`
//! exactly when the run-time `check` allows it.

use aclmem_core::*;
use impls::impls;

struct Combo {
    marker: &'static str,
    product: Product,
    run_mode: RunMode,
    cann: CannVersion,
    location: Location,
    attr: MemAttr,
    compiles: bool,
}

macro_rules! visit {
    (versions [$($v:ident),*]) => {{
        let mut out = Vec::new();
        $( visit!(@v out, $v); )*
        out
    }};
    (@v $out:ident, $v:ident) => {
        visit!(@products $out, [
            Atlas350<$v>, AtlasA3<$v>, AtlasA2<$v>, AtlasTraining<$v>, AtlasInference<$v>,
            Atlas200IA2<Ep, $v>, Atlas200IA2<Rc, $v>, Atlas200_300_500<$v>
        ]);
    };
    (@products $out:ident, [$($p:ty),*]) => {
        $( visit!(@p $out, $p, [Device, Host, HostNuma]); )*
    };
    (@p $out:ident, $p:ty, [$($l:ty),*]) => {
        $( visit!(@l $out, $p, $l, [
            DdrHuge, DdrNormal, HbmHuge, HbmNormal, DdrP2pHuge, DdrP2pNormal, HbmHuge1G,
            Normal, Huge, Huge1G, P2pNormal, P2pHuge, P2pHuge1G
        ]); )*
    };
    (@l $out:ident, $p:ty, $l:ty, [$($a:ty),*]) => {
        $(
            $out.push(Combo {
                marker: stringify!($p),
                product: <$p as ProductType>::PRODUCT,
                run_mode: <$p as ProductType>::RUN_MODE,
                cann: <$p as ProductType>::CANN,
                location: <$l as LocationType>::LOCATION,
                attr: <$a as AttrType>::ATTR,
                compiles: impls!($p: Supports<$l, $a>),
            });
        )*
    };
}

/// Cells of one platform's grid, and of one release's matrix.
const PER_PLATFORM: usize = Location::ALL.len() * MemAttr::ALLOCATABLE.len();
const PER_RELEASE: usize = PLATFORMS.len() * PER_PLATFORM;

fn all_combos() -> Vec<Combo> {
    let combos = visit!(versions [Cann8_0, Cann8_1, Cann8_2, Cann8_3, Cann8_5, Cann9_0, Cann9_1]);
    // The lists above are written out (each marker is a type); they must
    // be the tables' lists, or a new release, location or attribute would
    // go unvisited.
    let mut releases: Vec<CannVersion> = combos.iter().map(|c| c.cann).collect();
    releases.dedup();
    assert_eq!(releases, CannVersion::ALL, "visit every release");
    let mut attrs: Vec<MemAttr> = combos
        .iter()
        .take(MemAttr::ALLOCATABLE.len())
        .map(|c| c.attr)
        .collect();
    attrs.sort();
    assert_eq!(attrs, MemAttr::ALLOCATABLE, "visit every attribute");
    let locations: Vec<Location> = combos
        .iter()
        .step_by(MemAttr::ALLOCATABLE.len())
        .take(Location::ALL.len())
        .map(|c| c.location)
        .collect();
    assert_eq!(locations, Location::ALL, "visit every location");
    combos
}

#[test]
fn every_combination_compiles_exactly_when_check_allows_it() {
    let combos = all_combos();
    assert_eq!(
        combos.len(),
        PER_RELEASE * CannVersion::COUNT,
        "platforms x locations x attributes, in every CANN version"
    );
    let mut disagreements = Vec::new();
    for c in &combos {
        let runtime = check(c.product, c.run_mode, c.cann, c.location, c.attr);
        if runtime.is_ok() != c.compiles {
            disagreements.push(format!(
                "{} / {} / {}: compiles={} check={:?}",
                c.marker, c.location, c.attr, c.compiles, runtime
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "projections disagree:\n{}",
        disagreements.join("\n")
    );
    // Both outcomes occur in every version, so the comparison above is not
    // vacuous, and the versions really differ.
    let mut allowed_per_version = Vec::new();
    for v in CannVersion::ALL {
        let allowed = combos.iter().filter(|c| c.cann == v && c.compiles).count();
        assert!(allowed > 0 && allowed < PER_RELEASE, "{v}: {allowed}");
        allowed_per_version.push(allowed);
    }
    assert!(
        allowed_per_version.windows(2).all(|w| w[0] <= w[1]),
        "no release takes a combination away: {allowed_per_version:?}"
    );
    assert_eq!(allowed_per_version.last(), Some(&162), "CANN 9.0");
}

#[test]
fn the_visited_markers_are_exactly_the_platforms() {
    let combos = all_combos();
    for (i, platform) in PLATFORMS.iter().enumerate() {
        let c = &combos[i * PER_PLATFORM];
        assert_eq!(
            (c.product, c.run_mode),
            (platform.product, platform.run_mode)
        );
        assert_eq!(
            c.marker
                .replace(' ', "")
                .replace(",Cann8_0>", ">")
                .replace("<Cann8_0>", ""),
            platform.marker
        );
    }
    assert_eq!(PLATFORMS.len(), 8);
}

#[test]
fn releases_add_what_their_documentation_says() {
    use CannVersion::*;
    use Location::*;
    use MemAttr::*;
    let a2 = |v, l, a| check(Product::AtlasA2, RunMode::Ep, v, l, a);
    // 8.0: only the two HBM attributes, only on the device.
    assert_eq!(a2(V8_0, Device, HbmMemHuge), Ok(Verdict::Allowed));
    assert_eq!(a2(V8_0, Device, HbmMemNormal), Ok(Verdict::Allowed));
    for a in [HbmMemHuge1G, MemHuge, MemNormal] {
        assert_eq!(
            a2(V8_0, Device, a).unwrap_err().code(),
            AclError::INVALID_PARAM
        );
    }
    for l in [Host, HostNuma] {
        for a in MemAttr::ALLOCATABLE {
            assert!(a2(V8_0, l, a).is_err(), "{l} {a}");
        }
    }
    // 8.1 – 8.3: 1 GiB HBM pages on A2; still device only.
    for v in [V8_1, V8_2, V8_3] {
        assert_eq!(a2(v, Device, HbmMemHuge1G), Ok(Verdict::Allowed));
        assert_eq!(
            a2(v, Device, MemHuge),
            Err(Denial::NeedsNewerCann {
                feature: Feature::Attr(MemHuge),
                since: V8_5,
                target: v
            })
        );
        assert_eq!(a2(v, Host, HbmMemHuge).unwrap_err().since(), Some(V8_5));
    }
    // A3 from 8.2 (UNCONFIRMED before), Atlas 350 from 9.0.
    let a3 = |v| check(Product::AtlasA3, RunMode::Ep, v, Device, HbmMemHuge);
    assert_eq!(a3(V8_1).unwrap_err().since(), Some(V8_2));
    assert_eq!(a3(V8_2), Ok(Verdict::Allowed));
    assert_eq!(
        check(Product::Atlas350, RunMode::Ep, V8_5, Device, HbmMemHuge)
            .unwrap_err()
            .code(),
        AclError::RT_FEATURE_NOT_SUPPORT
    );
    // 8.5: the ACL_MEM_* attributes and the host; not host NUMA, DDR or
    // P2P 1 GiB pages yet.
    assert_eq!(a2(V8_5, Device, MemHuge), Ok(Verdict::Allowed));
    assert_eq!(a2(V8_5, Host, HbmMemHuge), Ok(Verdict::Allowed));
    assert_eq!(a2(V8_5, HostNuma, MemHuge).unwrap_err().since(), Some(V9_0));
    assert_eq!(a2(V8_5, Host, DdrMemHuge).unwrap_err().since(), Some(V9_0));
    assert_eq!(
        check(Product::AtlasA3, RunMode::Ep, V8_5, Device, MemP2pHuge1G)
            .unwrap_err()
            .since(),
        Some(V9_0)
    );
    // 9.0: everything of the table.
    assert_eq!(a2(V9_0, HostNuma, DdrMemHuge), Ok(Verdict::Allowed));
    // A static rule wins over a version: DDR on the device is refused for
    // being host-only in every release.
    for v in CannVersion::ALL {
        assert_eq!(a2(v, Device, DdrMemHuge), Err(Denial::HostOnlyAttr));
    }
}

#[test]
fn version_denials_say_what_and_since_when() {
    let d = check(
        Product::AtlasA2,
        RunMode::Ep,
        CannVersion::V8_3,
        Location::Device,
        MemAttr::MemHuge,
    )
    .unwrap_err();
    assert_eq!(
        d.to_string(),
        "ACL_MEM_HUGE needs CANN 8.5 or later; this code targets CANN 8.3; ACL_ERROR_INVALID_PARAM = 100000"
    );
    let d = check(
        Product::AtlasA2,
        RunMode::Ep,
        CannVersion::V8_3,
        Location::Host,
        MemAttr::HbmMemHuge,
    )
    .unwrap_err();
    assert_eq!(d.code(), AclError::RT_FEATURE_NOT_SUPPORT);
    assert_eq!(d.id(), "needs-newer-cann");
}

#[test]
fn verdicts_of_the_special_rows() {
    use Verdict::*;
    assert_eq!(
        <AtlasA3 as Supports<Device, P2pHuge1G>>::VERDICT,
        AllowedIfDeviceConfirms
    );
    assert_eq!(
        <AtlasA3 as Supports<HostNuma, P2pHuge>>::VERDICT,
        SizeLimitedByPlatform
    );
    assert_eq!(
        <AtlasA3 as Supports<HostNuma, DdrP2pNormal>>::VERDICT,
        SizeLimitedByPlatform
    );
    assert_eq!(<AtlasA3 as Supports<Host, P2pHuge>>::VERDICT, Allowed);
    assert_eq!(<AtlasA3 as Supports<HostNuma, Huge>>::VERDICT, Allowed);
    assert_eq!(<AtlasA2 as Supports<HostNuma, P2pHuge>>::VERDICT, Allowed);
    assert_eq!(<AtlasA2 as Supports<Device, HbmHuge1G>>::VERDICT, Allowed);
}

#[test]
fn documented_facts_hold() {
    use Location::*;
    use MemAttr::*;
    let ep = RunMode::Ep;
    const V9: CannVersion = CannVersion::V9_0;
    // Atlas 200/300/500 and the RC form: nothing at all.
    for l in Location::ALL {
        for a in MemAttr::ALLOCATABLE {
            assert_eq!(
                check(Product::Atlas200_300_500, ep, V9, l, a),
                Err(Denial::ProductUnsupported)
            );
            assert_eq!(
                check(Product::Atlas200IA2, RunMode::Rc, V9, l, a),
                Err(Denial::RcForm)
            );
        }
    }
    // 1 GiB pages are device-only and product-gated.
    assert_eq!(
        check(Product::AtlasA2, ep, V9, Host, HbmMemHuge1G),
        Err(Denial::DeviceOnlyAttr)
    );
    assert_eq!(
        check(Product::AtlasA2, ep, V9, HostNuma, MemHuge1G),
        Err(Denial::DeviceOnlyAttr)
    );
    assert_eq!(
        check(Product::Atlas350, ep, V9, Device, HbmMemHuge1G),
        Ok(Verdict::Allowed)
    );
    assert_eq!(
        check(Product::Atlas350, ep, V9, Device, MemHuge1G),
        Err(Denial::NotOffered)
    );
    assert_eq!(
        check(Product::AtlasA2, ep, V9, Device, MemP2pHuge1G),
        Err(Denial::NotOffered)
    );
    assert_eq!(
        check(Product::AtlasTraining, ep, V9, Device, HbmMemHuge1G),
        Err(Denial::NotOffered)
    );
    assert_eq!(Denial::NotOffered.code(), AclError::RT_FEATURE_NOT_SUPPORT);
    // DDR is host-only.
    assert_eq!(
        check(Product::AtlasA2, ep, V9, Device, DdrMemHuge),
        Err(Denial::HostOnlyAttr)
    );
    assert_eq!(Denial::HostOnlyAttr.code(), AclError::INVALID_PARAM);
    assert_eq!(
        check(Product::AtlasInference, ep, V9, HostNuma, DdrMemNormal),
        Ok(Verdict::Allowed)
    );
    // Raw values without a marker type are 100000.
    for raw in [
        DdrMem,
        HbmMem,
        HbmMemP2pHuge,
        HbmMemP2pNormal,
        HbmMemP2pHuge1G,
    ] {
        assert!(!raw.is_allocatable());
        let d = check(Product::AtlasA2, ep, V9, Device, raw).unwrap_err();
        assert_eq!(d, Denial::RejectedAttr);
        assert_eq!(d.code(), AclError::INVALID_PARAM);
    }
    assert_eq!(
        check_raw(Product::AtlasA2, ep, V9, 2, 4),
        Err(Denial::RejectedLocation)
    );
    assert_eq!(
        check_raw(Product::AtlasA2, ep, V9, 1, 99),
        Err(Denial::RejectedAttr)
    );
    assert_eq!(
        check_raw(Product::AtlasA2, ep, V9, 1, 4),
        Ok(Verdict::Allowed)
    );
}

#[test]
fn raw_prop_mirrors_the_c_struct() {
    assert_eq!(core::mem::size_of::<RawPhysicalMemProp>(), 32);
    assert_eq!(core::mem::align_of::<RawPhysicalMemProp>(), 8);
    assert_eq!(core::mem::offset_of!(RawPhysicalMemProp, handle_type), 0);
    assert_eq!(
        core::mem::offset_of!(RawPhysicalMemProp, allocation_type),
        4
    );
    assert_eq!(core::mem::offset_of!(RawPhysicalMemProp, mem_attr), 8);
    assert_eq!(core::mem::offset_of!(RawPhysicalMemProp, location), 12);
    assert_eq!(core::mem::offset_of!(RawPhysicalMemProp, reserve), 24);
    assert_eq!(core::mem::size_of::<RawMemLocation>(), 8);

    let p = PhysicalMemProp::<AtlasA2, HostNuma, DdrP2pHuge>::on_numa_node(3).raw();
    assert_eq!(p.location, RawMemLocation { id: 3, type_: 4 });
    assert_eq!(p.mem_attr, 6);
    assert_eq!((p.handle_type, p.allocation_type, p.reserve), (0, 0, 0));
    let valid = p
        .validate(Product::AtlasA2, RunMode::Ep, CannVersion::V9_0)
        .unwrap();
    assert_eq!(valid.attr, MemAttr::DdrMemP2pHuge);
    assert_eq!(valid.location, Location::HostNuma);

    let mut bad = p;
    bad.reserve = 2 * MIB as u64;
    assert_eq!(
        bad.validate(Product::AtlasA2, RunMode::Ep, CannVersion::V9_0),
        Err(AclError::INVALID_PARAM)
    );
    let mut bad = p;
    bad.handle_type = 2; // ACL_MEM_HANDLE_TYPE_POSIX
    assert_eq!(
        bad.validate(Product::AtlasA2, RunMode::Ep, CannVersion::V9_0),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        p.validate(Product::Atlas200IA2, RunMode::Rc, CannVersion::V9_0),
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    );
    // Plain host memory always carries id 0.
    let (host, _) = RawPhysicalMemProp::new_checked(
        Product::AtlasA2,
        RunMode::Ep,
        CannVersion::V9_0,
        Location::Host,
        7,
        MemAttr::MemHuge,
    )
    .unwrap();
    assert_eq!(host.location.id, 0);
}

#[test]
fn soc_names_and_run_modes() {
    let cases = [
        ("Ascend910A", Product::AtlasTraining),
        ("Ascend910B", Product::AtlasTraining),
        ("Ascend910PremiumA", Product::AtlasTraining),
        ("Ascend910B1", Product::AtlasA2),
        ("Ascend910B2C", Product::AtlasA2),
        ("Ascend910B4-1", Product::AtlasA2),
        ("Ascend910_9362", Product::AtlasA3),
        ("Ascend910_9392", Product::AtlasA3),
        ("Ascend950PR_9599", Product::Atlas350),
        ("Ascend950DT_95A2", Product::Atlas350),
        ("Ascend310P1", Product::AtlasInference),
        ("Ascend310P7", Product::AtlasInference),
        ("Ascend310B1", Product::Atlas200IA2),
        ("Ascend310B4", Product::Atlas200IA2),
        ("Ascend310", Product::Atlas200_300_500),
    ];
    for (soc, product) in cases {
        assert_eq!(Product::from_soc_name(soc), Ok(product), "{soc}");
        let lower = soc.to_ascii_lowercase();
        assert_eq!(Product::from_soc_name(&lower), Ok(product), "{lower}");
    }
    for (soc, product) in SOC_NAMES {
        assert_eq!(Product::from_soc_name(soc), Ok(*product), "{soc}");
    }
    for bad in [
        "",
        "Ascend910B5",
        "Ascend950PR_",
        "Ascend950XX_1",
        "Ascend310B",
        "Ascend350_354f",
    ] {
        assert_eq!(Product::from_soc_name(bad), Err(UnknownSocName), "{bad:?}");
    }
    assert_eq!(RunMode::from_acl_run_mode(0), Some(RunMode::Rc));
    assert_eq!(RunMode::from_acl_run_mode(1), Some(RunMode::Ep));
    assert_eq!(RunMode::from_acl_run_mode(2), None);
}

#[test]
fn error_codes_keep_their_values() {
    // The codes acl_base.h and acl_rt.h define that the project names; a
    // code dropped or renumbered by mistake fails here.
    for (code, name) in [
        (100_000, "ACL_ERROR_INVALID_PARAM"),
        (100_020, "ACL_ERROR_OP_TYPE_NOT_MATCH"),
        (100_021, "ACL_ERROR_OP_INPUT_NOT_MATCH"),
        (100_022, "ACL_ERROR_OP_OUTPUT_NOT_MATCH"),
        (100_023, "ACL_ERROR_OP_ATTR_NOT_MATCH"),
        (100_024, "ACL_ERROR_OP_NOT_FOUND"),
        (100_026, "ACL_ERROR_UNSUPPORTED_DATA_TYPE"),
        (100_027, "ACL_ERROR_FORMAT_NOT_MATCH"),
        (107_002, "ACL_ERROR_RT_CONTEXT_NULL"),
        (207_000, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT"),
        (207_004, "ACL_ERROR_RT_NO_DEVICE"),
        (507_010, "ACL_ERROR_RT_LOST_HEARTBEAT"),
        (507_910, "ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED"),
        (507_911, "ACL_ERROR_HOST_MEMORY_NOT_REGISTERED"),
    ] {
        assert_eq!(AclError::from_code(code).unwrap().name(), Some(name));
    }
    assert_eq!(AclError::KNOWN.len(), 61);
    assert!(AclError::KNOWN.windows(2).all(|w| w[0] < w[1]), "ascending");
    for e in AclError::KNOWN {
        assert_eq!(AclError::from_code(e.code()), Some(*e));
        assert!(e.name().unwrap().starts_with("ACL_ERROR_"));
    }
    let unknown = AclError::from_code(123_456).unwrap();
    assert_eq!(unknown.code(), 123_456);
    assert_eq!(unknown.name(), None);
    assert_eq!(unknown.to_string(), "unknown ACL error (123456)");
    assert_eq!(
        AclError::from_code(107_999).unwrap().kind(),
        ErrorKind::InvalidParam
    );
    assert_eq!(AclError::RT_INVALID_HANDLE.kind(), ErrorKind::InvalidHandle);
    assert_eq!(AclError::check(0), Ok(()));
    assert_eq!(
        AclError::check(207_000),
        Err(AclError::RT_FEATURE_NOT_SUPPORT)
    );
}

#[test]
fn sizes() {
    assert_eq!(HbmHuge::GRANULARITY, 2 * MIB);
    assert_eq!(HbmNormal::GRANULARITY, 2 * MIB);
    assert_eq!(P2pHuge1G::GRANULARITY, GIB);
    assert_eq!(
        AlignedSize::<HbmHuge>::try_new(6 * MIB).unwrap().granules(),
        3
    );
    assert_eq!(
        AlignedSize::<HbmHuge>::try_new(0),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        AlignedSize::<Huge1G>::try_new(2 * MIB),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        AlignedSize::<Huge1G>::round_up(GIB + 1).unwrap().get(),
        2 * GIB
    );
    assert_eq!(
        AlignedSize::<Huge>::round_up(usize::MAX - 5),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(round_up(5, 3), Err(AclError::INVALID_PARAM));
}

#[test]
fn dispatch_reaches_the_marker_of_every_platform() {
    struct Mirror;
    impl ProductVisitor for Mirror {
        type Output = (Product, RunMode, CannVersion, Result<Verdict, Denial>);
        fn visit<P: ProductType>(self) -> Self::Output {
            let checked = PhysicalMemProp::<P, Device, HbmHuge1G>::checked(0).map(|(_, v)| v);
            (P::PRODUCT, P::RUN_MODE, P::CANN, checked)
        }
    }
    for p in PLATFORMS {
        for v in CannVersion::ALL {
            let (product, run_mode, cann, checked) =
                dispatch(p.product, p.run_mode, v, Mirror).unwrap();
            assert_eq!((product, run_mode, cann), (p.product, p.run_mode, v));
            assert_eq!(
                checked,
                check(
                    product,
                    run_mode,
                    v,
                    Location::Device,
                    MemAttr::HbmMemHuge1G
                )
            );
        }
    }
    assert_eq!(
        dispatch(Product::AtlasA2, RunMode::Rc, CannVersion::V9_0, Mirror).unwrap_err(),
        Denial::RcForm
    );
    let (host, _) = PhysicalMemProp::<AtlasA2, Host, DdrHuge>::checked(9).unwrap();
    assert_eq!(host.location_id(), 0);
}

/// The run-time half of one precedence of denials; the compile-time half is
/// the order of errors in `ui-tests/cases/fail/rc_form_before_release` and
/// `ddr_on_device_before_release`: the rule that no release changes comes
/// before the release gate, in both.
#[test]
fn rules_come_before_release_gates() {
    use CannVersion::V8_3;
    assert_eq!(
        check(
            Product::Atlas200IA2,
            RunMode::Rc,
            V8_3,
            Location::Device,
            MemAttr::MemHuge
        ),
        Err(Denial::RcForm)
    );
    assert_eq!(
        check(
            Product::AtlasA2,
            RunMode::Ep,
            V8_3,
            Location::Device,
            MemAttr::DdrMemHuge
        ),
        Err(Denial::HostOnlyAttr)
    );
    assert_eq!(
        check(
            Product::AtlasTraining,
            RunMode::Ep,
            V8_3,
            Location::Device,
            MemAttr::MemHuge1G
        ),
        Err(Denial::NotOffered)
    );
}
