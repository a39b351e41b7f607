//! `aclnnSWhere`'s plan: a bool condition read in its own type, the
//! operands broadcast and converted, the output one of the inputs (what
//! torch's `_safe_softmax` asks: `where(rows, 0, out, out=out)`).

use super::*;

#[test]
fn where_broadcasts_a_bool_condition_into_one_of_its_inputs() {
    let mem = Host::default();
    mem.put(0x100, DType::Bool, &[1., 0.]); // condition: 2x1
    mem.put(0x200, DType::F16, &[0.]); // self: a 0-dim zero, fp16
    mem.put(0x300, DType::F32, &[1., 2., 3., 4., 5., 6.]); // other and out: 2x3
    let args = vec![
        Arg::Tensor(View::contiguous_at(DType::Bool, vec![2, 1], 0x100)),
        Arg::Tensor(View::contiguous_at(DType::F16, vec![], 0x200)),
        Arg::Tensor(view(&[2, 3], 0x300)),
    ];
    let plan = Plan::new("aclnnSWhere", Kind::Select, args, view(&[2, 3], 0x300)).unwrap();
    plan.run(&mem).unwrap();
    assert_eq!(mem.get(0x300, DType::F32, 6), [0., 0., 0., 4., 5., 6.]);
    // Integers too, and a shape that does not broadcast is refused.
    mem.put(0x400, DType::I64, &[7., 8.]);
    let ints = |dims: Vec<usize>| View::contiguous_at(DType::I64, dims, 0x400);
    let args = vec![
        Arg::Tensor(View::contiguous_at(DType::Bool, vec![2], 0x100)),
        Arg::Tensor(ints(vec![2])),
        Arg::Tensor(View::contiguous_at(DType::I64, vec![], 0x500)),
    ];
    let plan = Plan::new("aclnnSWhere", Kind::Select, args.clone(), ints(vec![2])).unwrap();
    plan.run(&mem).unwrap();
    assert_eq!(mem.get(0x400, DType::I64, 2), [7., 0.]);
    assert!(Plan::new("aclnnSWhere", Kind::Select, args, ints(vec![3])).is_err());
}
