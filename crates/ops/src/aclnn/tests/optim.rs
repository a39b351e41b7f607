//! The optimizer's plans: pointwise updates of several operands, norms,
//! and lists of plans run by one executor.

use super::*;

#[test]
fn addcmul_broadcasts_its_operands_and_scalar_in_place() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[1., 2., 3., 4., 5., 6.]); // self: 2x3
    mem.put(0x200, DType::F32, &[1., 2., 3.]); // tensor1: 3
    mem.put(0x300, DType::F32, &[2., 2., 2., 4., 4., 4.]); // tensor2: 2x3
    let plan = Plan::new(
        "aclnnInplaceAddcmul",
        Kind::Pointwise("Addcmul"),
        vec![
            Arg::Tensor(view(&[2, 3], 0x100)),
            Arg::Tensor(view(&[3], 0x200)),
            Arg::Tensor(view(&[2, 3], 0x300)),
            scalar(0.5),
        ],
        view(&[2, 3], 0x100),
    )
    .unwrap();
    plan.run(&mem).unwrap();
    assert_eq!(mem.get(0x100, DType::F32, 6), [2., 4., 6., 6., 9., 12.]);
}

#[test]
fn lerp_and_addcdiv_compute_in_the_outputs_half_type() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[0., 1., 2., 3.]);
    mem.put(0x200, DType::F32, &[4., 5., 6., 7.]);
    for (dtype, at) in [(DType::F16, 0x300), (DType::Bf16, 0x400)] {
        let out = View::contiguous_at(dtype, vec![4], at);
        let plan = Plan::new(
            "aclnnLerps",
            Kind::Pointwise("Lerp"),
            vec![
                Arg::Tensor(view(&[4], 0x100)),
                Arg::Tensor(view(&[4], 0x200)),
                scalar(0.25),
            ],
            out,
        )
        .unwrap();
        plan.run(&mem).unwrap();
        assert_eq!(mem.get(at, dtype, 4), [1., 2., 3., 4.]);
    }
    let out = view(&[4], 0x500);
    let args = vec![
        Arg::Tensor(view(&[4], 0x100)),
        Arg::Tensor(view(&[4], 0x200)),
        Arg::Tensor(view(&[4], 0x200)),
        scalar(-2.0),
    ];
    let plan = Plan::new("aclnnAddcdiv", Kind::Pointwise("Addcdiv"), args, out).unwrap();
    plan.run(&mem).unwrap();
    assert_eq!(mem.get(0x500, DType::F32, 4), [-2., -1., 0., 1.]);
}

#[test]
fn pointwise_plans_refuse_integers_and_shapes_that_do_not_broadcast() {
    let ints = View::contiguous_at(DType::I32, vec![3], 0x100);
    let args = |d: &[usize]| {
        vec![
            Arg::Tensor(view(d, 0x100)),
            Arg::Tensor(view(&[3], 0x200)),
            scalar(0.5),
        ]
    };
    let lerp = |args, out| Plan::new("aclnnLerps", Kind::Pointwise("Lerp"), args, out);
    assert_eq!(lerp(args(&[3]), ints), Err(AclError::INVALID_PARAM));
    assert_eq!(
        lerp(args(&[2]), view(&[3], 0x300)),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        lerp(args(&[3]), view(&[2, 3], 0x300)),
        Err(AclError::INVALID_PARAM)
    );
    assert!(lerp(args(&[3]), view(&[3], 0x300)).is_ok());
    assert_eq!(
        Plan::new("x", Kind::Pointwise("Lerp"), Vec::new(), view(&[3], 0x300)),
        Err(AclError::INVALID_PARAM)
    );
}

#[test]
fn norms_of_every_order_over_all_or_some_axes() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[3., -4., 0., 12., -5., 1.]); // 2x3
    let norm = |p: f64, axes: Vec<i64>, keep: bool, dims: &[usize]| {
        let kind = Kind::Norm { p, axes, keep };
        let out = view(dims, 0x800);
        let x = vec![Arg::Tensor(view(&[2, 3], 0x100))];
        Plan::new("aclnnLinalgVectorNorm", kind, x, out)
            .and_then(|p| p.run(&mem))
            .map(|()| mem.get(0x800, DType::F32, dims.iter().product()))
    };
    assert_eq!(
        norm(2.0, vec![], false, &[]).unwrap(),
        [195f32.sqrt() as f64]
    );
    assert_eq!(norm(1.0, vec![], false, &[]).unwrap(), [25.0]);
    assert_eq!(norm(f64::INFINITY, vec![], false, &[]).unwrap(), [12.0]);
    assert_eq!(norm(f64::NEG_INFINITY, vec![], false, &[]).unwrap(), [0.0]);
    assert_eq!(
        norm(2.0, vec![1], true, &[2, 1]).unwrap(),
        [5.0, 170f32.sqrt() as f64]
    );
    assert_eq!(norm(1.0, vec![-2], false, &[3]).unwrap(), [15.0, 9.0, 1.0]);
    // Another output shape, an axis outside the rank.
    assert_eq!(
        norm(2.0, vec![1], false, &[2, 1]),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        norm(2.0, vec![2], false, &[2]),
        Err(AclError::INVALID_PARAM)
    );
}

#[test]
fn a_list_of_plans_runs_each_and_reaches_every_view() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[1., 2.]);
    mem.put(0x200, DType::F32, &[3., 4., 5.]);
    let mul = |at, n| {
        Plan::new(
            "aclnnForeachMulScalarV2",
            Kind::Binary {
                kernel: "Mul",
                alpha: None,
            },
            vec![Arg::Tensor(view(&[n], at)), scalar(2.0)],
            view(&[n], at),
        )
        .unwrap()
    };
    let plan = Plan::each(
        "aclnnForeachMulScalarV2",
        vec![mul(0x100, 2), mul(0x200, 3)],
    )
    .unwrap();
    assert_eq!(
        plan.ranges(),
        [(0x100, 8), (0x100, 8), (0x200, 12), (0x200, 12)]
    );
    plan.run(&mem).unwrap();
    assert_eq!(mem.get(0x100, DType::F32, 2), [2., 4.]);
    assert_eq!(mem.get(0x200, DType::F32, 3), [6., 8., 10.]);
    // No parts, or an output that is not the first part's.
    assert_eq!(Plan::each("x", Vec::new()), Err(AclError::INVALID_PARAM));
    let parts = Kind::Each(vec![mul(0x100, 2)]);
    assert_eq!(
        Plan::new("x", parts, Vec::new(), view(&[3], 0x200)),
        Err(AclError::INVALID_PARAM)
    );
}

/// The variance by its definition: `Σ (x - mean)² / max(0, n - c)`.
fn variance(v: &[f64], c: f64) -> f64 {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - c).max(0.0)
}

fn var_plan(
    dims: &[usize],
    axes: &[i64],
    correction: i64,
    keep: bool,
    out: View,
) -> Result<Plan, AclError> {
    let kind = Kind::Var {
        axes: axes.to_vec(),
        correction,
        keep,
    };
    Plan::new(
        "aclnnVarMean",
        kind,
        vec![Arg::Tensor(view(dims, 0x100))],
        out,
    )
}

#[test]
fn var_divides_the_spread_about_the_mean_by_n_minus_the_correction() {
    let x = [1., 4., 2., 8., -3., 5.];
    for dtype in [DType::F32, DType::F16, DType::Bf16, DType::F64] {
        let mem = Host::default();
        mem.put(0x100, DType::F32, &x);
        // Over the columns of [2, 3] (kept), over everything, correction 0 and 2.
        let out = View::contiguous_at(dtype, vec![2, 1], 0x200);
        var_plan(&[2, 3], &[-1], 1, true, out)
            .unwrap()
            .run(&mem)
            .unwrap();
        let want = [variance(&x[..3], 1.0), variance(&x[3..], 1.0)];
        let round =
            |v: &[f64]| Tensor::from_nums(dtype, vec![v.len()], v.iter().map(|&f| Num::F(f)));
        assert_eq!(
            mem.get(0x200, dtype, 2),
            round(&want).nums().map(Num::f64).collect::<Vec<_>>()
        );
        for c in [0, 2] {
            let out = View::contiguous_at(dtype, vec![], 0x300);
            var_plan(&[2, 3], &[], c, false, out)
                .unwrap()
                .run(&mem)
                .unwrap();
            let want = round(&[variance(&x, c as f64)]);
            assert_eq!(
                mem.get(0x300, dtype, 1),
                want.nums().map(Num::f64).collect::<Vec<_>>()
            );
        }
    }
    // n - correction of 0 or less: infinity.
    let mem = Host::default();
    mem.put(0x100, DType::F32, &x);
    let out = View::contiguous_at(DType::F32, vec![3], 0x200);
    var_plan(&[2, 3], &[0], 2, false, out)
        .unwrap()
        .run(&mem)
        .unwrap();
    assert!(
        mem.get(0x200, DType::F32, 3)
            .iter()
            .all(|v| v.is_infinite())
    );
}

#[test]
fn var_refuses_a_wrong_shape_an_axis_outside_and_an_integer_output() {
    let out = |dtype, dims: &[usize]| View::contiguous_at(dtype, dims.to_vec(), 0x200);
    assert_eq!(
        var_plan(&[2, 3], &[1], 1, false, out(DType::F32, &[3])),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        var_plan(&[2, 3], &[2], 1, false, out(DType::F32, &[2])),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        var_plan(&[2, 3], &[1], 1, false, out(DType::I32, &[2])),
        Err(AclError::INVALID_PARAM)
    );
}
