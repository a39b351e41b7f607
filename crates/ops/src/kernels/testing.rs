//! What the compute kernels' tests share: host tensors, calls with
//! several outputs, attributes, tolerances and gradients by finite
//! differences (the reference every backward operator is checked
//! against).

use super::call::*;
use super::find;

/// A host tensor of floats.
pub(super) fn t(dtype: DType, dims: &[usize], v: &[f64]) -> (Spec, Vec<u8>) {
    HostInputs::tensor(dtype, dims, v.iter().map(|&f| Num::F(f)))
}

/// A host tensor of integers.
pub(super) fn ints(dtype: DType, dims: &[usize], v: &[i64]) -> (Spec, Vec<u8>) {
    HostInputs::tensor(dtype, dims, v.iter().map(|&i| Num::I(i)))
}

/// A type and shape.
pub(super) fn spec(dtype: DType, dims: &[usize]) -> Spec {
    Spec {
        dtype,
        dims: dims.to_vec(),
    }
}

/// Attributes from pairs.
pub(super) fn attrs(pairs: &[(&str, AttrValue)]) -> OpAttr {
    let mut a = OpAttr::new();
    for (k, v) in pairs {
        a.insert((*k).into(), v.clone());
    }
    a
}

/// Runs `op` and reads every output as `f64`s.
pub(super) fn run(
    op: &str,
    inputs: Vec<(Spec, Vec<u8>)>,
    outs: &[Spec],
    a: OpAttr,
) -> Result<Vec<Vec<f64>>, AclError> {
    let host = HostInputs(inputs);
    let call = Call::new(&host, outs.to_vec(), a);
    let written = find(op).ok_or(AclError::OP_NOT_FOUND)?(&call)?;
    assert_eq!(written.len(), outs.len(), "{op}: one buffer per output");
    Ok(written
        .into_iter()
        .zip(outs)
        .map(|(bytes, s)| {
            assert_eq!(bytes.len(), s.numel() * s.dtype.size(), "{op}: output size");
            Tensor {
                dtype: s.dtype,
                dims: s.dims.clone(),
                bytes,
            }
            .nums()
            .map(Num::f64)
            .collect()
        })
        .collect())
}

/// Runs `op` with one output of `out`'s type and shape.
pub(super) fn run1(
    op: &str,
    inputs: Vec<(Spec, Vec<u8>)>,
    out: Spec,
    a: OpAttr,
) -> Result<Vec<f64>, AclError> {
    Ok(run(op, inputs, &[out], a)?.remove(0))
}

/// Every pair within `tol` (absolute and relative).
#[track_caller]
pub(super) fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "lengths: {got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: {g} vs {w}\n got {got:?}\nwant {want:?}"
        );
    }
}

/// The gradient of `Σ dy·f(x)` with respect to `x`, by central
/// differences.
pub(super) fn numeric_grad(f: impl Fn(&[f64]) -> Vec<f64>, x: &[f64], dy: &[f64]) -> Vec<f64> {
    let h = 1e-6;
    let loss = |x: &[f64]| f(x).iter().zip(dy).map(|(y, d)| y * d).sum::<f64>();
    (0..x.len())
        .map(|i| {
            let mut up = x.to_vec();
            let mut down = x.to_vec();
            up[i] += h;
            down[i] -= h;
            (loss(&up) - loss(&down)) / (2.0 * h)
        })
        .collect()
}

/// Deterministic values in about `[-2, 2]`, none 0.
pub(super) fn wavy(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let k = (i as u64 + 1)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed * 97)
                % 1000;
            (k as f64 - 499.5) / 250.0
        })
        .collect()
}
