//! The operator API's objects (`aclnn*`, CANN's `libopapi.so` and
//! `libnnopbase.so`): tensors that are strided views of device storage
//! (`aclTensor`), scalars, integer and boolean arrays, tensor and scalar
//! lists, and the executors a `aclnnXGetWorkspaceSize` makes for its
//! `aclnnX` ([`plan`]).
//!
//! Like the operator path's objects, each lives in one table of this
//! process and the pointer a C caller holds is the address of its box; a
//! pointer that names no live object of the expected kind is refused
//! (`ACLNN_ERR_PARAM_NULLPTR` / `ACLNN_ERR_PARAM_INVALID`), never
//! dereferenced. torch_npu makes the objects on one thread and destroys
//! them on its task queue's, so the table is one lock, not per thread.

pub mod attention;
mod complex;
mod host;
mod memory;
pub mod plan;
mod pointwise;
mod products;
mod random;
mod spread;
mod stream;
mod strided;
#[cfg(test)]
pub(crate) mod testing;
mod view;

use std::collections::HashMap;

use aclmem_core::AclError;
use aclmem_fork::ForkMutex;

pub use plan::{Memory, Plan};
pub use view::View;

use crate::tensor::{DType, Num};

/// `ACLNN_SUCCESS`.
pub const SUCCESS: i32 = 0;
/// `ACLNN_ERR_PARAM_NULLPTR`: a required argument is NULL (or names no
/// live object).
pub const ERR_PARAM_NULLPTR: i32 = 161_001;
/// `ACLNN_ERR_PARAM_INVALID`: an argument's value, type or shape is wrong.
pub const ERR_PARAM_INVALID: i32 = 161_002;
/// `ACLNN_ERR_RUNTIME_ERROR`: the runtime refused the work (a device
/// address the process does not hold, ...).
pub const ERR_RUNTIME_ERROR: i32 = 361_001;

/// An `aclnnStatus` for an error of the kernels or the emulator: an
/// argument's fault (the ACL layer's and operator codes) is
/// `ACLNN_ERR_PARAM_INVALID`, anything else the runtime's.
pub fn status(e: AclError) -> i32 {
    match e.code() {
        100_000 | 100_020..=100_027 | 107_000 => ERR_PARAM_INVALID,
        _ => ERR_RUNTIME_ERROR,
    }
}

/// An `aclScalar`: a value and its type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scalar {
    /// The type the caller gave.
    pub dtype: DType,
    /// The value (the real part of a complex one).
    pub value: Num,
    /// The imaginary part of a complex scalar (`dtype` is then its parts'
    /// type); `None` for a real one.
    pub imag: Option<f64>,
}

/// A live object of the operator API.
#[derive(Debug)]
enum Object {
    Tensor(View),
    Scalar(Scalar),
    IntArray(Vec<i64>),
    BoolArray(Vec<bool>),
    FloatArray(Vec<f32>),
    TensorList(Vec<usize>),
    ScalarList(Vec<usize>),
    Executor(Plan),
}

/// The objects, by the address of their box.
static OBJECTS: ForkMutex<Option<HashMap<usize, Box<Object>>>> = ForkMutex::new(|| None);

fn insert(object: Object) -> usize {
    let boxed = Box::new(object);
    let handle = &*boxed as *const Object as usize;
    OBJECTS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(handle, boxed);
    handle
}

fn take(handle: usize, is_kind: fn(&Object) -> bool) -> Option<Box<Object>> {
    let mut objects = OBJECTS.lock();
    let map = objects.get_or_insert_with(HashMap::new);
    match map.get(&handle) {
        Some(o) if is_kind(o) => map.remove(&handle),
        _ => None,
    }
}

fn read<R>(handle: usize, f: impl FnOnce(&Object) -> Option<R>) -> Option<R> {
    OBJECTS
        .lock()
        .get_or_insert_with(HashMap::new)
        .get(&handle)
        .and_then(|o| f(o))
}

macro_rules! kinds {
    ($($make:ident, $destroy:ident, $get:ident: $variant:ident($ty:ty);)*) => {$(
        /// Makes one; its handle.
        pub fn $make(value: $ty) -> usize {
            insert(Object::$variant(value))
        }

        /// Destroys one (`ACLNN_ERR_PARAM_NULLPTR` when `handle` names
        /// none).
        pub fn $destroy(handle: usize) -> i32 {
            match take(handle, |o| matches!(o, Object::$variant(_))) {
                Some(_) => SUCCESS,
                None => ERR_PARAM_NULLPTR,
            }
        }

        /// A live one's value (`None`: `handle` names none).
        pub fn $get(handle: usize) -> Option<$ty> {
            read(handle, |o| match o {
                Object::$variant(v) => Some(v.clone()),
                _ => None,
            })
        }
    )*};
}

kinds! {
    create_tensor, destroy_tensor, tensor: Tensor(View);
    create_scalar, destroy_scalar, scalar: Scalar(Scalar);
    create_int_array, destroy_int_array, int_array: IntArray(Vec<i64>);
    create_bool_array, destroy_bool_array, bool_array: BoolArray(Vec<bool>);
    create_float_array, destroy_float_array, float_array: FloatArray(Vec<f32>);
    create_scalar_list, destroy_scalar_list, scalar_list: ScalarList(Vec<usize>);
}

/// Makes a tensor list of live tensors; its handle (`None`: one is not a
/// tensor).
pub fn create_tensor_list(tensors: Vec<usize>) -> Option<usize> {
    if tensors.iter().all(|&t| tensor(t).is_some()) {
        Some(insert(Object::TensorList(tensors)))
    } else {
        None
    }
}

/// A live tensor list's views, in order (`None`: `handle` names none).
pub fn tensor_list(handle: usize) -> Option<Vec<View>> {
    let tensors = read(handle, |o| match o {
        Object::TensorList(v) => Some(v.clone()),
        _ => None,
    })?;
    tensors.into_iter().map(tensor).collect()
}

/// A live scalar list's scalars, in order (`None`: `handle` names none).
pub fn scalars(handle: usize) -> Option<Vec<Scalar>> {
    scalar_list(handle)?.into_iter().map(scalar).collect()
}

/// Destroys a tensor list and the tensors in it (the operator API's
/// contract: the list owns them).
pub fn destroy_tensor_list(handle: usize) -> i32 {
    match take(handle, |o| matches!(o, Object::TensorList(_))) {
        Some(list) => {
            if let Object::TensorList(tensors) = *list {
                for t in tensors {
                    destroy_tensor(t);
                }
            }
            SUCCESS
        }
        None => ERR_PARAM_NULLPTR,
    }
}

/// Makes an executor of `plan`; its handle.
pub fn create_executor(plan: Plan) -> usize {
    insert(Object::Executor(plan))
}

/// Takes the executor `handle` names (an `aclnnX` consumes it, as CANN's
/// one-shot executors are).
pub fn take_executor(handle: usize) -> Option<Plan> {
    take(handle, |o| matches!(o, Object::Executor(_))).and_then(|o| match *o {
        Object::Executor(p) => Some(p),
        _ => None,
    })
}

/// Destroys an executor without running it (`aclDestroyAclOpExecutor`).
pub fn destroy_executor(handle: usize) -> i32 {
    match take_executor(handle) {
        Some(_) => SUCCESS,
        None => ERR_PARAM_NULLPTR,
    }
}

/// How many objects are alive (for leak tests).
pub fn live() -> usize {
    OBJECTS.lock().as_ref().map_or(0, HashMap::len)
}

#[cfg(test)]
mod tests;
