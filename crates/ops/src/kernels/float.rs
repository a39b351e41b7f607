//! Floating-point tensors as the compute operators of a training step
//! (activations, softmax, normalisation, losses, embeddings) compute on
//! them: read widened to one working type ([`Real`]: `f32` for float32,
//! float16 and bfloat16, `f64` for float64), computed there, and written
//! back rounded once to each output's type. Half types are thus computed
//! in fp32 and rounded once, as the NPU's vector unit computes them.
//! Also the pointwise map those operators share ([`pointwise`]).

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

use half::{bf16, f16};

use super::call::*;
use super::shape::{broadcast, broadcast_index};

/// The working type of a computation: `f32` or `f64`.
pub(super) trait Real:
    Copy
    + Debug
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + crate::linalg::Element
{
    /// `v`, rounded to this type.
    fn of(v: f64) -> Self;
    /// As `f64` (exact).
    fn f64(self) -> f64;
    /// `eˣ`.
    fn exp(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    /// `ln(1 + x)`.
    fn ln_1p(self) -> Self;
    /// The hyperbolic tangent.
    fn tanh(self) -> Self;
    /// The square root.
    fn sqrt(self) -> Self;
    /// The larger of two (NaN wins).
    fn max_nan(self, other: Self) -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            fn of(v: f64) -> $t {
                v as $t
            }
            fn f64(self) -> f64 {
                f64::from(self)
            }
            fn exp(self) -> $t {
                <$t>::exp(self)
            }
            fn ln(self) -> $t {
                <$t>::ln(self)
            }
            fn ln_1p(self) -> $t {
                <$t>::ln_1p(self)
            }
            fn tanh(self) -> $t {
                <$t>::tanh(self)
            }
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            fn max_nan(self, other: $t) -> $t {
                if self.is_nan() || other.is_nan() {
                    <$t>::NAN
                } else {
                    self.max(other)
                }
            }
        }
    };
}
real!(f32);
real!(f64);

/// Runs `wide` (the `f64` computation) for float64 and `narrow` (`f32`)
/// for the other floating types; any other type is `OP_TYPE_NOT_MATCH`.
pub(super) fn by_type<R>(
    dtype: DType,
    narrow: impl FnOnce() -> Result<R, AclError>,
    wide: impl FnOnce() -> Result<R, AclError>,
) -> Result<R, AclError> {
    match dtype {
        DType::F64 => wide(),
        DType::F32 | DType::F16 | DType::Bf16 => narrow(),
        _ => Err(AclError::OP_TYPE_NOT_MATCH),
    }
}

/// A float tensor's elements in the working type `T`
/// (`OP_TYPE_NOT_MATCH` for a tensor of another type).
pub(super) fn values<T: Real>(t: &Tensor) -> Result<Vec<T>, AclError> {
    let b = &t.bytes;
    Ok(match t.dtype {
        DType::F32 => b
            .chunks_exact(4)
            .map(|c| T::of(f64::from(f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))))
            .collect(),
        DType::F16 => b
            .chunks_exact(2)
            .map(|c| T::of(f16::from_ne_bytes([c[0], c[1]]).to_f64()))
            .collect(),
        DType::Bf16 => b
            .chunks_exact(2)
            .map(|c| T::of(bf16::from_ne_bytes([c[0], c[1]]).to_f64()))
            .collect(),
        DType::F64 => b
            .chunks_exact(8)
            .map(|c| T::of(f64::from_ne_bytes(c.try_into().unwrap_or([0; 8]))))
            .collect(),
        _ => return Err(AclError::OP_TYPE_NOT_MATCH),
    })
}

/// `v` as the bytes of a tensor of `dtype`, each element rounded once
/// (`OP_TYPE_NOT_MATCH` for an output that is not a floating type).
pub(super) fn bytes<T: Real>(dtype: DType, v: &[T]) -> Result<Vec<u8>, AclError> {
    Ok(match dtype {
        DType::F32 => v
            .iter()
            .flat_map(|x| (x.f64() as f32).to_ne_bytes())
            .collect(),
        DType::F16 => v
            .iter()
            .flat_map(|x| f16::from_f64(x.f64()).to_ne_bytes())
            .collect(),
        DType::Bf16 => v
            .iter()
            .flat_map(|x| bf16::from_f64(x.f64()).to_ne_bytes())
            .collect(),
        DType::F64 => v.iter().flat_map(|x| x.f64().to_ne_bytes()).collect(),
        _ => return Err(AclError::OP_TYPE_NOT_MATCH),
    })
}

/// A float attribute, or `default` when absent (an attribute of another
/// kind is `OP_ATTR_NOT_MATCH`).
pub(super) fn attr<T: Real>(call: &Call<'_>, name: &str, default: f32) -> Result<T, AclError> {
    Ok(T::of(f64::from(call.attr_float(name, default)?)))
}

/// Elements below which a pointwise kernel stays on one thread (per
/// band): enough work to pay for a thread.
const POINTWISE_BAND: usize = 1 << 15;

/// A pointwise operator of `arity` float inputs of the output's type,
/// broadcast to the output's shape: `f` of each tuple of elements, in the
/// working type `T`, in a band of the output per core when it is large.
pub(super) fn pointwise<T: Real>(
    call: &Call<'_>,
    arity: usize,
    f: impl Fn(&[T]) -> T + Sync,
) -> Result<Written, AclError> {
    call.expect(arity, 1)?;
    let out = call.out(0);
    let mut shape: Vec<usize> = Vec::new();
    let mut inputs = Vec::with_capacity(arity);
    for i in 0..arity {
        let t = call.tensor(i)?;
        if t.dtype != out.dtype {
            return Err(AclError::OP_TYPE_NOT_MATCH);
        }
        shape = broadcast(&shape, &t.dims)?;
        inputs.push(t);
    }
    if shape != out.dims && Tensor::numel_of(&shape)? != out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let mut columns = Vec::with_capacity(arity);
    for t in &inputs {
        let v = values::<T>(t)?;
        columns.push(if t.dims == shape {
            v
        } else {
            broadcast_index(&t.dims, &shape).map(|i| v[i]).collect()
        });
    }
    let count = Tensor::numel_of(&shape)?;
    let mut y = vec![T::ZERO; count];
    // Split into a band per core when it is worth a thread.
    let parts = crate::parallel::parts(count, POINTWISE_BAND);
    crate::parallel::bands_mut(&mut y, 1, parts, |first, band| {
        let mut args = vec![T::ZERO; arity];
        for (j, slot) in band.iter_mut().enumerate() {
            for (a, c) in args.iter_mut().zip(&columns) {
                *a = c[first + j];
            }
            *slot = f(&args);
        }
    });
    Ok(vec![bytes(out.dtype, &y)?])
}

/// A non-negative axis of a tensor of `rank` dims from `axis`, which may
/// count from the end (`OP_ATTR_NOT_MATCH` outside `-rank..rank`; a scalar
/// has the one axis 0).
pub(super) fn axis(axis: i64, rank: usize) -> Result<usize, AclError> {
    let rank = rank.max(1) as i64;
    let a = if axis < 0 { axis + rank } else { axis };
    if (0..rank).contains(&a) {
        Ok(a as usize)
    } else {
        Err(AclError::OP_ATTR_NOT_MATCH)
    }
}

/// The type of the one output of a call of `inputs` inputs, once the
/// counts are checked (100021 / 100022 otherwise).
pub(super) fn out_type(call: &Call<'_>, inputs: usize) -> Result<DType, AclError> {
    call.expect(inputs, 1)?;
    Ok(call.out(0).dtype)
}
