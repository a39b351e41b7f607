//! Operators' C functions: the descriptors a framework describes an
//! operator call with (`aclCreateTensorDesc`, `aclCreateDataBuffer`,
//! `aclopCreateAttr` and their setters) and `aclopCompileAndExecute(V2)`,
//! each marshalled into `aclmem_ops`, which keeps the descriptors, checks
//! them and computes the data operators of the catalogue's list
//! ([`aclmem_sys::with_operators!`]) on the emulated device's memory.
//!
//! An operator call reads its inputs into host memory (device inputs
//! through the emulator, host inputs through the kernel's check), computes
//! (`aclmem_ops::kernels`) and writes its outputs back to the device
//! buffers the caller gave. It runs at once, as every stream's work does here. An
//! operator outside the list (matmul, convolution, attention, ...) answers
//! `ACL_ERROR_OP_NOT_FOUND` (100024) and is recorded as not supported, as
//! before; a listed one with descriptors that do not fit answers the
//! runtime's operator codes (`docs/operators.md`). In plan mode
//! (`ACLMEM_EMU_OPS=plan`) every operator is checked and accepted without
//! computing (`execute`).

mod execute;

use std::ffi::{c_char, c_int, c_void};

use aclmem_core::AclError;

use aclmem_ops::objects::{self, AttrValue, DataBuffer, MAX_DIMS, Placement, TensorDesc};

use crate::cptr;
use crate::entry::{AclErrorCode, guard};

use execute::{MAX_NAME, execute, handle};

/// The most values in one list attribute.
const MAX_LIST: usize = 1 << 20;

/// Reads `n` dims (`n` in `0..=MAX_DIMS`; NULL is allowed for none).
fn read_dims(n: c_int, dims: *const i64) -> Result<Vec<i64>, AclError> {
    let n = usize::try_from(n).map_err(|_| AclError::INVALID_PARAM)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: `i64` accepts any bytes; the read is checked by the kernel.
    unsafe { cptr::read_array(dims, n, MAX_DIMS, AclError::INVALID_PARAM) }
}

/// `aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims,
/// const int64_t *dims, aclFormat format)`: NULL for a negative count, a
/// count over `ACL_MAX_DIM_CNT` (128), or dims that cannot be read. The
/// type and format are kept as given and checked when an operator runs.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateTensorDesc(
    data_type: c_int,
    num_dims: c_int,
    dims: *const i64,
    format: c_int,
) -> *mut c_void {
    let Ok(dims) = read_dims(num_dims, dims) else {
        return std::ptr::null_mut();
    };
    objects::create_desc(TensorDesc {
        dtype: data_type,
        dims,
        format,
        storage_format: None,
        storage_dims: None,
        placement: Placement::Device,
        name: String::new(),
    }) as *mut c_void
}

/// `void aclDestroyTensorDesc(const aclTensorDesc *desc)`: anything but a
/// live descriptor is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn aclDestroyTensorDesc(desc: *const c_void) {
    let _ = objects::destroy_desc(handle(desc));
}

/// `aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format)`:
/// the storage format.
#[unsafe(no_mangle)]
pub extern "C" fn aclSetTensorFormat(desc: *mut c_void, format: c_int) -> AclErrorCode {
    guard("aclSetTensorFormat", || {
        objects::with_desc(handle(desc), |d| d.storage_format = Some(format))
    })
}

/// `aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const
/// int64_t *dims)`: the storage shape.
#[unsafe(no_mangle)]
pub extern "C" fn aclSetTensorShape(
    desc: *mut c_void,
    num_dims: c_int,
    dims: *const i64,
) -> AclErrorCode {
    guard("aclSetTensorShape", || {
        let dims = read_dims(num_dims, dims)?;
        objects::with_desc(handle(desc), |d| d.storage_dims = Some(dims))
    })
}

/// `aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType
/// memType)`: device (0) or host (1, 2); another value is 100000.
#[unsafe(no_mangle)]
pub extern "C" fn aclSetTensorPlaceMent(desc: *mut c_void, mem_type: c_int) -> AclErrorCode {
    guard("aclSetTensorPlaceMent", || {
        let placement = Placement::from_raw(mem_type).ok_or(AclError::INVALID_PARAM)?;
        objects::with_desc(handle(desc), |d| d.placement = placement)
    })
}

/// `void aclSetTensorDescName(aclTensorDesc *desc, const char *name)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclSetTensorDescName(desc: *mut c_void, name: *const c_char) {
    if let Ok(name) = cptr::read_cstr(name, MAX_NAME) {
        let _ = objects::with_desc(handle(desc), |d| d.name = name);
    }
}

/// `size_t aclGetTensorDescNumDims(const aclTensorDesc *desc)`: 0 for
/// anything but a live descriptor.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetTensorDescNumDims(desc: *const c_void) -> usize {
    objects::with_desc(handle(desc), |d| d.dims.len()).unwrap_or(0)
}

/// `aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t
/// index, int64_t *dimSize)`: 100000 for an index past the dims.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescDimV2(
    desc: *const c_void,
    index: usize,
    dim_size: *mut i64,
) -> AclErrorCode {
    guard("aclGetTensorDescDimV2", || {
        let dim = objects::with_desc(handle(desc), |d| d.dims.get(index).copied())?
            .ok_or(AclError::INVALID_PARAM)?;
        // SAFETY: the C caller's out parameter, checked.
        unsafe { cptr::write(dim_size, dim) }
    })
}

/// `aclDataType aclGetTensorDescType(const aclTensorDesc *desc)`:
/// `ACL_DT_UNDEFINED` (-1) for anything but a live descriptor.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetTensorDescType(desc: *const c_void) -> c_int {
    objects::with_desc(handle(desc), |d| d.dtype).unwrap_or(-1)
}

/// `aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc)`:
/// `ACL_FORMAT_UNDEFINED` (-1) for anything but a live descriptor.
#[unsafe(no_mangle)]
pub extern "C" fn aclGetTensorDescFormat(desc: *const c_void) -> c_int {
    objects::with_desc(handle(desc), |d| d.format).unwrap_or(-1)
}

/// `aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)`: any
/// address is kept (NULL with size 0 is an empty tensor's); it is checked
/// when an operator uses it.
#[unsafe(no_mangle)]
pub extern "C" fn aclCreateDataBuffer(data: *mut c_void, size: usize) -> *mut c_void {
    objects::create_buffer(DataBuffer {
        data: data as usize,
        size,
    }) as *mut c_void
}

/// `aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)`:
/// 100000 for anything but a live buffer.
#[unsafe(no_mangle)]
pub extern "C" fn aclDestroyDataBuffer(buffer: *const c_void) -> AclErrorCode {
    guard("aclDestroyDataBuffer", || {
        objects::destroy_buffer(handle(buffer))
    })
}

/// `aclopAttr *aclopCreateAttr()`.
#[unsafe(no_mangle)]
pub extern "C" fn aclopCreateAttr() -> *mut c_void {
    objects::create_attr() as *mut c_void
}

/// `void aclopDestroyAttr(const aclopAttr *attr)`: anything but a live
/// attribute set is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn aclopDestroyAttr(attr: *const c_void) {
    let _ = objects::destroy_attr(handle(attr));
}

fn set_attr(
    entry: &'static str,
    attr: *mut c_void,
    name: *const c_char,
    value: impl FnOnce() -> Result<AttrValue, AclError>,
) -> AclErrorCode {
    guard(entry, || {
        let name = cptr::read_cstr(name, MAX_NAME)?;
        objects::set_attr(handle(attr), name, value()?)
    })
}

/// Reads a list attribute's `n` values.
///
/// # Safety
/// `T` must accept any bytes.
unsafe fn read_list<T: Copy + Default>(n: c_int, values: *const T) -> Result<Vec<T>, AclError> {
    let n = usize::try_from(n).map_err(|_| AclError::INVALID_PARAM)?;
    if n == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the caller's contract; the read is checked by the kernel.
    unsafe { cptr::read_array(values, n, MAX_LIST, AclError::INVALID_PARAM) }
}

/// `aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName,
/// uint8_t attrValue)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclopSetAttrBool(
    attr: *mut c_void,
    name: *const c_char,
    value: u8,
) -> AclErrorCode {
    set_attr("aclopSetAttrBool", attr, name, || {
        Ok(AttrValue::Bool(value != 0))
    })
}

/// `aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName,
/// int64_t attrValue)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclopSetAttrInt(
    attr: *mut c_void,
    name: *const c_char,
    value: i64,
) -> AclErrorCode {
    set_attr("aclopSetAttrInt", attr, name, || Ok(AttrValue::Int(value)))
}

/// `aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName,
/// float attrValue)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclopSetAttrFloat(
    attr: *mut c_void,
    name: *const c_char,
    value: f32,
) -> AclErrorCode {
    set_attr("aclopSetAttrFloat", attr, name, || {
        Ok(AttrValue::Float(value))
    })
}

/// `aclError aclopSetAttrString(aclopAttr *attr, const char *attrName,
/// const char *attrValue)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclopSetAttrString(
    attr: *mut c_void,
    name: *const c_char,
    value: *const c_char,
) -> AclErrorCode {
    set_attr("aclopSetAttrString", attr, name, || {
        cptr::read_cstr(value, MAX_NAME).map(AttrValue::String)
    })
}

/// `aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName,
/// aclDataType attrValue)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclopSetAttrDataType(
    attr: *mut c_void,
    name: *const c_char,
    value: c_int,
) -> AclErrorCode {
    set_attr("aclopSetAttrDataType", attr, name, || {
        Ok(AttrValue::DataType(value))
    })
}

/// `aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName,
/// int numValues, const uint8_t *values)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListBool(
    attr: *mut c_void,
    name: *const c_char,
    n: c_int,
    values: *const u8,
) -> AclErrorCode {
    set_attr("aclopSetAttrListBool", attr, name, || {
        // SAFETY: `u8` accepts any bytes.
        let v = unsafe { read_list(n, values) }?;
        Ok(AttrValue::ListBool(v.into_iter().map(|b| b != 0).collect()))
    })
}

/// `aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName,
/// int numValues, const int64_t *values)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListInt(
    attr: *mut c_void,
    name: *const c_char,
    n: c_int,
    values: *const i64,
) -> AclErrorCode {
    set_attr("aclopSetAttrListInt", attr, name, || {
        // SAFETY: `i64` accepts any bytes.
        unsafe { read_list(n, values) }.map(AttrValue::ListInt)
    })
}

/// `aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName,
/// int numValues, const float *values)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListFloat(
    attr: *mut c_void,
    name: *const c_char,
    n: c_int,
    values: *const f32,
) -> AclErrorCode {
    set_attr("aclopSetAttrListFloat", attr, name, || {
        // SAFETY: `f32` accepts any bytes.
        unsafe { read_list(n, values) }.map(AttrValue::ListFloat)
    })
}

/// `aclError aclopSetAttrListListInt(aclopAttr *attr, const char
/// *attrName, int numLists, const int *numValues, const int64_t *const
/// values[])`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListListInt(
    attr: *mut c_void,
    name: *const c_char,
    num_lists: c_int,
    num_values: *const c_int,
    values: *const *const i64,
) -> AclErrorCode {
    set_attr("aclopSetAttrListListInt", attr, name, || {
        // SAFETY: integers and addresses accept any bytes.
        let counts = unsafe { read_list(num_lists, num_values) }?;
        // SAFETY: as above.
        let lists = unsafe { read_list(num_lists, values.cast::<usize>()) }?;
        let mut out = Vec::with_capacity(counts.len());
        for (&n, &p) in counts.iter().zip(&lists) {
            // SAFETY: as above.
            out.push(unsafe { read_list(n, p as *const i64) }?);
        }
        Ok(AttrValue::ListListInt(out))
    })
}

/// `aclError aclopCompileAndExecute(const char *opType, int numInputs,
/// const aclTensorDesc *const inputDesc[], const aclDataBuffer *const
/// inputs[], int numOutputs, const aclTensorDesc *const outputDesc[],
/// aclDataBuffer *const outputs[], const aclopAttr *attr, aclopEngineType
/// engineType, aclopCompileType compileFlag, const char *opPath,
/// aclrtStream stream)`: an operator of the list, carried out at once; any
/// other answers 100024.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopCompileAndExecute(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *const *const c_void,
    inputs: *const *const c_void,
    num_outputs: c_int,
    output_desc: *const *const c_void,
    outputs: *const *const c_void,
    attr: *const c_void,
    _engine_type: c_int,
    _compile_flag: c_int,
    _op_path: *const c_char,
    stream: *mut c_void,
) -> AclErrorCode {
    guard("aclopCompileAndExecute", || {
        execute(
            op_type,
            num_inputs,
            input_desc,
            inputs,
            num_outputs,
            output_desc,
            outputs,
            attr,
            stream,
            aclopCompileAndExecute as *const () as usize,
            false,
        )
    })
}

/// `aclError aclopCompileAndExecuteV2(const char *opType, int numInputs,
/// aclTensorDesc *inputDesc[], aclDataBuffer *inputs[], int numOutputs,
/// aclTensorDesc *outputDesc[], aclDataBuffer *outputs[], aclopAttr *attr,
/// aclopEngineType engineType, aclopCompileType compileFlag, const char
/// *opPath, aclrtStream stream)`: as `aclopCompileAndExecute`, and an
/// operator whose output shape depends on its data (`NonZero`,
/// `MaskedSelect`) writes the real shape into the output descriptor, which
/// the caller reads back with `aclGetTensorDescDimV2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopCompileAndExecuteV2(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *const *const c_void,
    inputs: *const *const c_void,
    num_outputs: c_int,
    output_desc: *const *const c_void,
    outputs: *const *const c_void,
    attr: *const c_void,
    _engine_type: c_int,
    _compile_flag: c_int,
    _op_path: *const c_char,
    stream: *mut c_void,
) -> AclErrorCode {
    guard("aclopCompileAndExecuteV2", || {
        execute(
            op_type,
            num_inputs,
            input_desc,
            inputs,
            num_outputs,
            output_desc,
            outputs,
            attr,
            stream,
            aclopCompileAndExecuteV2 as *const () as usize,
            true,
        )
    })
}
