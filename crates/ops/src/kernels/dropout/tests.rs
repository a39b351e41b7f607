//! The dropout mask's length, bits and reproducibility, DropOutDoMask in
//! every float type, its gradient (itself) against finite differences,
//! and the refusals.

use super::super::testing::*;
use super::*;

const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::Bf16, DType::F64];

fn gen_inputs(
    dims: &[i64],
    keep: f64,
    ptype: DType,
    seed: i64,
    offset: i64,
) -> Vec<(Spec, Vec<u8>)> {
    vec![
        ints(DType::I64, &[dims.len()], dims),
        t(ptype, &[], &[keep]),
        ints(DType::I32, &[], &[seed]),
        ints(DType::I32, &[], &[0]),
        ints(DType::I64, &[2], &[0, offset]),
    ]
}

fn make_mask(dims: &[i64], keep: f64, seed: i64, offset: i64) -> Vec<u8> {
    let count: i64 = dims.iter().product();
    let len = mask_len(count as usize).unwrap();
    run1(
        "StatelessDropOutGenMask",
        gen_inputs(dims, keep, DType::F32, seed, offset),
        spec(DType::U8, &[len]),
        OpAttr::new(),
    )
    .unwrap()
    .into_iter()
    .map(|v| v as u8)
    .collect()
}

fn bit(mask: &[u8], i: usize) -> bool {
    mask[i / 8] >> (i % 8) & 1 == 1
}

#[test]
fn the_mask_is_as_long_as_torch_npu_allocates_it() {
    // The element count rounded up to 128, over 8 bytes.
    for (count, len) in [
        (0, 0),
        (1, 16),
        (127, 16),
        (128, 16),
        (129, 32),
        (1000, 128),
    ] {
        assert_eq!(mask_len(count), Some(len), "{count}");
    }
    assert_eq!(make_mask(&[3, 5], 0.5, 1, 0).len(), 16);
    assert_eq!(make_mask(&[2, 100], 0.5, 1, 0).len(), 32);
}

#[test]
fn the_mask_keeps_about_keep_prob_and_pads_with_zeros() {
    let mask = make_mask(&[3, 1002, 1], 0.8, 7, 10);
    let count = 3 * 1002;
    assert_eq!(mask.len(), 384);
    let kept = (0..count).filter(|&i| bit(&mask, i)).count();
    let frac = kept as f64 / count as f64;
    // 3006 draws: the standard deviation of the fraction is about 0.007.
    assert!((frac - 0.8).abs() < 0.04, "{frac}");
    assert!((count..mask.len() * 8).all(|i| !bit(&mask, i)));
    // keep_prob 1 keeps all, 0 none.
    let all = make_mask(&[200], 1.0, 7, 10);
    assert!((0..200).all(|i| bit(&all, i)));
    assert!(make_mask(&[200], 0.0, 7, 10).iter().all(|&b| b == 0));
}

#[test]
fn the_same_seed_and_offset_give_the_same_mask_and_others_another() {
    let a = make_mask(&[500], 0.5, 42, 20);
    assert_eq!(a, make_mask(&[500], 0.5, 42, 20));
    assert_ne!(a, make_mask(&[500], 0.5, 42, 30));
    assert_ne!(a, make_mask(&[500], 0.5, 43, 20));
    // The mask depends on the count, not on how it is shaped.
    assert_eq!(a, make_mask(&[20, 25], 0.5, 42, 20));
}

#[test]
fn keep_prob_of_every_float_type_and_int64_seeds_are_taken() {
    for p in FLOATS {
        let mut inputs = gen_inputs(&[64], 0.5, p, 3, 0);
        inputs[2] = ints(DType::I64, &[], &[3]);
        let m = run1(
            "StatelessDropOutGenMask",
            inputs,
            spec(DType::U8, &[16]),
            OpAttr::new(),
        )
        .unwrap();
        let kept: u32 = m.iter().map(|&b| (b as u8).count_ones()).sum();
        assert!((16..=48).contains(&kept), "{p:?}: {kept}");
    }
}

#[test]
fn gen_mask_refusals() {
    let go = |inputs, out| run1("StatelessDropOutGenMask", inputs, out, OpAttr::new());
    let ok = || gen_inputs(&[10], 0.5, DType::F32, 1, 0);
    assert!(go(ok(), spec(DType::U8, &[16])).is_ok());
    assert_eq!(
        go(ok(), spec(DType::U8, &[10])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        go(ok(), spec(DType::I8, &[16])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let mut bad = ok();
    bad[1] = t(DType::F32, &[], &[1.5]);
    assert_eq!(
        go(bad, spec(DType::U8, &[16])),
        Err(AclError::INVALID_PARAM)
    );
    let mut bad = ok();
    bad[1] = ints(DType::I32, &[], &[1]);
    assert_eq!(
        go(bad, spec(DType::U8, &[16])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let mut bad = ok();
    bad[2] = t(DType::F32, &[], &[1.0]);
    assert_eq!(
        go(bad, spec(DType::U8, &[16])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let mut short = ok();
    short.pop();
    assert_eq!(
        go(short, spec(DType::U8, &[16])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

fn do_mask(x: &[f64], dtype: DType, mask: &[u8], keep: f64) -> Result<Vec<f64>, AclError> {
    run1(
        "DropOutDoMask",
        vec![
            t(dtype, &[x.len()], x),
            ints(
                DType::U8,
                &[mask.len()],
                &mask.iter().map(|&b| b as i64).collect::<Vec<_>>(),
            ),
            t(dtype, &[], &[keep]),
        ],
        spec(dtype, &[x.len()]),
        OpAttr::new(),
    )
}

#[test]
fn do_mask_scales_the_kept_and_zeroes_the_dropped_in_every_float_type() {
    let x = wavy(150, 3);
    let mask = make_mask(&[150], 0.75, 9, 0);
    for dtype in FLOATS {
        let keep = dtype.get(&dtype.bytes_of(Num::F(0.75))).f64();
        let y = do_mask(&x, dtype, &mask, keep).unwrap();
        let tol = if dtype == DType::Bf16 { 1e-2 } else { 1e-3 };
        let xr: Vec<f64> = x
            .iter()
            .map(|&v| dtype.get(&dtype.bytes_of(Num::F(v))).f64())
            .collect();
        let want: Vec<f64> = (0..150)
            .map(|i| if bit(&mask, i) { xr[i] / keep } else { 0.0 })
            .collect();
        close(&y, &want, tol);
        // keep_prob 0: all zero, no division.
        assert!(
            do_mask(&x, dtype, &mask, 0.0)
                .unwrap()
                .iter()
                .all(|&v| v == 0.0)
        );
    }
}

#[test]
fn do_masks_gradient_is_do_mask_of_the_upstream_gradient() {
    let x = wavy(40, 5);
    let dy = wavy(40, 8);
    let mask = make_mask(&[40], 0.6, 2, 4);
    let f = |x: &[f64]| do_mask(x, DType::F64, &mask, 0.6).unwrap();
    let numeric = numeric_grad(f, &x, &dy);
    close(
        &do_mask(&dy, DType::F64, &mask, 0.6).unwrap(),
        &numeric,
        1e-6,
    );
}

#[test]
fn do_mask_refusals() {
    let x = wavy(10, 1);
    let go = |inputs, out| run1("DropOutDoMask", inputs, out, OpAttr::new());
    let mask = |len: usize, dtype| ints(dtype, &[len], &vec![255; len]);
    let inputs = |m, keep| vec![t(DType::F32, &[10], &x), m, t(DType::F32, &[], &[keep])];
    assert!(go(inputs(mask(16, DType::U8), 0.5), spec(DType::F32, &[10])).is_ok());
    assert_eq!(
        go(inputs(mask(2, DType::U8), 0.5), spec(DType::F32, &[10])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        go(inputs(mask(16, DType::Bool), 0.5), spec(DType::F32, &[10])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        go(inputs(mask(16, DType::U8), 0.5), spec(DType::F16, &[10])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    assert_eq!(
        go(inputs(mask(16, DType::U8), 0.5), spec(DType::F32, &[9])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        go(inputs(mask(16, DType::U8), -0.1), spec(DType::F32, &[10])),
        Err(AclError::INVALID_PARAM)
    );
    let ints_x = vec![
        ints(DType::I32, &[10], &[1; 10]),
        mask(16, DType::U8),
        t(DType::F32, &[], &[0.5]),
    ];
    assert_eq!(
        go(ints_x, spec(DType::I32, &[10])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
