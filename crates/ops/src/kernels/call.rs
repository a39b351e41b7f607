//! What a kernel is given and answers: a call's inputs ([`Inputs`]), its
//! outputs' types and shapes ([`Spec`]) and attributes, read through
//! [`Call`]'s checked accessors, and what it writes ([`Written`]). Every
//! kernel module imports this one; `pub(crate) use` hands them the types
//! they all compute with.

pub(crate) use aclmem_core::AclError;
pub(crate) use rand_core::{Rng, SeedableRng};

pub(crate) use crate::objects::{AttrValue, OpAttr};
pub(crate) use crate::tensor::{DType, Num, Tensor};

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

/// Inputs held in host memory, each tensor's bytes its buffer: what the
/// kernels' tests give them, and a caller computing on host tensors.
#[derive(Debug, Clone, Default)]
pub struct HostInputs(pub Vec<(Spec, Vec<u8>)>);

impl HostInputs {
    /// A host tensor of `dims` holding `values`, as one input.
    pub fn tensor(
        dtype: DType,
        dims: &[usize],
        values: impl IntoIterator<Item = Num>,
    ) -> (Spec, Vec<u8>) {
        let t = Tensor::from_nums(dtype, dims.to_vec(), values);
        (
            Spec {
                dtype,
                dims: dims.to_vec(),
            },
            t.bytes,
        )
    }
}

impl Inputs for HostInputs {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn spec(&self, i: usize) -> Result<&Spec, AclError> {
        self.0
            .get(i)
            .map(|(s, _)| s)
            .ok_or(AclError::OP_INPUT_NOT_MATCH)
    }

    fn prefix(&self, i: usize, elements: usize) -> Result<Vec<u8>, AclError> {
        let (s, b) = self.0.get(i).ok_or(AclError::OP_INPUT_NOT_MATCH)?;
        elements
            .checked_mul(s.dtype.size())
            .and_then(|len| b.get(..len))
            .map(<[u8]>::to_vec)
            .ok_or(AclError::INVALID_PARAM)
    }
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
    pub(crate) fn reshape(&self, o: usize, dims: Vec<usize>) {
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

impl Call<'_> {
    pub(crate) fn expect(&self, inputs: usize, outputs: usize) -> Result<(), AclError> {
        if self.inputs.count() != inputs {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        if self.outputs.len() != outputs {
            return Err(AclError::OP_OUTPUT_NOT_MATCH);
        }
        Ok(())
    }

    pub(crate) fn spec(&self, i: usize) -> Result<&Spec, AclError> {
        self.inputs.spec(i)
    }

    /// Input `i`, whole (its descriptor's shape).
    pub(crate) fn tensor(&self, i: usize) -> Result<Tensor, AclError> {
        let spec = self.inputs.spec(i)?.clone();
        let bytes = self.inputs.prefix(i, spec.numel())?;
        Ok(Tensor {
            dtype: spec.dtype,
            dims: spec.dims,
            bytes,
        })
    }

    /// Input `i` as integers (sizes, axes, strides, offsets).
    pub(crate) fn ints(&self, i: usize) -> Result<Vec<i64>, AclError> {
        let t = self.tensor(i)?;
        if t.dtype.is_float() {
            return Err(AclError::OP_TYPE_NOT_MATCH);
        }
        Ok(t.ints())
    }

    /// Input `i` as a list of sizes (none negative).
    pub(crate) fn sizes(&self, i: usize) -> Result<Vec<usize>, AclError> {
        self.ints(i)?
            .into_iter()
            .map(|v| usize::try_from(v).map_err(|_| AclError::INVALID_PARAM))
            .collect()
    }

    /// Input `i`, a scalar (its first element).
    pub(crate) fn scalar(&self, i: usize) -> Result<Num, AclError> {
        let t = self.tensor(i)?;
        if t.numel() == 0 {
            return Err(AclError::OP_INPUT_NOT_MATCH);
        }
        Ok(t.at(0))
    }

    pub(crate) fn out(&self, i: usize) -> &Spec {
        &self.outputs[i]
    }

    pub(crate) fn attr(&self, name: &str) -> Option<&AttrValue> {
        self.attrs.get(name)
    }

    pub(crate) fn attr_bool(&self, name: &str, default: bool) -> Result<bool, AclError> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Bool(b)) => Ok(*b),
            Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }

    pub(crate) fn attr_float(&self, name: &str, default: f32) -> Result<f32, AclError> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Float(f)) => Ok(*f),
            Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }

    pub(crate) fn attr_int(&self, name: &str, default: i64) -> Result<i64, AclError> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Int(v)) => Ok(*v),
            Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }

    pub(crate) fn attr_string<'s>(
        &'s self,
        name: &str,
        default: &'s str,
    ) -> Result<&'s str, AclError> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::String(v)) => Ok(v),
            Some(_) => Err(AclError::OP_ATTR_NOT_MATCH),
        }
    }

    pub(crate) fn attr_type(&self, name: &str) -> Result<Option<DType>, AclError> {
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
