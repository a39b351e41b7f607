//! The operator API's plans on host memory: strided views gathered and
//! scattered, each operator family against values computed by hand.

use std::collections::BTreeMap;
use std::sync::Mutex;

use aclmem_core::AclError;

use super::plan::{Arg, Kind, Memory, Plan};
use super::{Scalar, View};
use crate::tensor::{DType, Num, Tensor};

/// Memory as a map of byte addresses (unwritten bytes read as zero).
#[derive(Default)]
struct Host(Mutex<BTreeMap<usize, u8>>);

impl Memory for Host {
    fn read(&self, addr: usize, buf: &mut [u8]) -> Result<(), AclError> {
        let m = self.0.lock().unwrap();
        for (i, b) in buf.iter_mut().enumerate() {
            *b = m.get(&(addr + i)).copied().unwrap_or(0);
        }
        Ok(())
    }

    fn write(&self, addr: usize, data: &[u8]) -> Result<(), AclError> {
        let mut m = self.0.lock().unwrap();
        for (i, b) in data.iter().enumerate() {
            m.insert(addr + i, *b);
        }
        Ok(())
    }
}

impl Host {
    fn put(&self, at: usize, dtype: DType, values: &[f64]) {
        let t = Tensor::from_nums(dtype, vec![values.len()], values.iter().map(|&v| Num::F(v)));
        self.write(at, &t.bytes).unwrap();
    }

    fn get(&self, at: usize, dtype: DType, n: usize) -> Vec<f64> {
        let mut b = vec![0; n * dtype.size()];
        self.read(at, &mut b).unwrap();
        let t = Tensor {
            dtype,
            dims: vec![n],
            bytes: b,
        };
        t.nums().map(Num::f64).collect()
    }
}

fn view(dims: &[usize], at: usize) -> View {
    View::contiguous_at(DType::F32, dims.to_vec(), at)
}

fn scalar(v: f64) -> Arg {
    Arg::Scalar(Scalar {
        dtype: DType::F64,
        value: Num::F(v),
        imag: None,
    })
}

#[test]
fn a_view_refuses_what_leaves_its_storage() {
    let ok = View::new(DType::F32, &[2, 2], &[2, 1], 0, 2, &[4], 0x1000);
    assert!(ok.is_ok());
    for (dims, strides, offset, storage) in [
        (&[2i64, 2][..], &[2i64, 1][..], 1i64, &[4i64][..]),
        (&[2, 2], &[2, 1], -1, &[4]),
        (&[2, -2], &[2, 1], 0, &[4]),
        (&[2, 2], &[1], 0, &[4]),
        (&[3], &[2], 0, &[4]),
    ] {
        assert_eq!(
            View::new(DType::F32, dims, strides, offset, 2, storage, 0x1000),
            Err(AclError::INVALID_PARAM),
            "{dims:?} {strides:?} {offset} {storage:?}"
        );
    }
    // A private format is not a strided view.
    assert_eq!(
        View::new(DType::F32, &[2, 2], &[2, 1], 0, 29, &[1, 1, 16, 16], 0x1000),
        Err(AclError::FORMAT_NOT_MATCH)
    );
    // An empty view needs no storage.
    assert!(View::new(DType::F32, &[0, 3], &[3, 1], 0, 2, &[0], 0).is_ok());
}

#[test]
fn a_strided_view_gathers_and_scatters_only_its_elements() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[0., 1., 2., 3., 4., 5.]);
    // The transpose of a 2x3 row-major matrix, from offset 0.
    let t = View::new(DType::F32, &[3, 2], &[1, 3], 0, 2, &[6], 0x100).unwrap();
    assert!(!t.is_contiguous());
    let g = t.gather(&mem).unwrap();
    let got: Vec<f64> = g.nums().map(Num::f64).collect();
    assert_eq!(got, [0., 3., 1., 4., 2., 5.]);
    // Every other element of the storage, from element 1.
    let odd = View::new(DType::F32, &[3], &[2], 1, 2, &[6], 0x100).unwrap();
    let ones = Tensor::from_nums(DType::F32, vec![3], [Num::F(-1.0); 3]);
    odd.scatter(&mem, &ones.bytes).unwrap();
    assert_eq!(mem.get(0x100, DType::F32, 6), [0., -1., 2., -1., 4., -1.]);
}

#[test]
fn add_with_alpha_broadcasts_into_a_strided_output() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[1., 2., 3., 4., 5., 6.]); // a: 2x3
    mem.put(0x200, DType::F32, &[10., 20., 30.]); // b: 3
    // The output: the transpose view of a 3x2 buffer.
    let out = View::new(DType::F32, &[2, 3], &[1, 2], 0, 2, &[6], 0x300).unwrap();
    let plan = Plan::new(
        "aclnnAdd",
        Kind::Binary {
            kernel: "Add",
            alpha: Some(Num::F(0.5)),
        },
        vec![
            Arg::Tensor(view(&[2, 3], 0x100)),
            Arg::Tensor(view(&[3], 0x200)),
        ],
        out,
    )
    .unwrap();
    plan.run(&mem).unwrap();
    // Row-major 3x2 storage holding the transpose of [[6, 12, 18], [9, 15, 21]].
    assert_eq!(mem.get(0x300, DType::F32, 6), [6., 9., 12., 15., 18., 21.]);
}

#[test]
fn a_scalar_is_promoted_to_the_output_type() {
    let mem = Host::default();
    let ints = Tensor::from_nums(DType::I32, vec![3], [Num::I(1), Num::I(2), Num::I(3)]);
    mem.write(0x100, &ints.bytes).unwrap();
    let a = View::contiguous_at(DType::I32, vec![3], 0x100);
    let plan = Plan::new(
        "aclnnMuls",
        Kind::Binary {
            kernel: "Mul",
            alpha: None,
        },
        vec![Arg::Tensor(a), scalar(2.5)],
        view(&[3], 0x200),
    )
    .unwrap();
    plan.run(&mem).unwrap();
    assert_eq!(mem.get(0x200, DType::F32, 3), [2.5, 5., 7.5]);
}

#[test]
fn shapes_that_do_not_fit_are_refused_when_planned() {
    let bad = Plan::new(
        "aclnnAdd",
        Kind::Binary {
            kernel: "Add",
            alpha: None,
        },
        vec![
            Arg::Tensor(view(&[2, 3], 0x100)),
            Arg::Tensor(view(&[2], 0x200)),
        ],
        view(&[2, 3], 0x300),
    );
    assert_eq!(bad, Err(AclError::INVALID_PARAM));
    let bad = Plan::new(
        "aclnnMm",
        Kind::Matmul,
        vec![
            Arg::Tensor(view(&[2, 3], 0x100)),
            Arg::Tensor(view(&[2, 3], 0x200)),
        ],
        view(&[2, 3], 0x300),
    );
    assert_eq!(bad, Err(AclError::INVALID_PARAM));
    let wrong_out = Plan::new(
        "aclnnMm",
        Kind::Matmul,
        vec![
            Arg::Tensor(view(&[2, 3], 0x100)),
            Arg::Tensor(view(&[3, 2], 0x200)),
        ],
        view(&[3, 3], 0x300),
    );
    assert_eq!(wrong_out, Err(AclError::INVALID_PARAM));
}

#[test]
fn products_follow_torch_matmul_for_vectors_matrices_and_batches() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[1., 2., 3., 4., 5., 6.]); // 2x3
    mem.put(0x200, DType::F32, &[1., 0., 0., 1., 1., 1.]); // 3x2
    let mm = Plan::new(
        "aclnnMm",
        Kind::Matmul,
        vec![
            Arg::Tensor(view(&[2, 3], 0x100)),
            Arg::Tensor(view(&[3, 2], 0x200)),
        ],
        view(&[2, 2], 0x300),
    )
    .unwrap();
    mm.run(&mem).unwrap();
    assert_eq!(mem.get(0x300, DType::F32, 4), [4., 5., 10., 11.]);
    // A vector times a matrix: a row.
    let vm = Plan::new(
        "aclnnMatmul",
        Kind::Matmul,
        vec![
            Arg::Tensor(view(&[3], 0x100)),
            Arg::Tensor(view(&[3, 2], 0x200)),
        ],
        view(&[2], 0x400),
    )
    .unwrap();
    vm.run(&mem).unwrap();
    assert_eq!(mem.get(0x400, DType::F32, 2), [4., 5.]);
    // A batch of two, the second operand broadcast over it.
    mem.put(
        0x500,
        DType::F32,
        &[1., 2., 3., 4., 5., 6., 0., 0., 0., 1., 1., 1.],
    ); // 2x2x3
    let bmm = Plan::new(
        "aclnnMatmul",
        Kind::Matmul,
        vec![
            Arg::Tensor(view(&[2, 2, 3], 0x500)),
            Arg::Tensor(view(&[3, 2], 0x200)),
        ],
        view(&[2, 2, 2], 0x600),
    )
    .unwrap();
    bmm.run(&mem).unwrap();
    assert_eq!(
        mem.get(0x600, DType::F32, 8),
        [4., 5., 10., 11., 0., 0., 2., 2.]
    );
}

#[test]
fn addmm_scales_both_terms() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[1., 2., 3., 4.]); // 2x2
    mem.put(0x200, DType::F32, &[1., 0., 0., 1.]); // identity
    mem.put(0x300, DType::F32, &[10., 20.]); // bias, broadcast over rows
    let plan = Plan::new(
        "aclnnAddmm",
        Kind::Addmm {
            beta: Num::F(0.5),
            alpha: Num::F(2.0),
        },
        vec![
            Arg::Tensor(view(&[2], 0x300)),
            Arg::Tensor(view(&[2, 2], 0x100)),
            Arg::Tensor(view(&[2, 2], 0x200)),
        ],
        view(&[2, 2], 0x400),
    )
    .unwrap();
    plan.run(&mem).unwrap();
    assert_eq!(mem.get(0x400, DType::F32, 4), [7., 14., 11., 18.]);
}

#[test]
fn copy_casts_and_broadcasts_and_fill_writes_only_the_view() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[1.5, -2.5]);
    let copy = Plan::new(
        "aclnnInplaceCopy",
        Kind::Copy,
        vec![Arg::Tensor(view(&[2], 0x100))],
        View::contiguous_at(DType::I32, vec![2, 2], 0x200),
    )
    .unwrap();
    copy.run(&mem).unwrap();
    let mut b = vec![0; 16];
    mem.read(0x200, &mut b).unwrap();
    let t = Tensor {
        dtype: DType::I32,
        dims: vec![4],
        bytes: b,
    };
    assert_eq!(t.ints(), [1, -2, 1, -2]);
    mem.put(0x300, DType::F32, &[0.; 4]);
    let column = View::new(DType::F32, &[2], &[2], 1, 2, &[4], 0x300).unwrap();
    Plan::new(
        "aclnnInplaceFillScalar",
        Kind::Fill(Num::F(7.0)),
        Vec::new(),
        column,
    )
    .unwrap()
    .run(&mem)
    .unwrap();
    assert_eq!(mem.get(0x300, DType::F32, 4), [0., 7., 0., 7.]);
}

#[test]
fn a_unary_operator_runs_its_kernel() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[-1., 0., 2.]);
    Plan::new(
        "aclnnRelu",
        Kind::Unary("Relu"),
        vec![Arg::Tensor(view(&[3], 0x100))],
        view(&[3], 0x200),
    )
    .unwrap()
    .run(&mem)
    .unwrap();
    assert_eq!(mem.get(0x200, DType::F32, 3), [0., 0., 2.]);
}

#[test]
fn random_values_follow_their_seed_and_offset_read_when_run() {
    let mem = Host::default();
    let uniform = |seed, offset| Kind::Random {
        normal: false,
        a: 2.0,
        b: 3.0,
        seed,
        offset,
    };
    let run = |kind: Kind, args: Vec<Arg>, at: usize| {
        Plan::new("aclnnInplaceUniform", kind, args, view(&[64], at))
            .unwrap()
            .run(&mem)
            .unwrap();
        mem.get(at, DType::F32, 64)
    };
    let a = run(uniform(Some(7), 4), Vec::new(), 0x1000);
    assert!(a.iter().all(|v| (2.0..3.0).contains(v)), "{a:?}");
    assert_eq!(
        run(uniform(Some(7), 4), Vec::new(), 0x2000),
        a,
        "same seed and offset"
    );
    assert_ne!(
        run(uniform(Some(7), 5), Vec::new(), 0x3000),
        a,
        "another offset"
    );
    // The captured form reads the generator's state when it runs: seed 7,
    // offset 1 in the tensors plus 3 of the plan.
    let state = Tensor::from_nums(DType::I64, vec![1], [Num::I(7)]);
    mem.write(0x100, &state.bytes).unwrap();
    let off = Tensor::from_nums(DType::I64, vec![1], [Num::I(1)]);
    mem.write(0x108, &off.bytes).unwrap();
    let tensors = || {
        vec![
            Arg::Tensor(View::contiguous_at(DType::I64, vec![1], 0x100)),
            Arg::Tensor(View::contiguous_at(DType::I64, vec![1], 0x108)),
        ]
    };
    assert_eq!(run(uniform(None, 3), tensors(), 0x4000), a);
}

#[test]
fn a_reduction_keeps_or_drops_its_axes_and_refuses_one_outside_the_rank() {
    let mem = Host::default();
    // [[1, 5, 3], [4, 2, 6]]
    mem.put(0x100, DType::F32, &[1., 5., 3., 4., 2., 6.]);
    let reduce = |kernel, axes: Vec<i64>, keep, out: &[usize]| {
        Plan::new(
            "aclnnReduce",
            Kind::Reduce { kernel, axes, keep },
            vec![Arg::Tensor(view(&[2, 3], 0x100))],
            view(out, 0x200),
        )
    };
    reduce("ReduceSum", vec![1], false, &[2])
        .unwrap()
        .run(&mem)
        .unwrap();
    assert_eq!(mem.get(0x200, DType::F32, 2), [9., 12.]);
    reduce("ReduceMax", vec![-2], true, &[1, 3])
        .unwrap()
        .run(&mem)
        .unwrap();
    assert_eq!(mem.get(0x200, DType::F32, 3), [4., 5., 6.]);
    // No axes: every element.
    reduce("ReduceMin", Vec::new(), false, &[])
        .unwrap()
        .run(&mem)
        .unwrap();
    assert_eq!(mem.get(0x200, DType::F32, 1), [1.]);
    reduce("ReduceMean", vec![0, 1], false, &[])
        .unwrap()
        .run(&mem)
        .unwrap();
    assert_eq!(mem.get(0x200, DType::F32, 1), [3.5]);
    // The output's shape must be the reduced one; axes within the rank.
    assert!(reduce("ReduceSum", vec![1], true, &[2]).is_err());
    assert!(reduce("ReduceSum", vec![2], false, &[2]).is_err());
    assert!(reduce("ReduceSum", vec![-3], false, &[3]).is_err());
}

#[test]
fn the_math_operators_compute_in_floating_point() {
    let mem = Host::default();
    mem.put(0x100, DType::F32, &[0.25, 1., 4.]);
    let unary = |kernel| {
        Plan::new(
            "aclnnUnary",
            Kind::Unary(kernel),
            vec![Arg::Tensor(view(&[3], 0x100))],
            view(&[3], 0x200),
        )
        .unwrap()
        .run(&mem)
        .unwrap();
        mem.get(0x200, DType::F32, 3)
    };
    assert_eq!(unary("Sqrt"), [0.5, 1., 2.]);
    assert_eq!(unary("Rsqrt"), [2., 1., 0.5]);
    assert_eq!(unary("Reciprocal"), [4., 1., 0.25]);
    assert_eq!(unary("Floor"), [0., 1., 4.]);
    let close = |got: Vec<f64>, want: [f64; 3]| {
        got.iter()
            .zip(want)
            .all(|(g, w)| (g - w).abs() <= 1e-6 * w.abs().max(1.0))
    };
    assert!(close(unary("Exp"), [0.25f64.exp(), 1f64.exp(), 4f64.exp()]));
    assert!(close(unary("Log"), [0.25f64.ln(), 0., 4f64.ln()]));
    assert!(close(unary("Sin"), [0.25f64.sin(), 1f64.sin(), 4f64.sin()]));
    assert!(close(unary("Cos"), [0.25f64.cos(), 1f64.cos(), 4f64.cos()]));
}

mod optim;

mod select;

#[test]
fn complex_tensors_are_filled_copied_and_cast_as_pairs_of_parts() {
    let mem = Host::default();
    // A complex64 [3] at 0x100, parts
    // (1, -1), (2, -2), (3, -3); a complex128 [3] at 0x200.
    mem.put(0x100, DType::F32, &[1., -1., 2., -2., 3., -3.]);
    let c64 = View::new_complex(DType::F32, &[3], &[1], 0, 2, &[3], 0x100).unwrap();
    let c128 = View::new_complex(DType::F64, &[3], &[1], 0, 2, &[3], 0x200).unwrap();
    assert_eq!((c64.acl_dtype(), c128.acl_dtype()), (16, 17));
    assert_eq!(c64.dims, [3, 2]);
    Plan::new(
        "aclnnCast",
        Kind::Copy,
        vec![Arg::Tensor(c64.clone())],
        c128.clone(),
    )
    .unwrap()
    .run(&mem)
    .unwrap();
    assert_eq!(mem.get(0x200, DType::F64, 6), [1., -1., 2., -2., 3., -3.]);
    // Real into complex: imaginary parts 0; complex into real: real parts.
    let real = View::new(DType::F32, &[3], &[1], 0, 2, &[3], 0x300).unwrap();
    mem.put(0x300, DType::F32, &[7., 8., 9.]);
    Plan::new(
        "aclnnCast",
        Kind::Copy,
        vec![Arg::Tensor(real.clone())],
        c128.clone(),
    )
    .unwrap()
    .run(&mem)
    .unwrap();
    assert_eq!(mem.get(0x200, DType::F64, 6), [7., 0., 8., 0., 9., 0.]);
    Plan::new(
        "aclnnCast",
        Kind::Copy,
        vec![Arg::Tensor(c64.clone())],
        real.clone(),
    )
    .unwrap()
    .run(&mem)
    .unwrap();
    assert_eq!(mem.get(0x300, DType::F32, 3), [1., 2., 3.]);
    // A complex fill, and a real one (zero, one) into a complex view.
    Plan::fill_complex("aclnnInplaceFillScalar", c64.clone(), Num::F(1.5), -2.0)
        .unwrap()
        .run(&mem)
        .unwrap();
    assert_eq!(
        mem.get(0x100, DType::F32, 6),
        [1.5, -2., 1.5, -2., 1.5, -2.]
    );
    Plan::new(
        "aclnnInplaceOne",
        Kind::Fill(Num::I(1)),
        Vec::new(),
        c64.clone(),
    )
    .unwrap()
    .run(&mem)
    .unwrap();
    assert_eq!(mem.get(0x100, DType::F32, 6), [1., 0., 1., 0., 1., 0.]);
    // Arithmetic on complex numbers is not computed: refused.
    for kind in [
        Kind::Binary {
            kernel: "Add",
            alpha: None,
        },
        Kind::Unary("Neg"),
        Kind::Reduce {
            kernel: "ReduceSum",
            axes: Vec::new(),
            keep: false,
        },
    ] {
        let args = match kind {
            Kind::Binary { .. } => vec![Arg::Tensor(c64.clone()), Arg::Tensor(c64.clone())],
            _ => vec![Arg::Tensor(c64.clone())],
        };
        let out = if matches!(kind, Kind::Reduce { .. }) {
            View::new(DType::F32, &[], &[], 0, 2, &[1], 0x400).unwrap()
        } else {
            c64.clone()
        };
        assert_eq!(
            Plan::new("aclnnX", kind, args, out).err(),
            Some(AclError::INVALID_PARAM)
        );
    }
}
