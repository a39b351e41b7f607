//! Batch normalisation: the training forward against its definition, the
//! backward against finite differences of the forward, evaluation mode,
//! every float type, the 5-D names, refusals.

use super::super::testing::*;
use super::*;

const F32: DType = DType::F32;
const F64: DType = DType::F64;

fn eps(e: f32) -> OpAttr {
    attrs(&[("epsilon", AttrValue::Float(e))])
}

fn train_attrs(e: f32, factor: f32) -> OpAttr {
    attrs(&[
        ("epsilon", AttrValue::Float(e)),
        ("factor", AttrValue::Float(factor)),
    ])
}

/// The definition: per channel of x `[N, C, rest]`, the mean and the
/// population variance.
fn stats(x: &[f64], dims: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let (c, inner) = (dims[1], dims[2..].iter().product::<usize>());
    let m = (x.len() / c) as f64;
    let mut mean = vec![0.0; c];
    let mut var = vec![0.0; c];
    for (e, v) in x.iter().enumerate() {
        mean[(e / inner) % c] += v / m;
    }
    for (e, v) in x.iter().enumerate() {
        let k = (e / inner) % c;
        var[k] += (v - mean[k]) * (v - mean[k]) / m;
    }
    (mean, var)
}

/// BNTrainingReduce then BNTrainingUpdate (op names given) in `dtype`
/// for x, float32 statistics: every output of the update.
#[allow(clippy::too_many_arguments)]
fn train(
    names: [&str; 2],
    dtype: DType,
    dims: &[usize],
    x: &[f64],
    scale: &[f64],
    offset: &[f64],
    running: [&[f64]; 2],
    a: OpAttr,
) -> Vec<Vec<f64>> {
    let c = dims[1];
    // float32 statistics, as torch_npu gives them, but for a float64 x
    // (whose gradients are checked by finite differences).
    let st = if dtype == F64 { F64 } else { F32 };
    let sums = run(
        names[0],
        vec![t(dtype, dims, x)],
        &[spec(st, &[c]), spec(st, &[c])],
        a.clone(),
    )
    .unwrap();
    let p = |v: &[f64]| t(st, &[c], v);
    run(
        names[1],
        vec![
            t(dtype, dims, x),
            p(&sums[0]),
            p(&sums[1]),
            p(scale),
            p(offset),
            p(running[0]),
            p(running[1]),
        ],
        &[
            spec(dtype, dims),
            spec(st, &[c]),
            spec(st, &[c]),
            spec(st, &[c]),
            spec(st, &[c]),
        ],
        a,
    )
    .unwrap()
}

const NAMES: [&str; 2] = ["BNTrainingReduce", "BNTrainingUpdate"];

#[test]
fn training_forward_follows_the_definition_and_updates_the_running_statistics() {
    let dims = [2, 3, 2, 2];
    let x: Vec<f64> = wavy(24, 1).iter().map(|v| v * 2.0 + 0.5).collect();
    let (scale, offset) = (wavy(3, 2), wavy(3, 3));
    let (rm, rv) = ([0.5, -1.0, 0.0], [1.0, 2.0, 0.5]);
    let out = train(
        NAMES,
        F32,
        &dims,
        &x,
        &scale,
        &offset,
        [&rm, &rv],
        train_attrs(1e-5, 0.1),
    );
    let (mean, var) = stats(&x, &dims);
    let y: Vec<f64> = (0..24)
        .map(|e| {
            let k = (e / 4) % 3;
            (x[e] - mean[k]) / (var[k] + 1e-5).sqrt() * scale[k] + offset[k]
        })
        .collect();
    close(&out[0], &y, 1e-5);
    let m = 8.0;
    let new_mean: Vec<f64> = (0..3).map(|k| 0.1 * mean[k] + 0.9 * rm[k]).collect();
    let new_var: Vec<f64> = (0..3)
        .map(|k| 0.1 * var[k] * m / (m - 1.0) + 0.9 * rv[k])
        .collect();
    close(&out[1], &new_mean, 1e-6);
    close(&out[2], &new_var, 1e-6);
    close(&out[3], &mean, 1e-6);
    close(&out[4], &var, 1e-6);
}

#[test]
fn every_float_type_and_the_1d_and_5d_forms() {
    // [N, C] (BatchNorm1d, reshaped to [N, C, 1, 1] by torch_npu or not)
    // and 5-D through the BN3D names: the same definition.
    for (names, dims) in [
        (NAMES, vec![5, 2]),
        (NAMES, vec![4, 3, 1, 1]),
        (NAMES, vec![2, 2, 3, 1]),
        (
            ["BN3DTrainingReduce", "BN3DTrainingUpdate"],
            vec![2, 2, 2, 1, 3],
        ),
    ] {
        let n: usize = dims.iter().product();
        let c = dims[1];
        let x = wavy(n, 4);
        let (scale, offset) = (wavy(c, 5), wavy(c, 6));
        let (mean, var) = stats(&x, &dims);
        let want: Vec<f64> = (0..n)
            .map(|e| {
                let k = (e / dims[2..].iter().product::<usize>()) % c;
                (x[e] - mean[k]) / (var[k] + 1e-3).sqrt() * scale[k] + offset[k]
            })
            .collect();
        let zeros = vec![0.0; c];
        for (dtype, tol) in [
            (F64, 1e-9),
            (F32, 1e-5),
            (DType::F16, 4e-3),
            (DType::Bf16, 3e-2),
        ] {
            // Half inputs: x rounded first, the definition on what is given.
            let xr = run1(
                "Identity",
                vec![t(dtype, &dims, &x)],
                spec(dtype, &dims),
                OpAttr::new(),
            )
            .unwrap();
            let (m, v) = stats(&xr, &dims);
            let want_r: Vec<f64> = (0..n)
                .map(|e| {
                    let k = (e / dims[2..].iter().product::<usize>()) % c;
                    (xr[e] - m[k]) / (v[k] + 1e-3).sqrt() * scale[k] + offset[k]
                })
                .collect();
            let out = train(
                names,
                dtype,
                &dims,
                &x,
                &scale,
                &offset,
                [&zeros, &zeros],
                train_attrs(1e-3, 1.0),
            );
            close(&out[0], &want_r, tol);
            close(&out[3], &m, 1e-6);
            if dtype == F64 {
                close(&out[0], &want, 1e-6);
            }
        }
    }
}

#[test]
fn inference_and_its_gradient() {
    let dims = [2, 3, 2, 1];
    let (x, dy) = (wavy(12, 7), wavy(12, 8));
    let (scale, offset, mean) = (wavy(3, 9), wavy(3, 10), wavy(3, 11));
    let var: Vec<f64> = wavy(3, 12).iter().map(|v| v.abs() + 0.1).collect();
    let infer = |dtype: DType, x: &[f64]| {
        let p = |v: &[f64]| t(F32, &[3], v);
        run1(
            "BNInfer",
            vec![t(dtype, &dims, x), p(&scale), p(&offset), p(&mean), p(&var)],
            spec(dtype, &dims),
            eps(1e-4),
        )
        .unwrap()
    };
    let want: Vec<f64> = (0..12)
        .map(|e| {
            let k = (e / 2) % 3;
            (x[e] - mean[k]) / (var[k] + 1e-4).sqrt() * scale[k] + offset[k]
        })
        .collect();
    for (dtype, tol) in [
        (F64, 1e-6),
        (F32, 1e-5),
        (DType::F16, 4e-3),
        (DType::Bf16, 3e-2),
    ] {
        close(&infer(dtype, &x), &want, tol);
    }
    let grad = |dtype: DType| {
        run1(
            "BNInferGrad",
            vec![
                t(dtype, &dims, &dy),
                t(F32, &[3], &scale),
                t(F32, &[3], &var),
            ],
            spec(dtype, &dims),
            eps(1e-4),
        )
        .unwrap()
    };
    let want = numeric_grad(|x| infer(F64, x), &x, &dy);
    for (dtype, tol) in [
        (F64, 1e-5),
        (F32, 1e-5),
        (DType::F16, 4e-3),
        (DType::Bf16, 3e-2),
    ] {
        close(&grad(dtype), &want, tol);
    }
}

/// The training forward's y in float64, for finite differences.
fn train_y(dims: &[usize], x: &[f64], scale: &[f64], offset: &[f64], e: f32) -> Vec<f64> {
    let zeros = vec![0.0; dims[1]];
    train(
        NAMES,
        F64,
        dims,
        x,
        scale,
        offset,
        [&zeros, &zeros],
        train_attrs(e, 0.1),
    )
    .remove(0)
}

/// The training backward (UpdateGrad then ReduceGrad) in `dtype`.
fn backward(
    dtype: DType,
    dims: &[usize],
    dy: &[f64],
    x: &[f64],
    scale: &[f64],
    e: f32,
) -> Vec<Vec<f64>> {
    let c = dims[1];
    let (mean, var) = stats(x, dims);
    let st = if dtype == F64 { F64 } else { F32 };
    let p = |v: &[f64]| t(st, &[c], v);
    let d = run(
        "BNTrainingUpdateGrad",
        vec![t(dtype, dims, dy), t(dtype, dims, x), p(&mean), p(&var)],
        &[spec(st, &[c]), spec(st, &[c])],
        eps(e),
    )
    .unwrap();
    let dx = run1(
        "BNTrainingReduceGrad",
        vec![
            t(dtype, dims, dy),
            t(dtype, dims, x),
            p(&d[0]),
            p(&d[1]),
            p(scale),
            p(&mean),
            p(&var),
        ],
        spec(dtype, dims),
        eps(e),
    )
    .unwrap();
    vec![dx, d[0].clone(), d[1].clone()]
}

#[test]
fn training_gradients_match_finite_differences() {
    for dims in [vec![2, 3, 2, 2], vec![6, 2]] {
        let n: usize = dims.iter().product();
        let c = dims[1];
        let (x, dy) = (wavy(n, 13), wavy(n, 14));
        let (scale, offset) = (wavy(c, 15), wavy(c, 16));
        let e = 1e-3;
        let g = backward(F64, &dims, &dy, &x, &scale, e);
        let dx = numeric_grad(|x| train_y(&dims, x, &scale, &offset, e), &x, &dy);
        let ds = numeric_grad(|s| train_y(&dims, &x, s, &offset, e), &scale, &dy);
        let db = numeric_grad(|b| train_y(&dims, &x, &scale, b, e), &offset, &dy);
        close(&g[0], &dx, 1e-6);
        close(&g[1], &ds, 1e-6);
        close(&g[2], &db, 1e-6);
        for (dtype, tol) in [(F32, 1e-5), (DType::F16, 2e-2), (DType::Bf16, 8e-2)] {
            let h = backward(dtype, &dims, &dy, &x, &scale, e);
            close(&h[0], &g[0], tol);
            close(&h[1], &g[1], tol);
            close(&h[2], &g[2], tol);
        }
    }
}

#[test]
fn the_3d_backward_names_are_the_same_operators() {
    let dims = [2, 2, 1, 2, 2];
    let (x, dy) = (wavy(16, 17), wavy(16, 18));
    let (mean, var) = stats(&x, &dims);
    let p = |v: &[f64]| t(F32, &[2], v);
    let d = run(
        "BN3DTrainingUpdateGrad",
        vec![t(F64, &dims, &dy), t(F64, &dims, &x), p(&mean), p(&var)],
        &[spec(F32, &[2]), spec(F32, &[2])],
        eps(1e-5),
    )
    .unwrap();
    let inputs = vec![
        t(F64, &dims, &dy),
        t(F64, &dims, &x),
        p(&d[0]),
        p(&d[1]),
        p(&[1.0, 2.0]),
        p(&mean),
        p(&var),
    ];
    let a = run1(
        "BN3DTrainingReduceGrad",
        inputs.clone(),
        spec(F64, &dims),
        eps(1e-5),
    );
    let b = run1("BNTrainingReduceGrad", inputs, spec(F64, &dims), eps(1e-5));
    assert_eq!(a.unwrap(), b.unwrap());
}

#[test]
fn refusals() {
    let x = t(F32, &[2, 3, 2, 2], &wavy(24, 19));
    let three = spec(F32, &[3]);
    let reduce =
        |x: (Spec, Vec<u8>), outs: &[Spec], a: OpAttr| run("BNTrainingReduce", vec![x], outs, a);
    // x of one dim; of integers; statistics of the wrong size; counts.
    let code = |r: Result<Vec<Vec<f64>>, AclError>| r.unwrap_err().code();
    assert_eq!(
        code(reduce(
            t(F32, &[3], &[1.0; 3]),
            &[three.clone(), three.clone()],
            OpAttr::new()
        )),
        100021
    );
    let xi = ints(DType::I32, &[2, 3, 1, 1], &[1; 6]);
    assert_eq!(
        code(reduce(xi, &[three.clone(), three.clone()], OpAttr::new())),
        100020
    );
    assert_eq!(
        code(reduce(
            x.clone(),
            &[three.clone(), spec(F32, &[4])],
            OpAttr::new()
        )),
        100022
    );
    assert_eq!(
        code(reduce(
            x.clone(),
            std::slice::from_ref(&three),
            OpAttr::new()
        )),
        100022
    );
    assert_eq!(
        code(reduce(
            x.clone(),
            &[three.clone(), three.clone()],
            attrs(&[("epsilon", AttrValue::Int(1))])
        )),
        100023
    );
    // An empty x whose other dims multiply past usize.
    let big = 1usize << 40;
    let empty = t(F32, &[big, 0, big], &[]);
    assert_eq!(
        code(reduce(
            empty,
            &[spec(F32, &[0]), spec(F32, &[0])],
            OpAttr::new()
        )),
        100021
    );
    // An integer output.
    assert_eq!(
        code(reduce(
            x.clone(),
            &[three.clone(), spec(DType::I32, &[3])],
            OpAttr::new()
        )),
        100020
    );
    // A parameter of 4 for 3 channels; grads not x's shape.
    let p3 = t(F32, &[3], &[1.0; 3]);
    let p4 = t(F32, &[4], &[1.0; 4]);
    let infer = run(
        "BNInfer",
        vec![x.clone(), p3.clone(), p4, p3.clone(), p3.clone()],
        &[spec(F32, &[2, 3, 2, 2])],
        eps(1e-5),
    );
    assert_eq!(code(infer), 100021);
    let grad = run(
        "BNTrainingUpdateGrad",
        vec![
            t(F32, &[2, 3, 2, 1], &[0.0; 12]),
            x.clone(),
            p3.clone(),
            p3.clone(),
        ],
        &[three.clone(), three.clone()],
        eps(1e-5),
    );
    assert_eq!(code(grad), 100021);
    let update = run(
        "BNTrainingUpdate",
        vec![
            x.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
        ],
        &[
            spec(F32, &[2, 3, 2, 2]),
            three.clone(),
            three.clone(),
            three.clone(),
            three.clone(),
        ],
        train_attrs(1e-5, 0.1),
    );
    assert_eq!(code(update), 100021);
    let update = run(
        "BNTrainingUpdate",
        vec![
            x.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
        ],
        &[
            spec(F32, &[2, 3, 2, 1]),
            three.clone(),
            three.clone(),
            three.clone(),
            three.clone(),
        ],
        train_attrs(1e-5, 0.1),
    );
    assert_eq!(code(update), 100022);
    let update = run(
        "BNTrainingUpdate",
        vec![
            x,
            p3.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
            p3.clone(),
            p3,
        ],
        &[
            spec(F32, &[2, 3, 2, 2]),
            three.clone(),
            three.clone(),
            three.clone(),
            three,
        ],
        attrs(&[("factor", AttrValue::String("x".into()))]),
    );
    assert_eq!(code(update), 100023);
}
