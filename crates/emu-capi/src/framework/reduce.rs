//! `aclrtReduceAsync`: `dst ⊕= src` element by element in device memory
//! (the SDMA engine's "automatic" reduction), done when the call returns.
//!
//! ACL layer (100000): dst or src NULL, `reserve` not NULL, a data type
//! outside FLOAT, FLOAT16, INT16, INT4, INT8, INT32, BF16, UINT8, UINT16,
//! UINT32. Runtime: the stream (107000 when not live), a kind other than
//! SUM, MAX, MIN, EQUAL (107000), addresses not aligned to the element
//! (107000), memory that is not device memory of the process (107000); a
//! data type or kind the product does not document (207000: A2 and A3 take
//! int8, int16, int32, fp16, fp32, bf16; Atlas 350 also uint32; Atlas
//! inference fp32, fp16, int16 with SUM; Atlas training fp32 with SUM).
//! EQUAL's result is not documented: the emulator answers it 207000.

use std::ffi::c_void;

use aclmem_core::{AclError, Product};
use aclmem_ops::tensor::{DType, Num};
use aclmem_sys::aclrtStream;

use crate::entry::{AclErrorCode, guard};
use crate::shared;
use crate::state::with_global;

/// `aclrtReduceKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sum,
    Max,
    Min,
    Equal,
}

impl Kind {
    fn from_raw(raw: u32) -> Option<Kind> {
        match raw {
            10 => Some(Kind::Sum),
            11 => Some(Kind::Max),
            12 => Some(Kind::Min),
            13 => Some(Kind::Equal),
            _ => None,
        }
    }
}

/// The data types the ACL layer accepts (`aclDataType` values): FLOAT 0,
/// FLOAT16 1, INT8 2, INT32 3, UINT8 4, INT16 6, UINT16 7, UINT32 8, BF16
/// 27, INT4 29.
const ACL_TYPES: &[i32] = &[0, 1, 2, 3, 4, 6, 7, 8, 27, 29];

/// Whether `product` reduces `dtype` with `kind` (its documented lists).
fn offered(product: Product, dtype: DType, kind: Kind) -> bool {
    use DType::*;
    match product {
        Product::AtlasA2 | Product::AtlasA3 => matches!(dtype, I8 | I16 | I32 | F16 | F32 | Bf16),
        Product::Atlas350 => matches!(dtype, I8 | I16 | I32 | F16 | F32 | Bf16 | U32),
        Product::AtlasInference => kind == Kind::Sum && matches!(dtype, F32 | F16 | I16),
        Product::AtlasTraining => kind == Kind::Sum && dtype == F32,
        _ => false,
    }
}

/// One element of the result.
fn combine(kind: Kind, a: Num, b: Num) -> Num {
    match (kind, a, b) {
        (Kind::Sum, Num::I(x), Num::I(y)) => Num::I(x.wrapping_add(y)),
        (Kind::Sum, x, y) => Num::F(x.f64() + y.f64()),
        (Kind::Max, x, y) => {
            if y.f64() > x.f64() {
                y
            } else {
                x
            }
        }
        (Kind::Min, x, y) => {
            if y.f64() < x.f64() {
                y
            } else {
                x
            }
        }
        (Kind::Equal, x, _) => x,
    }
}

/// `aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count,
/// aclrtReduceKind kind, aclDataType type, aclrtStream stream, void
/// *reserve)`: `count` bytes of `src` reduced into `dst`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReduceAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: u64,
    kind: u32,
    data_type: i32,
    stream: aclrtStream,
    reserve: *mut c_void,
) -> AclErrorCode {
    guard("aclrtReduceAsync", || {
        shared::in_release("aclrtReduceAsync")?;
        if dst.is_null() || src.is_null() || !reserve.is_null() || !ACL_TYPES.contains(&data_type) {
            return Err(AclError::INVALID_PARAM);
        }
        with_global(|g| {
            g.emu.synchronize_stream(stream as usize as u64)?;
            let kind = Kind::from_raw(kind).ok_or(AclError::RT_PARAM_INVALID)?;
            let dtype = DType::from_acl(data_type).ok();
            let supported = dtype.filter(|&d| offered(g.emu.product(), d, kind));
            let Some(dtype) = supported.filter(|_| kind != Kind::Equal) else {
                return Err(AclError::RT_FEATURE_NOT_SUPPORT);
            };
            let size = dtype.size();
            let count = usize::try_from(count).map_err(|_| AclError::RT_PARAM_INVALID)?;
            let aligned = |a: usize| a.is_multiple_of(size);
            if !aligned(dst as usize) || !aligned(src as usize) || !aligned(count) {
                return Err(AclError::RT_PARAM_INVALID);
            }
            if count == 0 {
                return Ok(());
            }
            if g.emu.ops().is_plan() {
                // Plan mode: both ranges checked (mapped), neither touched.
                return g
                    .emu
                    .hold(dst as usize, count)
                    .and_then(|_| g.emu.hold(src as usize, count).map(drop))
                    .map_err(|_| AclError::RT_PARAM_INVALID);
            }
            let mut a = vec![0u8; count];
            let mut b = vec![0u8; count];
            g.emu
                .read(dst as usize, &mut a)
                .and_then(|()| g.emu.read(src as usize, &mut b))
                .map_err(|_| AclError::RT_PARAM_INVALID)?;
            for (x, y) in a.chunks_exact_mut(size).zip(b.chunks_exact(size)) {
                let r = combine(kind, dtype.get(x), dtype.get(y));
                dtype.put(r, x);
            }
            g.emu
                .write(dst as usize, &a)
                .map_err(|_| AclError::RT_PARAM_INVALID)
        })
    })
}
