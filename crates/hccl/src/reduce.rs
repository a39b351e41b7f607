//! The element-wise reductions Gloo calls with HCCL's operations: sum,
//! product, maximum and minimum of every HCCL type.
//!
//! Integers wrap, as the device's integer units do. Half-precision types
//! (`fp16`, `bf16`) are computed in `f32` and rounded to nearest even once
//! per step, as a device adds them. Maximum and minimum of floats ignore a
//! NaN operand when the other is a number (IEEE 754 `maxNum`/`minNum`),
//! the rule Rust's `f32::max` follows. The 8-bit float types are moved but
//! never reduced (HCCL accepts no reduction of them): their function is
//! `None`.

use std::ffi::c_void;

use crate::engine::abi::GlooReduceFn;
use crate::result::Hccl;

/// A reduction: `c[i] = op(a[i], b[i])` over `n` elements (`c` may be
/// `a` or `b`), as Gloo calls it (the engine's [`GlooReduceFn`]).
pub type ReduceFn = GlooReduceFn;

/// `HcclReduceOp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// `HCCL_REDUCE_SUM` (0).
    Sum,
    /// `HCCL_REDUCE_PROD` (1).
    Prod,
    /// `HCCL_REDUCE_MAX` (2).
    Max,
    /// `HCCL_REDUCE_MIN` (3).
    Min,
}

impl ReduceOp {
    /// From the C value; anything else is `HCCL_E_PARA`.
    pub fn from_raw(raw: u32) -> Result<ReduceOp, Hccl> {
        Ok(match raw {
            0 => ReduceOp::Sum,
            1 => ReduceOp::Prod,
            2 => ReduceOp::Max,
            3 => ReduceOp::Min,
            _ => return Err(Hccl::E_PARA),
        })
    }

    /// The C value.
    pub const fn raw(self) -> u32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Prod => 1,
            ReduceOp::Max => 2,
            ReduceOp::Min => 3,
        }
    }
}

/// An element HCCL reduces.
pub trait Element: Copy {
    /// `a + b`.
    fn sum(a: Self, b: Self) -> Self;
    /// `a * b`.
    fn prod(a: Self, b: Self) -> Self;
    /// The larger.
    fn max(a: Self, b: Self) -> Self;
    /// The smaller.
    fn min(a: Self, b: Self) -> Self;
    /// Whether the type is reduced at all.
    const REDUCED: bool = true;
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn sum(a: $t, b: $t) -> $t { a.wrapping_add(b) }
            fn prod(a: $t, b: $t) -> $t { a.wrapping_mul(b) }
            fn max(a: $t, b: $t) -> $t { Ord::max(a, b) }
            fn min(a: $t, b: $t) -> $t { Ord::min(a, b) }
        }
    )*};
}
integers!(i8, i16, i32, i64, i128, u8, u16, u32, u64);

macro_rules! floats {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn sum(a: $t, b: $t) -> $t { a + b }
            fn prod(a: $t, b: $t) -> $t { a * b }
            fn max(a: $t, b: $t) -> $t { <$t>::max(a, b) }
            fn min(a: $t, b: $t) -> $t { <$t>::min(a, b) }
        }
    )*};
}
floats!(f32, f64);

macro_rules! halves {
    ($($t:ty),*) => {$(
        impl Element for $t {
            fn sum(a: $t, b: $t) -> $t { <$t>::from_f32(a.to_f32() + b.to_f32()) }
            fn prod(a: $t, b: $t) -> $t { <$t>::from_f32(a.to_f32() * b.to_f32()) }
            fn max(a: $t, b: $t) -> $t { <$t>::from_f32(a.to_f32().max(b.to_f32())) }
            fn min(a: $t, b: $t) -> $t { <$t>::from_f32(a.to_f32().min(b.to_f32())) }
        }
    )*};
}
halves!(half::f16, half::bf16);

/// A one-byte type HCCL moves but never reduces.
#[derive(Debug, Clone, Copy)]
pub struct NoReduce(#[allow(dead_code)] u8);

impl Element for NoReduce {
    fn sum(a: NoReduce, _: NoReduce) -> NoReduce {
        a
    }
    fn prod(a: NoReduce, _: NoReduce) -> NoReduce {
        a
    }
    fn max(a: NoReduce, _: NoReduce) -> NoReduce {
        a
    }
    fn min(a: NoReduce, _: NoReduce) -> NoReduce {
        a
    }
    const REDUCED: bool = false;
}

/// Applies `f` element by element.
///
/// # Safety
/// `a` and `b` must be readable and `c` writable for `n` elements of `T`;
/// `c` may be `a` or `b` (each element is read before it is written), no
/// other overlap.
unsafe fn apply<T: Element>(
    c: *mut c_void,
    a: *const c_void,
    b: *const c_void,
    n: usize,
    f: fn(T, T) -> T,
) {
    let (c, a, b) = (c.cast::<T>(), a.cast::<T>(), b.cast::<T>());
    for i in 0..n {
        // SAFETY: the caller's contract: `i < n` elements of each, read
        // before written; unaligned accesses, as Gloo hands out any offset.
        unsafe {
            let x = a.add(i).read_unaligned();
            let y = b.add(i).read_unaligned();
            c.add(i).write_unaligned(f(x, y));
        }
    }
}

macro_rules! reducer {
    ($name:ident, $method:ident) => {
        /// Gloo's reduction callback.
        ///
        /// # Safety
        /// As [`apply`]: Gloo passes buffers of `n` elements.
        unsafe extern "C" fn $name<T: Element>(
            c: *mut c_void,
            a: *const c_void,
            b: *const c_void,
            n: usize,
        ) {
            // SAFETY: passed on.
            unsafe { apply::<T>(c, a, b, n, T::$method) }
        }
    };
}
reducer!(sum, sum);
reducer!(prod, prod);
reducer!(max, max);
reducer!(min, min);

/// The callback reducing `T` with `op`.
pub fn function<T: Element>(op: ReduceOp) -> Option<ReduceFn> {
    if !T::REDUCED {
        return None;
    }
    Some(match op {
        ReduceOp::Sum => sum::<T>,
        ReduceOp::Prod => prod::<T>,
        ReduceOp::Max => max::<T>,
        ReduceOp::Min => min::<T>,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    /// Reduces `a` and `b` into a third buffer and in place (into a copy
    /// of `a`, as Gloo calls it most often); both must agree.
    fn run<T: Element + PartialEq + std::fmt::Debug>(op: ReduceOp, a: &[T], b: &[T]) -> Vec<T> {
        let f = function::<T>(op).unwrap();
        let mut c = a.to_vec();
        // SAFETY: three buffers of a.len() elements; c aliases neither.
        unsafe {
            f(
                c.as_mut_ptr().cast(),
                a.as_ptr().cast(),
                b.as_ptr().cast(),
                a.len(),
            )
        };
        let mut d = a.to_vec();
        let p = d.as_mut_ptr().cast::<c_void>();
        // SAFETY: d is readable and writable for its length; c may be a.
        unsafe { f(p, p, b.as_ptr().cast(), a.len()) };
        assert_eq!(c, d);
        c
    }

    #[test]
    fn integers_wrap_and_compare() {
        assert_eq!(run(ReduceOp::Sum, &[i8::MAX, 3], &[1, -5]), [i8::MIN, -2]);
        assert_eq!(run(ReduceOp::Prod, &[200u8, 3], &[2, 4]), [144, 12]);
        assert_eq!(run(ReduceOp::Max, &[-1i64, 7], &[2, -9]), [2, 7]);
        assert_eq!(run(ReduceOp::Min, &[u64::MAX, 0], &[1, 5]), [1, 0]);
        assert_eq!(run(ReduceOp::Sum, &[i128::MAX], &[1]), [i128::MIN]);
    }

    #[test]
    fn floats_follow_ieee() {
        assert_eq!(
            run(ReduceOp::Sum, &[1.5f32, -2.0], &[2.25, 2.0]),
            [3.75, 0.0]
        );
        assert_eq!(
            run(ReduceOp::Max, &[f64::NAN, 1.0], &[2.0, f64::NAN]),
            [2.0, 1.0]
        );
        assert_eq!(
            run(ReduceOp::Sum, &[f16::from_f32(1.0)], &[f16::from_f32(0.5)]),
            [f16::from_f32(1.5)]
        );
        // 256 + 1 in bf16 (8 bits of mantissa) rounds to even: 256.
        assert_eq!(
            run(
                ReduceOp::Sum,
                &[bf16::from_f32(256.0)],
                &[bf16::from_f32(1.0)]
            ),
            [bf16::from_f32(256.0)]
        );
        assert_eq!(
            run(
                ReduceOp::Prod,
                &[bf16::from_f32(3.0)],
                &[bf16::from_f32(-2.0)]
            ),
            [bf16::from_f32(-6.0)]
        );
        assert_eq!(
            run(ReduceOp::Min, &[f16::from_f32(-3.0)], &[f16::from_f32(2.0)]),
            [f16::from_f32(-3.0)]
        );
    }

    #[test]
    fn eight_bit_floats_are_not_reduced() {
        assert!(function::<NoReduce>(ReduceOp::Sum).is_none());
    }
}
