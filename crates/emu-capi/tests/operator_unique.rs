//! `UniqueWithCountsAndSorting` through the C ABI as torch_npu launches
//! it (`torch.unique`): outputs allocated for the most, the real lengths
//! handed back through V2's output descriptors (V1 leaves them), the
//! values, inverse and counts on device memory; a call whose buffers are
//! too small is refused and writes nothing.

mod common;

use std::ffi::{CString, c_char, c_void};
use std::ptr;

use aclmem_emu_capi::ops::*;
use common::*;

const I64: i32 = 9;

/// A descriptor of `dims` over `data` of `bytes`.
fn operand(
    dtype: i32,
    dims: &[i64],
    data: *mut c_void,
    bytes: usize,
) -> (*mut c_void, *mut c_void) {
    let desc = aclCreateTensorDesc(dtype, dims.len() as i32, dims.as_ptr(), ND);
    assert!(!desc.is_null());
    (desc, aclCreateDataBuffer(data, bytes))
}

fn dims(desc: *mut c_void) -> Vec<i64> {
    (0..aclGetTensorDescNumDims(desc))
        .map(|i| {
            let mut d = 0;
            // SAFETY: a live descriptor and a live local out parameter.
            assert_eq!(unsafe { aclGetTensorDescDimV2(desc, i, &mut d) }, 0);
            d
        })
        .collect()
}

fn int64s(p: *mut c_void, n: usize) -> Vec<i64> {
    from_device(p, n * 8)
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

type Execute = unsafe extern "C" fn(
    *const c_char,
    i32,
    *const *const c_void,
    *const *const c_void,
    i32,
    *const *const c_void,
    *const *const c_void,
    *const c_void,
    i32,
    i32,
    *const c_char,
    *mut c_void,
) -> i32;

/// Runs `op` on one input into `outs` with `attr` through `execute`.
fn run(
    execute: Execute,
    op: &str,
    input: (*mut c_void, *mut c_void),
    outs: &[(*mut c_void, *mut c_void)],
    attr: *mut c_void,
) -> i32 {
    let name = CString::new(op).unwrap();
    let (in_desc, in_buf) = ([input.0 as *const c_void], [input.1 as *const c_void]);
    let out_desc: Vec<*const c_void> = outs.iter().map(|o| o.0 as *const c_void).collect();
    let out_buf: Vec<*const c_void> = outs.iter().map(|o| o.1 as *const c_void).collect();
    // SAFETY: arrays of live handles, as long as the counts say.
    unsafe {
        execute(
            name.as_ptr(),
            1,
            in_desc.as_ptr(),
            in_buf.as_ptr(),
            outs.len() as i32,
            out_desc.as_ptr(),
            out_buf.as_ptr(),
            attr,
            0,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    }
}

#[test]
fn unique_hands_its_lengths_back_through_v2s_descriptors() {
    init("unique", "Ascend910B1", "9.0");
    set("ACLMEM_EMU_QUIET", "1");
    let x = [3.0f32, -1.0, 3.0, 0.5, -1.0, 3.0];
    let dx = device(64);
    floats(dx, &x);
    let input = operand(ACL_FLOAT, &[2, 3], dx, 24);
    let attr = aclopCreateAttr();
    for (name, on) in [("sorted", 1), ("return_inverse", 1), ("return_counts", 1)] {
        let name = CString::new(name).unwrap();
        assert_eq!(aclopSetAttrBool(attr, name.as_ptr(), on), 0);
    }
    // As torch_npu allocates them: y and counts of the element count, the
    // inverse of x's shape, all filled with a marker.
    let (dy, dinv, dcnt) = (device(64), device(64), device(64));
    for p in [dy, dinv, dcnt] {
        to_device(p, &[0xAB; 64]);
    }
    let y = operand(ACL_FLOAT, &[6], dy, 24);
    let inverse = operand(I64, &[2, 3], dinv, 48);
    let counts = operand(I64, &[6], dcnt, 48);
    let outs = [y, inverse, counts];

    // V1: computed, the descriptors the caller's constants.
    assert_eq!(
        run(
            aclopCompileAndExecute,
            "UniqueWithCountsAndSorting",
            input,
            &outs,
            attr
        ),
        0
    );
    assert_eq!((dims(y.0), dims(counts.0)), (vec![6], vec![6]));
    // V2: y and counts become [3]; the inverse keeps x's shape.
    assert_eq!(
        run(
            aclopCompileAndExecuteV2,
            "UniqueWithCountsAndSorting",
            input,
            &outs,
            attr
        ),
        0
    );
    assert_eq!(dims(y.0), [3]);
    assert_eq!(dims(counts.0), [3]);
    assert_eq!(dims(inverse.0), [2, 3]);
    assert_eq!(read(dy, 3), [-1.0, 0.5, 3.0]);
    assert_eq!(int64s(dinv, 6), [2, 0, 2, 1, 0, 2]);
    assert_eq!(int64s(dcnt, 3), [2, 1, 3]);
    // Beyond the distinct values, the buffers keep what they held.
    assert_eq!(from_device(dy, 24)[12..], [0xAB; 12]);

    // A y too small for the distinct values: refused, nothing written.
    let fresh = device(64);
    to_device(fresh, &[0xCD; 64]);
    let small = operand(ACL_FLOAT, &[2], fresh, 8);
    let code = run(
        aclopCompileAndExecuteV2,
        "UniqueWithCountsAndSorting",
        input,
        &[small, inverse, counts],
        attr,
    );
    assert_eq!(code, 100_022);
    assert_eq!(dims(small.0), [2]);
    assert_eq!(from_device(fresh, 8), [0xCD; 8]);
    // Float counts: 100020.
    let fcounts = operand(ACL_FLOAT, &[6], fresh, 24);
    let code = run(
        aclopCompileAndExecuteV2,
        "UniqueWithCountsAndSorting",
        input,
        &[y, inverse, fcounts],
        attr,
    );
    assert_eq!(code, 100_020);

    for (d, b) in [input, y, inverse, counts, small, fcounts] {
        aclDestroyTensorDesc(d);
        assert_eq!(aclDestroyDataBuffer(b), 0);
    }
    aclopDestroyAttr(attr);
    finalize();
}
