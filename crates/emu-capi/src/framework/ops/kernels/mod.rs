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

mod elementwise;
mod layout;
mod random;
mod reduce;
mod select;
#[cfg(test)]
mod tests;

use elementwise::*;
use layout::*;
use random::*;
use reduce::*;
use select::*;
