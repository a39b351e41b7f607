//! An operator call's tensors, resolved from their handles and checked
//! against what the kernels need: a type they know, dims not negative, a
//! plain format or a private storage format the kernels see converted
//! (`formats`), and a buffer large enough for the elements. The codes are the runtime's operator codes
//! (`docs/operators.md`).

use aclmem_core::AclError;

use crate::formats;
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
        if !kernels::plain_format(self.desc.format) {
            return Err(AclError::FORMAT_NOT_MATCH);
        }
        let elements = match self.private() {
            Some(format) => Tensor::numel_of(&formats::storage_dims(format, &dims, dtype.size())?)?,
            None if self
                .desc
                .storage_format
                .is_some_and(|f| !kernels::plain_format(f)) =>
            {
                return Err(AclError::FORMAT_NOT_MATCH);
            }
            None => Tensor::numel_of(&dims)?,
        };
        let bytes = elements
            .checked_mul(dtype.size())
            .ok_or(AclError::INVALID_PARAM)?;
        if bytes > self.buffer.size {
            return Err(AclError::INVALID_PARAM);
        }
        Ok(Spec { dtype, dims })
    }

    /// The private storage format the data is in (`formats`), if it is in
    /// one: the kernels see it converted to plain.
    pub fn private(&self) -> Option<i32> {
        self.desc.storage_format.filter(|&f| formats::is_private(f))
    }

    /// How many bytes to read from the buffer for `len` plain bytes of
    /// type `spec`: `len`, or the whole storage of a private format.
    pub fn stored_len(&self, spec: &Spec, len: usize) -> Result<usize, AclError> {
        match self.private() {
            Some(f) => Ok(Tensor::numel_of(&formats::storage_dims(
                f,
                &spec.dims,
                spec.dtype.size(),
            )?)? * spec.dtype.size()),
            None => Ok(len),
        }
    }

    /// The first `len` plain bytes of what was read from the buffer
    /// ([`Operand::stored_len`] of them).
    pub fn plain(&self, spec: &Spec, read: Vec<u8>, len: usize) -> Result<Vec<u8>, AclError> {
        match self.private() {
            Some(f) => {
                let mut plain = formats::to_plain(f, &spec.dims, spec.dtype.size(), &read)?;
                plain.truncate(len);
                Ok(plain)
            }
            None => Ok(read),
        }
    }

    /// What to write into the buffer for the plain bytes `written` of an
    /// output of type `spec`: themselves, or their private layout.
    pub fn stored(&self, spec: &Spec, written: &[u8]) -> Result<Vec<u8>, AclError> {
        match self.private() {
            Some(f) => formats::from_plain(f, &spec.dims, spec.dtype.size(), written),
            None => Ok(written.to_vec()),
        }
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

/// Bits per element of an ACL data type, for the types plan mode sizes
/// buffers of: the kernels' ([`DType`]) and the others an NPU operator
/// takes (complex, 8-, 6- and 4-bit floats, `int4`, `uint1`).
fn element_bits(raw: i32) -> Option<usize> {
    if let Ok(t) = DType::from_acl(raw) {
        return Some(t.size() * 8);
    }
    match raw {
        16 => Some(64),          // ACL_COMPLEX64
        17 => Some(128),         // ACL_COMPLEX128
        33 => Some(32),          // ACL_COMPLEX32
        34..=37 => Some(8),      // HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN, FLOAT8_E8M0
        38 | 39 => Some(6),      // FLOAT6_E3M2, FLOAT6_E2M3
        29 | 40 | 41 => Some(4), // INT4, FLOAT4_E2M1, FLOAT4_E1M2
        30 => Some(1),           // UINT1
        _ => None,
    }
}

impl Operand {
    /// Plan mode's check of one tensor, for every operator, with a kernel
    /// or not: a known type, dims not negative, and a buffer large enough
    /// for its storage shape (the shape, or the storage shape a private
    /// format sets). Formats are not refused: the private ones are sized by
    /// their storage shape. An absent optional tensor (no type, no buffer)
    /// passes. The bytes of its buffer the tensor holds.
    pub fn check_plan(&self) -> Result<usize, AclError> {
        let absent = self.buffer.data == 0 && self.buffer.size == 0;
        let Some(bits) = element_bits(self.desc.dtype) else {
            return if absent {
                Ok(0)
            } else {
                Err(AclError::UNSUPPORTED_DATA_TYPE)
            };
        };
        let dims = |d: &[i64]| {
            d.iter()
                .map(|&d| usize::try_from(d).map_err(|_| AclError::INVALID_PARAM))
                .collect::<Result<Vec<_>, _>>()
        };
        let shape = dims(&self.desc.dims)?;
        let storage = match (&self.desc.storage_dims, self.desc.storage_format) {
            (Some(s), Some(f)) if !kernels::plain_format(f) => dims(s)?,
            _ => shape,
        };
        let bytes = Tensor::numel_of(&storage)?
            .checked_mul(bits)
            .map(|b| b.div_ceil(8))
            .ok_or(AclError::INVALID_PARAM)?;
        if bytes > self.buffer.size {
            return Err(AclError::INVALID_PARAM);
        }
        Ok(bytes)
    }
}

/// Plan mode's check of a call's tensors ([`Operand::check_plan`]);
/// outputs must be device memory (`ACL_ERROR_INVALID_PARAM`), as
/// [`check`] has them. The bytes each tensor holds, inputs then outputs.
pub fn check_plan(ins: &[Operand], outs: &[Operand]) -> Result<Vec<usize>, AclError> {
    let bytes = ins
        .iter()
        .chain(outs)
        .map(Operand::check_plan)
        .collect::<Result<Vec<_>, _>>()?;
    if outs.iter().any(|o| o.desc.placement != Placement::Device) {
        return Err(AclError::INVALID_PARAM);
    }
    Ok(bytes)
}
