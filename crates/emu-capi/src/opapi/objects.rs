//! The operator API's objects (`libnnopbase.so`): tensors, scalars,
//! arrays and lists made and destroyed.

use std::ffi::c_void;

use aclmem_ops::aclnn::{self, SUCCESS, Scalar, View};
use aclmem_ops::tensor::DType;

use super::marshal::{MAX_DIMS, array, made, status};

/// `aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t
/// viewDimsNum, aclDataType dataType, const int64_t *stride, int64_t
/// offset, aclFormat format, const int64_t *storageDims, uint64_t
/// storageDimsNum, void *tensorData)`: a strided view of device storage
/// (offset and strides in elements); NULL for a view outside its storage,
/// an unknown type or unreadable arrays.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateTensor(
    view_dims: *const i64,
    view_dims_num: u64,
    data_type: i32,
    stride: *const i64,
    offset: i64,
    format: i32,
    storage_dims: *const i64,
    storage_dims_num: u64,
    data: *mut c_void,
) -> *mut c_void {
    made("aclCreateTensor", || {
        if view_dims_num > MAX_DIMS as u64 || storage_dims_num > MAX_DIMS as u64 {
            return None;
        }
        let dims = array(view_dims, view_dims_num)?;
        let strides = array(stride, view_dims_num)?;
        let storage = array(storage_dims, storage_dims_num)?;
        let (dtype, make): (DType, fn(_, _, _, _, _, _, _) -> _) =
            match (DType::from_acl(data_type), DType::complex_part(data_type)) {
                (Ok(t), _) => (t, View::new),
                (Err(_), Some(part)) => (part, View::new_complex),
                _ => return None,
            };
        let view = make(
            dtype,
            &dims,
            &strides,
            offset,
            format,
            &storage,
            data as usize,
        )
        .ok()?;
        Some(aclnn::create_tensor(view))
    })
}

/// `aclScalar *aclCreateScalar(void *value, aclDataType dataType)`: the
/// value is read now (callers pass a temporary).
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateScalar(value: *mut c_void, data_type: i32) -> *mut c_void {
    made("aclCreateScalar", || {
        if let Some(part) = DType::complex_part(data_type) {
            // Two parts, real then imaginary.
            let bytes = array(value.cast::<u8>(), 2 * part.size() as u64)?;
            let (re, im) = bytes.split_at(part.size());
            return Some(aclnn::create_scalar(Scalar {
                dtype: part,
                value: part.get(re),
                imag: Some(part.get(im).f64()),
            }));
        }
        let dtype = DType::from_acl(data_type).ok()?;
        let bytes = array(value.cast::<u8>(), dtype.size() as u64)?;
        Some(aclnn::create_scalar(Scalar {
            dtype,
            value: dtype.get(&bytes),
            imag: None,
        }))
    })
}

/// `aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateIntArray(value: *const i64, size: u64) -> *mut c_void {
    made("aclCreateIntArray", || {
        array(value, size).map(aclnn::create_int_array)
    })
}

/// `aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateFloatArray(value: *const f32, size: u64) -> *mut c_void {
    made("aclCreateFloatArray", || {
        array(value, size).map(aclnn::create_float_array)
    })
}

/// `aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateBoolArray(value: *const bool, size: u64) -> *mut c_void {
    made("aclCreateBoolArray", || {
        let bytes = array(value.cast::<u8>(), size)?;
        Some(aclnn::create_bool_array(
            bytes.iter().map(|&b| b != 0).collect(),
        ))
    })
}

/// `aclTensorList *aclCreateTensorList(const aclTensor *const *value,
/// uint64_t size)`: the list owns its tensors from then on.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateTensorList(value: *const *const c_void, size: u64) -> *mut c_void {
    made("aclCreateTensorList", || {
        aclnn::create_tensor_list(array(value.cast::<usize>(), size)?)
    })
}

/// `aclScalarList *aclCreateScalarList(const aclScalar *const *value,
/// uint64_t size)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateScalarList(value: *const *const c_void, size: u64) -> *mut c_void {
    made("aclCreateScalarList", || {
        let scalars = array(value.cast::<usize>(), size)?;
        scalars
            .iter()
            .all(|&s| aclnn::scalar(s).is_some())
            .then(|| aclnn::create_scalar_list(scalars))
    })
}

macro_rules! destroyers {
    ($($name:ident => $f:path;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($name), "(const X *p)`: 161001 when `p` names no live object of its kind.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(p: *const c_void) -> i32 {
            status(stringify!($name), || match $f(p as usize) {
                SUCCESS => Ok(()),
                e => Err(e),
            })
        }
    )*};
}

destroyers! {
    aclDestroyTensor => aclnn::destroy_tensor;
    aclDestroyScalar => aclnn::destroy_scalar;
    aclDestroyIntArray => aclnn::destroy_int_array;
    aclDestroyFloatArray => aclnn::destroy_float_array;
    aclDestroyBoolArray => aclnn::destroy_bool_array;
    aclDestroyTensorList => aclnn::destroy_tensor_list;
    aclDestroyScalarList => aclnn::destroy_scalar_list;
    aclDestroyAclOpExecutor => aclnn::destroy_executor;
}
