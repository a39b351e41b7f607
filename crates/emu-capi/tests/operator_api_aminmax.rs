//! `aclnnAminmax` through the C functions, as torch_npu's `aminmax` calls
//! it: over every axis (torch_npu lists them) and along one, kept or not,
//! in float32, float16, bfloat16 and int32; NaN wins; the refusals.

mod common;

use std::ffi::c_void;
use std::ptr;

use aclmem_emu_capi::*;
use common::*;

const ACL_FLOAT16: i32 = 1;
const ACL_INT32: i32 = 3;
const ACL_BF16: i32 = 27;

/// A contiguous tensor of `dtype` and `dims` over `data`.
fn typed(dtype: i32, dims: &[i64], data: *mut c_void) -> *mut c_void {
    let strides: Vec<i64> = (0..dims.len())
        .map(|i| dims[i + 1..].iter().product())
        .collect();
    let n = [dims.iter().product::<i64>()];
    let t = aclCreateTensor(
        dims.as_ptr(),
        dims.len() as u64,
        dtype,
        strides.as_ptr(),
        0,
        ND,
        n.as_ptr(),
        1,
        data,
    );
    assert!(!t.is_null());
    t
}

/// `values` in `dtype`'s bytes, and back.
fn encode(dtype: i32, values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| match dtype {
            ACL_FLOAT => v.to_le_bytes().to_vec(),
            ACL_FLOAT16 => half::f16::from_f32(v).to_le_bytes().to_vec(),
            ACL_BF16 => half::bf16::from_f32(v).to_le_bytes().to_vec(),
            _ => (v as i32).to_le_bytes().to_vec(),
        })
        .collect()
}

fn decode(dtype: i32, bytes: &[u8]) -> Vec<f32> {
    let size = if matches!(dtype, ACL_FLOAT16 | ACL_BF16) {
        2
    } else {
        4
    };
    bytes
        .chunks(size)
        .map(|c| match dtype {
            ACL_FLOAT => f32::from_le_bytes(c.try_into().unwrap()),
            ACL_FLOAT16 => half::f16::from_le_bytes(c.try_into().unwrap()).to_f32(),
            ACL_BF16 => half::bf16::from_le_bytes(c.try_into().unwrap()).to_f32(),
            _ => i32::from_le_bytes(c.try_into().unwrap()) as f32,
        })
        .collect()
}

/// Runs aclnnAminmax over `axes` of a [2, 3] tensor of `values`; the
/// outputs of `out_dims`.
fn aminmax(
    dtype: i32,
    values: &[f32],
    axes: &[i64],
    keep: bool,
    out_dims: &[i64],
) -> (Vec<f32>, Vec<f32>) {
    let (dx, dlo, dhi) = (device(64), device(64), device(64));
    to_device(dx, &encode(dtype, values));
    let x = typed(dtype, &[2, 3], dx);
    let (lo, hi) = (typed(dtype, out_dims, dlo), typed(dtype, out_dims, dhi));
    let dim = aclCreateIntArray(axes.as_ptr(), axes.len() as u64);
    let (mut ws, mut exec) = (u64::MAX, ptr::null_mut());
    assert_eq!(
        aclnnAminmaxGetWorkspaceSize(x, dim, u8::from(keep), lo, hi, &mut ws, &mut exec),
        0
    );
    assert_eq!(aclnnAminmax(ptr::null_mut(), ws, exec, ptr::null_mut()), 0);
    let n = out_dims.iter().product::<i64>() as usize;
    let size = if matches!(dtype, ACL_FLOAT16 | ACL_BF16) {
        2
    } else {
        4
    };
    let got = (
        decode(dtype, &from_device(dlo, n * size)),
        decode(dtype, &from_device(dhi, n * size)),
    );
    for t in [x, lo, hi] {
        assert_eq!(aclDestroyTensor(t), 0);
    }
    assert_eq!(aclDestroyIntArray(dim), 0);
    got
}

#[test]
fn aminmax_gives_both_extremes_in_every_type_and_refuses_what_does_not_fit() {
    init("aclnn-aminmax", "Ascend910B1", "9.0");
    let x = [1.5, -4.0, 2.0, 8.0, -3.0, 5.25];
    for dtype in [ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32] {
        let held = decode(dtype, &encode(dtype, &x));
        let (lo, hi) = aminmax(dtype, &x, &[0, 1], false, &[]);
        assert_eq!((lo, hi), (vec![held[1]], vec![held[3]]), "{dtype}");
        let (lo, hi) = aminmax(dtype, &x, &[1], false, &[2]);
        assert_eq!(lo, [held[1], held[4]], "{dtype}");
        assert_eq!(hi, [held[2], held[3]], "{dtype}");
        let (lo, hi) = aminmax(dtype, &x, &[-2], true, &[1, 3]);
        assert_eq!(lo, [held[0], held[1], held[2]], "{dtype}");
        assert_eq!(hi, [held[3], held[4], held[5]], "{dtype}");
    }
    // NaN wins, in both.
    let (lo, hi) = aminmax(
        ACL_FLOAT,
        &[1.0, f32::NAN, 2.0, 3.0, 4.0, 5.0],
        &[1],
        false,
        &[2],
    );
    assert!(lo[0].is_nan() && hi[0].is_nan());
    assert_eq!((lo[1], hi[1]), (3.0, 5.0));

    // NULL dims; an output of the wrong shape or type.
    let (dx, dlo, dhi) = (device(64), device(64), device(64));
    floats(dx, &x);
    let x = tensor(&[2, 3], dx);
    let (lo, hi) = (tensor(&[2], dlo), tensor(&[2], dhi));
    let last = aclCreateIntArray([1i64].as_ptr(), 1);
    let (mut ws, mut exec) = (u64::MAX, ptr::null_mut());
    assert_eq!(
        aclnnAminmaxGetWorkspaceSize(x, ptr::null(), 0, lo, hi, &mut ws, &mut exec),
        NULLPTR
    );
    let wrong = tensor(&[3], dhi);
    assert_eq!(
        aclnnAminmaxGetWorkspaceSize(x, last, 0, lo, wrong, &mut ws, &mut exec),
        PARAM_INVALID
    );
    let ints = typed(ACL_INT32, &[2], dhi);
    assert_eq!(
        aclnnAminmaxGetWorkspaceSize(x, last, 0, lo, ints, &mut ws, &mut exec),
        PARAM_INVALID
    );
    for t in [x, lo, hi, wrong, ints] {
        assert_eq!(aclDestroyTensor(t), 0);
    }
    assert_eq!(aclDestroyIntArray(last), 0);
    finalize();
}
