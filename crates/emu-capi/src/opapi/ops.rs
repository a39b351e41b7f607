//! The operators of the operator API (`libopapi.so`): for each, its
//! `aclnnXGetWorkspaceSize` (checks the call and makes an executor: no
//! workspace is ever needed) and its `aclnnX` (runs the executor on a
//! stream). The families: add, sub, mul, div (tensor and scalar forms,
//! out of place and in place), the matrix products (`Mm`, `Matmul`,
//! `BatchMatMul`, `Addmm`), copy and cast, fill and zero. docs/operators.md
//! lists them with their types.

use std::ffi::c_void;

use aclmem_core::AclError;
use aclmem_ops::aclnn::plan::{Arg, Kind, Plan};
use aclmem_ops::tensor::Num;

use super::marshal::{hand_out, scalar, scalar_arg, status, tensor};

pub(super) type T = *const c_void;
pub(super) type Out = *mut u64;
pub(super) type Exec = *mut *mut c_void;

/// A `GetWorkspaceSize`: the plan `make` describes, handed out.
pub(super) fn plan(
    name: &'static str,
    workspace: Out,
    executor: Exec,
    make: impl FnOnce() -> Result<Plan, i32>,
) -> i32 {
    status(name, || {
        let plan = make();
        match plan {
            Ok(p) => hand_out(Ok(p), workspace, executor),
            Err(e) => Err(e),
        }
    })
}

pub(super) fn checked(p: Result<Plan, AclError>) -> Result<Plan, i32> {
    p.map_err(|_| aclmem_ops::aclnn::ERR_PARAM_INVALID)
}

/// Every `aclnnX(void *workspace, uint64_t workspaceSize, aclOpExecutor
/// *executor, aclrtStream stream)`.
macro_rules! runners {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($name), "(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(
            _workspace: *mut ::std::ffi::c_void,
            _size: u64,
            executor: *mut ::std::ffi::c_void,
            stream: *mut ::std::ffi::c_void,
        ) -> i32 {
            $crate::opapi::marshal::status(stringify!($name), || {
                $crate::opapi::marshal::execute(executor, stream, $name as *const () as usize)
            })
        }
    )*};
}
pub(super) use runners;

runners!(
    aclnnAdd,
    aclnnAdds,
    aclnnInplaceAdd,
    aclnnInplaceAdds,
    aclnnSub,
    aclnnSubs,
    aclnnInplaceSub,
    aclnnInplaceSubs,
    aclnnMul,
    aclnnMuls,
    aclnnInplaceMul,
    aclnnInplaceMuls,
    aclnnDiv,
    aclnnDivs,
    aclnnInplaceDiv,
    aclnnInplaceDivs,
    aclnnMm,
    aclnnMatmul,
    aclnnBatchMatMul,
    aclnnAddmm,
    aclnnInplaceAddmm,
    aclnnInplaceCopy,
    aclnnCast,
    aclnnInplaceFillScalar,
    aclnnInplaceZero,
    aclnnInplaceOne,
    aclnnInplaceNormal,
    aclnnInplaceNormalTensor,
    aclnnInplaceUniform,
    aclnnInplaceUniformTensor,
);

/// `out = self op alpha·other` with `other` a tensor or a scalar.
fn binary(
    name: &'static str,
    kernel: &'static str,
    this: T,
    other: Arg,
    alpha: Option<T>,
    out: T,
) -> Result<Plan, i32> {
    let alpha = alpha.map(scalar).transpose()?;
    checked(Plan::new(
        name,
        Kind::Binary { kernel, alpha },
        vec![Arg::Tensor(tensor(this)?), other],
        tensor(out)?,
    ))
}

/// The add and sub families: `(self, other, alpha, out)`.
macro_rules! with_alpha {
    ($($gws:ident: $name:literal, $kernel:literal, $other:ident, inplace $inplace:literal;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(...)`: `", $name, "`, checked; its executor.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(this: T, other: T, alpha: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let other = with_alpha!(@arg $other, other)?;
                binary($name, $kernel, this, other, Some(alpha), if $inplace { this } else { out })
            })
        }
    )*};
    (@arg tensor, $p:expr) => { tensor($p).map(Arg::Tensor) };
    (@arg scalar, $p:expr) => { scalar_arg($p).map(Arg::Scalar) };
}

/// The mul and div families: `(self, other, out)`.
macro_rules! without_alpha {
    ($($gws:ident: $name:literal, $kernel:literal, $other:ident;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensor *self, other, aclTensor *out, ...)`: `", $name, "`; its executor.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(this: T, other: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let other = with_alpha!(@arg $other, other)?;
                binary($name, $kernel, this, other, None, out)
            })
        }
    )*};
}

/// The in-place mul and div families: `(selfRef, other)`.
macro_rules! inplace_without_alpha {
    ($($gws:ident: $name:literal, $kernel:literal, $other:ident;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(aclTensor *selfRef, other, ...)`: `", $name, "`; its executor.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(this: T, other: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let other = with_alpha!(@arg $other, other)?;
                binary($name, $kernel, this, other, None, this)
            })
        }
    )*};
}

/// The in-place add and sub families: `(selfRef, other, alpha)`.
macro_rules! inplace_with_alpha {
    ($($gws:ident: $name:literal, $kernel:literal, $other:ident;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(aclTensor *selfRef, other, const aclScalar *alpha, ...)`: `", $name, "`; its executor.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(this: T, other: T, alpha: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let other = with_alpha!(@arg $other, other)?;
                binary($name, $kernel, this, other, Some(alpha), this)
            })
        }
    )*};
}

with_alpha! {
    aclnnAddGetWorkspaceSize: "aclnnAdd", "Add", tensor, inplace false;
    aclnnAddsGetWorkspaceSize: "aclnnAdds", "Add", scalar, inplace false;
    aclnnSubGetWorkspaceSize: "aclnnSub", "Sub", tensor, inplace false;
    aclnnSubsGetWorkspaceSize: "aclnnSubs", "Sub", scalar, inplace false;
}

inplace_with_alpha! {
    aclnnInplaceAddGetWorkspaceSize: "aclnnInplaceAdd", "Add", tensor;
    aclnnInplaceAddsGetWorkspaceSize: "aclnnInplaceAdds", "Add", scalar;
    aclnnInplaceSubGetWorkspaceSize: "aclnnInplaceSub", "Sub", tensor;
    aclnnInplaceSubsGetWorkspaceSize: "aclnnInplaceSubs", "Sub", scalar;
}

without_alpha! {
    aclnnMulGetWorkspaceSize: "aclnnMul", "Mul", tensor;
    aclnnMulsGetWorkspaceSize: "aclnnMuls", "Mul", scalar;
    aclnnDivGetWorkspaceSize: "aclnnDiv", "RealDiv", tensor;
    aclnnDivsGetWorkspaceSize: "aclnnDivs", "RealDiv", scalar;
}

inplace_without_alpha! {
    aclnnInplaceMulGetWorkspaceSize: "aclnnInplaceMul", "Mul", tensor;
    aclnnInplaceMulsGetWorkspaceSize: "aclnnInplaceMuls", "Mul", scalar;
    aclnnInplaceDivGetWorkspaceSize: "aclnnInplaceDiv", "RealDiv", tensor;
    aclnnInplaceDivsGetWorkspaceSize: "aclnnInplaceDivs", "RealDiv", scalar;
}

/// The products `(self, mat2, out, int8_t cubeMathType)`: computed in the
/// output's type (half types accumulated in float32, as `MatMul` does),
/// whatever `cubeMathType` allows.
macro_rules! products {
    ($($gws:ident: $name:literal;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType, ...)`; its executor.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(this: T, mat2: T, out: T, _cube: i8, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                checked(Plan::new($name, Kind::Matmul, vec![Arg::Tensor(tensor(this)?), Arg::Tensor(tensor(mat2)?)], tensor(out)?))
            })
        }
    )*};
}

products! {
    aclnnMmGetWorkspaceSize: "aclnnMm";
    aclnnMatmulGetWorkspaceSize: "aclnnMatmul";
    aclnnBatchMatMulGetWorkspaceSize: "aclnnBatchMatMul";
}

fn addmm(
    name: &'static str,
    this: T,
    mat1: T,
    mat2: T,
    beta: T,
    alpha: T,
    out: T,
) -> Result<Plan, i32> {
    let kind = Kind::Addmm {
        beta: scalar(beta)?,
        alpha: scalar(alpha)?,
    };
    let args = vec![
        Arg::Tensor(tensor(this)?),
        Arg::Tensor(tensor(mat1)?),
        Arg::Tensor(tensor(mat2)?),
    ];
    checked(Plan::new(name, kind, args, tensor(out)?))
}

/// `aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const
/// aclTensor *mat1, const aclTensor *mat2, const aclScalar *beta, const
/// aclScalar *alpha, aclTensor *out, int8_t cubeMathType, ...)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnAddmmGetWorkspaceSize(
    this: T,
    mat1: T,
    mat2: T,
    beta: T,
    alpha: T,
    out: T,
    _cube: i8,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan("aclnnAddmmGetWorkspaceSize", workspace, executor, || {
        addmm("aclnnAddmm", this, mat1, mat2, beta, alpha, out)
    })
}

/// `aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor
/// *selfRef, const aclTensor *mat1, const aclTensor *mat2, const aclScalar
/// *beta, const aclScalar *alpha, int8_t cubeMathType, ...)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceAddmmGetWorkspaceSize(
    this: T,
    mat1: T,
    mat2: T,
    beta: T,
    alpha: T,
    _cube: i8,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnInplaceAddmmGetWorkspaceSize",
        workspace,
        executor,
        || addmm("aclnnInplaceAddmm", this, mat1, mat2, beta, alpha, this),
    )
}

/// `aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef,
/// const aclTensor *src, ...)`: `src` converted to `selfRef`'s type and
/// broadcast to its shape.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceCopyGetWorkspaceSize(
    this: T,
    src: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnInplaceCopyGetWorkspaceSize",
        workspace,
        executor,
        || {
            checked(Plan::new(
                "aclnnInplaceCopy",
                Kind::Copy,
                vec![Arg::Tensor(tensor(src)?)],
                tensor(this)?,
            ))
        },
    )
}

/// `aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const
/// aclDataType dtype, aclTensor *out, ...)`: `dtype` must be `out`'s.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnCastGetWorkspaceSize(
    this: T,
    dtype: i32,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan("aclnnCastGetWorkspaceSize", workspace, executor, || {
        let out = tensor(out)?;
        if dtype != out.acl_dtype() {
            return Err(aclmem_ops::aclnn::ERR_PARAM_INVALID);
        }
        checked(Plan::new(
            "aclnnCast",
            Kind::Copy,
            vec![Arg::Tensor(tensor(this)?)],
            out,
        ))
    })
}

/// `aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor
/// *selfRef, const aclScalar *value, ...)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceFillScalarGetWorkspaceSize(
    this: T,
    value: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnInplaceFillScalarGetWorkspaceSize",
        workspace,
        executor,
        || {
            let value = scalar_arg(value)?;
            let out = tensor(this)?;
            checked(match value.imag {
                Some(im) => Plan::fill_complex("aclnnInplaceFillScalar", out, value.value, im),
                None => Plan::new(
                    "aclnnInplaceFillScalar",
                    Kind::Fill(value.value),
                    Vec::new(),
                    out,
                ),
            })
        },
    )
}

/// `aclnnStatus aclnnInplaceOneGetWorkspaceSize(aclTensor *selfRef,
/// ...)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceOneGetWorkspaceSize(this: T, workspace: Out, executor: Exec) -> i32 {
    plan(
        "aclnnInplaceOneGetWorkspaceSize",
        workspace,
        executor,
        || {
            checked(Plan::new(
                "aclnnInplaceOne",
                Kind::Fill(Num::I(1)),
                Vec::new(),
                tensor(this)?,
            ))
        },
    )
}

/// `aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor *selfRef,
/// ...)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceZeroGetWorkspaceSize(this: T, workspace: Out, executor: Exec) -> i32 {
    plan(
        "aclnnInplaceZeroGetWorkspaceSize",
        workspace,
        executor,
        || {
            checked(Plan::new(
                "aclnnInplaceZero",
                Kind::Fill(Num::I(0)),
                Vec::new(),
                tensor(this)?,
            ))
        },
    )
}

fn random(name: &'static str, this: T, kind: Kind, state: Option<[T; 2]>) -> Result<Plan, i32> {
    let args = match state {
        None => Vec::new(),
        Some([seed, offset]) => vec![Arg::Tensor(tensor(seed)?), Arg::Tensor(tensor(offset)?)],
    };
    checked(Plan::new(name, kind, args, tensor(this)?))
}

/// `aclnnStatus aclnnInplaceNormalGetWorkspaceSize(const aclTensor
/// *selfRef, float mean, float std, int64_t seed, int64_t offset, ...)`:
/// normal values, reproducible from the seed and offset (not an NPU's
/// numbers).
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceNormalGetWorkspaceSize(
    this: T,
    mean: f32,
    std: f32,
    seed: i64,
    offset: i64,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnInplaceNormalGetWorkspaceSize",
        workspace,
        executor,
        || {
            let kind = Kind::Random {
                normal: true,
                a: mean.into(),
                b: std.into(),
                seed: Some(seed),
                offset,
            };
            random("aclnnInplaceNormal", this, kind, None)
        },
    )
}

/// `aclnnStatus aclnnInplaceNormalTensorGetWorkspaceSize(const aclTensor
/// *selfRef, float mean, float std, const aclTensor *seedTensor, const
/// aclTensor *offsetTensor, int64_t offset, ...)`: the seed and offset read
/// from the tensors when it runs (each replay of a captured graph: the
/// generator's state then, plus `offset`).
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceNormalTensorGetWorkspaceSize(
    this: T,
    mean: f32,
    std: f32,
    seed: T,
    offset_tensor: T,
    offset: i64,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnInplaceNormalTensorGetWorkspaceSize",
        workspace,
        executor,
        || {
            random(
                "aclnnInplaceNormalTensor",
                this,
                Kind::Random {
                    normal: true,
                    a: mean.into(),
                    b: std.into(),
                    seed: None,
                    offset,
                },
                Some([seed, offset_tensor]),
            )
        },
    )
}

/// `aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor
/// *selfRef, double from, double to, uint64_t seed, uint64_t offset,
/// ...)`: uniform values in `[from, to)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceUniformGetWorkspaceSize(
    this: T,
    from: f64,
    to: f64,
    seed: u64,
    offset: u64,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnInplaceUniformGetWorkspaceSize",
        workspace,
        executor,
        || {
            random(
                "aclnnInplaceUniform",
                this,
                Kind::Random {
                    normal: false,
                    a: from,
                    b: to,
                    seed: Some(seed as i64),
                    offset: offset as i64,
                },
                None,
            )
        },
    )
}

/// `aclnnStatus aclnnInplaceUniformTensorGetWorkspaceSize(const aclTensor
/// *selfRef, double from, double to, const aclTensor *seedTensor, const
/// aclTensor *offsetTensor, uint64_t offset, ...)`.
#[unsafe(no_mangle)]
pub extern "C" fn aclnnInplaceUniformTensorGetWorkspaceSize(
    this: T,
    from: f64,
    to: f64,
    seed: T,
    offset_tensor: T,
    offset: u64,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnInplaceUniformTensorGetWorkspaceSize",
        workspace,
        executor,
        || {
            random(
                "aclnnInplaceUniformTensor",
                this,
                Kind::Random {
                    normal: false,
                    a: from,
                    b: to,
                    seed: None,
                    offset: offset as i64,
                },
                Some([seed, offset_tensor]),
            )
        },
    )
}
