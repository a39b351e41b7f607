//! `aclnnVarMean` through the C functions, as torch_npu's `var_mean`
//! calls it (the variance first, then the mean): along one axis, over
//! every axis with correction 0 and kept; the refusals.

mod common;

use std::ptr;

use aclmem_emu_capi::*;
use common::*;

const ACL_INT32: i32 = 3;

/// `Σ (x - mean)² / (n - c)` and the mean.
fn var_mean(v: &[f32], c: f32) -> (f32, f32) {
    let n = v.len() as f32;
    let m = v.iter().sum::<f32>() / n;
    (
        v.iter().map(|x| (x - m) * (x - m)).sum::<f32>() / (n - c),
        m,
    )
}

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "{got:?} vs {want:?}"
        );
    }
}

#[test]
fn var_mean_computes_both_outputs_and_refuses_what_does_not_fit() {
    init("aclnn-var-mean", "Ascend910B1", "9.0");
    let x_values = [1., 4., 2., 8., -3., 5.];
    let (dx, dv, dm) = (device(64), device(64), device(64));
    floats(dx, &x_values);
    let x = tensor(&[2, 3], dx);
    let (var, mean) = (tensor(&[2], dv), tensor(&[2], dm));
    let last = aclCreateIntArray([1i64].as_ptr(), 1);
    let (mut ws, mut exec) = (u64::MAX, ptr::null_mut());
    assert_eq!(
        aclnnVarMeanGetWorkspaceSize(x, last, 1, 0, var, mean, &mut ws, &mut exec),
        0
    );
    assert_eq!(aclnnVarMean(ptr::null_mut(), ws, exec, ptr::null_mut()), 0);
    let (r0, r1) = (var_mean(&x_values[..3], 1.0), var_mean(&x_values[3..], 1.0));
    close(&read(dv, 2), &[r0.0, r1.0]);
    close(&read(dm, 2), &[r0.1, r1.1]);

    // Every axis (torch_npu lists them), correction 0, kept as [1, 1].
    let all = aclCreateIntArray([0i64, 1].as_ptr(), 2);
    let (var1, mean1) = (tensor(&[1, 1], dv), tensor(&[1, 1], dm));
    assert_eq!(
        aclnnVarMeanGetWorkspaceSize(x, all, 0, 1, var1, mean1, &mut ws, &mut exec),
        0
    );
    assert_eq!(aclnnVarMean(ptr::null_mut(), ws, exec, ptr::null_mut()), 0);
    let whole = var_mean(&x_values, 0.0);
    close(&read(dv, 1), &[whole.0]);
    close(&read(dm, 1), &[whole.1]);

    // NULL dims; an output of the wrong shape; an integer output.
    assert_eq!(
        aclnnVarMeanGetWorkspaceSize(x, ptr::null(), 1, 0, var, mean, &mut ws, &mut exec),
        NULLPTR
    );
    let wrong = tensor(&[3], dv);
    assert_eq!(
        aclnnVarMeanGetWorkspaceSize(x, last, 1, 0, wrong, mean, &mut ws, &mut exec),
        PARAM_INVALID
    );
    let (dims, strides, storage) = ([2i64], [1i64], [2i64]);
    let ints = aclCreateTensor(
        dims.as_ptr(),
        1,
        ACL_INT32,
        strides.as_ptr(),
        0,
        ND,
        storage.as_ptr(),
        1,
        dv,
    );
    assert!(!ints.is_null());
    assert_eq!(
        aclnnVarMeanGetWorkspaceSize(x, last, 1, 0, ints, mean, &mut ws, &mut exec),
        PARAM_INVALID
    );
    for t in [x, var, mean, var1, mean1, wrong, ints] {
        assert_eq!(aclDestroyTensor(t), 0);
    }
    assert_eq!(aclDestroyIntArray(last), 0);
    assert_eq!(aclDestroyIntArray(all), 0);
    finalize();
}
