//! `aclTensor`: a strided view of device storage, as `aclCreateTensor`
//! describes it (view dims and strides in elements, an offset in elements
//! from the storage's start, the storage's own dims and address), and how
//! its elements are gathered into a contiguous tensor and scattered back.

use aclmem_core::AclError;

use super::memory::Memory;
use crate::tensor::{DType, Tensor};

/// The most dimensions a view has (`ACL_MAX_DIM_CNT`).
const MAX_DIMS: usize = 128;

/// A strided view of storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// The element type.
    pub dtype: DType,
    /// The view's shape.
    pub dims: Vec<usize>,
    /// Its strides, in elements.
    pub strides: Vec<usize>,
    /// Its first element's offset from `data`, in elements.
    pub offset: usize,
    /// `aclFormat` as the caller gave it.
    pub format: i32,
    /// The storage's address (the view's first element is at
    /// `data + offset * itemsize`).
    pub data: usize,
    /// The storage's length, in elements.
    pub storage: usize,
    /// Whether it is a complex tensor, seen as pairs of its parts: `dtype`
    /// is the part's type and the last dimension, of 2 and stride 1, holds
    /// the real and the imaginary part.
    pub complex: bool,
}

fn dims(raw: &[i64]) -> Result<Vec<usize>, AclError> {
    if raw.len() > MAX_DIMS {
        return Err(AclError::INVALID_PARAM);
    }
    raw.iter()
        .map(|&d| usize::try_from(d).map_err(|_| AclError::INVALID_PARAM))
        .collect()
}

impl View {
    /// A view as `aclCreateTensor` is given it: negative sizes, strides or
    /// offsets, a view reaching past its storage, or a private storage
    /// format (the operator API's views are plain here), are refused.
    pub fn new(
        dtype: DType,
        view_dims: &[i64],
        strides: &[i64],
        offset: i64,
        format: i32,
        storage_dims: &[i64],
        data: usize,
    ) -> Result<View, AclError> {
        if crate::formats::is_private(format) {
            return Err(AclError::FORMAT_NOT_MATCH);
        }
        let view = View {
            dtype,
            dims: dims(view_dims)?,
            strides: dims(strides)?,
            offset: usize::try_from(offset).map_err(|_| AclError::INVALID_PARAM)?,
            format,
            data,
            storage: Tensor::numel_of(&dims(storage_dims)?)?,
            complex: false,
        };
        if view.strides.len() != view.dims.len() {
            return Err(AclError::INVALID_PARAM);
        }
        if let Some(end) = view.last()
            && (end >= view.storage || data == 0)
        {
            return Err(AclError::INVALID_PARAM);
        }
        Ok(view)
    }

    /// A contiguous view of `dims` at `data`.
    pub fn contiguous_at(dtype: DType, dims: Vec<usize>, data: usize) -> View {
        let mut strides = vec![1; dims.len()];
        for i in (0..dims.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * dims[i + 1].max(1);
        }
        let storage = dims.iter().product();
        View {
            dtype,
            dims,
            strides,
            offset: 0,
            format: 2,
            data,
            storage,
            complex: false,
        }
    }

    /// A complex view as `aclCreateTensor` is given it (`part` the type of
    /// each part; sizes, strides and offset in complex elements): the same
    /// view of pairs of parts ([`View::complex`]).
    pub fn new_complex(
        part: DType,
        view_dims: &[i64],
        strides: &[i64],
        offset: i64,
        format: i32,
        storage_dims: &[i64],
        data: usize,
    ) -> Result<View, AclError> {
        let mut view = View::new(part, view_dims, strides, offset, format, storage_dims, data)?;
        let twice = |x: usize| x.checked_mul(2).ok_or(AclError::INVALID_PARAM);
        for s in &mut view.strides {
            *s = twice(*s)?;
        }
        view.dims.push(2);
        view.strides.push(1);
        view.offset = twice(view.offset)?;
        view.storage = twice(view.storage)?;
        view.complex = true;
        Ok(view)
    }

    /// Its `aclDataType` (the complex type for a complex view).
    pub fn acl_dtype(&self) -> i32 {
        match (self.complex, self.dtype) {
            (true, DType::F32) => 16,
            (true, _) => 17,
            (false, t) => t.acl(),
        }
    }

    /// The real (`k` 0) or imaginary (`k` 1) parts of a complex view, as a
    /// view of its own; the view itself when it is not complex.
    pub fn part(&self, k: usize) -> View {
        if !self.complex {
            return self.clone();
        }
        let n = self.dims.len() - 1;
        View {
            dims: self.dims[..n].to_vec(),
            strides: self.strides[..n].to_vec(),
            offset: self.offset + k,
            complex: false,
            ..self.clone()
        }
    }

    /// Its element count.
    pub fn numel(&self) -> usize {
        self.dims.iter().product()
    }

    /// The offset of its last element (`None`: it has none).
    fn last(&self) -> Option<usize> {
        if self.numel() == 0 {
            return None;
        }
        Some(
            self.offset
                + self
                    .dims
                    .iter()
                    .zip(&self.strides)
                    .map(|(d, s)| (d - 1) * s)
                    .sum::<usize>(),
        )
    }

    /// Whether its elements lie one after another from its first.
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1;
        for (d, s) in self.dims.iter().zip(&self.strides).rev() {
            if *d != 1 && *s != expected {
                return false;
            }
            expected *= d;
        }
        true
    }

    /// Each element's offset from the view's first, in row-major order.
    fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        let n = self.numel();
        let mut index = vec![0usize; self.dims.len()];
        (0..n).map(move |k| {
            let at = index.iter().zip(&self.strides).map(|(i, s)| i * s).sum();
            if k + 1 < n {
                for d in (0..index.len()).rev() {
                    index[d] += 1;
                    if index[d] < self.dims[d] {
                        break;
                    }
                    index[d] = 0;
                }
            }
            at
        })
    }

    /// The address of its first element and the bytes from there to the
    /// end of its last.
    fn span(&self) -> Option<(usize, usize)> {
        let size = self.dtype.size();
        let last = self.last()?;
        Some((
            self.data + self.offset * size,
            (last - self.offset + 1) * size,
        ))
    }

    /// The storage it reaches: its first element's address and the bytes
    /// to the end of its last (`None`: it has no element).
    pub fn extent(&self) -> Option<(usize, usize)> {
        self.span()
    }

    /// Its elements, gathered into a contiguous tensor.
    pub fn gather(&self, mem: &dyn Memory) -> Result<Tensor, AclError> {
        let size = self.dtype.size();
        let Some((start, len)) = self.span() else {
            return Ok(Tensor {
                dtype: self.dtype,
                dims: self.dims.clone(),
                bytes: Vec::new(),
            });
        };
        let mut span = vec![0u8; len];
        mem.read(start, &mut span)?;
        let bytes = if self.is_contiguous() {
            span
        } else {
            let mut out = Vec::with_capacity(self.numel() * size);
            for at in self.offsets() {
                out.extend_from_slice(&span[at * size..at * size + size]);
            }
            out
        };
        Ok(Tensor {
            dtype: self.dtype,
            dims: self.dims.clone(),
            bytes,
        })
    }

    /// Writes `bytes` (a contiguous tensor of its type and element count)
    /// into its elements; storage between them keeps its bytes.
    pub fn scatter(&self, mem: &dyn Memory, bytes: &[u8]) -> Result<(), AclError> {
        let size = self.dtype.size();
        if bytes.len() != self.numel() * size {
            return Err(AclError::OP_OUTPUT_NOT_MATCH);
        }
        let Some((start, len)) = self.span() else {
            return Ok(());
        };
        if self.is_contiguous() {
            return mem.write(start, bytes);
        }
        let mut span = vec![0u8; len];
        mem.read(start, &mut span)?;
        for (k, at) in self.offsets().enumerate() {
            span[at * size..at * size + size].copy_from_slice(&bytes[k * size..k * size + size]);
        }
        mem.write(start, &span)
    }
}
