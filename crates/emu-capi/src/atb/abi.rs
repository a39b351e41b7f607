//! The C++ data of ATB's public headers, as plain `#[repr(C)]` values read
//! through [`cptr`] (NULL or garbage is an error status, never a fault).
//!
//! Layouts (x86-64 and aarch64, LP64; from ATB's public headers, the
//! sources named in docs/operators.md, "The Ascend Transformer Boost"):
//!
//! - `atb::Dims`: `int64_t dims[8]; uint64_t dimNum` (72 bytes);
//! - `atb::TensorDesc`: `aclDataType dtype; aclFormat format; Dims shape`
//!   (80 bytes);
//! - `atb::Tensor`: `TensorDesc desc; void *deviceData; void *hostData;
//!   uint64_t dataSize` (104 bytes);
//! - `atb::SVector<T>`: `size_t capacity_; size_t size_; T storage_[65];
//!   T *heap_`: the elements are `heap_[0..size_)` when `heap_` is not NULL
//!   (after a `reserve` beyond 64), else `storage_[0..size_)`;
//! - `atb::VariantPack`: `SVector<Tensor> inTensors, outTensors`;
//! - `atb::infer::PagedAttentionParam`: `int32_t headNum; float qkScale;
//!   int32_t kvHeadNum; MaskType maskType; bool batchRunStatusEnable;
//!   QuantType quantType; aclDataType outDataType; bool hasQuantOffset;
//!   CompressType compressType; CalcType calcType; ScaleType scaleType;
//!   InputLayout inputLayout; uint32_t mlaVHeadSize; uint8_t rsv[68]`
//!   (every enum an `int`; 120 bytes).

use std::ffi::c_void;

use aclmem_core::AclError;

use crate::cptr;

/// `atb::MAX_DIM`.
pub(crate) const MAX_DIM: usize = 8;
/// Elements an `SVector` holds in place (`DEFAULT_SVECTOR_SIZE + 1`).
const IN_PLACE: usize = 65;
/// The most elements an `SVector` holds (`MAX_SVECTOR_SIZE`).
const MAX_SVECTOR: usize = 256;

/// `atb::Tensor`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Tensor {
    /// `desc.dtype` (`aclDataType`).
    pub dtype: i32,
    /// `desc.format` (`aclFormat`).
    pub format: i32,
    /// `desc.shape.dims`.
    pub dims: [i64; MAX_DIM],
    /// `desc.shape.dimNum`.
    pub dim_num: u64,
    /// `deviceData`.
    pub device_data: usize,
    /// `hostData`.
    pub host_data: usize,
    /// `dataSize`.
    pub data_size: u64,
}

impl Tensor {
    /// Its dimensions (`None` for a `dimNum` over 8 or a negative one).
    pub(crate) fn dims(&self) -> Option<Vec<usize>> {
        let n = usize::try_from(self.dim_num)
            .ok()
            .filter(|&n| n <= MAX_DIM)?;
        self.dims[..n]
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect()
    }
}

/// `atb::SVector<atb::Tensor>`.
#[derive(Clone, Copy)]
#[repr(C)]
struct TensorVector {
    capacity: u64,
    size: u64,
    storage: [Tensor; IN_PLACE],
    heap: usize,
}

/// `atb::VariantPack`.
#[derive(Clone, Copy)]
#[repr(C)]
struct RawPack {
    inputs: TensorVector,
    outputs: TensorVector,
}

/// A `VariantPack`'s tensors, copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pack {
    /// `inTensors`.
    pub inputs: Vec<Tensor>,
    /// `outTensors`.
    pub outputs: Vec<Tensor>,
}

impl TensorVector {
    /// Its elements (100000 for a size over 256, or unreadable heap
    /// storage).
    fn elements(&self) -> Result<Vec<Tensor>, AclError> {
        let n = usize::try_from(self.size).map_err(|_| AclError::INVALID_PARAM)?;
        if self.heap == 0 {
            return self
                .storage
                .get(..n)
                .map(<[Tensor]>::to_vec)
                .ok_or(AclError::INVALID_PARAM);
        }
        if n == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: plain C data; the read is checked.
        unsafe {
            cptr::read_array(
                self.heap as *const Tensor,
                n,
                MAX_SVECTOR,
                AclError::INVALID_PARAM,
            )
        }
    }
}

/// Reads the `VariantPack` at `p`.
pub(crate) fn pack(p: *const c_void) -> Result<Pack, AclError> {
    // SAFETY: `RawPack` is plain integers; the read is checked.
    let raw = unsafe { cptr::read(p as *const RawPack) }?;
    Ok(Pack {
        inputs: raw.inputs.elements()?,
        outputs: raw.outputs.elements()?,
    })
}

/// Reads the `Tensor` at `p`.
pub(crate) fn tensor(p: *const c_void) -> Result<Tensor, AclError> {
    // SAFETY: `Tensor` is plain integers; the read is checked.
    unsafe { cptr::read(p as *const Tensor) }
}

/// `atb::infer::PagedAttentionParam`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub(crate) struct PagedAttentionParam {
    /// `headNum`.
    pub head_num: i32,
    /// `qkScale`.
    pub qk_scale: f32,
    /// `kvHeadNum`.
    pub kv_head_num: i32,
    /// `maskType`.
    pub mask_type: i32,
    /// `batchRunStatusEnable` (a C++ `bool`, read as a byte).
    pub batch_run_status_enable: u8,
    /// `quantType`.
    pub quant_type: i32,
    /// `outDataType`.
    pub out_data_type: i32,
    /// `hasQuantOffset`.
    pub has_quant_offset: u8,
    /// `compressType`.
    pub compress_type: i32,
    /// `calcType`.
    pub calc_type: i32,
    /// `scaleType`.
    pub scale_type: i32,
    /// `inputLayout`.
    pub input_layout: i32,
    /// `mlaVHeadSize`.
    pub mla_v_head_size: u32,
    /// `rsv`.
    pub rsv: [u8; 68],
}

/// Reads the `PagedAttentionParam` at `p`.
pub(crate) fn paged_attention_param(p: *const c_void) -> Result<PagedAttentionParam, AclError> {
    // SAFETY: every field is an integer or a float (any bit pattern is a
    // value; the `bool`s are read as bytes); the read is checked.
    unsafe { cptr::read(p as *const PagedAttentionParam) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_the_headers() {
        assert_eq!(size_of::<Tensor>(), 104);
        assert_eq!(size_of::<TensorVector>(), 16 + 65 * 104 + 8);
        assert_eq!(size_of::<RawPack>(), 2 * 6784);
        assert_eq!(size_of::<PagedAttentionParam>(), 120);
        assert_eq!(std::mem::offset_of!(PagedAttentionParam, quant_type), 20);
        assert_eq!(std::mem::offset_of!(PagedAttentionParam, compress_type), 32);
        assert_eq!(
            std::mem::offset_of!(PagedAttentionParam, mla_v_head_size),
            48
        );
    }
}
