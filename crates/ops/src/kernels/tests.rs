//! The kernels against PyTorch's CPU results, and their refusals.

use super::call::*;
use super::*;

fn t(dtype: DType, dims: &[usize], v: &[f64]) -> (Spec, Vec<u8>) {
    HostInputs::tensor(dtype, dims, v.iter().map(|&f| Num::F(f)))
}

fn ints(v: &[i64]) -> (Spec, Vec<u8>) {
    let x = Tensor::from_nums(DType::I64, vec![v.len()], v.iter().map(|&i| Num::I(i)));
    (
        Spec {
            dtype: DType::I64,
            dims: vec![v.len()],
        },
        x.bytes,
    )
}

fn run(
    op: &str,
    inputs: Vec<(Spec, Vec<u8>)>,
    out: Spec,
    attrs: OpAttr,
) -> Result<Vec<f64>, AclError> {
    let host = HostInputs(inputs);
    let call = Call::new(&host, vec![out.clone()], attrs);
    let written = find(op).ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    let t = Tensor {
        dtype: out.dtype,
        dims: out.dims,
        bytes: written[0].clone(),
    };
    Ok(t.nums().map(Num::f64).collect())
}

fn spec(dtype: DType, dims: &[usize]) -> Spec {
    Spec {
        dtype,
        dims: dims.to_vec(),
    }
}

#[test]
fn operators_outside_the_list_are_not_found() {
    assert!(find("FusedInferAttentionScore").is_none());
    assert!(find("ViewCopy").is_some());
}

#[test]
fn add_broadcasts_and_computes_in_each_type() {
    for dtype in [
        DType::F32,
        DType::F16,
        DType::Bf16,
        DType::F64,
        DType::I8,
        DType::I32,
        DType::I64,
        DType::U8,
    ] {
        let a = t(dtype, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let b = t(dtype, &[3], &[10.0, 20.0, 30.0]);
        let got = run("Add", vec![a, b], spec(dtype, &[2, 3]), OpAttr::new()).unwrap();
        assert_eq!(got, [11.0, 22.0, 33.0, 14.0, 25.0, 36.0], "{dtype:?}");
    }
    let a = t(DType::F32, &[2], &[1.0, 2.0]);
    let b = t(DType::F32, &[3], &[1.0, 2.0, 3.0]);
    assert_eq!(
        run("Add", vec![a, b], spec(DType::F32, &[3]), OpAttr::new()),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

#[test]
fn cast_converts_as_c_does_and_checks_its_attribute() {
    let x = t(DType::F32, &[3], &[-1.5, 0.0, 300.7]);
    let mut attrs = OpAttr::new();
    attrs.insert("dst_type".into(), AttrValue::Int(DType::I32.acl() as i64));
    assert_eq!(
        run(
            "Cast",
            vec![x.clone()],
            spec(DType::I32, &[3]),
            attrs.clone()
        )
        .unwrap(),
        [-1.0, 0.0, 300.0]
    );
    assert_eq!(
        run("Cast", vec![x], spec(DType::I64, &[3]), attrs),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

#[test]
fn view_copy_writes_only_the_view_and_as_strided_reads_one() {
    // dst: a 2x3 buffer; write the transposed 3x2 src into its first column pair.
    let dst = t(DType::I32, &[6], &[0.0; 6]);
    let src = t(DType::I32, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let got = run(
        "ViewCopy",
        vec![
            dst,
            ints(&[2, 2]),
            ints(&[3, 1]),
            ints(&[0]),
            src,
            ints(&[2, 2]),
            ints(&[1, 2]),
            ints(&[0]),
        ],
        spec(DType::I32, &[2, 2]),
        OpAttr::new(),
    )
    .unwrap();
    // Elements 0,1 and 3,4 of dst get src transposed: 1,3 / 2,4; element 2 is untouched
    // and past the view's extent nothing is written.
    assert_eq!(got.len(), 5);
    assert_eq!(got, [1.0, 3.0, 0.0, 2.0, 4.0]);
    let base = t(DType::F32, &[6], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let got = run(
        "AsStrided",
        vec![base, ints(&[3, 2]), ints(&[1, 3]), ints(&[0])],
        spec(DType::F32, &[3, 2]),
        OpAttr::new(),
    )
    .unwrap();
    assert_eq!(got, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
}

#[test]
fn reductions_follow_axes_and_keep_dims() {
    let x = t(DType::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(
        run(
            "ReduceSum",
            vec![x.clone(), ints(&[1])],
            spec(DType::F32, &[2]),
            OpAttr::new()
        )
        .unwrap(),
        [6.0, 15.0]
    );
    assert_eq!(
        run(
            "ReduceSum",
            vec![x.clone(), ints(&[0])],
            spec(DType::F32, &[1, 3]),
            OpAttr::new()
        )
        .unwrap(),
        [5.0, 7.0, 9.0]
    );
    assert_eq!(
        run(
            "ReduceSum",
            vec![x.clone(), ints(&[])],
            spec(DType::F32, &[]),
            OpAttr::new()
        )
        .unwrap(),
        [21.0]
    );
    assert_eq!(
        run(
            "ReduceMean",
            vec![x.clone(), ints(&[-1])],
            spec(DType::F32, &[2]),
            OpAttr::new()
        )
        .unwrap(),
        [2.0, 5.0]
    );
    assert_eq!(
        run(
            "ReduceMax",
            vec![x.clone(), ints(&[0, 1])],
            spec(DType::F32, &[]),
            OpAttr::new()
        )
        .unwrap(),
        [6.0]
    );
    assert_eq!(
        run(
            "ReduceSum",
            vec![x, ints(&[2])],
            spec(DType::F32, &[2]),
            OpAttr::new()
        ),
        Err(AclError::INVALID_PARAM)
    );
    // Integers stay integers: 2^60 + 1 has no f64 of its own.
    let big = (1i64 << 60) + 1;
    for op in ["ReduceMax", "ReduceMin"] {
        let host = HostInputs(vec![ints(&[big, big]), ints(&[])]);
        let call = Call::new(&host, vec![spec(DType::I64, &[])], OpAttr::new());
        let written = find(op).unwrap()(&call).unwrap();
        assert_eq!(DType::I64.get(&written[0]), Num::I(big), "{op}");
    }
}

#[test]
fn random_values_repeat_for_a_seed_and_differ_for_another() {
    let normal = |seed: i64, offset: i64| {
        let mut attrs = OpAttr::new();
        attrs.insert("dtype".into(), AttrValue::DataType(0));
        run(
            "StatelessRandomNormalV2",
            vec![ints(&[1000]), ints(&[seed]), ints(&[0, offset]), ints(&[1])],
            spec(DType::F32, &[1000]),
            attrs,
        )
        .unwrap()
    };
    let a = normal(7, 0);
    assert_eq!(a, normal(7, 0));
    assert_ne!(a, normal(7, 10));
    assert_ne!(a, normal(8, 0));
    let mean = a.iter().sum::<f64>() / a.len() as f64;
    let var = a.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / a.len() as f64;
    assert!(
        mean.abs() < 0.15 && (var - 1.0).abs() < 0.2,
        "mean {mean} var {var}"
    );
}

#[test]
fn range_fill_and_compare() {
    let got = run(
        "Range",
        vec![ints(&[2]), ints(&[11]), ints(&[3])],
        spec(DType::I64, &[3]),
        OpAttr::new(),
    )
    .unwrap();
    assert_eq!(got, [2.0, 5.0, 8.0]);
    let got = run(
        "Fill",
        vec![ints(&[2, 2]), t(DType::F16, &[], &[1.5])],
        spec(DType::F16, &[2, 2]),
        OpAttr::new(),
    )
    .unwrap();
    assert_eq!(got, [1.5; 4]);
    let a = t(DType::F32, &[3], &[1.0, f64::NAN, 3.0]);
    let b = t(DType::F32, &[3], &[1.0, f64::NAN, 3.1]);
    assert_eq!(
        run(
            "Equal",
            vec![a.clone(), b.clone()],
            spec(DType::Bool, &[3]),
            OpAttr::new()
        )
        .unwrap(),
        [1.0, 0.0, 0.0]
    );
    let mut attrs = OpAttr::new();
    attrs.insert("equal_nan".into(), AttrValue::Bool(true));
    attrs.insert("atol".into(), AttrValue::Float(0.2));
    assert_eq!(
        run("IsClose", vec![a, b], spec(DType::Bool, &[3]), attrs).unwrap(),
        [1.0, 1.0, 1.0]
    );
}

#[test]
fn pack_and_concat_join_blocks_in_turn() {
    let a = t(DType::F32, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let b = t(DType::F32, &[2, 2], &[5.0, 6.0, 7.0, 8.0]);
    let mut attrs = OpAttr::new();
    attrs.insert("axis".into(), AttrValue::Int(1));
    assert_eq!(
        run(
            "Pack",
            vec![a.clone(), b.clone()],
            spec(DType::F32, &[2, 2, 2]),
            attrs
        )
        .unwrap(),
        [1.0, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0]
    );
    let mut attrs = OpAttr::new();
    attrs.insert("concat_dim".into(), AttrValue::Int(-1));
    assert_eq!(
        run("ConcatD", vec![a, b], spec(DType::F32, &[2, 4]), attrs).unwrap(),
        [1.0, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0]
    );
}

#[test]
fn slices_and_transposes_read_their_views() {
    let x = t(DType::I16, &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(
        run(
            "Transpose",
            vec![x.clone(), ints(&[1, 0])],
            spec(DType::I16, &[3, 2]),
            OpAttr::new()
        )
        .unwrap(),
        [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    );
    assert_eq!(
        run(
            "Slice",
            vec![x.clone(), ints(&[1, 1]), ints(&[1, -1])],
            spec(DType::I16, &[1, 2]),
            OpAttr::new()
        )
        .unwrap(),
        [4.0, 5.0]
    );
    assert_eq!(
        run(
            "StridedSlice",
            vec![x.clone(), ints(&[0, 0]), ints(&[2, 3]), ints(&[1, 2])],
            spec(DType::I16, &[2, 2]),
            OpAttr::new()
        )
        .unwrap(),
        [0.0, 2.0, 3.0, 5.0]
    );
    assert_eq!(
        run(
            "BroadcastTo",
            vec![t(DType::I16, &[1, 2], &[7.0, 8.0]), ints(&[2, 2])],
            spec(DType::I16, &[2, 2]),
            OpAttr::new()
        )
        .unwrap(),
        [7.0, 8.0, 7.0, 8.0]
    );
}

/// Runs `op` and gives output 0's values (as many as were written) and
/// the real shape it reported, if any.
fn run_dynamic(
    op: &str,
    inputs: Vec<(Spec, Vec<u8>)>,
    out: Spec,
    attrs: OpAttr,
) -> Result<(Vec<f64>, Option<Vec<usize>>), AclError> {
    let host = HostInputs(inputs);
    let call = Call::new(&host, vec![out.clone()], attrs);
    let written = find(op).ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    let n = written[0].len() / out.dtype.size();
    let t = Tensor {
        dtype: out.dtype,
        dims: vec![n],
        bytes: written[0].clone(),
    };
    let shape = call.reshaped.take().into_iter().find(|(o, _)| *o == 0);
    Ok((t.nums().map(Num::f64).collect(), shape.map(|(_, d)| d)))
}

#[test]
fn nonzero_reports_coordinates_and_their_real_shape() {
    let x = t(DType::F32, &[2, 3], &[0.0, 1.5, 0.0, -2.0, 0.0, 3.0]);
    let (v, shape) = run_dynamic(
        "NonZero",
        vec![x.clone()],
        spec(DType::I64, &[6, 2]),
        OpAttr::new(),
    )
    .unwrap();
    assert_eq!(shape, Some(vec![3, 2]));
    assert_eq!(v, [0.0, 1.0, 1.0, 0.0, 1.0, 2.0]);
    let mut attrs = OpAttr::new();
    attrs.insert("transpose".into(), AttrValue::Bool(true));
    let (v, shape) =
        run_dynamic("NonZero", vec![x.clone()], spec(DType::I64, &[2, 6]), attrs).unwrap();
    assert_eq!(shape, Some(vec![2, 3]));
    assert_eq!(v, [0.0, 1.0, 1.0, 1.0, 0.0, 2.0]);
    // An output too small for the coordinates, or of a float type.
    assert_eq!(
        run_dynamic(
            "NonZero",
            vec![x.clone()],
            spec(DType::I64, &[2, 2]),
            OpAttr::new()
        ),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        run_dynamic("NonZero", vec![x], spec(DType::F32, &[6, 2]), OpAttr::new()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

#[test]
fn masked_select_broadcasts_the_mask() {
    let x = t(DType::F16, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let mask = t(DType::Bool, &[2], &[0.0, 1.0]);
    let (v, shape) = run_dynamic(
        "MaskedSelect",
        vec![x, mask],
        spec(DType::F16, &[4]),
        OpAttr::new(),
    )
    .unwrap();
    assert_eq!(shape, Some(vec![2]));
    assert_eq!(v, [2.0, 4.0]);
}

#[test]
fn isfinite_and_ceil() {
    let x = t(DType::F32, &[4], &[1.5, f64::INFINITY, f64::NAN, -0.5]);
    assert_eq!(
        run(
            "IsFinite",
            vec![x.clone()],
            spec(DType::Bool, &[4]),
            OpAttr::new()
        )
        .unwrap(),
        [1.0, 0.0, 0.0, 1.0]
    );
    let got = run("Ceil", vec![x], spec(DType::F32, &[4]), OpAttr::new()).unwrap();
    assert_eq!((got[0], got[1], got[3]), (2.0, f64::INFINITY, 0.0));
    assert!(got[2].is_nan());
}

#[test]
fn index_put_sets_and_accumulates_where_the_indices_point() {
    // x[rows, cols] = value for rows [0, 1], cols [2, 0] of a 2x3 x.
    let x = t(DType::F32, &[2, 3], &[0.0; 6]);
    let value = t(DType::F32, &[], &[7.0]);
    let inputs = |x: &(Spec, Vec<u8>), rows: &[i64]| {
        vec![
            x.clone(),
            value.clone(),
            ints(&[1, 1]),
            ints(&[1, 1]),
            ints(rows),
            ints(&[2, 0]),
        ]
    };
    assert_eq!(
        run(
            "IndexPutV2",
            inputs(&x, &[0, 1]),
            spec(DType::F32, &[2, 3]),
            OpAttr::new()
        )
        .unwrap(),
        [0.0, 0.0, 7.0, 7.0, 0.0, 0.0]
    );
    // Accumulating, with a repeated (and a negative) index.
    let mut attrs = OpAttr::new();
    attrs.insert("accumulate".into(), AttrValue::Bool(true));
    let ones = t(DType::F32, &[2, 3], &[1.0; 6]);
    let host = vec![
        ones.clone(),
        value.clone(),
        ints(&[1, 0]),
        ints(&[1, 0]),
        ints(&[-1, 1]),
    ];
    assert_eq!(
        run("IndexPutV2", host, spec(DType::F32, &[2, 3]), attrs).unwrap(),
        [1.0, 1.0, 1.0, 15.0, 15.0, 15.0],
        "row 1 twice, whole"
    );
    // An index out of range writes nothing.
    assert_eq!(
        run(
            "IndexPutV2",
            inputs(&x, &[0, 2]),
            spec(DType::F32, &[2, 3]),
            OpAttr::new()
        ),
        Err(AclError::INVALID_PARAM)
    );
}

#[test]
fn pads_with_a_constant_in_either_paddings_order() {
    let x = t(DType::F32, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let mut attrs = OpAttr::new();
    attrs.insert("mode".into(), AttrValue::String("constant".into()));
    // Axis 0: one row after; axis 1: one column before.
    assert_eq!(
        run(
            "PadV3",
            vec![x.clone(), ints(&[0, 1, 1, 0]), t(DType::F32, &[], &[9.0])],
            spec(DType::F32, &[3, 3]),
            attrs.clone()
        )
        .unwrap(),
        [9.0, 1.0, 2.0, 9.0, 3.0, 4.0, 9.0, 9.0, 9.0]
    );
    attrs.insert("paddings_contiguous".into(), AttrValue::Bool(false));
    assert_eq!(
        // Befores [1, 0], afters [0, 1]: a row above, a column right.
        run(
            "PadV3",
            vec![x.clone(), ints(&[1, 0, 0, 1])],
            spec(DType::F32, &[3, 3]),
            attrs.clone()
        )
        .unwrap(),
        [0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0]
    );
    // A mode no padding knows (reflect and edge are mirror.rs's).
    attrs.insert("mode".into(), AttrValue::String("circular".into()));
    assert_eq!(
        run(
            "PadV3",
            vec![x, ints(&[0, 1, 1, 0])],
            spec(DType::F32, &[3, 3]),
            attrs
        )
        .err(),
        Some(AclError::OP_ATTR_NOT_MATCH)
    );
}

#[test]
fn pow_and_square_follow_pytorchs_cpu_kernels() {
    let x = t(DType::F32, &[3], &[2.0, 9.0, -1.5]);
    let e = t(DType::F32, &[1], &[0.5]);
    let got = run(
        "Pow",
        vec![x.clone(), e],
        spec(DType::F32, &[3]),
        OpAttr::new(),
    )
    .unwrap();
    assert_eq!((got[0] as f32, got[1]), (2f32.sqrt(), 3.0));
    assert!(got[2].is_nan(), "a negative base to a fractional power");
    let got = run("Square", vec![x], spec(DType::F32, &[3]), OpAttr::new()).unwrap();
    assert_eq!(got, [4.0, 81.0, 2.25]);
    // Integers: repeated multiplication; a negative exponent gives 0 but
    // for the bases 1 and -1.
    let b = t(DType::I32, &[4], &[3.0, 1.0, -1.0, 2.0]);
    let e = t(DType::I32, &[4], &[3.0, -2.0, -3.0, -1.0]);
    let got = run("Pow", vec![b, e], spec(DType::I32, &[4]), OpAttr::new()).unwrap();
    assert_eq!(got, [27.0, 1.0, -1.0, 0.0]);
}
