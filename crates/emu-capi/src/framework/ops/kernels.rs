//! The data operators, computed on host copies of their tensors.
//!
//! One function per operator of the catalogue's list
//! ([`aclmem_sys::with_operators!`]), named as the operator is; the list
//! decides which names [`find`] knows, so an operator listed without its
//! function here does not compile. Inputs and outputs follow the operator
//! definitions torch_npu launches (its `OpCommand` path): device tensors
//! contiguous unless named otherwise, sizes, axes and scalars as host
//! tensors. Each kernel checks what it is given (counts, types, shapes,
//! attributes) and answers the runtime's operator codes when they do not
//! fit; the values it computes follow PyTorch's CPU semantics, except the
//! random ones, which are reproducible from their key and counter but are
//! not an NPU's numbers.

#![allow(non_snake_case)]

use aclmem_core::AclError;
use rand_core::{Rng, SeedableRng};

use super::objects::{AttrValue, OpAttr};
use super::tensor::{DType, Num, Tensor};

/// A tensor's type and shape, as its descriptor gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The element type.
    pub dtype: DType,
    /// The shape.
    pub dims: Vec<usize>,
}

impl Spec {
    /// Its element count.
    pub fn numel(&self) -> usize {
        self.dims.iter().product()
    }
}

/// Where a kernel reads its inputs from: the operator's buffers.
pub trait Inputs {
    /// How many inputs.
    fn count(&self) -> usize;
    /// Input `i`'s type and shape.
    fn spec(&self, i: usize) -> Result<&Spec, AclError>;
    /// The first `elements` elements of input `i`'s buffer (at most what
    /// the buffer holds: 100000 beyond it).
    fn prefix(&self, i: usize, elements: usize) -> Result<Vec<u8>, AclError>;
}

/// One operator call.
pub struct Call<'a> {
    /// The inputs.
    pub inputs: &'a dyn Inputs,
    /// The outputs' types and shapes (for an operator whose output shape
    /// depends on its data, the most it can be: the caller's buffer).
    pub outputs: Vec<Spec>,
    /// The attributes.
    pub attrs: OpAttr,
    /// Outputs whose real shape is smaller than [`Call::outputs`] gives:
    /// set by the operators whose shape depends on their data (`NonZero`,
    /// `MaskedSelect`); `aclopCompileAndExecuteV2` writes them into the
    /// output descriptors.
    pub reshaped: std::cell::RefCell<Vec<(usize, Vec<usize>)>>,
}

impl<'a> Call<'a> {
    /// A call of an operator on `inputs`, into `outputs`, with `attrs`.
    pub fn new(inputs: &'a dyn Inputs, outputs: Vec<Spec>, attrs: OpAttr) -> Call<'a> {
        Call {
            inputs,
            outputs,
            attrs,
            reshaped: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// Output `o`'s real shape is `dims`.
    fn reshape(&self, o: usize, dims: Vec<usize>) {
        self.reshaped.borrow_mut().push((o, dims));
    }
}

/// What a kernel writes: per output, bytes from the start of its buffer.
pub type Written = Vec<Vec<u8>>;

/// A kernel.
pub type Kernel = fn(&Call<'_>) -> Result<Written, AclError>;

/// Formats whose elements lie row-major, as the kernels read them: ND,
/// NCHW, NHWC, NDHWC, NCDHW, HWCN, NC, NCL. The private, tiled formats
/// (NC1HWC0, FRACTAL_Z, FRACTAL_NZ, ...) are not.
pub fn plain_format(format: i32) -> bool {
    matches!(format, -1 | 0 | 1 | 2 | 16 | 27 | 30 | 35 | 47)
}

macro_rules! kernel_table {
    ($($name:ident: $what:literal;)*) => {
        /// The kernel of an emulated operator, by its name.
        pub fn find(name: &str) -> Option<Kernel> {
            match name {
                $(stringify!($name) => Some($name as Kernel),)*
                _ => None,
            }
        }
    };
}
aclmem_sys::with_operators!(kernel_table);

impl Call<'_> {
    fn expect(&self, inputs: usize, outputs: usize) -> Result<(), AclError> {
        if self.inputs.count() != inputs {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        if self.outputs.len() != outputs {
            return Err(AclError::OP_OUTPUT_NOT_MATCH);
        }
        Ok(())
    }

    fn spec(&self, i: usize) -> Result<&Spec, AclError> {
        self.inputs.spec(i)
    }

    /// Input `i`, whole (its descriptor's shape).
    fn tensor(&self, i: usize) -> Result<Tensor, AclError> {
        let spec = self.inputs.spec(i)?.clone();
        let bytes = self.inputs.prefix(i, spec.numel())?;
        Ok(Tensor {
            dtype: spec.dtype,
            dims: spec.dims,
            bytes,
        })
    }

    /// Input `i` as integers (sizes, axes, strides, offsets).
    fn ints(&self, i: usize) -> Result<Vec<i64>, AclError> {
        let t = self.tensor(i)?;
        if t.dtype.is_float() {
            return Err(AclError::OP_TYPE_NOT_MATCH);
        }
        Ok(t.ints())
    }

    /// Input `i` as a list of sizes (none negative).
    fn sizes(&self, i: usize) -> Result<Vec<usize>, AclError> {
        self.ints(i)?
            .into_iter()
            .map(|v| usize::try_from(v).map_err(|_| AclError::INVALID_PARAM))
            .collect()
    }

    /// Input `i`, a scalar (its first element).
    fn scalar(&self, i: usize) -> Result<Num, AclError> {
        let t = self.tensor(i)?;
        if t.numel() == 0 {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        Ok(t.at(0))
    }

    fn out(&self, i: usize) -> &Spec {
        &self.outputs[i]
    }

    fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.get(name)
    }

    fn attr_bool(&self, name: &str, default: bool) -> Result<bool, AclError> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Bool(b)) => Ok(*b),
            Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }

    fn attr_float(&self, name: &str, default: f32) -> Result<f32, AclError> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Float(f)) => Ok(*f),
            Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }

    fn attr_type(&self, name: &str) -> Result<Option<DType>, AclError> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::DataType(t)) => DType::from_acl(*t).map(Some),
            Some(AttrValue::Int(t)) => i32::try_from(*t)
                .map_err(|_| AclError::OP_ATTR_NOT_MATCH)
                .and_then(DType::from_acl)
                .map(Some),
            Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }
}

/// Every element of output `o` is `n`.
fn filled(call: &Call<'_>, o: usize, n: Num) -> Result<Written, AclError> {
    let out = call.out(o);
    Ok(vec![Tensor::full(out.dtype, out.dims.clone(), n)?.bytes])
}

/// `ZerosLike(x) -> y`: zeros of `y`'s type and shape.
fn ZerosLike(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    same_count(call.spec(0)?, call.out(0))?;
    filled(call, 0, Num::I(0))
}

/// `OnesLike(x) -> y`: ones.
fn OnesLike(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    same_count(call.spec(0)?, call.out(0))?;
    filled(call, 0, Num::I(1))
}

fn same_count(a: &Spec, b: &Spec) -> Result<(), AclError> {
    if a.numel() == b.numel() {
        Ok(())
    } else {
        Err(AclError::OP_OUTPUT_NOT_MATCH)
    }
}

/// `Fill(dims, value) -> y`: `value` everywhere (`dims` is `[1]` for a
/// 0-dim `y`).
fn Fill(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let dims = call.sizes(0)?;
    let count = Tensor::numel_of(&dims)?;
    if count != call.out(0).numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    filled(call, 0, call.scalar(1)?)
}

/// `Cast(x) -> y`, attribute `dst_type`: each element converted as a C
/// cast converts it.
fn Cast(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let out = call.out(0);
    if let Some(t) = call.attr_type("dst_type")?
        && t != out.dtype
    {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let x = call.tensor(0)?;
    same_count(call.spec(0)?, out)?;
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), x.nums()).bytes,
    ])
}

/// `Identity(x) -> y`: a copy.
fn Identity(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let x = call.tensor(0)?;
    if x.dtype != call.out(0).dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    same_count(call.spec(0)?, call.out(0))?;
    Ok(vec![x.bytes])
}

/// `Range(start, limit, delta) -> y`: `start + i·delta` for each `i` of
/// `y`.
fn Range(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let (start, limit, delta) = (call.scalar(0)?, call.scalar(1)?, call.scalar(2)?);
    let out = call.out(0);
    if out.dims.len() != 1 || !delta.truthy() {
        return Err(AclError::INVALID_PARAM);
    }
    let count = out.dims[0];
    let expected = ((limit.f64() - start.f64()) / delta.f64()).ceil().max(0.0);
    if expected as usize != count {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let nums = (0..count).map(|i| match (start, delta) {
        (Num::I(s), Num::I(d)) => Num::I(s + d * i as i64),
        _ => Num::F(start.f64() + delta.f64() * i as f64),
    });
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}

// ---- random --------------------------------------------------------------

/// The generator of a stateless random operator: one stream per key and
/// counter (ChaCha8), so the same seed and offset give the same values.
fn rng(call: &Call<'_>) -> Result<rand_chacha::ChaCha8Rng, AclError> {
    call.expect(4, 1)?;
    let dims = call.sizes(0)?;
    if dims != call.out(0).dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let key = call.ints(1)?;
    let counter = call.ints(2)?;
    let mut seed = [0u8; 32];
    for (i, v) in key.iter().chain(&counter).take(4).enumerate() {
        seed[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    if let Some(t) = call.attr_type("dtype")?
        && t != call.out(0).dtype
    {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if !call.out(0).dtype.is_float() {
        return Err(AclError::UNSUPPORTED_DATA_TYPE);
    }
    Ok(rand_chacha::ChaCha8Rng::from_seed(seed))
}

/// A uniform value in `[0, 1)` with 53 random bits.
fn unit(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `StatelessRandomUniformV2(shape, key, counter, alg) -> y`, attribute
/// `dtype`: uniform in `[0, 1)`.
fn StatelessRandomUniformV2(call: &Call<'_>) -> Result<Written, AclError> {
    let mut rng = rng(call)?;
    let out = call.out(0);
    let nums = (0..out.numel()).map(|_| Num::F(unit(&mut rng)));
    let mut t = Tensor::from_nums(out.dtype, out.dims.clone(), nums);
    // A narrow type may round a value just below 1 up to 1: keep [0, 1).
    for i in 0..t.numel() {
        if t.at(i).f64() >= 1.0 {
            let s = out.dtype.size();
            out.dtype.put(Num::F(0.0), &mut t.bytes[i * s..]);
        }
    }
    Ok(vec![t.bytes])
}

/// `StatelessRandomNormalV2(shape, key, counter, alg) -> y`, attribute
/// `dtype`: standard normal (Box-Muller).
fn StatelessRandomNormalV2(call: &Call<'_>) -> Result<Written, AclError> {
    let mut rng = rng(call)?;
    let out = call.out(0);
    let nums = (0..out.numel()).map(|_| {
        let u1 = 1.0 - unit(&mut rng); // (0, 1]
        let u2 = unit(&mut rng);
        Num::F((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos())
    });
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}

// ---- elementwise ---------------------------------------------------------

/// The broadcast of two shapes (NumPy's rule), or 100021.
fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, AclError> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let y = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            match (x, y) {
                (x, y) if x == y => Ok(x),
                (1, y) => Ok(y),
                (x, 1) => Ok(x),
                _ => Err(AclError::OP_INPUT_NOT_MATCH),
            }
        })
        .collect()
}

/// For each element of `out` (row-major), the flat index of the element of
/// a tensor of shape `dims` broadcast to it.
fn broadcast_index(dims: &[usize], out: &[usize]) -> impl Iterator<Item = usize> {
    let n = out.len();
    let mut strides = vec![0usize; n];
    let mut s = 1;
    for (k, &d) in dims.iter().enumerate().rev() {
        let at = k + n - dims.len();
        strides[at] = if d == 1 { 0 } else { s };
        s *= d;
    }
    Strided::new(out.to_vec(), strides, 0)
}

/// Walks a shape row-major, yielding `offset + Σ index_k·stride_k`.
struct Strided {
    dims: Vec<usize>,
    strides: Vec<usize>,
    index: Vec<usize>,
    at: usize,
    left: usize,
}

impl Strided {
    fn new(dims: Vec<usize>, strides: Vec<usize>, offset: usize) -> Strided {
        let left = dims.iter().product();
        Strided {
            index: vec![0; dims.len()],
            dims,
            strides,
            at: offset,
            left,
        }
    }
}

impl Iterator for Strided {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let here = self.at;
        for k in (0..self.dims.len()).rev() {
            self.index[k] += 1;
            self.at += self.strides[k];
            if self.index[k] < self.dims[k] {
                break;
            }
            self.at -= self.strides[k] * self.dims[k];
            self.index[k] = 0;
        }
        Some(here)
    }
}

/// A binary elementwise operator: `f` on each pair of broadcast elements,
/// computed in floating point when either input is, else in integers.
fn binary(call: &Call<'_>, f: impl Fn(Num, Num) -> Num) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let (a, b) = (call.tensor(0)?, call.tensor(1)?);
    let out = call.out(0);
    let shape = broadcast(&a.dims, &b.dims)?;
    if shape != out.dims && Tensor::numel_of(&shape)? != out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let floats = a.dtype.is_float() || b.dtype.is_float();
    let nums = broadcast_index(&a.dims, &shape)
        .zip(broadcast_index(&b.dims, &shape))
        .map(|(i, j)| {
            let (x, y) = (a.at(i), b.at(j));
            if floats {
                f(Num::F(x.f64()), Num::F(y.f64()))
            } else {
                f(x, y)
            }
        });
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}

fn arith(x: Num, y: Num, fi: fn(i64, i64) -> i64, ff: fn(f64, f64) -> f64) -> Num {
    match (x, y) {
        (Num::I(a), Num::I(b)) => Num::I(fi(a, b)),
        _ => Num::F(ff(x.f64(), y.f64())),
    }
}

/// `Add(x1, x2) -> y`, broadcast.
fn Add(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| arith(x, y, i64::wrapping_add, |a, b| a + b))
}

/// `Sub(x1, x2) -> y`, broadcast.
fn Sub(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| arith(x, y, i64::wrapping_sub, |a, b| a - b))
}

/// `Mul(x1, x2) -> y`, broadcast.
fn Mul(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| arith(x, y, i64::wrapping_mul, |a, b| a * b))
}

/// `RealDiv(x1, x2) -> y`, broadcast, in floating point.
fn RealDiv(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| Num::F(x.f64() / y.f64()))
}

/// `Maximum(x1, x2) -> y`, broadcast (NaN wins).
fn Maximum(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| match (x, y) {
        (Num::I(a), Num::I(b)) => Num::I(a.max(b)),
        _ if x.f64().is_nan() || y.f64().is_nan() => Num::F(f64::NAN),
        _ => Num::F(x.f64().max(y.f64())),
    })
}

/// `Minimum(x1, x2) -> y`, broadcast (NaN wins).
fn Minimum(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| match (x, y) {
        (Num::I(a), Num::I(b)) => Num::I(a.min(b)),
        _ if x.f64().is_nan() || y.f64().is_nan() => Num::F(f64::NAN),
        _ => Num::F(x.f64().min(y.f64())),
    })
}

/// `AxpyV2(x1, x2, alpha) -> y`: `x1 + alpha·x2`, broadcast.
fn AxpyV2(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let alpha = call.scalar(2)?;
    let two = TwoOf(call);
    let inner = Call::new(&two, call.outputs.clone(), OpAttr::new());
    binary(&inner, |x, y| {
        let scaled = arith(y, alpha, i64::wrapping_mul, |a, b| a * b);
        arith(x, scaled, i64::wrapping_add, |a, b| a + b)
    })
}

/// The first two inputs of a call.
struct TwoOf<'a, 'c>(&'a Call<'c>);

impl Inputs for TwoOf<'_, '_> {
    fn count(&self) -> usize {
        2
    }
    fn spec(&self, i: usize) -> Result<&Spec, AclError> {
        self.0.inputs.spec(i)
    }
    fn prefix(&self, i: usize, elements: usize) -> Result<Vec<u8>, AclError> {
        self.0.inputs.prefix(i, elements)
    }
}

fn compare(
    call: &Call<'_>,
    f: fn(f64, f64) -> bool,
    fi: fn(i64, i64) -> bool,
) -> Result<Written, AclError> {
    binary(call, move |x, y| {
        Num::I(match (x, y) {
            (Num::I(a), Num::I(b)) => fi(a, b),
            _ => f(x.f64(), y.f64()),
        } as i64)
    })
}

/// `Equal(x1, x2) -> y` (bool), broadcast.
fn Equal(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a == b, |a, b| a == b)
}

/// `NotEqual(x1, x2) -> y` (bool), broadcast.
fn NotEqual(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a != b, |a, b| a != b)
}

/// `Less(x1, x2) -> y` (bool), broadcast.
fn Less(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a < b, |a, b| a < b)
}

/// `LessEqual(x1, x2) -> y` (bool), broadcast.
fn LessEqual(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a <= b, |a, b| a <= b)
}

/// `Greater(x1, x2) -> y` (bool), broadcast.
fn Greater(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a > b, |a, b| a > b)
}

/// `GreaterEqual(x1, x2) -> y` (bool), broadcast.
fn GreaterEqual(call: &Call<'_>) -> Result<Written, AclError> {
    compare(call, |a, b| a >= b, |a, b| a >= b)
}

/// `LogicalAnd(x1, x2) -> y` (bool), broadcast.
fn LogicalAnd(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| Num::I((x.truthy() && y.truthy()) as i64))
}

/// `LogicalOr(x1, x2) -> y` (bool), broadcast.
fn LogicalOr(call: &Call<'_>) -> Result<Written, AclError> {
    binary(call, |x, y| Num::I((x.truthy() || y.truthy()) as i64))
}

/// `IsClose(x1, x2) -> y` (bool), attributes `rtol`, `atol`, `equal_nan`:
/// `|x1 - x2| <= atol + rtol·|x2|`, as PyTorch decides it.
fn IsClose(call: &Call<'_>) -> Result<Written, AclError> {
    let rtol = call.attr_float("rtol", 1e-5)? as f64;
    let atol = call.attr_float("atol", 1e-8)? as f64;
    let equal_nan = call.attr_bool("equal_nan", false)?;
    binary(call, move |x, y| {
        let (a, b) = (x.f64(), y.f64());
        let close = if a.is_nan() || b.is_nan() {
            equal_nan && a.is_nan() && b.is_nan()
        } else {
            a == b || (a - b).abs() <= atol + rtol * b.abs()
        };
        Num::I(close as i64)
    })
}

/// `TensorEqual(x1, x2) -> y` (bool `[1]`): same shape and every element
/// equal.
fn TensorEqual(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let (a, b) = (call.tensor(0)?, call.tensor(1)?);
    let equal = a.dims == b.dims && a.nums().zip(b.nums()).all(|(x, y)| x.f64() == y.f64());
    filled(call, 0, Num::I(equal as i64))
}

/// A unary elementwise operator.
fn unary(call: &Call<'_>, f: impl Fn(Num) -> Num) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let x = call.tensor(0)?;
    let out = call.out(0);
    same_count(call.spec(0)?, out)?;
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), x.nums().map(f)).bytes,
    ])
}

/// `Neg(x) -> y`.
fn Neg(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i.wrapping_neg()),
        Num::F(f) => Num::F(-f),
    })
}

/// `Abs(x) -> y`.
fn Abs(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i.wrapping_abs()),
        Num::F(f) => Num::F(f.abs()),
    })
}

/// `LogicalNot(x) -> y` (bool).
fn LogicalNot(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| Num::I(!x.truthy() as i64))
}

/// `IsFinite(x) -> y` (bool): neither infinite nor NaN (integers always).
fn IsFinite(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(_) => Num::I(1),
        Num::F(f) => Num::I(f.is_finite() as i64),
    })
}

/// `Ceil(x) -> y`: the least integer not below `x`.
fn Ceil(call: &Call<'_>) -> Result<Written, AclError> {
    unary(call, |x| match x {
        Num::I(i) => Num::I(i),
        Num::F(f) => Num::F(f.ceil()),
    })
}

// ---- selections whose size depends on the data ---------------------------

/// `NonZero(x) -> y` (int64), attribute `transpose`: the coordinates of
/// the non-zero elements of `x`, row-major: `[count, rank]`, or
/// `[rank, count]` when `transpose`. The caller's `y` holds the most
/// (`numel` coordinates); its real shape is reported.
fn NonZero(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(1, 1)?;
    let x = call.tensor(0)?;
    let out = call.out(0);
    if out.dtype != DType::I64 && out.dtype != DType::I32 {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let transpose = call.attr_bool("transpose", false)?;
    let rank = x.dims.len();
    let strides = contiguous_strides(&x.dims);
    let coords: Vec<Vec<i64>> = (0..x.numel())
        .filter(|&i| x.at(i).truthy())
        .map(|i| {
            strides
                .iter()
                .zip(&x.dims)
                .map(|(&s, &d)| ((i / s.max(1)) % d.max(1)) as i64)
                .collect()
        })
        .collect();
    let count = coords.len();
    if count * rank > out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let (dims, nums): (Vec<usize>, Vec<i64>) = if transpose {
        (
            vec![rank, count],
            (0..rank)
                .flat_map(|k| coords.iter().map(move |c| c[k]))
                .collect(),
        )
    } else {
        (vec![count, rank], coords.concat())
    };
    call.reshape(0, dims.clone());
    Ok(vec![
        Tensor::from_nums(out.dtype, dims, nums.into_iter().map(Num::I)).bytes,
    ])
}

/// `MaskedSelect(x, mask) -> y`: the elements of `x` where `mask` (both
/// broadcast to one shape) is true, in order, as a 1-D `y`. The caller's
/// `y` holds the most; its real shape is reported.
fn MaskedSelect(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let (x, mask) = (call.tensor(0)?, call.tensor(1)?);
    let out = call.out(0);
    if out.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    let shape = broadcast(&x.dims, &mask.dims)?;
    let picked: Vec<Num> = broadcast_index(&x.dims, &shape)
        .zip(broadcast_index(&mask.dims, &shape))
        .filter(|&(_, m)| mask.at(m).truthy())
        .map(|(i, _)| x.at(i))
        .collect();
    if picked.len() > out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let dims = vec![picked.len()];
    call.reshape(0, dims.clone());
    Ok(vec![Tensor::from_nums(out.dtype, dims, picked).bytes])
}

/// `IndexPutV2(x, value, indexed_sizes, indexed_strides, indices0, ...) ->
/// y`, attribute `accumulate`: `x` with the elements the index tensors
/// pick set to (or, accumulating, increased by) `value`, as PyTorch's
/// `index_put_` does. `indexed_sizes` marks each axis of `x` that has an
/// index tensor (1) or is taken whole (0); the index tensors are broadcast
/// to one shape, which takes the indexed axes' place when they are
/// adjacent and comes first otherwise; `value` is broadcast to the
/// result. A negative index counts from the end; one out of range is
/// 100000 and nothing is written.
fn IndexPutV2(call: &Call<'_>) -> Result<Written, AclError> {
    let inputs = call.inputs.count();
    if inputs < 5 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    call.expect(inputs, 1)?;
    let x = call.tensor(0)?;
    let value = call.tensor(1)?;
    let out = call.out(0);
    if out.dtype != x.dtype || value.dtype != x.dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    same_count(call.spec(0)?, out)?;
    let marks = call.ints(2)?;
    let indexed: Vec<usize> = (0..x.dims.len())
        .filter(|&k| marks.get(k).is_some_and(|&m| m != 0))
        .collect();
    let indices = (4..inputs)
        .map(|i| call.tensor(i))
        .collect::<Result<Vec<_>, _>>()?;
    if indexed.len() != indices.len() || indices.iter().any(|t| t.dtype.is_float()) {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let mut picked_shape: Vec<usize> = Vec::new();
    for t in &indices {
        picked_shape = broadcast(&picked_shape, &t.dims)?;
    }
    let adjacent = indexed.windows(2).all(|w| w[1] == w[0] + 1);
    let first = indexed.first().copied().unwrap_or(0);
    let rest: Vec<usize> = (0..x.dims.len()).filter(|k| !indexed.contains(k)).collect();
    // The result's axes: (the picked shape's, or an axis of x).
    let before = if adjacent { first } else { 0 };
    let mut result: Vec<usize> = rest[..before.min(rest.len())]
        .iter()
        .map(|&k| x.dims[k])
        .collect();
    result.extend(&picked_shape);
    result.extend(rest[before.min(rest.len())..].iter().map(|&k| x.dims[k]));
    let strides = contiguous_strides(&x.dims);
    let pick_strides = contiguous_strides(&picked_shape);
    let index_at: Vec<Vec<usize>> = indices
        .iter()
        .map(|t| broadcast_index(&t.dims, &picked_shape).collect())
        .collect();
    let mut updated = x.clone();
    let size = x.dtype.size();
    let values: Vec<usize> = broadcast_index(&value.dims, &result).collect();
    let total = Tensor::numel_of(&result)?;
    let np = picked_shape.len();
    let mut writes = Vec::with_capacity(total);
    for (r, &v) in values.iter().enumerate().take(total) {
        // The result's coordinates of element r.
        let mut rem = r;
        let mut coord = vec![0usize; result.len()];
        for k in (0..result.len()).rev() {
            coord[k] = rem % result[k].max(1);
            rem /= result[k].max(1);
        }
        let picked = &coord[before..before + np];
        let p: usize = picked.iter().zip(&pick_strides).map(|(c, s)| c * s).sum();
        let mut flat = 0usize;
        for (j, &axis) in indexed.iter().enumerate() {
            let i = indices[j].at(index_at[j][p]).i64();
            let d = x.dims[axis] as i64;
            let i = if i < 0 { i + d } else { i };
            if !(0..d).contains(&i) {
                return Err(AclError::INVALID_PARAM);
            }
            flat += i as usize * strides[axis];
        }
        let whole = coord[..before].iter().chain(&coord[before + np..]);
        for (&c, &axis) in whole.zip(&rest) {
            flat += c * strides[axis];
        }
        writes.push((flat, value.at(v)));
    }
    let accumulate = call.attr_bool("accumulate", false)?;
    for (flat, v) in writes {
        let n = if accumulate {
            let now = updated.at(flat);
            if x.dtype.is_float() {
                Num::F(now.f64() + v.f64())
            } else {
                Num::I(now.i64().wrapping_add(v.i64()))
            }
        } else {
            v
        };
        x.dtype.put(n, &mut updated.bytes[flat * size..]);
    }
    Ok(vec![updated.bytes])
}

// ---- reductions ----------------------------------------------------------

/// A reduction over the axes of input 1 (all of them when empty; negative
/// ones count from the end), attribute `keep_dims`.
fn reduce(
    call: &Call<'_>,
    init: Num,
    f: impl Fn(Num, Num) -> Num,
    finish: impl Fn(Num, usize) -> Num,
) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let x = call.tensor(0)?;
    let rank = x.dims.len() as i64;
    let mut axes = vec![false; x.dims.len()];
    let listed = call.ints(1)?;
    for a in &listed {
        let a = if *a < 0 { a + rank } else { *a };
        let slot = usize::try_from(a)
            .ok()
            .and_then(|a| axes.get_mut(a))
            .ok_or(AclError::INVALID_PARAM)?;
        *slot = true;
    }
    if listed.is_empty() {
        axes.iter_mut().for_each(|a| *a = true);
    }
    let kept: Vec<usize> = x
        .dims
        .iter()
        .zip(&axes)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let out = call.out(0);
    let count = Tensor::numel_of(&kept)?;
    if count != out.numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let floats = x.dtype.is_float();
    let start = if floats { Num::F(init.f64()) } else { init };
    let mut acc = vec![start; count];
    let per = x.numel() / count.max(1);
    for (i, o) in broadcast_index(&kept, &x.dims).enumerate() {
        let v = x.at(i);
        let v = if floats { Num::F(v.f64()) } else { v };
        acc[o] = f(acc[o], v);
    }
    let nums = acc.into_iter().map(|a| finish(a, per));
    Ok(vec![
        Tensor::from_nums(out.dtype, out.dims.clone(), nums).bytes,
    ])
}

/// `ReduceSum(x, axes) -> y`.
fn ReduceSum(call: &Call<'_>) -> Result<Written, AclError> {
    reduce(
        call,
        Num::I(0),
        |a, v| arith(a, v, i64::wrapping_add, |a, b| a + b),
        |a, _| a,
    )
}

/// `ReduceMean(x, axes) -> y`.
fn ReduceMean(call: &Call<'_>) -> Result<Written, AclError> {
    reduce(
        call,
        Num::F(0.0),
        |a, v| Num::F(a.f64() + v.f64()),
        |a, n| Num::F(a.f64() / n as f64),
    )
}

/// The largest or smallest element over the axes (`pick` of two): integers
/// stay integers, NaN wins. The reduction starts from `from` (an infinity)
/// and takes the first element as it is.
fn extreme(
    call: &Call<'_>,
    from: f64,
    pick: fn(i64, i64) -> i64,
    fpick: fn(f64, f64) -> f64,
) -> Result<Written, AclError> {
    reduce(
        call,
        Num::F(from),
        move |a, v| match (a, v) {
            (Num::I(x), Num::I(y)) => Num::I(pick(x, y)),
            (Num::F(x), Num::I(y)) if x == from => Num::I(y),
            _ if v.f64().is_nan() || a.f64().is_nan() => Num::F(f64::NAN),
            _ => Num::F(fpick(a.f64(), v.f64())),
        },
        |a, _| a,
    )
}

/// `ReduceMax(x, axes) -> y`.
fn ReduceMax(call: &Call<'_>) -> Result<Written, AclError> {
    extreme(call, f64::NEG_INFINITY, i64::max, f64::max)
}

/// `ReduceMin(x, axes) -> y`.
fn ReduceMin(call: &Call<'_>) -> Result<Written, AclError> {
    extreme(call, f64::INFINITY, i64::min, f64::min)
}

/// `ReduceAll(x, axes) -> y` (bool).
fn ReduceAll(call: &Call<'_>) -> Result<Written, AclError> {
    reduce(
        call,
        Num::I(1),
        |a, v| Num::I((a.truthy() && v.truthy()) as i64),
        |a, _| a,
    )
}

/// `ReduceAny(x, axes) -> y` (bool).
fn ReduceAny(call: &Call<'_>) -> Result<Written, AclError> {
    reduce(
        call,
        Num::I(0),
        |a, v| Num::I((a.truthy() || v.truthy()) as i64),
        |a, _| a,
    )
}

// ---- layout --------------------------------------------------------------

/// The number of elements a strided view touches from its start: one past
/// its farthest element (0 when it is empty).
fn extent(dims: &[usize], strides: &[usize], offset: usize) -> Result<usize, AclError> {
    if dims.contains(&0) {
        return Ok(0);
    }
    dims.iter()
        .zip(strides)
        .try_fold(offset, |acc, (&d, &s)| {
            (d - 1).checked_mul(s).and_then(|x| acc.checked_add(x))
        })
        .and_then(|last| last.checked_add(1))
        .ok_or(AclError::INVALID_PARAM)
}

/// Reads input `i`'s view of `dims`/`strides`/`offset` (elements from
/// the buffer's start), as a contiguous tensor.
fn gather(
    call: &Call<'_>,
    i: usize,
    dims: &[usize],
    strides: &[usize],
    offset: usize,
) -> Result<Tensor, AclError> {
    if dims.len() != strides.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let dtype = call.spec(i)?.dtype;
    let size = dtype.size();
    let base = call.inputs.prefix(i, extent(dims, strides, offset)?)?;
    let mut bytes = Vec::with_capacity(Tensor::numel_of(dims)? * size);
    for at in Strided::new(dims.to_vec(), strides.to_vec(), offset) {
        bytes.extend_from_slice(&base[at * size..at * size + size]);
    }
    Ok(Tensor {
        dtype,
        dims: dims.to_vec(),
        bytes,
    })
}

/// `AsStrided(x, size, stride, storage_offset) -> y`: the view of `x`'s
/// buffer (its storage's start) with those sizes, strides and offset,
/// made contiguous.
fn AsStrided(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(4, 1)?;
    let (dims, strides) = (call.sizes(1)?, call.sizes(2)?);
    let offset = usize::try_from(call.scalar(3)?.i64()).map_err(|_| AclError::INVALID_PARAM)?;
    if dims != call.out(0).dims || call.spec(0)?.dtype != call.out(0).dtype {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![gather(call, 0, &dims, &strides, offset)?.bytes])
}

/// `ViewCopy(dst, dst_size, dst_stride, dst_offset, src, src_size,
/// src_stride, src_offset) -> dst`: the view of `src` written into the view
/// of `dst` (both from their buffers' starts; `src` broadcast to `dst`'s
/// sizes). The output is `dst`'s buffer: only the elements of the view
/// change.
fn ViewCopy(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(8, 1)?;
    let (dst_dims, dst_strides) = (call.sizes(1)?, call.sizes(2)?);
    let dst_offset = usize::try_from(call.scalar(3)?.i64()).map_err(|_| AclError::INVALID_PARAM)?;
    let (src_dims, src_strides) = (call.sizes(5)?, call.sizes(6)?);
    let src_offset = usize::try_from(call.scalar(7)?.i64()).map_err(|_| AclError::INVALID_PARAM)?;
    if dst_dims.len() != dst_strides.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let dtype = call.spec(0)?.dtype;
    let src = gather(call, 4, &src_dims, &src_strides, src_offset)?;
    if src.dtype != dtype || call.out(0).dtype != dtype {
        return Err(AclError::OP_TYPE_NOT_MATCH);
    }
    if broadcast(&src.dims, &dst_dims)? != dst_dims {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let size = dtype.size();
    let mut dst = call
        .inputs
        .prefix(0, extent(&dst_dims, &dst_strides, dst_offset)?)?;
    for (at, from) in Strided::new(dst_dims.clone(), dst_strides, dst_offset)
        .zip(broadcast_index(&src.dims, &dst_dims))
    {
        dst[at * size..at * size + size]
            .copy_from_slice(&src.bytes[from * size..from * size + size]);
    }
    Ok(vec![dst])
}

/// Row-major strides of a shape.
fn contiguous_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; dims.len()];
    let mut s = 1;
    for (k, &d) in dims.iter().enumerate().rev() {
        strides[k] = s;
        s *= d;
    }
    strides
}

/// `Transpose(x, perm) -> y`: `y`'s axis `k` is `x`'s axis `perm[k]`.
fn Transpose(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let x = call.spec(0)?.clone();
    let perm = call.sizes(1)?;
    let strides = contiguous_strides(&x.dims);
    let mut seen = vec![false; x.dims.len()];
    let mut dims = Vec::with_capacity(perm.len());
    let mut view = Vec::with_capacity(perm.len());
    for &p in &perm {
        if p >= x.dims.len() || std::mem::replace(&mut seen[p], true) {
            return Err(AclError::INVALID_PARAM);
        }
        dims.push(x.dims[p]);
        view.push(strides[p]);
    }
    if perm.len() != x.dims.len() || dims != call.out(0).dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![gather(call, 0, &dims, &view, 0)?.bytes])
}

/// `BroadcastTo(x, shape) -> y`.
fn BroadcastTo(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(2, 1)?;
    let x = call.tensor(0)?;
    let shape = call.sizes(1)?;
    if broadcast(&x.dims, &shape)? != shape || shape != call.out(0).dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let size = x.dtype.size();
    let mut bytes = Vec::with_capacity(Tensor::numel_of(&shape)? * size);
    for from in broadcast_index(&x.dims, &shape) {
        bytes.extend_from_slice(&x.bytes[from * size..from * size + size]);
    }
    Ok(vec![bytes])
}

/// `Slice(x, offsets, size) -> y`: the block at `offsets` of `size`
/// (`-1`: to the end).
fn Slice(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(3, 1)?;
    let x = call.spec(0)?.clone();
    let offsets = call.sizes(1)?;
    let sizes = call.ints(2)?;
    if offsets.len() != x.dims.len() || sizes.len() != x.dims.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let strides = contiguous_strides(&x.dims);
    let mut dims = Vec::new();
    let mut offset = 0;
    for k in 0..x.dims.len() {
        let len = if sizes[k] < 0 {
            x.dims[k]
                .checked_sub(offsets[k])
                .ok_or(AclError::INVALID_PARAM)?
        } else {
            sizes[k] as usize
        };
        if offsets[k]
            .checked_add(len)
            .is_none_or(|end| end > x.dims[k])
        {
            return Err(AclError::INVALID_PARAM);
        }
        dims.push(len);
        offset += offsets[k] * strides[k];
    }
    if dims != call.out(0).dims {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![gather(call, 0, &dims, &strides, offset)?.bytes])
}

/// `StridedSlice(x, begin, end, strides) -> y` with every mask 0 and
/// positive strides (the form torch_npu's select and indexing launch).
fn StridedSlice(call: &Call<'_>) -> Result<Written, AclError> {
    call.expect(4, 1)?;
    for mask in ["begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask"] {
        if !matches!(call.attr(mask), None | Some(AttrValue::Int(0))) {
            return Err(AclError::OP_ATTR_NOT_MATCH);
        }
    }
    let shrink = match call.attr("shrink_axis_mask") {
        None => 0,
        Some(AttrValue::Int(m)) => *m,
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let x = call.spec(0)?.clone();
    let (begin, end, step) = (call.ints(1)?, call.ints(2)?, call.ints(3)?);
    if begin.len() != end.len() || begin.len() != step.len() || begin.len() > x.dims.len() {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let strides = contiguous_strides(&x.dims);
    let mut dims = Vec::new();
    let mut view = Vec::new();
    let mut offset = 0usize;
    for (k, (&dim, &stride)) in x.dims.iter().zip(&strides).enumerate() {
        let d = dim as i64;
        let (b, e, s) = match (begin.get(k), end.get(k), step.get(k)) {
            (Some(&b), Some(&e), Some(&s)) => (b, e, s),
            _ => (0, d, 1),
        };
        if s <= 0 {
            return Err(AclError::INVALID_PARAM);
        }
        let clamp = |v: i64| (if v < 0 { v + d } else { v }).clamp(0, d);
        let (b, e) = (clamp(b), clamp(e));
        let len = if e > b { (e - b + s - 1) / s } else { 0 } as usize;
        offset += b as usize * stride;
        if shrink & (1 << k) != 0 {
            continue;
        }
        dims.push(len);
        view.push(stride * s as usize);
    }
    if Tensor::numel_of(&dims)? != call.out(0).numel() {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    Ok(vec![gather(call, 0, &dims, &view, offset)?.bytes])
}

/// Joins the inputs along `axis` of their shapes: each input's blocks of
/// `inner` elements, in turn, `outer` times.
fn join(call: &Call<'_>, axis: usize, stacked: bool) -> Result<Written, AclError> {
    let n = call.inputs.count();
    if n == 0 {
        return Err(AclError::OP_INPUT_NOT_MATCH);
    }
    let first = call.spec(0)?.clone();
    let mut parts = Vec::with_capacity(n);
    for i in 0..n {
        let t = call.tensor(i)?;
        let fits = t.dtype == first.dtype
            && t.dims.len() == first.dims.len()
            && t.dims
                .iter()
                .zip(&first.dims)
                .enumerate()
                .all(|(k, (a, b))| a == b || (!stacked && k == axis));
        if !fits || axis > t.dims.len() || (!stacked && axis == t.dims.len()) {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        parts.push(t);
    }
    let outer: usize = first.dims[..axis].iter().product();
    let size = first.dtype.size();
    let out = call.out(0);
    let total: usize = parts.iter().map(Tensor::numel).sum();
    if out.numel() != total || out.dtype != first.dtype {
        return Err(AclError::OP_OUTPUT_NOT_MATCH);
    }
    let mut bytes = Vec::with_capacity(total * size);
    for o in 0..outer {
        for t in &parts {
            let inner = t.numel() / outer.max(1) * size;
            bytes.extend_from_slice(&t.bytes[o * inner..(o + 1) * inner]);
        }
    }
    Ok(vec![bytes])
}

/// An axis attribute, counted from the end when negative, over `rank`.
fn axis(call: &Call<'_>, name: &str, rank: usize) -> Result<usize, AclError> {
    let a = match call.attr(name) {
        Some(AttrValue::Int(a)) => *a,
        None => 0,
        Some(_) => return Err(AclError::OP_ATTR_NOT_MATCH),
    };
    let a = if a < 0 { a + rank as i64 } else { a };
    usize::try_from(a)
        .ok()
        .filter(|&a| a < rank)
        .ok_or(AclError::INVALID_PARAM)
}

/// `Pack(x0, ..., xN-1) -> y`, attributes `axis`, `N`: the inputs stacked
/// along a new axis.
fn Pack(call: &Call<'_>) -> Result<Written, AclError> {
    let rank = call.spec(0)?.dims.len() + 1;
    join(call, axis(call, "axis", rank)?, true)
}

/// `ConcatD(x0, ..., xN-1) -> y`, attributes `concat_dim`, `N`: the inputs
/// joined along an axis.
fn ConcatD(call: &Call<'_>) -> Result<Written, AclError> {
    let rank = call.spec(0)?.dims.len();
    join(call, axis(call, "concat_dim", rank)?, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs held in host memory (each tensor's bytes are its buffer).
    struct Host(Vec<(Spec, Vec<u8>)>);

    impl Inputs for Host {
        fn count(&self) -> usize {
            self.0.len()
        }
        fn spec(&self, i: usize) -> Result<&Spec, AclError> {
            self.0
                .get(i)
                .map(|(s, _)| s)
                .ok_or(AclError::OP_INPUT_NOT_MATCH)
        }
        fn prefix(&self, i: usize, n: usize) -> Result<Vec<u8>, AclError> {
            let (s, b) = self.0.get(i).ok_or(AclError::OP_INPUT_NOT_MATCH)?;
            b.get(..n * s.dtype.size())
                .map(<[u8]>::to_vec)
                .ok_or(AclError::INVALID_PARAM)
        }
    }

    fn t(dtype: DType, dims: &[usize], v: &[f64]) -> (Spec, Vec<u8>) {
        let x = Tensor::from_nums(dtype, dims.to_vec(), v.iter().map(|&f| Num::F(f)));
        (
            Spec {
                dtype,
                dims: dims.to_vec(),
            },
            x.bytes,
        )
    }

    fn ints(v: &[i64]) -> (Spec, Vec<u8>) {
        let x = Tensor::from_nums(DType::I64, vec![v.len()], v.iter().map(|&i| Num::I(i)));
        (
            Spec {
                dtype: DType::I64,
                dims: vec![v.len()],
            },
            x.bytes,
        )
    }

    fn run(
        op: &str,
        inputs: Vec<(Spec, Vec<u8>)>,
        out: Spec,
        attrs: OpAttr,
    ) -> Result<Vec<f64>, AclError> {
        let host = Host(inputs);
        let call = Call::new(&host, vec![out.clone()], attrs);
        let written = find(op).ok_or(AclError::OP_NOT_FOUND)?(&call)?;
        let t = Tensor {
            dtype: out.dtype,
            dims: out.dims,
            bytes: written[0].clone(),
        };
        Ok(t.nums().map(Num::f64).collect())
    }

    fn spec(dtype: DType, dims: &[usize]) -> Spec {
        Spec {
            dtype,
            dims: dims.to_vec(),
        }
    }

    #[test]
    fn operators_outside_the_list_are_not_found() {
        assert!(find("MatMul").is_none());
        assert!(find("ViewCopy").is_some());
    }

    #[test]
    fn add_broadcasts_and_computes_in_each_type() {
        for dtype in [
            DType::F32,
            DType::F16,
            DType::Bf16,
            DType::F64,
            DType::I8,
            DType::I32,
            DType::I64,
            DType::U8,
        ] {
            let a = t(dtype, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
            let b = t(dtype, &[3], &[10.0, 20.0, 30.0]);
            let got = run("Add", vec![a, b], spec(dtype, &[2, 3]), OpAttr::new()).unwrap();
            assert_eq!(got, [11.0, 22.0, 33.0, 14.0, 25.0, 36.0], "{dtype:?}");
        }
        let a = t(DType::F32, &[2], &[1.0, 2.0]);
        let b = t(DType::F32, &[3], &[1.0, 2.0, 3.0]);
        assert_eq!(
            run("Add", vec![a, b], spec(DType::F32, &[3]), OpAttr::new()),
            Err(AclError::OP_INPUT_NOT_MATCH)
        );
    }

    #[test]
    fn cast_converts_as_c_does_and_checks_its_attribute() {
        let x = t(DType::F32, &[3], &[-1.5, 0.0, 300.7]);
        let mut attrs = OpAttr::new();
        attrs.insert("dst_type".into(), AttrValue::Int(DType::I32.acl() as i64));
        assert_eq!(
            run(
                "Cast",
                vec![x.clone()],
                spec(DType::I32, &[3]),
                attrs.clone()
            )
            .unwrap(),
            [-1.0, 0.0, 300.0]
        );
        assert_eq!(
            run("Cast", vec![x], spec(DType::I64, &[3]), attrs),
            Err(AclError::OP_TYPE_NOT_MATCH)
        );
    }

    #[test]
    fn view_copy_writes_only_the_view_and_as_strided_reads_one() {
        // dst: a 2x3 buffer; write the transposed 3x2 src into its first column pair.
        let dst = t(DType::I32, &[6], &[0.0; 6]);
        let src = t(DType::I32, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let got = run(
            "ViewCopy",
            vec![
                dst,
                ints(&[2, 2]),
                ints(&[3, 1]),
                ints(&[0]),
                src,
                ints(&[2, 2]),
                ints(&[1, 2]),
                ints(&[0]),
            ],
            spec(DType::I32, &[2, 2]),
            OpAttr::new(),
        )
        .unwrap();
        // Elements 0,1 and 3,4 of dst get src transposed: 1,3 / 2,4; element 2 is untouched
        // and past the view's extent nothing is written.
        assert_eq!(got.len(), 5);
        assert_eq!(got, [1.0, 3.0, 0.0, 2.0, 4.0]);
        let base = t(DType::F32, &[6], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let got = run(
            "AsStrided",
            vec![base, ints(&[3, 2]), ints(&[1, 3]), ints(&[0])],
            spec(DType::F32, &[3, 2]),
            OpAttr::new(),
        )
        .unwrap();
        assert_eq!(got, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    }

    #[test]
    fn reductions_follow_axes_and_keep_dims() {
        let x = t(DType::F32, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(
            run(
                "ReduceSum",
                vec![x.clone(), ints(&[1])],
                spec(DType::F32, &[2]),
                OpAttr::new()
            )
            .unwrap(),
            [6.0, 15.0]
        );
        assert_eq!(
            run(
                "ReduceSum",
                vec![x.clone(), ints(&[0])],
                spec(DType::F32, &[1, 3]),
                OpAttr::new()
            )
            .unwrap(),
            [5.0, 7.0, 9.0]
        );
        assert_eq!(
            run(
                "ReduceSum",
                vec![x.clone(), ints(&[])],
                spec(DType::F32, &[]),
                OpAttr::new()
            )
            .unwrap(),
            [21.0]
        );
        assert_eq!(
            run(
                "ReduceMean",
                vec![x.clone(), ints(&[-1])],
                spec(DType::F32, &[2]),
                OpAttr::new()
            )
            .unwrap(),
            [2.0, 5.0]
        );
        assert_eq!(
            run(
                "ReduceMax",
                vec![x.clone(), ints(&[0, 1])],
                spec(DType::F32, &[]),
                OpAttr::new()
            )
            .unwrap(),
            [6.0]
        );
        assert_eq!(
            run(
                "ReduceSum",
                vec![x, ints(&[2])],
                spec(DType::F32, &[2]),
                OpAttr::new()
            ),
            Err(AclError::INVALID_PARAM)
        );
        // Integers stay integers: 2^60 + 1 has no f64 of its own.
        let big = (1i64 << 60) + 1;
        for op in ["ReduceMax", "ReduceMin"] {
            let host = Host(vec![ints(&[big, big]), ints(&[])]);
            let call = Call::new(&host, vec![spec(DType::I64, &[])], OpAttr::new());
            let written = find(op).unwrap()(&call).unwrap();
            assert_eq!(DType::I64.get(&written[0]), Num::I(big), "{op}");
        }
    }

    #[test]
    fn random_values_repeat_for_a_seed_and_differ_for_another() {
        let normal = |seed: i64, offset: i64| {
            let mut attrs = OpAttr::new();
            attrs.insert("dtype".into(), AttrValue::DataType(0));
            run(
                "StatelessRandomNormalV2",
                vec![ints(&[1000]), ints(&[seed]), ints(&[0, offset]), ints(&[1])],
                spec(DType::F32, &[1000]),
                attrs,
            )
            .unwrap()
        };
        let a = normal(7, 0);
        assert_eq!(a, normal(7, 0));
        assert_ne!(a, normal(7, 10));
        assert_ne!(a, normal(8, 0));
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        let var = a.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / a.len() as f64;
        assert!(
            mean.abs() < 0.15 && (var - 1.0).abs() < 0.2,
            "mean {mean} var {var}"
        );
    }

    #[test]
    fn range_fill_and_compare() {
        let got = run(
            "Range",
            vec![ints(&[2]), ints(&[11]), ints(&[3])],
            spec(DType::I64, &[3]),
            OpAttr::new(),
        )
        .unwrap();
        assert_eq!(got, [2.0, 5.0, 8.0]);
        let got = run(
            "Fill",
            vec![ints(&[2, 2]), t(DType::F16, &[], &[1.5])],
            spec(DType::F16, &[2, 2]),
            OpAttr::new(),
        )
        .unwrap();
        assert_eq!(got, [1.5; 4]);
        let a = t(DType::F32, &[3], &[1.0, f64::NAN, 3.0]);
        let b = t(DType::F32, &[3], &[1.0, f64::NAN, 3.1]);
        assert_eq!(
            run(
                "Equal",
                vec![a.clone(), b.clone()],
                spec(DType::Bool, &[3]),
                OpAttr::new()
            )
            .unwrap(),
            [1.0, 0.0, 0.0]
        );
        let mut attrs = OpAttr::new();
        attrs.insert("equal_nan".into(), AttrValue::Bool(true));
        attrs.insert("atol".into(), AttrValue::Float(0.2));
        assert_eq!(
            run("IsClose", vec![a, b], spec(DType::Bool, &[3]), attrs).unwrap(),
            [1.0, 1.0, 1.0]
        );
    }

    #[test]
    fn pack_and_concat_join_blocks_in_turn() {
        let a = t(DType::F32, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let b = t(DType::F32, &[2, 2], &[5.0, 6.0, 7.0, 8.0]);
        let mut attrs = OpAttr::new();
        attrs.insert("axis".into(), AttrValue::Int(1));
        assert_eq!(
            run(
                "Pack",
                vec![a.clone(), b.clone()],
                spec(DType::F32, &[2, 2, 2]),
                attrs
            )
            .unwrap(),
            [1.0, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0]
        );
        let mut attrs = OpAttr::new();
        attrs.insert("concat_dim".into(), AttrValue::Int(-1));
        assert_eq!(
            run("ConcatD", vec![a, b], spec(DType::F32, &[2, 4]), attrs).unwrap(),
            [1.0, 2.0, 5.0, 6.0, 3.0, 4.0, 7.0, 8.0]
        );
    }

    #[test]
    fn slices_and_transposes_read_their_views() {
        let x = t(DType::I16, &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(
            run(
                "Transpose",
                vec![x.clone(), ints(&[1, 0])],
                spec(DType::I16, &[3, 2]),
                OpAttr::new()
            )
            .unwrap(),
            [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
        );
        assert_eq!(
            run(
                "Slice",
                vec![x.clone(), ints(&[1, 1]), ints(&[1, -1])],
                spec(DType::I16, &[1, 2]),
                OpAttr::new()
            )
            .unwrap(),
            [4.0, 5.0]
        );
        assert_eq!(
            run(
                "StridedSlice",
                vec![x.clone(), ints(&[0, 0]), ints(&[2, 3]), ints(&[1, 2])],
                spec(DType::I16, &[2, 2]),
                OpAttr::new()
            )
            .unwrap(),
            [0.0, 2.0, 3.0, 5.0]
        );
        assert_eq!(
            run(
                "BroadcastTo",
                vec![t(DType::I16, &[1, 2], &[7.0, 8.0]), ints(&[2, 2])],
                spec(DType::I16, &[2, 2]),
                OpAttr::new()
            )
            .unwrap(),
            [7.0, 8.0, 7.0, 8.0]
        );
    }

    /// Runs `op` and gives output 0's values (as many as were written) and
    /// the real shape it reported, if any.
    fn run_dynamic(
        op: &str,
        inputs: Vec<(Spec, Vec<u8>)>,
        out: Spec,
        attrs: OpAttr,
    ) -> Result<(Vec<f64>, Option<Vec<usize>>), AclError> {
        let host = Host(inputs);
        let call = Call::new(&host, vec![out.clone()], attrs);
        let written = find(op).ok_or(AclError::OP_NOT_FOUND)?(&call)?;
        let n = written[0].len() / out.dtype.size();
        let t = Tensor {
            dtype: out.dtype,
            dims: vec![n],
            bytes: written[0].clone(),
        };
        let shape = call.reshaped.take().into_iter().find(|(o, _)| *o == 0);
        Ok((t.nums().map(Num::f64).collect(), shape.map(|(_, d)| d)))
    }

    #[test]
    fn nonzero_reports_coordinates_and_their_real_shape() {
        let x = t(DType::F32, &[2, 3], &[0.0, 1.5, 0.0, -2.0, 0.0, 3.0]);
        let (v, shape) = run_dynamic(
            "NonZero",
            vec![x.clone()],
            spec(DType::I64, &[6, 2]),
            OpAttr::new(),
        )
        .unwrap();
        assert_eq!(shape, Some(vec![3, 2]));
        assert_eq!(v, [0.0, 1.0, 1.0, 0.0, 1.0, 2.0]);
        let mut attrs = OpAttr::new();
        attrs.insert("transpose".into(), AttrValue::Bool(true));
        let (v, shape) =
            run_dynamic("NonZero", vec![x.clone()], spec(DType::I64, &[2, 6]), attrs).unwrap();
        assert_eq!(shape, Some(vec![2, 3]));
        assert_eq!(v, [0.0, 1.0, 1.0, 1.0, 0.0, 2.0]);
        // An output too small for the coordinates, or of a float type.
        assert_eq!(
            run_dynamic(
                "NonZero",
                vec![x.clone()],
                spec(DType::I64, &[2, 2]),
                OpAttr::new()
            ),
            Err(AclError::OP_OUTPUT_NOT_MATCH)
        );
        assert_eq!(
            run_dynamic("NonZero", vec![x], spec(DType::F32, &[6, 2]), OpAttr::new()),
            Err(AclError::OP_TYPE_NOT_MATCH)
        );
    }

    #[test]
    fn masked_select_broadcasts_the_mask() {
        let x = t(DType::F16, &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let mask = t(DType::Bool, &[2], &[0.0, 1.0]);
        let (v, shape) = run_dynamic(
            "MaskedSelect",
            vec![x, mask],
            spec(DType::F16, &[4]),
            OpAttr::new(),
        )
        .unwrap();
        assert_eq!(shape, Some(vec![2]));
        assert_eq!(v, [2.0, 4.0]);
    }

    #[test]
    fn isfinite_and_ceil() {
        let x = t(DType::F32, &[4], &[1.5, f64::INFINITY, f64::NAN, -0.5]);
        assert_eq!(
            run(
                "IsFinite",
                vec![x.clone()],
                spec(DType::Bool, &[4]),
                OpAttr::new()
            )
            .unwrap(),
            [1.0, 0.0, 0.0, 1.0]
        );
        let got = run("Ceil", vec![x], spec(DType::F32, &[4]), OpAttr::new()).unwrap();
        assert_eq!((got[0], got[1], got[3]), (2.0, f64::INFINITY, 0.0));
        assert!(got[2].is_nan());
    }

    #[test]
    fn index_put_sets_and_accumulates_where_the_indices_point() {
        // x[rows, cols] = value for rows [0, 1], cols [2, 0] of a 2x3 x.
        let x = t(DType::F32, &[2, 3], &[0.0; 6]);
        let value = t(DType::F32, &[], &[7.0]);
        let inputs = |x: &(Spec, Vec<u8>), rows: &[i64]| {
            vec![
                x.clone(),
                value.clone(),
                ints(&[1, 1]),
                ints(&[1, 1]),
                ints(rows),
                ints(&[2, 0]),
            ]
        };
        assert_eq!(
            run(
                "IndexPutV2",
                inputs(&x, &[0, 1]),
                spec(DType::F32, &[2, 3]),
                OpAttr::new()
            )
            .unwrap(),
            [0.0, 0.0, 7.0, 7.0, 0.0, 0.0]
        );
        // Accumulating, with a repeated (and a negative) index.
        let mut attrs = OpAttr::new();
        attrs.insert("accumulate".into(), AttrValue::Bool(true));
        let ones = t(DType::F32, &[2, 3], &[1.0; 6]);
        let host = vec![
            ones.clone(),
            value.clone(),
            ints(&[1, 0]),
            ints(&[1, 0]),
            ints(&[-1, 1]),
        ];
        assert_eq!(
            run("IndexPutV2", host, spec(DType::F32, &[2, 3]), attrs).unwrap(),
            [1.0, 1.0, 1.0, 15.0, 15.0, 15.0],
            "row 1 twice, whole"
        );
        // An index out of range writes nothing.
        assert_eq!(
            run(
                "IndexPutV2",
                inputs(&x, &[0, 2]),
                spec(DType::F32, &[2, 3]),
                OpAttr::new()
            ),
            Err(AclError::INVALID_PARAM)
        );
    }
}
