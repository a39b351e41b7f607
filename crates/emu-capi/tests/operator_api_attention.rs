//! The operator API's fused attention through the C functions: one head
//! whose attention is known by hand (uniform keys give the values' mean),
//! the gradient's pass, and the refusals with the operator API's codes,
//! nothing written.

mod common;

use std::ffi::{c_char, c_void};
use std::ptr;

use aclmem_emu_capi::*;
use common::*;

const NONE: *const c_void = ptr::null();
const NO_BAND: i64 = 2_147_483_647;

/// Makes the forward's executor over `[1, 1, S, D]` tensors; its code.
fn forward(
    layout: &std::ffi::CStr,
    [q, k, v, out, max, sum]: [*mut c_void; 6],
    pse: *const c_void,
    exec: &mut *mut c_void,
) -> i32 {
    let mut ws = u64::MAX;
    aclnnFlashAttentionScoreGetWorkspaceSize(
        q,
        k,
        v,
        pse,
        NONE,
        NONE,
        NONE,
        NONE,
        0.5,
        1.0,
        NO_BAND,
        NO_BAND,
        1,
        layout.as_ptr() as *const c_char,
        0,
        0,
        max,
        sum,
        NONE,
        out,
        &mut ws,
        exec,
    )
}

#[test]
fn attention_over_equal_scores_is_the_mean_and_refusals_write_nothing() {
    init("aclnn-attention", "Ascend910B1", "9.0");
    // One head, S0 = 1, S1 = 3, D = 2: a zero query scores every key 0,
    // so the attention is the mean of the values.
    let (qb, kb, vb, ob) = (device(64), device(64), device(64), device(64));
    let (mb, sb) = (device(64), device(64));
    floats(qb, &[0., 0.]);
    floats(kb, &[1., 2., 3., 4., 5., 6.]);
    floats(vb, &[1., 10., 2., 20., 6., 60.]);
    floats(ob, &[-7., -7.]);
    let q = tensor(&[1, 1, 1, 2], qb);
    let k = tensor(&[1, 1, 3, 2], kb);
    let v = tensor(&[1, 1, 3, 2], vb);
    let out = tensor(&[1, 1, 1, 2], ob);
    let (max, sum) = (tensor(&[1, 1, 1, 8], mb), tensor(&[1, 1, 1, 8], sb));
    let all = [q, k, v, out, max, sum];

    // Refusals: a layout not emulated, a positional bias, a NULL tensor.
    let mut exec = ptr::null_mut();
    assert_eq!(forward(c"TND", all, NONE, &mut exec), PARAM_INVALID);
    assert_eq!(forward(c"BNSD", all, q, &mut exec), PARAM_INVALID);
    let mut no_query = all;
    no_query[0] = ptr::null_mut();
    assert_eq!(forward(c"BNSD", no_query, NONE, &mut exec), NULLPTR);
    assert!(exec.is_null());
    assert_eq!(read(ob, 2), vec![-7., -7.], "nothing written");

    assert_eq!(forward(c"BNSD", all, NONE, &mut exec), 0);
    assert_eq!(
        aclnnFlashAttentionScore(ptr::null_mut(), 0, exec, ptr::null_mut()),
        0
    );
    assert_eq!(read(ob, 2), vec![3., 30.]);
    assert_eq!(read(mb, 8), vec![0.; 8], "each row's maximum score");
    assert_eq!(read(sb, 8), vec![3.; 8], "each row's sum of exponentials");

    // The gradient of the attention's sum (dy all ones): each value's
    // is its probability, 1/3; the query's follows from the scores'.
    let (dyb, dqb, dkb, dvb) = (device(64), device(64), device(64), device(64));
    floats(dyb, &[1., 1.]);
    let (dy, dq, dk, dv) = (
        tensor(&[1, 1, 1, 2], dyb),
        tensor(&[1, 1, 1, 2], dqb),
        tensor(&[1, 1, 3, 2], dkb),
        tensor(&[1, 1, 3, 2], dvb),
    );
    let mut ws = u64::MAX;
    let code = aclnnFlashAttentionScoreGradGetWorkspaceSize(
        q,
        k,
        v,
        dy,
        NONE,
        NONE,
        NONE,
        NONE,
        max,
        sum,
        NONE,
        out,
        NONE,
        0.5,
        1.0,
        NO_BAND,
        NO_BAND,
        1,
        c"BNSD".as_ptr(),
        0,
        0,
        dq,
        dk,
        dv,
        NONE,
        &mut ws,
        &mut exec,
    );
    assert_eq!((code, ws), (0, 0));
    assert_eq!(
        aclnnFlashAttentionScoreGrad(ptr::null_mut(), 0, exec, ptr::null_mut()),
        0
    );
    let third = 1.0f32 / 3.0;
    assert_eq!(read(dvb, 6), vec![third; 6]);
    // dS_j = P_j (dP_j - Σ P dP) / 2 with dP_j = v_j0 + v_j1 (11, 22, 66;
    // mean 33): dq = Σ_j dS_j k_j.
    let ds: Vec<f32> = [11f32, 22., 66.]
        .iter()
        .map(|dp| third * (dp - 33.) * 0.5)
        .collect();
    let want = [
        ds[0] * 1. + ds[1] * 3. + ds[2] * 5.,
        ds[0] * 2. + ds[1] * 4. + ds[2] * 6.,
    ];
    let got = read(dqb, 2);
    assert!(
        (got[0] - want[0]).abs() < 1e-4 && (got[1] - want[1]).abs() < 1e-4,
        "{got:?} {want:?}"
    );
    finalize();
}
