//! `aclnnSWhere` through the C functions, as torch's `_safe_softmax`
//! calls it: a bool condition broadcast along rows, a 0-dim operand, the
//! output the other operand (in place); the refusals.

mod common;

use std::ptr;

use aclmem_emu_capi::*;
use common::*;

const ACL_BOOL: i32 = 12;

#[test]
fn where_selects_in_place_with_a_broadcast_bool_condition() {
    init("aclnn-where", "Ascend910B1", "9.0");
    let (dc, dz, dx) = (device(64), device(64), device(64));
    to_device(dc, &[1, 0]);
    floats(dz, &[0.0]);
    floats(dx, &[1., 2., 3., 4., 5., 6.]);
    let (dims, strides, storage) = ([2i64, 1], [1i64, 1], [2i64]);
    let cond = aclCreateTensor(
        dims.as_ptr(),
        2,
        ACL_BOOL,
        strides.as_ptr(),
        0,
        ND,
        storage.as_ptr(),
        1,
        dc,
    );
    assert!(!cond.is_null());
    let zero = aclCreateTensor(
        ptr::null(),
        0,
        ACL_FLOAT,
        ptr::null(),
        0,
        ND,
        [1i64].as_ptr(),
        1,
        dz,
    );
    assert!(!zero.is_null());
    let x = tensor(&[2, 3], dx);
    let (mut ws, mut exec) = (u64::MAX, ptr::null_mut());
    assert_eq!(
        aclnnSWhereGetWorkspaceSize(cond, zero, x, x, &mut ws, &mut exec),
        0
    );
    assert_eq!(ws, 0);
    assert_eq!(aclnnSWhere(ptr::null_mut(), 0, exec, ptr::null_mut()), 0);
    assert_eq!(read(dx, 6), [0., 0., 0., 4., 5., 6.]);

    // NULL tensors, shapes that do not broadcast to the output.
    assert_eq!(
        aclnnSWhereGetWorkspaceSize(ptr::null(), zero, x, x, &mut ws, &mut exec),
        NULLPTR
    );
    let row = tensor(&[4], dz);
    assert_eq!(
        aclnnSWhereGetWorkspaceSize(cond, row, x, x, &mut ws, &mut exec),
        PARAM_INVALID
    );
    for t in [cond, zero, x, row] {
        assert_eq!(aclDestroyTensor(t), 0);
    }
    finalize();
}
