//! The kernels' properties over random tensors, through the crate's public
//! face only (no library, no device): what a framework's operator call
//! becomes once the emulated library has marshalled it.

use aclmem_core::AclError;
use aclmem_ops::kernels::{Call, HostInputs, Spec, find};
use aclmem_ops::objects::{AttrValue, OpAttr};
use aclmem_ops::tensor::{DType, Num, Tensor};
use proptest::prelude::*;

fn spec(dtype: DType, dims: &[usize]) -> Spec {
    Spec {
        dtype,
        dims: dims.to_vec(),
    }
}

fn tensor(dtype: DType, dims: &[usize], values: impl Iterator<Item = Num>) -> (Spec, Vec<u8>) {
    HostInputs::tensor(dtype, dims, values)
}

/// Runs `op` and reads its one output.
fn run(
    op: &str,
    inputs: Vec<(Spec, Vec<u8>)>,
    out: Spec,
    attrs: OpAttr,
) -> Result<Tensor, AclError> {
    let host = HostInputs(inputs);
    let call = Call::new(&host, vec![out.clone()], attrs);
    let mut written = find(op).ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    Ok(Tensor {
        dtype: out.dtype,
        dims: out.dims,
        bytes: written.remove(0),
    })
}

/// `Cast`'s attribute: the destination type.
fn to(dtype: DType) -> OpAttr {
    let mut attrs = OpAttr::new();
    attrs.insert("dst_type".into(), AttrValue::Int(i64::from(dtype.acl())));
    attrs
}

/// A shape of one to three dims (at most 64 elements) and two sets of
/// values for it.
fn shaped() -> impl Strategy<Value = (Vec<usize>, Vec<i32>, Vec<i32>)> {
    prop::collection::vec(1usize..5, 1..4).prop_flat_map(|dims| {
        let n: usize = dims.iter().product();
        (
            Just(dims),
            prop::collection::vec(-1000i32..1000, n),
            prop::collection::vec(-1000i32..1000, n),
        )
    })
}

proptest! {
    /// `Add` of two f32 tensors is f32 addition, element by element.
    #[test]
    fn add_is_elementwise_f32_addition((dims, a, b) in shaped()) {
        let fa: Vec<f32> = a.iter().map(|&v| v as f32 / 8.0).collect();
        let fb: Vec<f32> = b.iter().map(|&v| v as f32 / 16.0).collect();
        let num = |v: &f32| Num::F(f64::from(*v));
        let got = run(
            "Add",
            vec![
                tensor(DType::F32, &dims, fa.iter().map(num)),
                tensor(DType::F32, &dims, fb.iter().map(num)),
            ],
            spec(DType::F32, &dims),
            OpAttr::new(),
        )
        .unwrap();
        let want: Vec<f64> = fa.iter().zip(&fb).map(|(x, y)| f64::from(x + y)).collect();
        prop_assert_eq!(got.nums().map(Num::f64).collect::<Vec<_>>(), want);
    }

    /// `Cast` from int32 to float32 and back gives the integers again.
    #[test]
    fn cast_int32_float32_round_trips((dims, a, _) in shaped()) {
        let ints = tensor(DType::I32, &dims, a.iter().map(|&v| Num::I(i64::from(v))));
        let floats = run("Cast", vec![ints], spec(DType::F32, &dims), to(DType::F32)).unwrap();
        let back = run(
            "Cast",
            vec![(spec(DType::F32, &dims), floats.bytes)],
            spec(DType::I32, &dims),
            to(DType::I32),
        )
        .unwrap();
        prop_assert_eq!(back.ints(), a.iter().map(|&v| i64::from(v)).collect::<Vec<_>>());
    }

    /// `ReduceSum` over every axis is the sum of the elements (int64, exact).
    #[test]
    fn reduce_sum_over_every_axis_is_the_total((dims, a, _) in shaped()) {
        let axes: Vec<i64> = (0..dims.len() as i64).collect();
        let got = run(
            "ReduceSum",
            vec![
                tensor(DType::I64, &dims, a.iter().map(|&v| Num::I(i64::from(v)))),
                tensor(DType::I64, &[axes.len()], axes.iter().map(|&v| Num::I(v))),
            ],
            spec(DType::I64, &[]),
            OpAttr::new(),
        )
        .unwrap();
        let total: i64 = a.iter().map(|&v| i64::from(v)).sum();
        prop_assert_eq!(got.ints(), vec![total]);
    }
}
