//! Mirror and edge padding: by hand and against PyTorch's definitions,
//! every type the forward copies, the gradient against finite
//! differences in each float type, refusals.

use super::super::testing::*;
use super::*;

const F64: DType = DType::F64;

fn mode(m: &str) -> OpAttr {
    attrs(&[("mode", AttrValue::String(m.into()))])
}

fn pads(v: &[i64]) -> (Spec, Vec<u8>) {
    ints(DType::I32, &[v.len() / 2, 2], v)
}

#[test]
fn each_mode_by_hand() {
    let x = t(F64, &[1, 4], &[1.0, 2.0, 3.0, 4.0]);
    let go = |op: &str, m: &str, x: (Spec, Vec<u8>)| {
        run1(
            op,
            vec![x, pads(&[0, 0, 2, 3])],
            spec(F64, &[1, 9]),
            mode(m),
        )
        .unwrap()
    };
    assert_eq!(
        go("MirrorPad", "REFLECT", x.clone()),
        [3.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 2.0, 1.0]
    );
    assert_eq!(
        go("MirrorPad", "SYMMETRIC", x.clone()),
        [2.0, 1.0, 1.0, 2.0, 3.0, 4.0, 4.0, 3.0, 2.0]
    );
    assert_eq!(
        go("PadV3", "edge", x.clone()),
        [1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 4.0, 4.0, 4.0]
    );
    assert_eq!(
        go("PadV3", "reflect", x),
        [3.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 2.0, 1.0]
    );
}

/// PyTorch's reflection and replication of a 2-D plane `[h, w]`, padded
/// (left, right, top, bottom).
fn reference(reflect: bool, x: &[f64], h: usize, w: usize, p: [usize; 4]) -> Vec<f64> {
    let at = |i: i64, n: usize| -> usize {
        let n = n as i64;
        let j = if reflect {
            let j = i.abs();
            if j >= n { 2 * (n - 1) - j } else { j }
        } else {
            i.clamp(0, n - 1)
        };
        j as usize
    };
    let (oh, ow) = (h + p[2] + p[3], w + p[0] + p[1]);
    let mut y = Vec::new();
    for r in 0..oh {
        for c in 0..ow {
            let (i, j) = (r as i64 - p[2] as i64, c as i64 - p[0] as i64);
            y.push(x[at(i, h) * w + at(j, w)]);
        }
    }
    y
}

#[test]
fn matches_pytorchs_reflect_and_replicate() {
    let x = wavy(20, 3);
    for p in [[1, 1, 1, 1], [3, 0, 2, 3], [0, 2, 0, 1]] {
        let paddings = pads(&[0, 0, p[2] as i64, p[3] as i64, p[0] as i64, p[1] as i64]);
        let out = spec(F64, &[1, 4 + p[2] + p[3], 5 + p[0] + p[1]]);
        let go = |op: &str, m: &str| {
            run1(
                op,
                vec![t(F64, &[1, 4, 5], &x), paddings.clone()],
                out.clone(),
                mode(m),
            )
            .unwrap()
        };
        assert_eq!(go("MirrorPad", "REFLECT"), reference(true, &x, 4, 5, p));
        assert_eq!(go("PadV3", "edge"), reference(false, &x, 4, 5, p));
    }
}

#[test]
fn copies_every_type() {
    for dtype in [
        DType::F32,
        DType::F16,
        DType::Bf16,
        DType::F64,
        DType::I32,
        DType::I64,
        DType::U8,
    ] {
        let got = run1(
            "MirrorPad",
            vec![t(dtype, &[3], &[1.0, 2.0, 3.0]), pads(&[2, 1])],
            spec(dtype, &[6]),
            mode("REFLECT"),
        );
        assert_eq!(got.unwrap(), [3.0, 2.0, 1.0, 2.0, 3.0, 2.0], "{dtype:?}");
    }
}

#[test]
fn gradients_match_finite_differences() {
    let x = wavy(20, 5);
    let p = [0, 0, 2, 1, 3, 4];
    let dy = wavy(7 * 12, 6);
    for (op, m, gm) in [
        ("MirrorPad", "REFLECT", "reflect"),
        ("PadV3", "edge", "edge"),
        ("MirrorPad", "SYMMETRIC", "symmetric"),
    ] {
        let fwd = |x: &[f64]| {
            run1(
                op,
                vec![t(F64, &[1, 4, 5], x), pads(&p)],
                spec(F64, &[1, 7, 12]),
                mode(m),
            )
            .unwrap()
        };
        let numeric = numeric_grad(fwd, &x, &dy);
        for (dtype, tol) in [
            (F64, 1e-6),
            (DType::F32, 1e-5),
            (DType::F16, 1e-2),
            (DType::Bf16, 5e-2),
        ] {
            let mut a = mode(gm);
            a.insert("paddings_contiguous".into(), AttrValue::Bool(true));
            let dx = run1(
                "PadV3Grad",
                vec![t(dtype, &[1, 7, 12], &dy), pads(&p)],
                spec(dtype, &[1, 4, 5]),
                a,
            )
            .unwrap();
            close(&dx, &numeric, tol);
        }
    }
}

#[test]
fn bad_calls_are_refused() {
    let x = || t(DType::F32, &[2, 3], &[1.0; 6]);
    let go = |op: &str, p: &[i64], out: &[usize], m: &str| {
        run1(op, vec![x(), pads(p)], spec(DType::F32, out), mode(m))
    };
    // Reflecting as far as the length, symmetric beyond it: 100000.
    assert_eq!(
        go("MirrorPad", &[0, 0, 3, 0], &[2, 6], "REFLECT"),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        go("MirrorPad", &[0, 0, 4, 0], &[2, 7], "SYMMETRIC"),
        Err(AclError::INVALID_PARAM)
    );
    assert!(go("MirrorPad", &[0, 0, 3, 0], &[2, 6], "SYMMETRIC").is_ok());
    // A negative padding: 100000; a mode MirrorPad does not take: 100023.
    assert_eq!(
        go("MirrorPad", &[0, 0, -1, 0], &[2, 2], "REFLECT"),
        Err(AclError::INVALID_PARAM)
    );
    assert_eq!(
        go("MirrorPad", &[0, 0, 1, 0], &[2, 4], "edge"),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    assert_eq!(
        go("PadV3Grad", &[0, 0, 1, 0], &[2, 2], "circular"),
        Err(AclError::OP_ATTR_NOT_MATCH)
    );
    // Paddings of another rank: 100021; an output of another shape: 100022.
    assert_eq!(
        go("MirrorPad", &[1, 1], &[2, 5], "REFLECT"),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    assert_eq!(
        go("MirrorPad", &[0, 0, 1, 1], &[2, 4], "REFLECT"),
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    );
    // A gradient whose shape is not the output's padded: 100021.
    assert_eq!(
        go("PadV3Grad", &[0, 0, 1, 0], &[2, 3], "reflect"),
        Err(AclError::OP_INPUT_NOT_MATCH)
    );
    // An integer gradient: 100020.
    let i = ints(DType::I32, &[2, 3], &[1; 6]);
    assert_eq!(
        run1(
            "PadV3Grad",
            vec![i, pads(&[0, 0, 0, 0])],
            spec(DType::I32, &[2, 3]),
            mode("edge")
        ),
        Err(AclError::OP_TYPE_NOT_MATCH)
    );
}
