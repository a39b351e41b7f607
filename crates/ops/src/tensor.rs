//! Element types and host copies of tensors: what the operators compute on.
//!
//! An operator's inputs are read into host memory ([`Tensor`]), computed
//! on, and its outputs written back to the device. Elements are converted
//! through [`Num`]: an `f64` for the floating types, an `i64` for the
//! integer types and `bool` (a `u64` is kept bit for bit in the `i64`).

use aclmem_core::AclError;
use half::{bf16, f16};

/// `aclDataType`, the types the emulated operators compute on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `ACL_FLOAT` (0).
    F32,
    /// `ACL_FLOAT16` (1).
    F16,
    /// `ACL_INT8` (2).
    I8,
    /// `ACL_INT32` (3).
    I32,
    /// `ACL_UINT8` (4).
    U8,
    /// `ACL_INT16` (6).
    I16,
    /// `ACL_UINT16` (7).
    U16,
    /// `ACL_UINT32` (8).
    U32,
    /// `ACL_INT64` (9).
    I64,
    /// `ACL_UINT64` (10).
    U64,
    /// `ACL_DOUBLE` (11).
    F64,
    /// `ACL_BOOL` (12).
    Bool,
    /// `ACL_BF16` (27).
    Bf16,
}

impl DType {
    /// Every type, with its `aclDataType` value.
    pub const ALL: [(DType, i32); 13] = [
        (DType::F32, 0),
        (DType::F16, 1),
        (DType::I8, 2),
        (DType::I32, 3),
        (DType::U8, 4),
        (DType::I16, 6),
        (DType::U16, 7),
        (DType::U32, 8),
        (DType::I64, 9),
        (DType::U64, 10),
        (DType::F64, 11),
        (DType::Bool, 12),
        (DType::Bf16, 27),
    ];

    /// From the C value; a type the operators do not compute on (strings,
    /// complex, 4-bit) is `ACL_ERROR_UNSUPPORTED_DATA_TYPE`.
    pub fn from_acl(raw: i32) -> Result<DType, AclError> {
        DType::ALL
            .iter()
            .find(|(_, v)| *v == raw)
            .map(|(t, _)| *t)
            .ok_or(AclError::UNSUPPORTED_DATA_TYPE)
    }

    /// The type of each part of a complex C type: `ACL_COMPLEX64` (16) is
    /// two `f32`s, `ACL_COMPLEX128` (17) two `f64`s; `None` for any other
    /// value. The kernels do not compute on complex numbers: the operator
    /// API moves them as pairs of their parts (fill, copy, cast).
    pub fn complex_part(raw: i32) -> Option<DType> {
        match raw {
            16 => Some(DType::F32),
            17 => Some(DType::F64),
            _ => None,
        }
    }

    /// The C value.
    pub fn acl(self) -> i32 {
        DType::ALL
            .iter()
            .find(|(t, _)| *t == self)
            .map_or(-1, |(_, v)| *v)
    }

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::Bf16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// Whether it is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::F64 | DType::Bf16)
    }

    /// Reads the element at the start of `b` (at least [`DType::size`]
    /// bytes, native byte order).
    pub fn get(self, b: &[u8]) -> Num {
        fn a<const N: usize>(b: &[u8]) -> [u8; N] {
            let mut out = [0u8; N];
            out.copy_from_slice(&b[..N]);
            out
        }
        match self {
            DType::F32 => Num::F(f32::from_ne_bytes(a(b)) as f64),
            DType::F16 => Num::F(f16::from_ne_bytes(a(b)).to_f64()),
            DType::Bf16 => Num::F(bf16::from_ne_bytes(a(b)).to_f64()),
            DType::F64 => Num::F(f64::from_ne_bytes(a(b))),
            DType::I8 => Num::I(i8::from_ne_bytes(a(b)) as i64),
            DType::U8 => Num::I(b[0] as i64),
            DType::Bool => Num::I((b[0] != 0) as i64),
            DType::I16 => Num::I(i16::from_ne_bytes(a(b)) as i64),
            DType::U16 => Num::I(u16::from_ne_bytes(a(b)) as i64),
            DType::I32 => Num::I(i32::from_ne_bytes(a(b)) as i64),
            DType::U32 => Num::I(u32::from_ne_bytes(a(b)) as i64),
            DType::I64 => Num::I(i64::from_ne_bytes(a(b))),
            DType::U64 => Num::I(u64::from_ne_bytes(a(b)) as i64),
        }
    }

    /// Writes `n`, converted to this type as a C cast does (floats to
    /// integers truncate toward zero and saturate, NaN gives 0; anything
    /// to `bool` is "not zero"), at the start of `out`.
    pub fn put(self, n: Num, out: &mut [u8]) {
        let len = self.size();
        let out = &mut out[..len];
        match self {
            DType::F32 => out.copy_from_slice(&(n.f64() as f32).to_ne_bytes()),
            DType::F16 => out.copy_from_slice(&f16::from_f64(n.f64()).to_ne_bytes()),
            DType::Bf16 => out.copy_from_slice(&bf16::from_f64(n.f64()).to_ne_bytes()),
            DType::F64 => out.copy_from_slice(&n.f64().to_ne_bytes()),
            DType::Bool => out[0] = n.truthy() as u8,
            DType::I8 => out.copy_from_slice(&(n.i64() as i8).to_ne_bytes()),
            DType::U8 => out[0] = n.i64() as u8,
            DType::I16 => out.copy_from_slice(&(n.i64() as i16).to_ne_bytes()),
            DType::U16 => out.copy_from_slice(&(n.i64() as u16).to_ne_bytes()),
            DType::I32 => out.copy_from_slice(&(n.i64() as i32).to_ne_bytes()),
            DType::U32 => out.copy_from_slice(&(n.i64() as u32).to_ne_bytes()),
            DType::I64 => out.copy_from_slice(&n.i64().to_ne_bytes()),
            DType::U64 => out.copy_from_slice(&(n.i64() as u64).to_ne_bytes()),
        }
    }

    /// One element holding `n`, as bytes.
    pub fn bytes_of(self, n: Num) -> Vec<u8> {
        let mut out = vec![0u8; self.size()];
        self.put(n, &mut out);
        out
    }
}

/// One element's value while an operator computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A floating-point value.
    F(f64),
    /// An integer or boolean value.
    I(i64),
}

impl Num {
    /// As `f64`.
    pub fn f64(self) -> f64 {
        match self {
            Num::F(f) => f,
            Num::I(i) => i as f64,
        }
    }

    /// As `i64`: floats truncate toward zero, saturating; NaN is 0.
    pub fn i64(self) -> i64 {
        match self {
            Num::F(f) => f as i64,
            Num::I(i) => i,
        }
    }

    /// Not zero.
    pub fn truthy(self) -> bool {
        match self {
            Num::F(f) => f != 0.0,
            Num::I(i) => i != 0,
        }
    }
}

/// A tensor's host copy: type, shape and its elements back to back.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// The element type.
    pub dtype: DType,
    /// The shape (an empty shape is a scalar: one element).
    pub dims: Vec<usize>,
    /// `numel × size` bytes, row-major.
    pub bytes: Vec<u8>,
}

impl Tensor {
    /// How many elements a shape holds.
    pub fn numel_of(dims: &[usize]) -> Result<usize, AclError> {
        dims.iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or(AclError::INVALID_PARAM)
    }

    /// A tensor of `dims` whose every element is `n`.
    pub fn full(dtype: DType, dims: Vec<usize>, n: Num) -> Result<Tensor, AclError> {
        let count = Tensor::numel_of(&dims)?;
        let one = dtype.bytes_of(n);
        let bytes = one.repeat(count);
        Ok(Tensor { dtype, dims, bytes })
    }

    /// A tensor from values.
    pub fn from_nums(
        dtype: DType,
        dims: Vec<usize>,
        nums: impl IntoIterator<Item = Num>,
    ) -> Tensor {
        let size = dtype.size();
        let mut bytes = Vec::new();
        for n in nums {
            let at = bytes.len();
            bytes.resize(at + size, 0);
            dtype.put(n, &mut bytes[at..]);
        }
        Tensor { dtype, dims, bytes }
    }

    /// How many elements.
    pub fn numel(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }

    /// The element at flat index `i`.
    pub fn at(&self, i: usize) -> Num {
        let s = self.dtype.size();
        self.dtype.get(&self.bytes[i * s..])
    }

    /// Every element, in order.
    pub fn nums(&self) -> impl Iterator<Item = Num> + '_ {
        self.bytes
            .chunks_exact(self.dtype.size())
            .map(|c| self.dtype.get(c))
    }

    /// The elements as integers (sizes, axes, strides).
    pub fn ints(&self) -> Vec<i64> {
        self.nums().map(Num::i64).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_small_integers() {
        for (t, raw) in DType::ALL {
            assert_eq!(DType::from_acl(raw), Ok(t));
            assert_eq!(t.acl(), raw);
            for v in [0i64, 1, 7, 100] {
                let b = t.bytes_of(Num::I(v));
                assert_eq!(b.len(), t.size());
                let back = t.get(&b);
                let expect = if t == DType::Bool { (v != 0) as i64 } else { v };
                assert_eq!(back.i64(), expect, "{t:?} {v}");
            }
        }
    }

    #[test]
    fn conversions_follow_c_casts() {
        assert_eq!(
            DType::I32.get(&DType::I32.bytes_of(Num::F(-2.7))),
            Num::I(-2)
        );
        assert_eq!(DType::U8.get(&DType::U8.bytes_of(Num::I(257))), Num::I(1));
        assert_eq!(
            DType::Bool.get(&DType::Bool.bytes_of(Num::F(0.25))),
            Num::I(1)
        );
        assert_eq!(
            DType::I64.get(&DType::I64.bytes_of(Num::F(f64::NAN))),
            Num::I(0)
        );
        assert_eq!(
            DType::F16.get(&DType::F16.bytes_of(Num::F(0.1))),
            Num::F(f16::from_f64(0.1).to_f64())
        );
        assert_eq!(
            DType::Bf16.get(&DType::Bf16.bytes_of(Num::I(3))),
            Num::F(3.0)
        );
        let big = u64::MAX - 1;
        assert_eq!(DType::U64.get(&big.to_ne_bytes()).i64() as u64, big);
    }

    #[test]
    fn unknown_types_are_named_unsupported() {
        for raw in [-1, 5, 13, 16, 17, 29, 1000] {
            assert_eq!(DType::from_acl(raw), Err(AclError::UNSUPPORTED_DATA_TYPE));
        }
    }
}
