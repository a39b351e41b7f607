//! The operator API's pointwise updates and norms of an optimizer's step
//! and of `clip_grad_norm_`: `aclnnAddcmul`, `aclnnAddcdiv` (and in place),
//! `aclnnMaximum`, `aclnnMinimum` and `aclnnLinalgVectorNorm`, on the
//! `aclop` kernels `Addcmul`, `Addcdiv`, `Maximum`, `Minimum`,
//! `LpNormReduceV2` and `LpNormUpdateV2`.

use aclmem_ops::aclnn::plan::{Arg, Kind, Plan};

use super::marshal::{scalar_arg, tensor};
use super::ops::{Exec, Out, T, checked, plan, runners};

runners!(
    aclnnAddcmul,
    aclnnInplaceAddcmul,
    aclnnAddcdiv,
    aclnnInplaceAddcdiv,
    aclnnMaximum,
    aclnnMinimum,
    aclnnLinalgVectorNorm,
);

/// `self + value·tensor1 ∘ tensor2` into `out`.
fn ternary(
    name: &'static str,
    kernel: &'static str,
    [this, t1, t2]: [T; 3],
    value: T,
    out: T,
) -> Result<Plan, i32> {
    let args = vec![
        Arg::Tensor(tensor(this)?),
        Arg::Tensor(tensor(t1)?),
        Arg::Tensor(tensor(t2)?),
        Arg::Scalar(scalar_arg(value)?),
    ];
    checked(Plan::new(name, Kind::Pointwise(kernel), args, tensor(out)?))
}

/// `(const aclTensor *self, const aclTensor *tensor1, const aclTensor
/// *tensor2, const aclScalar *value, aclTensor *out)` and the in-place
/// `(aclTensor *selfRef, tensor1, tensor2, value)`.
macro_rules! ternaries {
    ($($gws:ident / $name:literal, $inplace:ident / $iname:literal: $kernel:literal;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensor *self, const aclTensor *tensor1, const aclTensor *tensor2, const aclScalar *value, aclTensor *out, ...)`: the operator path's `", $kernel, "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(this: T, t1: T, t2: T, value: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || ternary($name, $kernel, [this, t1, t2], value, out))
        }

        #[doc = concat!("`aclnnStatus ", stringify!($inplace), "(aclTensor *selfRef, const aclTensor *tensor1, const aclTensor *tensor2, const aclScalar *value, ...)`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $inplace(this: T, t1: T, t2: T, value: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($inplace), workspace, executor, || ternary($iname, $kernel, [this, t1, t2], value, this))
        }
    )*};
}

ternaries! {
    aclnnAddcmulGetWorkspaceSize / "aclnnAddcmul", aclnnInplaceAddcmulGetWorkspaceSize / "aclnnInplaceAddcmul": "Addcmul";
    aclnnAddcdivGetWorkspaceSize / "aclnnAddcdiv", aclnnInplaceAddcdivGetWorkspaceSize / "aclnnInplaceAddcdiv": "Addcdiv";
}

/// `(const aclTensor *self, const aclTensor *other, aclTensor *out)`,
/// broadcast (NaN wins).
macro_rules! extremes {
    ($($gws:ident / $name:literal: $kernel:literal;)*) => {$(
        #[doc = concat!("`aclnnStatus ", stringify!($gws), "(const aclTensor *self, const aclTensor *other, aclTensor *out, ...)`: the operator path's `", $kernel, "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $gws(this: T, other: T, out: T, workspace: Out, executor: Exec) -> i32 {
            plan(stringify!($gws), workspace, executor, || {
                let kind = Kind::Binary { kernel: $kernel, alpha: None };
                checked(Plan::new($name, kind, vec![Arg::Tensor(tensor(this)?), Arg::Tensor(tensor(other)?)], tensor(out)?))
            })
        }
    )*};
}

extremes! {
    aclnnMaximumGetWorkspaceSize / "aclnnMaximum": "Maximum";
    aclnnMinimumGetWorkspaceSize / "aclnnMinimum": "Minimum";
}

/// `aclnnStatus aclnnLinalgVectorNormGetWorkspaceSize(const aclTensor
/// *self, const aclScalar *ord, const aclIntArray *dims, bool keepDims,
/// aclDataType dtype, aclTensor *out, ...)`: the `ord`-norm over `dims`
/// (all when empty), in the output's type (which `dtype` names).
#[unsafe(no_mangle)]
pub extern "C" fn aclnnLinalgVectorNormGetWorkspaceSize(
    this: T,
    ord: T,
    dims: T,
    keep: u8,
    _dtype: i32,
    out: T,
    workspace: Out,
    executor: Exec,
) -> i32 {
    plan(
        "aclnnLinalgVectorNormGetWorkspaceSize",
        workspace,
        executor,
        || {
            let kind = Kind::Norm {
                p: scalar_arg(ord)?.value.f64(),
                axes: aclmem_ops::aclnn::int_array(dims as usize)
                    .ok_or(aclmem_ops::aclnn::ERR_PARAM_NULLPTR)?,
                keep: keep != 0,
            };
            checked(Plan::new(
                "aclnnLinalgVectorNorm",
                kind,
                vec![Arg::Tensor(tensor(this)?)],
                tensor(out)?,
            ))
        },
    )
}
