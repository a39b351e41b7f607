//! The operator API's list operators (`aclnnForeach*`) through the C
//! functions: lists of device tensors updated in place, values compared;
//! lists of different lengths, NULL and dead lists answered with the
//! operator API's codes and nothing written.

mod common;

use std::ffi::c_void;
use std::ptr;

use aclmem_emu_capi::*;
use common::*;

/// A list of new tensors over `bufs` (the list owns them).
fn list(bufs: &[(i64, *mut c_void)]) -> *mut c_void {
    let ts: Vec<*const c_void> = bufs
        .iter()
        .map(|&(n, p)| tensor(&[n], p).cast_const())
        .collect();
    let l = aclCreateTensorList(ts.as_ptr(), ts.len() as u64);
    assert!(!l.is_null());
    l
}

#[test]
fn list_operators_update_every_tensor_and_refuse_mismatched_lists() {
    init("aclnn-foreach", "Ascend910B1", "9.0");
    let (a, b, g) = (device(64), device(64), device(64));
    floats(a, &[1., 2.]);
    floats(b, &[3., 4., 5.]);
    floats(g, &[4., 4., 4., 4., 4.]);
    let params = [(2, a), (3, b)];
    let (mut ws, mut exec) = (u64::MAX, ptr::null_mut());

    // params.mul_(0.5), in place: the output list is the input's.
    let (x, out, half) = (list(&params), list(&params), scalar(0.5));
    assert_eq!(
        aclnnForeachMulScalarV2GetWorkspaceSize(x, half, out, &mut ws, &mut exec),
        0
    );
    assert_eq!(ws, 0);
    assert_eq!(
        aclnnForeachMulScalarV2(ptr::null_mut(), 0, exec, ptr::null_mut()),
        0
    );
    assert_eq!(
        (read(a, 2), read(b, 3)),
        (vec![0.5, 1.], vec![1.5, 2., 2.5])
    );

    // params.addcdiv_(grads, grads, -1) with grads over one buffer; then
    // each tensor's 2-norm.
    let grads = list(&[(2, g), (3, offset(g, 8))]);
    let (x2, out2, minus) = (list(&params), list(&params), scalar(-1.0));
    let code = aclnnForeachAddcdivScalarV2GetWorkspaceSize(
        x2, grads, grads, minus, out2, &mut ws, &mut exec,
    );
    assert_eq!(code, 0);
    assert_eq!(
        aclnnForeachAddcdivScalarV2(ptr::null_mut(), 0, exec, ptr::null_mut()),
        0
    );
    assert_eq!(
        (read(a, 2), read(b, 3)),
        (vec![-0.5, 0.], vec![0.5, 1., 1.5])
    );
    let (n1, n2) = (device(64), device(64));
    let norms = {
        let (d, s) = ([0i64; 0], [0i64; 0]);
        let one = [1i64];
        let t = |p| {
            aclCreateTensor(
                d.as_ptr(),
                0,
                ACL_FLOAT,
                s.as_ptr(),
                0,
                ND,
                one.as_ptr(),
                1,
                p,
            )
            .cast_const()
        };
        let ts = [t(n1), t(n2)];
        aclCreateTensorList(ts.as_ptr(), 2)
    };
    let (x3, two) = (list(&params), scalar(2.0));
    assert_eq!(
        aclnnForeachNormGetWorkspaceSize(x3, two, norms, &mut ws, &mut exec),
        0
    );
    assert_eq!(
        aclnnForeachNorm(ptr::null_mut(), 0, exec, ptr::null_mut()),
        0
    );
    assert_eq!((read(n1, 1), read(n2, 1)), (vec![0.5], vec![3.5f32.sqrt()]));

    // Refusals: lists of other lengths, a NULL or dead list, a NULL
    // scalar; nothing is written.
    let short = list(&params[..1]);
    assert_eq!(
        aclnnForeachMulScalarV2GetWorkspaceSize(x, half, short, &mut ws, &mut exec),
        PARAM_INVALID
    );
    assert_eq!(
        aclnnForeachMulScalarV2GetWorkspaceSize(ptr::null(), half, out, &mut ws, &mut exec),
        NULLPTR
    );
    assert_eq!(
        aclnnForeachMulScalarV2GetWorkspaceSize(x, ptr::null(), out, &mut ws, &mut exec),
        NULLPTR
    );
    assert_eq!(aclDestroyTensorList(short), 0);
    assert_eq!(
        aclnnForeachMulScalarV2GetWorkspaceSize(x, half, short, &mut ws, &mut exec),
        NULLPTR
    );
    assert_eq!(
        (read(a, 2), read(b, 3)),
        (vec![-0.5, 0.], vec![0.5, 1., 1.5])
    );
    for l in [x, out, x2, out2, grads, x3, norms] {
        assert_eq!(aclDestroyTensorList(l), 0);
    }
    for s in [half, minus, two] {
        assert_eq!(aclDestroyScalar(s), 0);
    }
}

/// `p + bytes`.
fn offset(p: *mut c_void, bytes: usize) -> *mut c_void {
    p.wrapping_byte_add(bytes)
}
