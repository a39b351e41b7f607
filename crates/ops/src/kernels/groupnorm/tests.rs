//! Group normalisation: against a reference written from its definition,
//! the statistics, each float type, refusals; its input's gradient (what
//! torch_npu composes from batch-norm operators) checked against finite
//! differences through the reference.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn gn_attrs(groups: i64) -> OpAttr {
    attrs(&[
        ("num_groups", AttrValue::Int(groups)),
        ("eps", AttrValue::Float(1e-5)),
        ("is_training", AttrValue::Bool(true)),
    ])
}

/// x `[2, 4, 3]` in `groups` groups.
fn gn(dtype: DType, x: &[f64], gamma: &[f64], beta: &[f64], groups: usize) -> Vec<Vec<f64>> {
    run(
        "GroupNorm",
        vec![
            t(dtype, &[2, 4, 3], x),
            t(dtype, &[4], gamma),
            t(dtype, &[4], beta),
        ],
        &[
            spec(dtype, &[2, 4, 3]),
            spec(dtype, &[2, groups]),
            spec(dtype, &[2, groups]),
        ],
        gn_attrs(groups as i64),
    )
    .unwrap()
}

/// The definition: per image and group, mean and variance over the
/// group's channels and positions.
fn reference(x: &[f64], gamma: &[f64], beta: &[f64], groups: usize) -> Vec<f64> {
    let (c, hw) = (4, 3);
    let per = c / groups * hw;
    let mut y = vec![0.0; x.len()];
    for img in 0..2 {
        for g in 0..groups {
            let at = img * c * hw + g * per;
            let block = &x[at..at + per];
            let m = block.iter().sum::<f64>() / per as f64;
            let v = block.iter().map(|b| (b - m) * (b - m)).sum::<f64>() / per as f64;
            for j in 0..per {
                let ch = g * (c / groups) + j / hw;
                y[at + j] = (block[j] - m) / (v + 1e-5f32 as f64).sqrt() * gamma[ch] + beta[ch];
            }
        }
    }
    y
}

#[test]
fn matches_the_definition_in_each_group_count() {
    let x = wavy(24, 7);
    let (gamma, beta) = (wavy(4, 8), wavy(4, 9));
    for groups in [1, 2, 4] {
        let out = gn(F64, &x, &gamma, &beta, groups);
        close(&out[0], &reference(&x, &gamma, &beta, groups), 1e-9);
        // The first group's mean and variance.
        let per = 12 / groups;
        let m = x[..per].iter().sum::<f64>() / per as f64;
        let v = x[..per].iter().map(|b| (b - m) * (b - m)).sum::<f64>() / per as f64;
        close(&[out[1][0], out[2][0]], &[m, v], 1e-12);
    }
}

#[test]
fn each_float_type() {
    let x = wavy(24, 3);
    let (gamma, beta) = (wavy(4, 4), wavy(4, 5));
    let want = reference(&x, &gamma, &beta, 2);
    for (dtype, tol) in [(DType::F32, 1e-5), (DType::F16, 1e-2), (DType::Bf16, 5e-2)] {
        close(&gn(dtype, &x, &gamma, &beta, 2)[0], &want, tol);
    }
}

#[test]
fn the_input_gradient_through_the_statistics() {
    // What torch_npu's backward computes (batch norm's gradient over each
    // group, times gamma), against finite differences of the operator.
    let x = wavy(24, 11);
    let (gamma, beta) = (wavy(4, 12), wavy(4, 13));
    let dy = wavy(24, 14);
    let out = gn(F64, &x, &gamma, &beta, 2);
    let numeric = numeric_grad(|x| gn(F64, x, &gamma, &beta, 2).remove(0), &x, &dy);
    let per = 6;
    let mut dx = vec![0.0; 24];
    for g in 0..4 {
        let (m, v) = (out[1][g], out[2][g]);
        let rstd = 1.0 / (v + 1e-5f32 as f64).sqrt();
        let at = g * per;
        let gd: Vec<f64> = (0..per)
            .map(|j| dy[at + j] * gamma[(g % 2) * 2 + j / 3])
            .collect();
        let xh: Vec<f64> = (0..per).map(|j| (x[at + j] - m) * rstd).collect();
        let mg = gd.iter().sum::<f64>() / per as f64;
        let mgx = gd.iter().zip(&xh).map(|(a, b)| a * b).sum::<f64>() / per as f64;
        for j in 0..per {
            dx[at + j] = rstd * (gd[j] - mg - xh[j] * mgx);
        }
    }
    close(&dx, &numeric, 1e-5);
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[2, 4, 3], &[1.0; 24]);
    let p = |n: usize| t(DType::F32, &[n], &vec![1.0; n]);
    let outs = |g: usize| {
        [
            spec(DType::F32, &[2, 4, 3]),
            spec(DType::F32, &[2, g]),
            spec(DType::F32, &[2, g]),
        ]
    };
    let go = |inputs, outs: &[Spec], groups| run("GroupNorm", inputs, outs, gn_attrs(groups));
    // Groups not dividing the channels, or none: 100023.
    assert_eq!(
        go(vec![x(), p(4), p(4)], &outs(3), 3),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        go(vec![x(), p(4), p(4)], &outs(1), 0),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // Gamma of the wrong length, a 1-D x: 100021.
    assert_eq!(
        go(vec![x(), p(3), p(4)], &outs(2), 2),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        go(vec![p(4), p(4), p(4)], &outs(2), 2),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // Statistics of the wrong size: 100022.
    assert_eq!(
        go(vec![x(), p(4), p(4)], &outs(4), 2),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // Integers: 100020.
    let i = ints(DType::I32, &[2, 4, 3], &[1; 24]);
    assert_eq!(
        go(vec![i, p(4), p(4)], &outs(2), 2),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
