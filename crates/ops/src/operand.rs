//! An operator call's tensors, resolved from their handles and checked
//! against what the kernels need: a type they know, dims not negative, a
//! plain (not a private, tiled) format, and a buffer large enough for the
//! elements. The codes are the runtime's operator codes
//! (`docs/operators.md`).

use aclmem_core::AclError;

use crate::kernels::{self, Spec};
use crate::objects::{self, DataBuffer, Placement, TensorDesc};
use crate::tensor::{DType, Tensor};

/// One tensor of a call: its descriptor and its buffer.
#[derive(Debug, Clone)]
pub struct Operand {
    /// The descriptor, as the caller last set it.
    pub desc: TensorDesc,
    /// The buffer.
    pub buffer: DataBuffer,
}

impl Operand {
    /// The descriptor and buffer behind two handles; either unknown is
    /// `ACL_ERROR_INVALID_PARAM`.
    pub fn resolve(desc: usize, buffer: usize) -> Result<Operand, AclError> {
        Ok(Operand {
            desc: objects::with_desc(desc, |d| d.clone())?,
            buffer: objects::buffer(buffer)?,
        })
    }

    /// Type and shape, checked: a type the kernels know, dims not
    /// negative, a plain format, and a buffer large enough for the
    /// elements.
    pub fn spec(&self) -> Result<Spec, AclError> {
        let dtype = DType::from_acl(self.desc.dtype)?;
        let dims = self
            .desc
            .dims
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| AclError::INVALID_PARAM))
            .collect::<Result<Vec<_>, _>>()?;
        for format in [Some(self.desc.format), self.desc.storage_format]
            .into_iter()
            .flatten()
        {
            if !kernels::plain_format(format) {
                return Err(AclError::FORMAT_NOT_MATCH);
            }
        }
        let bytes = Tensor::numel_of(&dims)?
            .checked_mul(dtype.size())
            .ok_or(AclError::INVALID_PARAM)?;
        if bytes > self.buffer.size {
            return Err(AclError::INVALID_PARAM);
        }
        Ok(Spec { dtype, dims })
    }

    /// The bytes of the first `elements` elements of this operand of type
    /// `spec`: at most what its buffer holds (`ACL_ERROR_INVALID_PARAM`
    /// beyond it).
    pub fn prefix_len(&self, spec: &Spec, elements: usize) -> Result<usize, AclError> {
        elements
            .checked_mul(spec.dtype.size())
            .filter(|&len| len <= self.buffer.size)
            .ok_or(AclError::INVALID_PARAM)
    }
}

/// A call's tensors, resolved and checked: the specs of its inputs and its
/// outputs. Outputs must be device memory (`ACL_ERROR_INVALID_PARAM`).
pub fn check(ins: &[Operand], outs: &[Operand]) -> Result<(Vec<Spec>, Vec<Spec>), AclError> {
    let inputs = ins
        .iter()
        .map(Operand::spec)
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = outs
        .iter()
        .map(Operand::spec)
        .collect::<Result<Vec<_>, _>>()?;
    if outs.iter().any(|o| o.desc.placement != Placement::Device) {
        return Err(AclError::INVALID_PARAM);
    }
    Ok((inputs, outputs))
}

/// Every output fits its buffer: checked before any is written, so that a
/// failed call changes nothing (`ACL_ERROR_INTERNAL_ERROR`: a kernel wrote
/// more than its output's shape).
pub fn check_written(outs: &[Operand], written: &kernels::Written) -> Result<(), AclError> {
    if outs
        .iter()
        .zip(written)
        .any(|(o, bytes)| bytes.len() > o.buffer.size)
    {
        return Err(AclError::INTERNAL_ERROR);
    }
    Ok(())
}
