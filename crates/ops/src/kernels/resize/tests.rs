//! Resizing: against PyTorch's definitions of `nearest` and `bilinear`
//! (both corner conventions), each float type, the gradients against
//! finite differences of the forward operators, refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn rs_attrs(align: bool, half: bool) -> OpAttr {
    attrs(&[
        ("align_corners", AttrValue::Bool(align)),
        ("half_pixel_centers", AttrValue::Bool(half)),
    ])
}

/// x `[1, 2, h, w]` resized to `[oh, ow]`.
fn fwd(op: &str, dtype: DType, x: &[f64], hw: [usize; 2], o: [usize; 2], a: OpAttr) -> Vec<f64> {
    run1(
        op,
        vec![
            t(dtype, &[1, 2, hw[0], hw[1]], x),
            ints(DType::I32, &[2], &[o[0] as i64, o[1] as i64]),
        ],
        spec(dtype, &[1, 2, o[0], o[1]]),
        a,
    )
    .unwrap()
}

/// PyTorch's source index and weight pairs on one axis.
fn torch_taps(bilinear: bool, align: bool, input: usize, output: usize) -> Vec<Vec<(usize, f64)>> {
    (0..output)
        .map(|d| {
            if !bilinear {
                let s = (d * input / output).min(input - 1);
                return vec![(s, 1.0)];
            }
            let src = if align {
                if output > 1 {
                    d as f64 * (input - 1) as f64 / (output - 1) as f64
                } else {
                    0.0
                }
            } else {
                ((d as f64 + 0.5) * input as f64 / output as f64 - 0.5).max(0.0)
            };
            let h0 = src.floor() as usize;
            let h1 = if h0 < input - 1 { h0 + 1 } else { h0 };
            let l = src - h0 as f64;
            vec![(h0, 1.0 - l), (h1, l)]
        })
        .collect()
}

fn reference(bilinear: bool, align: bool, x: &[f64], hw: [usize; 2], o: [usize; 2]) -> Vec<f64> {
    let (th, tw) = (
        torch_taps(bilinear, align, hw[0], o[0]),
        torch_taps(bilinear, align, hw[1], o[1]),
    );
    let mut y = vec![0.0; 2 * o[0] * o[1]];
    for p in 0..2 {
        for a in 0..o[0] {
            for b in 0..o[1] {
                for &(i, wi) in &th[a] {
                    for &(j, wj) in &tw[b] {
                        y[p * o[0] * o[1] + a * o[1] + b] +=
                            wi * wj * x[p * hw[0] * hw[1] + i * hw[1] + j];
                    }
                }
            }
        }
    }
    y
}

const SHAPES: [([usize; 2], [usize; 2]); 4] = [
    ([4, 4], [8, 8]),
    ([4, 4], [6, 7]),
    ([3, 5], [7, 4]),
    ([5, 4], [1, 1]),
];

#[test]
fn matches_pytorch_nearest_and_bilinear() {
    for (hw, o) in SHAPES {
        let x = wavy(2 * hw[0] * hw[1], 3);
        let near = fwd(
            "ResizeNearestNeighborV2",
            F64,
            &x,
            hw,
            o,
            rs_attrs(false, false),
        );
        close(&near, &reference(false, false, &x, hw, o), 1e-12);
        let half = fwd("ResizeBilinearV2", F64, &x, hw, o, rs_attrs(false, true));
        close(&half, &reference(true, false, &x, hw, o), 1e-12);
        let corners = fwd("ResizeBilinearV2", F64, &x, hw, o, rs_attrs(true, false));
        close(&corners, &reference(true, true, &x, hw, o), 1e-12);
    }
}

#[test]
fn each_float_type() {
    let x = wavy(32, 5);
    let want = reference(true, false, &x, [4, 4], [6, 7]);
    for (dtype, tol) in [(DType::F32, 1e-6), (DType::F16, 5e-3), (DType::Bf16, 3e-2)] {
        let got = fwd(
            "ResizeBilinearV2",
            dtype,
            &x,
            [4, 4],
            [6, 7],
            rs_attrs(false, true),
        );
        close(&got, &want, tol);
        let near = fwd(
            "ResizeNearestNeighborV2",
            dtype,
            &x,
            [4, 4],
            [8, 8],
            rs_attrs(false, false),
        );
        close(&near, &reference(false, false, &x, [4, 4], [8, 8]), tol);
    }
}

#[test]
fn gradients_match_finite_differences() {
    for (hw, o) in SHAPES {
        let x = wavy(2 * hw[0] * hw[1], 7);
        let dy = wavy(2 * o[0] * o[1], 8);
        for (align, half) in [(false, false), (false, true), (true, false)] {
            let a = || rs_attrs(align, half);
            let numeric = numeric_grad(|x| fwd("ResizeBilinearV2", F64, x, hw, o, a()), &x, &dy);
            let dx = run1(
                "ResizeBilinearV2Grad",
                vec![
                    t(F64, &[1, 2, o[0], o[1]], &dy),
                    t(F64, &[1, 2, hw[0], hw[1]], &x),
                ],
                spec(F64, &[1, 2, hw[0], hw[1]]),
                a(),
            )
            .unwrap();
            close(&dx, &numeric, 1e-6);
            let numeric = numeric_grad(
                |x| fwd("ResizeNearestNeighborV2", F64, x, hw, o, a()),
                &x,
                &dy,
            );
            let dx = run1(
                "ResizeNearestNeighborV2Grad",
                vec![
                    t(F64, &[1, 2, o[0], o[1]], &dy),
                    ints(DType::I64, &[2], &[hw[0] as i64, hw[1] as i64]),
                ],
                spec(F64, &[1, 2, hw[0], hw[1]]),
                a(),
            )
            .unwrap();
            close(&dx, &numeric, 1e-6);
        }
    }
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[1, 2, 4, 4], &[1.0; 32]);
    let size = |h: i64, w: i64| ints(DType::I32, &[2], &[h, w]);
    let out = |h, w| spec(DType::F32, &[1, 2, h, w]);
    let go = |inputs, o, a| run1("ResizeBilinearV2", inputs, o, a);
    // Both corner conventions at once: 100023.
    assert_eq!(
        go(vec![x(), size(8, 8)], out(8, 8), rs_attrs(true, true)),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // A size of 0 or negative: 100000; three sizes: 100021.
    assert_eq!(
        go(vec![x(), size(0, 8)], out(0, 8), rs_attrs(false, true)),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        go(vec![x(), size(-1, 8)], out(1, 8), rs_attrs(false, true)),
        Err(AclError::INVALID_PARAM)
    );
    let three = ints(DType::I32, &[3], &[1, 8, 8]);
    assert_eq!(
        go(vec![x(), three], out(8, 8), rs_attrs(false, true)),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // An output other than the size: 100022; a 3-D x: 100021; a float size: 100020.
    assert_eq!(
        go(vec![x(), size(8, 8)], out(8, 7), rs_attrs(false, true)),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    let flat = t(DType::F32, &[2, 4, 4], &[1.0; 32]);
    assert_eq!(
        go(vec![flat, size(8, 8)], out(8, 8), rs_attrs(false, true)),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    let fsize = t(DType::F32, &[2], &[8.0, 8.0]);
    assert_eq!(
        go(vec![x(), fsize], out(8, 8), rs_attrs(false, true)),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    // The original image of another batch: 100021.
    let other = t(DType::F32, &[2, 2, 4, 4], &[1.0; 64]);
    assert_eq!(
        run1(
            "ResizeBilinearV2Grad",
            vec![t(DType::F32, &[1, 2, 8, 8], &[1.0; 128]), other],
            out(4, 4),
            rs_attrs(false, true)
        ),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}
