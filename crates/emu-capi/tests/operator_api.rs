//! The operator API (`aclnn*`) through the C functions: tensors over
//! device memory, an operator's workspace query and its run on a stream,
//! values compared; NULL, dead and reused handles answered with the
//! operator API's codes; an operator captured into a graph and replayed on
//! new input.

mod common;

use std::ffi::c_void;
use std::ptr;

use aclmem_emu_capi::*;
use common::*;

/// `aclnnAdd(a, b, alpha, out)` on `stream`.
fn add(
    a: *mut c_void,
    b: *mut c_void,
    alpha: *mut c_void,
    out: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    let (mut ws, mut exec) = (u64::MAX, ptr::null_mut());
    let code = aclnnAddGetWorkspaceSize(a, b, alpha, out, &mut ws, &mut exec);
    if code != 0 {
        return code;
    }
    assert_eq!(ws, 0);
    aclnnAdd(ptr::null_mut(), 0, exec, stream)
}

#[test]
fn the_operator_api_computes_checks_and_is_captured() {
    init("aclnn", "Ascend910B1", "9.0");
    let (da, db, dout) = (device(64), device(64), device(64));
    floats(da, &[1., 2., 3., 4.]);
    floats(db, &[10., 20., 30., 40.]);
    let (a, b, out) = (
        tensor(&[2, 2], da),
        tensor(&[2, 2], db),
        tensor(&[2, 2], dout),
    );
    let half = scalar(0.5);
    assert_eq!(add(a, b, half, out, ptr::null_mut()), 0);
    assert_eq!(read(dout, 4), [6., 12., 18., 24.]);

    // Refusals: NULL tensors and out parameters, shapes that do not fit,
    // an executor run twice, an object destroyed twice.
    let (mut ws, mut exec) = (0u64, ptr::null_mut());
    assert_eq!(
        aclnnAddGetWorkspaceSize(ptr::null(), b, half, out, &mut ws, &mut exec),
        NULLPTR
    );
    assert_eq!(
        aclnnAddGetWorkspaceSize(a, b, half, out, ptr::null_mut(), &mut exec),
        NULLPTR
    );
    assert_eq!(
        aclnnAddGetWorkspaceSize(a, b, half, out, &mut ws, ptr::null_mut()),
        NULLPTR
    );
    let row = tensor(&[3], db);
    assert_eq!(
        aclnnAddGetWorkspaceSize(a, row, half, out, &mut ws, &mut exec),
        PARAM_INVALID
    );
    assert_eq!(
        aclnnAddGetWorkspaceSize(a, b, half, out, &mut ws, &mut exec),
        0
    );
    assert_eq!(aclnnAdd(ptr::null_mut(), 0, exec, ptr::null_mut()), 0);
    assert_eq!(aclnnAdd(ptr::null_mut(), 0, exec, ptr::null_mut()), NULLPTR);
    assert_eq!(
        aclnnAdd(ptr::null_mut(), 0, 0x1234 as *mut c_void, ptr::null_mut()),
        NULLPTR
    );
    assert_eq!(aclDestroyTensor(row), 0);
    assert_eq!(aclDestroyTensor(row), NULLPTR);
    assert_eq!(
        aclDestroyTensor(half.cast_const()),
        NULLPTR,
        "a scalar is not a tensor"
    );
    // A view outside its storage makes no tensor.
    let dims = [4i64];
    let strides = [2i64];
    let storage = [4i64];
    let outside = aclCreateTensor(
        dims.as_ptr(),
        1,
        ACL_FLOAT,
        strides.as_ptr(),
        0,
        ND,
        storage.as_ptr(),
        1,
        da,
    );
    assert!(outside.is_null());
    assert!(aclCreateScalar(ptr::null_mut(), ACL_DOUBLE).is_null());

    // Captured: the add is recorded, not run; each replay runs it on the
    // buffers' data then.
    let mut s = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, 0);
    let one = scalar(1.0);
    floats(dout, &[0.; 4]);
    assert_eq!(aclmdlRICaptureBegin(s, 0), 0);
    assert_eq!(add(a, b, one, out, s), 0);
    let mut model = ptr::null_mut();
    // SAFETY: a live local out parameter.
    assert_eq!(unsafe { aclmdlRICaptureEnd(s, &mut model) }, 0);
    assert_eq!(read(dout, 4), [0.; 4], "nothing ran while captured");
    for k in 1..=2 {
        floats(da, &[k as f32; 4]);
        assert_eq!(aclmdlRIExecuteAsync(model, s), 0);
        let want = [
            10. + k as f32,
            20. + k as f32,
            30. + k as f32,
            40. + k as f32,
        ];
        assert_eq!(read(dout, 4), want);
    }
    assert_eq!(aclmdlRIDestroy(model), 0);

    for o in [a, b, out] {
        assert_eq!(aclDestroyTensor(o), 0);
    }
    assert_eq!(aclDestroyScalar(half), 0);
    assert_eq!(aclDestroyScalar(one), 0);
    assert_eq!(aclmem_ops::aclnn::live(), 0, "every object destroyed");
    assert_eq!(aclrtDestroyStream(s), 0);
    finalize();
}
