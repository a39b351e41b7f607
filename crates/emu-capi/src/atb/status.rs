//! `atb::ErrorType`'s values (`include/atb/types.h`) the emulator answers.

/// Success.
pub const NO_ERROR: i32 = 0;
/// An argument or parameter is bad, or not one the emulator computes.
pub const ERROR_INVALID_PARAM: i32 = 1;
/// A panic inside the library (never unwound into C++).
pub const ERROR_INTERNAL_ERROR: i32 = 3;
/// The stream refused the work.
pub const ERROR_RT_FAIL: i32 = 4;
/// Not the operation's number of input or output tensors.
pub const ERROR_INVALID_IN_TENSOR_NUM: i32 = 5;
/// A tensor's data type.
pub const ERROR_INVALID_TENSOR_DTYPE: i32 = 6;
/// A tensor's dimensions.
pub const ERROR_INVALID_TENSOR_DIM: i32 = 8;
/// An operation the emulator does not carry out.
pub const ERROR_OPERATION_NULL_RUNNER: i32 = 10;
/// A tensor without the data it needs (device or host).
pub const ERROR_INVALID_TENSOR_ADDR: i32 = 14;
/// A tensor's number of dimensions.
pub const ERROR_INVALID_TENSOR_DIM_NUM: i32 = 16;
/// Not a live context.
pub const ERROR_INVALID_CONTEXT_ADDR: i32 = 20;
/// Not a stream of this process.
pub const ERROR_INVALID_STREAM: i32 = 21;
/// Not a live operation.
pub const ERROR_INVALID_OPERATION_ADDR: i32 = 24;
