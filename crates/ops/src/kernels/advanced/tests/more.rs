//! InplaceIndexAdd, OneHot, Tile and Roll.

use super::super::super::testing::*;
use super::*;

fn index_add(
    var: (Spec, Vec<u8>),
    idx: (Spec, Vec<u8>),
    upd: (Spec, Vec<u8>),
    alpha: (Spec, Vec<u8>),
    axis: i64,
) -> Result<Vec<f64>, AclError> {
    let out = spec(var.0.dtype, &var.0.dims);
    run1(
        "InplaceIndexAdd",
        vec![var, idx, upd, alpha],
        out,
        attrs(&[("axis", AttrValue::Int(axis))]),
    )
}

#[test]
fn inplace_index_add_adds_scaled_slices_in_every_type() {
    // var [2, 3], axis 1, indices [2, 0, 2] (repeated), updates [2, 3].
    let var = [1, 2, 3, 4, 5, 6];
    let upd = [1, 2, 3, 4, 5, 6];
    for dtype in TYPES.into_iter().filter(|&d| d != DType::Bool) {
        for itype in [DType::I32, DType::I64] {
            let got = index_add(
                small(dtype, &[2, 3], &var),
                ints(itype, &[3], &[2, 0, -1]),
                small(dtype, &[2, 3], &upd),
                small(dtype, &[], &[2]),
                1,
            )
            .unwrap();
            // Row 0: [1 + 2*2, 2, 3 + 2*(1 + 3)]; row 1: [4 + 2*5, 5, 6 + 2*(4 + 6)].
            assert_eq!(got, [5.0, 2.0, 11.0, 14.0, 5.0, 26.0], "{dtype:?}");
        }
    }
    // A float alpha on floats.
    let got = index_add(
        t(DType::F32, &[3], &[1.0, 1.0, 1.0]),
        ints(DType::I32, &[2], &[1, 1]),
        t(DType::F32, &[2], &[1.0, 3.0]),
        t(DType::F32, &[], &[0.5]),
        0,
    );
    assert_eq!(got.unwrap(), [1.0, 3.0, 1.0]);
}

#[test]
fn inplace_index_add_gradients_are_the_upstream_gradient_and_its_picked_slices() {
    let (var, upd, dy) = (wavy(6, 5), wavy(4, 6), wavy(6, 7));
    let idx = [2i64, 0];
    let alpha = 0.75;
    let run = |v: &[f64], u: &[f64]| {
        index_add(
            t(DType::F64, &[2, 3], v),
            ints(DType::I64, &[2], &idx),
            t(DType::F64, &[2, 2], u),
            t(DType::F64, &[], &[alpha]),
            1,
        )
        .unwrap()
    };
    close(&numeric_grad(|v| run(v, &upd), &var, &dy), &dy, 1e-6);
    // The updates' gradient: alpha * dy[:, idx], GatherElements of dy.
    let du = numeric_grad(|u| run(&var, u), &upd, &dy);
    for dtype in FLOATS {
        let picked = gather(
            t(dtype, &[2, 3], &dy),
            ints(DType::I64, &[2, 2], &[2, 0, 2, 0]),
            1,
            spec(dtype, &[2, 2]),
        )
        .unwrap();
        let scaled: Vec<f64> = picked.iter().map(|p| p * alpha).collect();
        close(&scaled, &du, if dtype == DType::F64 { 1e-6 } else { 2e-2 });
    }
}

#[test]
fn inplace_index_add_refusals() {
    let var = || t(DType::F32, &[2, 3], &[0.0; 6]);
    let upd = || t(DType::F32, &[2, 2], &[1.0; 4]);
    let one = || t(DType::F32, &[], &[1.0]);
    let i = |v: &[i64]| ints(DType::I32, &[v.len()], v);
    assert_eq!(
        index_add(var(), i(&[0, 3]), upd(), one(), 1),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        index_add(var(), i(&[0, 1, 2]), upd(), one(), 1),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        index_add(var(), i(&[0, 1]), upd(), one(), 2),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    let fi = t(DType::F32, &[2], &[0.0, 1.0]);
    assert_eq!(
        index_add(var(), fi, upd(), one(), 1),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let half = t(DType::F16, &[2, 2], &[1.0; 4]);
    assert_eq!(
        index_add(var(), i(&[0, 1]), half, one(), 1),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let empty = t(DType::F32, &[0], &[]);
    assert_eq!(
        index_add(var(), i(&[0, 1]), upd(), empty, 1),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
}

fn one_hot(idx: (Spec, Vec<u8>), depth: i64, axis: i64, out: Spec) -> Result<Vec<f64>, AclError> {
    let t = out.dtype;
    let inputs = vec![
        idx,
        ints(DType::I32, &[], &[depth]),
        small(t, &[], &[1]),
        small(t, &[], &[0]),
    ];
    run1(
        "OneHot",
        inputs,
        out,
        attrs(&[("axis", AttrValue::Int(axis))]),
    )
}

#[test]
fn one_hot_marks_each_index_along_the_new_axis() {
    let labels = [0i64, 3, 2, 5, -1, 1];
    for itype in [DType::I32, DType::I64, DType::U8] {
        for otype in [
            DType::I64,
            DType::I32,
            DType::F32,
            DType::F16,
            DType::Bf16,
            DType::F64,
        ] {
            let labels: Vec<i64> = if itype == DType::U8 {
                labels.map(|l| l.rem_euclid(256)).to_vec()
            } else {
                labels.to_vec()
            };
            let got = one_hot(
                ints(itype, &[2, 3], &labels),
                4,
                -1,
                spec(otype, &[2, 3, 4]),
            )
            .unwrap();
            let want: Vec<f64> = labels
                .iter()
                .flat_map(|&l| (0..4).map(move |d| (l == d) as i64 as f64))
                .collect();
            assert_eq!(got, want, "{itype:?} {otype:?}");
            // axis 0: [4, 2, 3].
            let got =
                one_hot(ints(itype, &[2, 3], &labels), 4, 0, spec(otype, &[4, 2, 3])).unwrap();
            let want: Vec<f64> = (0..4)
                .flat_map(|d| labels.iter().map(move |&l| (l == d) as i64 as f64))
                .collect();
            assert_eq!(got, want, "{itype:?} {otype:?}");
        }
    }
}

#[test]
fn one_hot_refusals() {
    let l = || ints(DType::I64, &[2], &[0, 1]);
    let out = || spec(DType::I64, &[2, 3]);
    assert_eq!(one_hot(l(), -1, -1, out()), Err(AclError::INVALID_PARAM));
    assert_eq!(one_hot(l(), 3, 2, out()), Err(AclError::OP_ATTR_NOT_MATCH));
    assert_eq!(
        one_hot(l(), 4, -1, out()),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        one_hot(t(DType::F32, &[2], &[0.0, 1.0]), 3, -1, out()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

fn tile(x: (Spec, Vec<u8>), m: &[i64], out: Spec) -> Result<Vec<f64>, AclError> {
    run1(
        "Tile",
        vec![x, ints(DType::I64, &[m.len()], m)],
        out,
        none(),
    )
}

/// x [2, 3] repeated by [r0, r1, r2] (a leading axis added), directly.
fn tile_ref(x: &[f64], m: [usize; 3]) -> Vec<f64> {
    let (d0, d1) = (2 * m[1], 3 * m[2]);
    (0..m[0] * d0 * d1)
        .map(|p| x[((p / d1) % d0 % 2) * 3 + (p % d1) % 3])
        .collect()
}

#[test]
fn tile_repeats_along_each_axis_in_every_type() {
    let v = [1i64, 0, 3, 4, 5, 1];
    for dtype in TYPES {
        let x = small(dtype, &[2, 3], &v);
        let xs: Vec<f64> = Tensor {
            dtype,
            dims: vec![6],
            bytes: x.1.clone(),
        }
        .nums()
        .map(Num::f64)
        .collect();
        assert_eq!(
            tile(x.clone(), &[2, 1], spec(dtype, &[4, 3])).unwrap(),
            tile_ref(&xs, [1, 2, 1])
        );
        assert_eq!(
            tile(x.clone(), &[2, 1, 3], spec(dtype, &[2, 2, 9])).unwrap(),
            tile_ref(&xs, [2, 1, 3])
        );
        assert_eq!(
            tile(x, &[1, 0], spec(dtype, &[2, 0])).unwrap(),
            Vec::<f64>::new()
        );
    }
}

#[test]
fn tile_gradient_is_the_sum_of_the_copies() {
    let (xv, dy) = (wavy(6, 8), wavy(72, 9));
    let f = |x: &[f64]| {
        tile(
            t(DType::F64, &[2, 3], x),
            &[2, 2, 3],
            spec(DType::F64, &[2, 4, 9]),
        )
        .unwrap()
    };
    let want = numeric_grad(f, &xv, &dy);
    // ReduceSum of dy seen as [2, 2, 2, 3, 3] over axes 0, 1, 3.
    for dtype in FLOATS {
        let inputs = vec![
            t(dtype, &[2, 2, 2, 3, 3], &dy),
            ints(DType::I64, &[3], &[0, 1, 3]),
        ];
        let got = run1("ReduceSum", inputs, spec(dtype, &[2, 3]), none()).unwrap();
        close(&got, &want, if dtype == DType::F64 { 1e-6 } else { 5e-2 });
    }
}

#[test]
fn tile_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    assert_eq!(
        tile(x(), &[2], spec(DType::F32, &[2, 6])),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        tile(x(), &[1, -2], spec(DType::F32, &[2, 6])),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        tile(x(), &[1, 2], spec(DType::F32, &[2, 5])),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    assert_eq!(
        tile(x(), &[1, 2], spec(DType::F16, &[2, 6])),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
    let fm = vec![x(), t(DType::F32, &[2], &[1.0, 2.0])];
    assert_eq!(
        run1("Tile", fm, spec(DType::F32, &[2, 6]), none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}

fn roll(x: (Spec, Vec<u8>), shifts: &[i64], dims: &[i64]) -> Result<Vec<f64>, AclError> {
    let out = spec(x.0.dtype, &x.0.dims);
    let a = attrs(&[
        ("shifts", AttrValue::ListInt(shifts.to_vec())),
        ("dims", AttrValue::ListInt(dims.to_vec())),
    ]);
    run1("Roll", vec![x], out, a)
}

#[test]
fn roll_moves_elements_along_axes_or_flat_in_every_type() {
    let v: Vec<i64> = (0..12).collect();
    for dtype in TYPES {
        let x = || small(dtype, &[3, 4], &v);
        let xs: Vec<f64> = Tensor {
            dtype,
            dims: vec![12],
            bytes: x().1,
        }
        .nums()
        .map(Num::f64)
        .collect();
        // y[r][c] = x[(r - 1) mod 3][(c + 2) mod 4] for shifts (1, -2) on (0, 1).
        let want: Vec<f64> = (0..12)
            .map(|p| xs[((p / 4 + 2) % 3) * 4 + (p % 4 + 2) % 4])
            .collect();
        assert_eq!(roll(x(), &[1, -2], &[0, -1]).unwrap(), want, "{dtype:?}");
        // Flat by 5 (and by 17, the same).
        let want: Vec<f64> = (0..12).map(|p| xs[(p + 12 - 5) % 12]).collect();
        assert_eq!(roll(x(), &[5], &[]).unwrap(), want);
        assert_eq!(roll(x(), &[17], &[]).unwrap(), want);
        // The same axis twice adds the shifts.
        assert_eq!(
            roll(x(), &[1, 1], &[1, 1]).unwrap(),
            roll(x(), &[2], &[1]).unwrap()
        );
    }
}

#[test]
fn roll_gradient_is_the_upstream_gradient_rolled_back() {
    let (xv, dy) = (wavy(12, 10), wavy(12, 11));
    let f = |x: &[f64]| roll(t(DType::F64, &[3, 4], x), &[2, 3], &[0, 1]).unwrap();
    let want = numeric_grad(f, &xv, &dy);
    for dtype in FLOATS {
        let got = roll(t(dtype, &[3, 4], &dy), &[-2, -3], &[0, 1]).unwrap();
        close(&got, &want, if dtype == DType::F64 { 1e-6 } else { 2e-2 });
    }
}

#[test]
fn roll_refusals() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    assert_eq!(roll(x(), &[1, 2], &[0]), Err(AclError::OP_ATTR_NOT_MATCH));
    assert_eq!(roll(x(), &[1, 2], &[]), Err(AclError::OP_ATTR_NOT_MATCH));
    assert_eq!(roll(x(), &[1], &[2]), Err(AclError::OP_ATTR_NOT_MATCH));
    let out = spec(DType::F16, &[2, 3]);
    assert_eq!(
        run1("Roll", vec![x()], out, none()),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
